"""Many memories of one agent written straight into the SQLite table, for the tests of how a
read's work grows with the memories an agent has."""

from __future__ import annotations

from typing import Any


def write_filler_memories(conn: Any, prefix: str, count: int, now: str) -> None:
    """`count` working facts of agent a1 (ids `prefix-1`...), created and updated at `now`."""
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
        " INSERT INTO memories (id, agent_id, layer, category, content, content_hash,"
        " created_at, updated_at) SELECT ? || '-' || i, 'a1', 'working', 'fact',"
        " 'filler ' || ? || i, ? || i, ?, ? FROM n",
        (count, prefix, prefix, prefix, now, now),
    )
