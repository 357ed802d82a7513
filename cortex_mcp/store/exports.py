"""SQL for ways in and out: whole-table reads for exports and mirrors, an idempotent bulk
import in one transaction, and a consistent copy through SQLite's online backup API."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from cortex_mcp.models import Memory
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.entities import entity_pages, import_entities_in
from cortex_mcp.store.imports import (
    MEMORY_FIELDS,
    RELATION_FIELDS,
    ImportCounts,
    InsertFresh,
    new_memories,
    write_batch,
)
from cortex_mcp.store.interfaces import Connection, DatabaseHandle
from cortex_mcp.store.memories import MEMORY_COLUMNS, row_to_memory, without_origin

LOG_FIELDS = ["action", "memory_ids", "details", "executed_at"]
IMPORT_CACHE_KIB = 64 * 1024


class ExportStore:
    ASSIGNS_SEQ = True  # an import numbers its rows itself (SQLite: the write lock is held)

    def __init__(self, db: DatabaseHandle) -> None:
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
            f"SELECT {MEMORY_COLUMNS} FROM memories {where} ORDER BY seq", params
        )
        return [row_to_memory(row) for row in rows]

    async def count_memories(self, agent_id: str | None) -> int:
        where, params = ("WHERE agent_id = ?", [agent_id]) if agent_id is not None else ("", [])
        return int(await self.db.scalar(f"SELECT COUNT(*) FROM memories {where}", params) or 0)

    async def memory_pages(
        self, agent_id: str | None, size: int
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Every memory (of one agent, or all) as the JSON fields of `Memory`, in pages of
        `size` by insertion order (plain dicts: an export of a million stays fast)."""
        owner = "AND agent_id = ?" if agent_id is not None else ""
        last = 0
        while True:
            params: list[Any] = [last, *([agent_id] if agent_id is not None else []), size]
            rows = await self.db.fetchall(
                f"SELECT seq, {MEMORY_COLUMNS} FROM memories WHERE seq > ? {owner} ORDER BY seq LIMIT ?",
                params,
            )
            if not rows:
                return
            last = int(rows[-1]["seq"])
            yield [_memory_json(row) for row in rows]

    async def relation_pages(
        self, agent_id: str | None, size: int
    ) -> AsyncIterator[list[dict[str, Any]]]:
        owner = "AND agent_id = ?" if agent_id is not None else ""
        after: tuple[str, str] = ("", "")
        while True:
            params: list[Any] = [*after, *([agent_id] if agent_id is not None else []), size]
            rows = await self.db.fetchall(
                f"SELECT {', '.join(RELATION_FIELDS)} FROM relations"
                f" WHERE (created_at, id) > (?, ?) {owner} ORDER BY created_at, id LIMIT ?",
                params,
            )
            if not rows:
                return
            after = (str(rows[-1]["created_at"]), str(rows[-1]["id"]))
            yield [dict(row) for row in rows]

    async def log_pages(
        self, agent_id: str | None, size: int
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Lifecycle-log entries; for one agent, those naming at least one of its memories."""
        owner = (
            "AND EXISTS (SELECT 1 FROM json_each(lifecycle_log.memory_ids) AS named"
            " JOIN memories ON memories.id = named.value WHERE memories.agent_id = ?)"
            if agent_id is not None
            else ""
        )
        last = 0
        while True:
            params: list[Any] = [last, *([agent_id] if agent_id is not None else []), size]
            rows = await self.db.fetchall(
                f"SELECT id, {', '.join(LOG_FIELDS)} FROM lifecycle_log WHERE id > ? {owner}"
                " ORDER BY id LIMIT ?",
                params,
            )
            if not rows:
                return
            last = int(rows[-1]["id"])
            yield [
                {
                    **{f: row[f] for f in LOG_FIELDS},
                    "memory_ids": json.loads(row["memory_ids"]),
                    "details": without_origin(json.loads(row["details"])),
                }
                for row in rows
            ]

    async def list_memories(
        self,
        agent_id: str,
        layer: str | None,
        category: str | None,
        limit: int,
        offset: int = 0,
        include_shared: bool = False,
        forgotten: bool = False,
        *,
        since: str | None = None,
        until: str | None = None,
        by_occurred: bool = False,
    ) -> list[Memory]:
        """Live memories for people to browse, newest first (stored, or with `by_occurred`
        happened); with `forgotten`, the forgotten ones instead, most recently forgotten
        first. `since`/`until` (`to_iso` text): only those whose own time (`occurred_at`) is
        in [since, until)."""
        owner = "(agent_id = ? OR shared = 1)" if include_shared else "agent_id = ?"
        if forgotten:
            clauses, order = [owner, "forgotten_at IS NOT NULL"], "forgotten_at DESC, seq DESC"
        else:
            clauses = [owner, "forgotten_at IS NULL", "superseded_by IS NULL"]
            order = "occurred_at DESC, seq DESC" if by_occurred else "seq DESC"
        params: list[Any] = [agent_id]
        for clause, value in (
            ("layer = ?", layer),
            ("category = ?", category),
            ("occurred_at >= ?", since),
            ("occurred_at < ?", until),
        ):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(clauses)}"
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

    async def owners(self, ids: list[str]) -> dict[str, str]:
        """memory id -> its agent, for the ids that exist (any agent's)."""
        if not ids:
            return {}
        rows = await self.db.fetchall(
            f"SELECT id, agent_id FROM memories WHERE id IN ({placeholders(ids)})", ids
        )
        return {str(r[0]): str(r[1]) for r in rows}

    async def import_batch(
        self,
        agent_id: str,
        memories: list[dict[str, Any]],
        relations: list[dict[str, Any]],
        logs: list[dict[str, Any]],
        *,
        log_agents: Collection[str] | None = None,
    ) -> ImportCounts:
        """One transaction for one batch of an import into `agent_id`: memories new by id and
        by content (their FTS rows with them), relations new by id or by triple, log entries
        not already present (each the entry of the agent of `log_agents`, default `agent_id`,
        whose memories it names). Running it twice adds nothing. Ids of other agents'
        relations get new ids; a relation's source and a log entry's ids never name another
        agent's memory. The rows are built here; the transaction is one trip to the writer's thread
        that does only SQL and the checks that need it."""
        rows = new_memories(memories, agent_id)

        def txn(conn: Connection) -> ImportCounts:
            return write_batch(
                conn,
                agent_id,
                rows,
                relations,
                logs,
                assign_seq=self.ASSIGNS_SEQ,
                insert=self.fresh_memories_insert(),
                log_agents=log_agents,
            )

        return await self.db.transact(txn)

    def entity_pages(self, agent_id: str | None, size: int) -> AsyncIterator[list[dict[str, Any]]]:
        return entity_pages(self.db, agent_id, size)

    async def import_entities(self, agent_id: str, entities: list[dict[str, Any]], now: str) -> int:
        """An import's entities, aliases and links, in one transaction."""
        return await self.db.transact(
            lambda conn: import_entities_in(conn, agent_id, entities, now)
        )

    def fresh_memories_insert(self) -> InsertFresh | None:
        """How an import inserts its new memories, if not as rows plus FTS rows."""
        return None

    @asynccontextmanager
    async def roomy_cache(self) -> AsyncIterator[None]:
        """The writer's page cache at `IMPORT_CACHE_KIB` while a bulk import writes: its rows
        go into indexes in random order (ids, content hashes), and pages read again from the
        OS cost more than the rows. The cache shrinks back afterwards."""
        previous = await self.db.transact(lambda conn: _cache_size(conn, -IMPORT_CACHE_KIB))
        try:
            yield
        finally:
            await self.db.transact(lambda conn: _cache_size(conn, previous))

    async def backup(self, target: Path) -> None:
        """A consistent copy while other connections keep writing (online backup API),
        self-contained (no -wal/-shm beside it), readable by its owner only (0600), and put
        in place atomically (an existing file is replaced only when the copy is whole)."""
        module = sqlite_module()

        def copy() -> None:
            fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            os.close(fd)
            try:
                source = module.connect(str(self.db.path), timeout=30)
                dest = module.connect(temp)
                try:
                    source.backup(dest)
                    dest.execute("PRAGMA journal_mode = DELETE")
                finally:
                    dest.close()
                    source.close()
                with open(temp, "rb+") as handle:
                    os.fsync(handle.fileno())  # on disk before it takes the name
                os.replace(temp, target)
            finally:
                for leftover in (temp, f"{temp}-wal", f"{temp}-shm", f"{temp}-journal"):
                    Path(leftover).unlink(missing_ok=True)

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


def _cache_size(conn: Connection, size: int) -> int:
    """Set the connection's cache size (negative: KiB; positive: pages); the one before."""
    previous = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    conn.execute(f"PRAGMA cache_size = {int(size)}")
    return previous


def _memory_json(row: Any) -> dict[str, Any]:
    data = {f: row[f] for f in MEMORY_FIELDS}
    metadata = data["metadata"]
    data["metadata"] = json.loads(metadata) if metadata and metadata != "{}" else {}
    data["shared"] = bool(data["shared"])
    return data
