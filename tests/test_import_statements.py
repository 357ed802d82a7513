"""An import's rows go into SQLite in few, long statements: a statement that writes several rows
inside a transaction copies every page it changes to SQLite's statement journal first (to undo
it alone), once per statement, and an import's rows land all over the memories' indexes, so
each statement of 200 rows copied thousands of pages that the next one copied again (issue 37
item 14: a fifth of the writer thread's CPU at 100,000 memories)."""

from __future__ import annotations

import sqlite3
from typing import Any

from cortex_mcp.models import LinkRole
from cortex_mcp.store import entities, imports


class _Recorded:
    """A connection that keeps the statements it runs."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.statements: list[str] = []

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        self.statements.append(sql)
        return self.conn.execute(sql, params)


def _memories_table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    columns = ", ".join(f"{name} UNIQUE" if name == "id" else name for name in imports.ROW_FIELDS)
    conn.execute(f"CREATE TABLE memories ({columns})")
    return conn


def test_a_batch_of_memories_goes_in_over_five_hundred_rows_a_statement_in_order() -> None:
    conn = _Recorded(_memories_table())
    rows = [[n, f"m{n}", *([f"v{n}"] * (len(imports.ROW_FIELDS) - 2))] for n in range(2_500)]
    imports._insert_rows(conn, imports._INSERT_WITH_SEQ_HEAD, rows)  # type: ignore[arg-type]
    assert len(conn.statements) == 5  # 560 rows of 25 values, four times, then 260
    assert len(imports.ROW_FIELDS) * 500 <= imports._VALUES_PER_INSERT <= 32_766
    stored = conn.conn.execute(f"SELECT {', '.join(imports.ROW_FIELDS)} FROM memories")
    assert [list(row) for row in stored] == rows


def test_a_batch_of_links_goes_in_thousands_a_statement() -> None:
    raw = sqlite3.connect(":memory:")
    raw.execute(
        "CREATE TABLE memory_entities (memory_id, entity_id, agent_id, role,"
        " PRIMARY KEY (memory_id, entity_id))"
    )
    conn = _Recorded(raw)
    batch = entities._Batch(conn, "a1", "2026-01-01T00:00:00.000000Z")  # type: ignore[arg-type]
    for n in range(5_000):
        batch.link(f"m{n}", f"e{n % 7}", LinkRole.subject)
    batch.write_links()
    inserts = [s for s in conn.statements if s.startswith("INSERT INTO memory_entities")]
    assert len(inserts) == 2
    assert raw.execute("SELECT COUNT(*) FROM memory_entities").fetchone() == (5_000,)
    assert sum(len(ids) for ids in batch._seen.values()) == 5_000
