"""A store taken back to an older schema version, as a build of that version left it, so a test
can open it with today's build and watch the migrations run. Each migration a test may roll back
has its undo here, newest first; a test that goes further back undoes the older ones itself."""

from __future__ import annotations

from typing import Any

# version -> the statements that undo it (SQLite)
SQLITE_UNDO: dict[int, list[str]] = {
    20: ["ALTER TABLE agent_tokens DROP COLUMN scopes"],
    19: ["DROP TABLE IF EXISTS core_proposals", "DROP TABLE IF EXISTS reflect_runs"],
    18: [],  # times moved into the range of valid moments: data only
    17: [
        "DROP TABLE IF EXISTS belief_evidence",
        "DROP TABLE IF EXISTS belief_progress",
        "DROP TABLE IF EXISTS beliefs",
    ],
    16: [
        "DROP TRIGGER IF EXISTS trg_slots_deleted_memory",
        "DROP TABLE IF EXISTS memory_slots",
        "DROP TABLE IF EXISTS validity_progress",
        "DROP INDEX IF EXISTS idx_memories_agent_seq",
        "ALTER TABLE memories DROP COLUMN valid_from",
        "ALTER TABLE memories DROP COLUMN valid_to",
        "ALTER TABLE memories DROP COLUMN status",
        "ALTER TABLE memories DROP COLUMN slot",
    ],
    15: [
        "DROP TABLE IF EXISTS entity_log",
        "DROP TABLE IF EXISTS entity_unresolved",
        "DROP TABLE IF EXISTS memory_entities",
        "DROP TABLE IF EXISTS entity_aliases",
        "DROP TABLE IF EXISTS entities",
    ],
    14: ["DROP INDEX IF EXISTS idx_memories_live_day"],
    13: ["ALTER TABLE turns DROP COLUMN said_at"],
    12: [
        "DROP TRIGGER IF EXISTS trg_memories_occurred",
        "DROP INDEX IF EXISTS idx_memories_agent_occurred",
        "ALTER TABLE memories DROP COLUMN occurred_at",
    ],
    11: ["DROP TABLE IF EXISTS agent_tokens"],
}

POSTGRES_UNDO: dict[int, list[str]] = {
    17: ["ALTER TABLE agent_tokens DROP COLUMN scopes"],
    16: ["DROP TABLE IF EXISTS core_proposals", "DROP TABLE IF EXISTS reflect_runs"],
    15: [],  # times moved into the range of valid moments: data only
    14: [
        "DROP TABLE IF EXISTS belief_evidence",
        "DROP TABLE IF EXISTS belief_progress",
        "DROP TABLE IF EXISTS beliefs",
    ],
    13: [
        "DROP TABLE IF EXISTS memory_slots",
        "DROP TABLE IF EXISTS validity_progress",
        "DROP INDEX IF EXISTS idx_memories_agent_seq",
        "ALTER TABLE memories DROP COLUMN valid_from",
        "ALTER TABLE memories DROP COLUMN valid_to",
        "ALTER TABLE memories DROP COLUMN status",
        "ALTER TABLE memories DROP COLUMN slot",
    ],
    12: [
        "DROP TABLE IF EXISTS entity_log",
        "DROP TABLE IF EXISTS entity_unresolved",
        "DROP TABLE IF EXISTS memory_entities",
        "DROP TABLE IF EXISTS entity_aliases",
        "DROP TABLE IF EXISTS entities",
    ],
    11: ["DROP INDEX IF EXISTS idx_memories_live_day"],
    10: ["ALTER TABLE turns DROP COLUMN said_at"],
    9: [
        "DROP TRIGGER IF EXISTS memories_occurred_default ON memories",
        "DROP FUNCTION IF EXISTS cortex_occurred_default()",
        "ALTER TABLE memories DROP COLUMN occurred_at",
    ],
    8: ["DROP TABLE IF EXISTS agent_tokens"],
}


def _undo(conn: Any, undo: dict[int, list[str]], current: int, version: int) -> None:
    if current > max(undo):
        raise AssertionError(
            f"migration {current} has no undo in tests/helpers/older_schema.py: add it there"
        )
    for number in range(current, version, -1):
        for statement in undo.get(number, []):
            conn.execute(statement)


def sqlite_back_to(conn: Any, current: int, version: int) -> None:
    """Undo SQLite migrations `current` down to `version + 1` (the caller commits and sets
    `PRAGMA user_version` to the version it ends at)."""
    _undo(conn, SQLITE_UNDO, current, version)


def postgres_back_to(conn: Any, current: int, version: int) -> None:
    """Undo PostgreSQL migrations down to `version + 1` and forget them in cortex_schema."""
    _undo(conn, POSTGRES_UNDO, current, version)
    conn.execute("DELETE FROM cortex_schema WHERE version > %s", (version,))
