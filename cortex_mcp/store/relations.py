"""Relation triples (subject, predicate, object) per agent, each with the memory it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cortex_mcp.models import new_id
from cortex_mcp.store.interfaces import Connection, DatabaseHandle


@dataclass(frozen=True)
class Triple:
    subject: str
    predicate: str
    object: str
    source_memory_id: str | None = None
    confidence: float = 0.8


def add_rows(conn: Connection, agent_id: str, triples: list[Triple], now: str) -> None:
    """Insert triples inside the caller's transaction; a known triple is refreshed, not doubled."""
    conn.executemany(
        "INSERT INTO relations (id, agent_id, subject, predicate, object, confidence,"
        " source_memory_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(agent_id, subject, predicate, object) DO UPDATE SET"
        " updated_at = excluded.updated_at, confidence = MAX(relations.confidence, excluded.confidence),"
        " source_memory_id = COALESCE(excluded.source_memory_id, relations.source_memory_id)",
        [
            (
                new_id(),
                agent_id,
                t.subject,
                t.predicate,
                t.object,
                t.confidence,
                t.source_memory_id,
                now,
                now,
            )
            for t in triples
        ],
    )


_ROW = "id, subject, predicate, object, confidence, source_memory_id, created_at, updated_at"


class RelationStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def add(self, agent_id: str, triple: Triple, now: str) -> dict[str, Any]:
        """One triple in its own transaction; a known triple is refreshed and returned as is."""

        def txn(conn: Connection) -> dict[str, Any]:
            add_rows(conn, agent_id, [triple], now)
            row = conn.execute(
                f"SELECT {_ROW} FROM relations"
                " WHERE agent_id = ? AND subject = ? AND predicate = ? AND object = ?",
                (agent_id, triple.subject, triple.predicate, triple.object),
            ).fetchone()
            assert row is not None
            return dict(row)

        return await self.db.transact(txn)

    async def delete(self, relation_id: str, agent_id: str) -> bool:
        """Delete one of `agent_id`'s relations; False when it has none with that id."""

        def txn(conn: Connection) -> bool:
            cursor = conn.execute(
                "DELETE FROM relations WHERE id = ? AND agent_id = ?", (relation_id, agent_id)
            )
            return cursor.rowcount > 0

        return await self.db.transact(txn)

    async def for_memory(self, memory_id: str) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT id, subject, predicate, object, confidence, created_at FROM relations"
            " WHERE source_memory_id = ? ORDER BY created_at",
            (memory_id,),
        )
        return [dict(row) for row in rows]

    async def for_agent(self, agent_id: str, limit: int = 200) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT id, subject, predicate, object, confidence, source_memory_id, updated_at"
            " FROM relations WHERE agent_id = ? ORDER BY updated_at DESC LIMIT ?",
            (agent_id, limit),
        )
        return [dict(row) for row in rows]

    async def count(self, agent_id: str | None = None) -> int:
        if agent_id is None:
            return int(await self.db.scalar("SELECT COUNT(*) FROM relations") or 0)
        sql = "SELECT COUNT(*) FROM relations WHERE agent_id = ?"
        return int(await self.db.scalar(sql, (agent_id,)) or 0)
