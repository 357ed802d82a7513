"""SQL for ways in and out: whole-table reads for exports and mirrors, an idempotent bulk
import in one transaction, and a consistent copy through SQLite's online backup API."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from cortex_mcp.models import Memory, new_id
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.database import Database
from cortex_mcp.store.memories import _COLUMNS, row_to_memory
from cortex_mcp.tokenize import content_hash, index_text

MEMORY_FIELDS = [c.strip() for c in _COLUMNS.split(",")]
RELATION_FIELDS = [
    "id",
    "agent_id",
    "subject",
    "predicate",
    "object",
    "confidence",
    "source_memory_id",
    "created_at",
    "updated_at",
]
LOG_FIELDS = ["action", "memory_ids", "details", "executed_at"]


@dataclass
class ImportCounts:
    memories: int = 0
    relations: int = 0
    logs: int = 0
    existing: int = 0


class ExportStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def memories(self, agent_id: str | None, *, live_only: bool = False) -> list[Memory]:
        clauses, params = [], []
        if agent_id is not None:
            clauses.append("agent_id = ?")
            params.append(agent_id)
        if live_only:
            clauses.append("forgotten_at IS NULL AND superseded_by IS NULL")
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM memories {where} ORDER BY seq", params
        )
        return [row_to_memory(row) for row in rows]

    async def list_memories(
        self,
        agent_id: str,
        layer: str | None,
        category: str | None,
        limit: int,
        offset: int = 0,
        include_shared: bool = False,
        forgotten: bool = False,
    ) -> list[Memory]:
        """Live memories for people to browse, newest first; with `forgotten`, the forgotten
        ones instead, most recently forgotten first."""
        owner = "(agent_id = ? OR shared = 1)" if include_shared else "agent_id = ?"
        if forgotten:
            clauses, order = [owner, "forgotten_at IS NOT NULL"], "forgotten_at DESC, seq DESC"
        else:
            clauses = [owner, "forgotten_at IS NULL", "superseded_by IS NULL"]
            order = "seq DESC"
        params: list[Any] = [agent_id]
        for column, value in (("layer", layer), ("category", category)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM memories WHERE {' AND '.join(clauses)}"
            f" ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [row_to_memory(row) for row in rows]

    async def relations(self, agent_id: str | None) -> list[dict[str, Any]]:
        where, params = ("WHERE agent_id = ?", [agent_id]) if agent_id else ("", [])
        rows = await self.db.fetchall(
            f"SELECT {', '.join(RELATION_FIELDS)} FROM relations {where} ORDER BY created_at, id",
            params,
        )
        return [dict(row) for row in rows]

    async def lifecycle_log(self) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            f"SELECT {', '.join(LOG_FIELDS)} FROM lifecycle_log ORDER BY id"
        )
        return [
            {
                **dict(row),
                "memory_ids": json.loads(row["memory_ids"]),
                "details": json.loads(row["details"]),
            }
            for row in rows
        ]

    async def import_all(
        self,
        memories: list[Memory],
        relations: list[dict[str, Any]],
        logs: list[dict[str, Any]],
    ) -> ImportCounts:
        """One transaction: memories new by id and by content, relations new by id or by
        triple, log entries not already present. Running it twice adds nothing."""

        async def txn(conn: aiosqlite.Connection) -> ImportCounts:
            counts = ImportCounts()
            for memory in memories:
                if await _insert_memory(conn, memory):
                    counts.memories += 1
                else:
                    counts.existing += 1
            for relation in relations:
                counts.relations += await _insert_relation(conn, relation)
            seen = await _log_keys(conn) if logs else set()
            for entry in logs:
                counts.logs += await _insert_log(conn, entry, seen)
            return counts

        return await self.db.write(txn)

    async def backup(self, target: Path) -> None:
        """A consistent copy while other connections keep writing (online backup API)."""
        module = sqlite_module()

        def copy() -> None:
            source = module.connect(str(self.db.path), timeout=30)
            dest = module.connect(str(target))
            try:
                source.backup(dest)
            finally:
                dest.close()
                source.close()

        await asyncio.to_thread(copy)

    @staticmethod
    async def check_copy(path: Path) -> tuple[str, int]:
        """integrity_check of a copy, and how many memories it holds."""
        module = sqlite_module()

        def check() -> tuple[str, int]:
            conn = module.connect(f"file:{path}?mode=ro", uri=True)
            try:
                verdict = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
                count = int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
                return verdict, count
            finally:
                conn.close()

        return await asyncio.to_thread(check)


async def _exists(conn: aiosqlite.Connection, sql: str, params: list[Any]) -> bool:
    async with conn.execute(sql, params) as cursor:
        return await cursor.fetchone() is not None


async def _insert_memory(conn: aiosqlite.Connection, memory: Memory) -> bool:
    digest = content_hash(memory.content)
    # two lookups, each on its unique index (an OR of both scanned the table per row)
    if await _exists(conn, "SELECT 1 FROM memories WHERE id = ?", [memory.id]):
        return False
    if await _exists(
        conn,
        "SELECT 1 FROM memories WHERE agent_id = ? AND content_hash = ?",
        [memory.agent_id, digest],
    ):
        return False
    data = memory.model_dump()
    data["layer"], data["category"] = memory.layer.value, memory.category.value
    data["metadata"] = json.dumps(memory.metadata, ensure_ascii=False)
    columns = [*MEMORY_FIELDS, "content_hash"]
    cursor = await conn.execute(
        f"INSERT INTO memories ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
        [*(data[f] for f in MEMORY_FIELDS), digest],
    )
    await conn.execute(
        "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)",
        (cursor.lastrowid, index_text(memory.content)),
    )
    return True


async def _insert_relation(conn: aiosqlite.Connection, relation: dict[str, Any]) -> int:
    if await _exists(
        conn,
        "SELECT 1 FROM relations WHERE id = ? OR (agent_id = ? AND subject = ?"
        " AND predicate = ? AND object = ?)",
        [
            relation.get("id") or "",
            relation["agent_id"],
            relation["subject"],
            relation["predicate"],
            relation["object"],
        ],
    ):
        return 0
    source = relation.get("source_memory_id")
    if source and not await _exists(conn, "SELECT 1 FROM memories WHERE id = ?", [source]):
        source = None
    values = {**relation, "id": relation.get("id") or new_id(), "source_memory_id": source}
    await conn.execute(
        f"INSERT INTO relations ({', '.join(RELATION_FIELDS)})"
        f" VALUES ({', '.join('?' for _ in RELATION_FIELDS)})",
        [values.get(f) for f in RELATION_FIELDS],
    )
    return 1


async def _log_keys(conn: aiosqlite.Connection) -> set[tuple[str, str, str, str]]:
    """Every log entry's identity, loaded once per import (a lookup per entry scanned every
    entry with the same time: a 100K import spent minutes there)."""
    cursor = await conn.execute(
        "SELECT action, memory_ids, executed_at, details FROM lifecycle_log"
    )
    rows = await cursor.fetchall()
    await cursor.close()
    return {(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows}


async def _insert_log(
    conn: aiosqlite.Connection, entry: dict[str, Any], seen: set[tuple[str, str, str, str]]
) -> int:
    ids = json.dumps(entry["memory_ids"])
    details = json.dumps(entry.get("details") or {}, ensure_ascii=False)
    key = (str(entry["action"]), ids, str(entry["executed_at"]), details)
    if key in seen:
        return 0
    seen.add(key)
    await conn.execute(
        "INSERT INTO lifecycle_log (action, memory_ids, details, executed_at) VALUES (?, ?, ?, ?)",
        (entry["action"], ids, details, entry["executed_at"]),
    )
    return 1
