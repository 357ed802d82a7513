"""Memory rows: writes (remember, forget, correct, purge) and the reads search needs. The
writes' transaction bodies live in memory_writes.py, the row type in memory_rows.py."""

from __future__ import annotations

import logging
from typing import Any

from cortex_mcp.errors import NotFound
from cortex_mcp.models import (
    Layer,
    Memory,
    MemoryChanges,
    NewMemory,
    SearchFilters,
)
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.interfaces import Connection, DatabaseHandle
from cortex_mcp.store.memory_rows import (
    MEMORY_COLUMNS,
    Accesses,
    LayerTtl,
    WriteOutcome,
    row_to_memory,
)
from cortex_mcp.store.memory_writes import (
    add_log_row,
    bump_row,
    change_columns,
    drop_vec_row,
    erase_row,
    insert_or_bump,
    read_back,
    require_owned,
    supersede_details,
)
from cortex_mcp.store.text_reads import TextReads, filter_sql, like_pattern, on_primary_key
from cortex_mcp.tokenize import index_text, query_key

log = logging.getLogger(__name__)

__all__ = [  # what other store modules (and the PostgreSQL store) import from here
    "MEMORY_COLUMNS",
    "Accesses",
    "LayerTtl",
    "MemoryStore",
    "WriteOutcome",
    "add_log_row",
    "filter_sql",
    "like_pattern",
    "row_to_memory",
]


class MemoryStore(TextReads):
    def __init__(self, db: DatabaseHandle, ttl: LayerTtl) -> None:
        self.db = db
        self.ttl = ttl

    # ---- writes -------------------------------------------------------------------------
    # Each write is one synchronous function run as one transaction on the writer's thread
    # (`DatabaseHandle.transact`): one trip, however many statements.

    async def remember(self, new: NewMemory, now: str) -> WriteOutcome:
        return await self.db.transact(lambda conn: self._insert_or_bump(conn, new, now))

    def remember_in(self, conn: Connection, new: NewMemory, now: str) -> WriteOutcome:
        """`remember` inside a transaction another store method holds (`transact`)."""
        return self._insert_or_bump(conn, new, now)

    def reindex_in(self, conn: Connection, seq: int, content: str) -> None:
        """A memory's text index for its new content, inside the caller's transaction."""
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
        conn.execute(
            "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (seq, index_text(content))
        )

    def _insert_or_bump(
        self, conn: Connection, new: NewMemory, now: str, *, audit: bool = True
    ) -> WriteOutcome:
        return insert_or_bump(conn, new, now, self.ttl, audit=audit)

    def _bump(self, conn: Connection, memory_id: str, new: NewMemory, now: str) -> None:
        bump_row(conn, memory_id, new, now, self.ttl)

    async def forget(self, memory_id: str, agent_id: str, reason: str | None, now: str) -> Memory:
        """Soft forget: out of recall, kept in the archive (never expiring) and the audit log."""

        def txn(conn: Connection) -> Memory:
            require_owned(conn, memory_id, agent_id)
            conn.execute(
                "UPDATE memories SET layer = 'archive', forgotten_at = ?, expires_at = NULL,"
                " updated_at = ? WHERE id = ?",
                (now, now, memory_id),
            )
            add_log_row(conn, "forget", [memory_id], {"reason": reason}, now)
            return read_back(conn, memory_id)

        return await self.db.transact(txn)

    async def correct(
        self, memory_id: str, correction: NewMemory, reason: str | None, now: str
    ) -> WriteOutcome:
        """Store the corrected fact and chain the old one to it (`superseded_by`)."""

        def txn(conn: Connection) -> WriteOutcome:
            require_owned(conn, memory_id, correction.agent_id)
            update = {"supersedes": memory_id, "supersede_rule": "forget_correction"}
            new = correction.model_copy(update=update)
            outcome = self._insert_or_bump(conn, new, now, audit=False)
            conn.execute(
                "UPDATE memories SET layer = 'archive', expires_at = NULL WHERE id = ?",
                (memory_id,),
            )
            details = {
                **supersede_details(new, outcome.memory.id),
                "reason": reason,
                "new_id": outcome.memory.id,
            }
            add_log_row(conn, "correct", [memory_id, outcome.memory.id], details, now)
            return outcome

        return await self.db.transact(txn)

    async def purge(self, memory_id: str, agent_id: str, now: str) -> None:
        """Erase the content everywhere; leave a content-free tombstone in the audit log."""
        vec_loaded = self.db.vec_loaded

        def txn(conn: Connection) -> None:
            row = require_owned(conn, memory_id, agent_id)
            seq, digest = row["seq"], row["content_hash"]
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            conn.execute("DELETE FROM relations WHERE source_memory_id = ?", (memory_id,))
            conn.execute(  # content-free, but still the owner's entries
                "UPDATE lifecycle_log SET details = json_object('agent_id', ?)"
                " WHERE memory_ids LIKE ?",
                (agent_id, f'%"{memory_id}"%'),
            )
            erase_row(conn, seq, digest)
            if vec_loaded:
                drop_vec_row(conn, memory_id)
            add_log_row(conn, "purge", [memory_id], {"agent_id": agent_id}, now)
            # merge FTS segments so no index page still holds the erased tokens
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

        await self.db.transact(txn)
        if not await self.db.checkpoint():
            # a reader's snapshot still needs the old pages: finish when it lets go
            log.info("purge: another connection is reading; the checkpoint will follow it")
            self.db.checkpoint_soon()

    async def update(
        self, memory_id: str, agent_id: str, changes: MemoryChanges, now: str
    ) -> Memory:
        """Change an owner's memory in place (category, importance, layer, shared)."""
        sets, params = change_columns(changes, self.ttl, now)

        def txn(conn: Connection) -> Memory:
            require_owned(conn, memory_id, agent_id)
            if sets:
                conn.execute(
                    f"UPDATE memories SET {', '.join(sets)}, updated_at = ? WHERE id = ?",
                    [*params, now, memory_id],
                )
                details = changes.model_dump(mode="json", exclude_none=True)
                add_log_row(conn, "update", [memory_id], details, now)
            return read_back(conn, memory_id)

        return await self.db.transact(txn)

    async def record_accesses(self, recalls: list[Accesses]) -> None:
        """One transaction for many recalls' access counts, last accesses and access log.

        The log keeps a hash of each query, never its text: what the lifecycle needs (how
        many different queries found a memory) works from the hash, and a purged memory
        leaves no query that mentioned it behind."""
        if not recalls or self.db.read_only:
            return
        counts: dict[str, tuple[int, str]] = {}
        log_rows: list[tuple[str, str, int, str, str]] = []
        for recall in recalls:
            key = query_key(recall.query)
            for memory_id, rank in recall.hits:
                seen, last = counts.get(memory_id, (0, recall.at))
                counts[memory_id] = (seen + 1, max(last, recall.at))
                log_rows.append((memory_id, key, rank, recall.at, memory_id))
        if not log_rows:
            return

        def txn(conn: Connection) -> None:
            conn.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed = ?"
                " WHERE id = ?",
                [(n, last, memory_id) for memory_id, (n, last) in counts.items()],
            )
            conn.executemany(
                "INSERT INTO access_log (memory_id, query_hash, rank, accessed_at)"
                " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
                log_rows,
            )

        await self.db.transact(txn)

    async def record_access(self, hits: list[tuple[str, int]], query: str, now: str) -> None:
        """One recall's access counts, written now in a transaction of their own."""
        await self.record_accesses([Accesses(hits, query, now)])

    # ---- reads --------------------------------------------------------------------------

    async def get(self, memory_id: str) -> Memory | None:
        row = await self.db.fetchone(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
        )
        return row_to_memory(row) if row is not None else None

    async def ids_starting_with(
        self, prefix: str, agent_id: str, include_shared: bool, limit: int
    ) -> list[str]:
        """Ids of the agent's memories (forgotten ones too) that begin with `prefix`, a lower
        case run of hex digits and dashes; a range on the primary key, not a scan."""
        owner = "(agent_id = ? OR shared = 1)" if include_shared else "agent_id = ?"
        rows = await self.db.fetchall(
            f"SELECT id FROM memories WHERE id >= ? AND id < ? AND {owner} ORDER BY id LIMIT ?",
            (prefix, prefix + "~", agent_id, limit),  # "~" sorts after every hex digit and "-"
        )
        return [str(row["id"]) for row in rows]

    async def get_many(self, ids: list[str]) -> dict[str, Memory]:
        if not ids:
            return {}
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({placeholders(ids)})", ids
        )
        return {str(row["id"]): row_to_memory(row) for row in rows}

    async def eligible(self, ids: list[str], filters: SearchFilters) -> set[str]:
        """The ids among `ids` that `filters` allow."""
        if not ids:
            return set()
        where, params = filter_sql(filters)
        rows = await self.db.fetchall(
            f"SELECT m.id FROM memories m WHERE m.id IN ({placeholders(ids)})"
            f" AND {on_primary_key(where)}",
            [*ids, *params],
        )
        return {str(row[0]) for row in rows}

    async def list_layer(self, agent_id: str, layer: Layer, now: str, limit: int) -> list[Memory]:
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE agent_id = ? AND layer = ?"
            " AND forgotten_at IS NULL AND superseded_by IS NULL"
            " AND (expires_at IS NULL OR expires_at > ?)"
            " ORDER BY importance DESC, access_count DESC, seq DESC LIMIT ?",
            (agent_id, layer.value, now, limit),
        )
        return [row_to_memory(row) for row in rows]

    async def chain(self, memory: Memory) -> list[Memory]:
        """Older memories this one corrected, and newer ones that corrected it."""
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE superseded_by = ? OR id = ? ORDER BY seq",
            (memory.id, memory.superseded_by or ""),
        )
        return [row_to_memory(row) for row in rows]

    async def access_history(self, memory_id: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT query_hash, rank, accessed_at FROM access_log WHERE memory_id = ?"
            " ORDER BY id DESC LIMIT ?",
            (memory_id, limit),
        )
        return [dict(row) for row in rows]

    async def core_fingerprint(self) -> tuple[Any, ...]:
        """Changes whenever core memory (of any agent) gains, loses or changes a row."""
        row = await self.db.fetchone(
            "SELECT COUNT(*), MAX(updated_at), MAX(seq) FROM memories"
            " WHERE layer = 'core' AND forgotten_at IS NULL AND superseded_by IS NULL"
        )
        return tuple(row) if row is not None else ()

    async def _fts_rows(self) -> int:
        return int(await self.db.scalar("SELECT COUNT(*) FROM memories_fts") or 0)

    async def counts(self, agent_id: str | None = None) -> dict[str, Any]:
        scope, params = ("WHERE agent_id = ?", [agent_id]) if agent_id else ("", [])
        rows = await self.db.fetchall(
            f"SELECT layer, forgotten_at IS NOT NULL AS forgotten, superseded_by IS NOT NULL AS"
            f" superseded, COUNT(*) AS n FROM memories {scope} GROUP BY 1, 2, 3",
            params,
        )
        by_layer = {layer.value: 0 for layer in Layer}
        forgotten = superseded = 0
        for row in rows:
            by_layer[row["layer"]] += row["n"]
            forgotten += row["n"] if row["forgotten"] else 0
            superseded += row["n"] if row["superseded"] else 0
        return {
            "total": sum(by_layer.values()),
            "by_layer": by_layer,
            "forgotten": forgotten,
            "superseded": superseded,
            "fts_rows": await self._fts_rows(),
            "access_log_rows": await self.db.scalar("SELECT COUNT(*) FROM access_log"),
            "lifecycle_log_rows": await self.db.scalar("SELECT COUNT(*) FROM lifecycle_log"),
        }

    async def restore(self, memory_id: str, agent_id: str, layer: Layer, now: str) -> Memory:
        """Undo a forget or a supersede: the memory is live again in `layer` (what superseded
        it stays too); the audit log names what was undone. A live memory is left as it is."""

        def txn(conn: Connection) -> Memory:
            row = conn.execute(
                "SELECT forgotten_at, superseded_by FROM memories WHERE id = ? AND agent_id = ?",
                (memory_id, agent_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"id: no memory {memory_id} for agent {agent_id!r}", field="id")
            forgotten_at, superseded_by = row[0], row[1]
            if forgotten_at is not None or superseded_by is not None:
                conn.execute(
                    "UPDATE memories SET forgotten_at = NULL, superseded_by = NULL, layer = ?,"
                    " expires_at = NULL, updated_at = ? WHERE id = ?",
                    (layer.value, now, memory_id),
                )
                details = {
                    "layer": layer.value,
                    "was_forgotten_at": forgotten_at,
                    "was_superseded_by": superseded_by,
                }
                ids = [memory_id, *([superseded_by] if superseded_by else [])]
                add_log_row(conn, "restore", ids, details, now)
            restored = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            return row_to_memory(restored)

        return await self.db.transact(txn)
