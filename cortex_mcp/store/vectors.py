"""Vectors: the BLOB table (source of truth), the embedding cache, and the optional vec0 index."""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cortex_mcp.store.database import Row, placeholders, set_meta
from cortex_mcp.store.interfaces import Connection, DatabaseHandle

if TYPE_CHECKING:  # numpy is imported where arrays are built: `list`/`show` start without it
    import numpy as np

log = logging.getLogger(__name__)

_VEC_META_KEY = "vec_index"


@dataclass(frozen=True)
class PendingEmbedding:
    memory_id: str
    content: str
    content_hash: str

    @classmethod
    def from_row(cls, row: Row) -> PendingEmbedding:
        return cls(str(row["id"]), str(row["content"]), str(row["content_hash"]))


CACHE_INSERT = (
    "INSERT INTO embedding_cache (content_hash, model, dim, vector, created_at)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)


def cache_rows(
    items: list[tuple[PendingEmbedding, bytes]], model: str, dim: int, now: str
) -> list[tuple[str, str, int, bytes, str]]:
    """The `CACHE_INSERT` rows of a batch of new vectors."""
    return [(pending.content_hash, model, dim, blob, now) for pending, blob in items]


def row_version(rowid: int, updated_at: str) -> int:
    """What changes whenever a vector row is written again: its rowid (a replaced row gets a
    new one) and a stamp of its write time (in case a deleted last rowid is reused)."""
    return (int(rowid) << 32) | zlib.crc32(updated_at.encode())


def _vector_block(
    rows: list[Row], dim: int, versioned: bool
) -> tuple[list[str], list[int], np.ndarray]:
    import numpy as np

    block = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32)
    versions = [row_version(int(r[2]), str(r[3])) for r in rows] if versioned else []
    return [str(r[0]) for r in rows], versions, block.reshape(len(rows), dim)


class VectorStore:
    # numbers vector rows in write order (a replaced row gets a new one): the change detectors'
    # column (`shape`, `watermark`, `added_since`)
    ROW_NUMBER = "rowid"

    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    # ---- embedding cache ----------------------------------------------------------------

    async def cached(self, hashes: list[str], model: str) -> dict[str, bytes]:
        if not hashes:
            return {}
        rows = await self.db.fetchall(
            f"SELECT content_hash, vector FROM embedding_cache WHERE model = ?"
            f" AND content_hash IN ({placeholders(hashes)})",
            [model, *hashes],
        )
        return {str(row["content_hash"]): bytes(row["vector"]) for row in rows}

    # ---- writes -------------------------------------------------------------------------

    async def save(
        self,
        items: list[tuple[PendingEmbedding, bytes]],
        model: str,
        dim: int,
        now: str,
    ) -> int:
        """Store vectors for memories (skipping ones purged meanwhile) and fill the cache."""
        if not items:
            return 0
        use_vec = await self._vec_index_matches(model, dim)

        def txn(conn: Connection) -> int:
            # one statement per table for the whole batch: the write lock is held briefly
            conn.executemany(CACHE_INSERT, cache_rows(items, model, dim, now))
            cursor = conn.executemany(
                "INSERT OR REPLACE INTO memory_vectors (memory_id, model, dim, vector, updated_at)"
                " SELECT id, ?, ?, ?, ? FROM memories WHERE id = ?",
                [(model, dim, blob, now, pending.memory_id) for pending, blob in items],
            )
            saved = max(cursor.rowcount, 0)
            if use_vec:
                for pending, blob in items:
                    conn.execute(
                        "DELETE FROM memories_vec WHERE memory_id = ?", (pending.memory_id,)
                    )
                    conn.execute(
                        "INSERT INTO memories_vec (memory_id, embedding)"
                        " SELECT ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
                        (pending.memory_id, blob, pending.memory_id),
                    )
            return saved

        return await self.db.transact(txn)

    async def ensure_vec_index(self, model: str, dim: int) -> bool:
        """(Re)build the vec0 index for this model and dimension from the BLOB table."""
        if not self.db.vec_loaded:
            return False
        if await self._vec_index_matches(model, dim):
            return True
        if self.db.read_only:
            return False  # cannot build it here: the numpy search serves instead

        def txn(conn: Connection) -> None:
            conn.execute("DROP TABLE IF EXISTS memories_vec")
            conn.execute(
                "CREATE VIRTUAL TABLE memories_vec USING vec0("
                f"memory_id TEXT PRIMARY KEY, embedding float[{int(dim)}] distance_metric=cosine)"
            )
            conn.execute(
                "INSERT INTO memories_vec (memory_id, embedding)"
                " SELECT memory_id, vector FROM memory_vectors WHERE model = ? AND dim = ?",
                (model, dim),
            )
            set_meta(conn, _VEC_META_KEY, f"{model}|{dim}")

        await self.db.transact(txn)
        log.info("built vec0 index for %s (%d dims)", model, dim)
        return True

    async def _vec_index_matches(self, model: str, dim: int) -> bool:
        return self.db.vec_loaded and await self.db.get_meta(_VEC_META_KEY) == f"{model}|{dim}"

    # ---- reads --------------------------------------------------------------------------

    async def pending(
        self, model: str, limit: int, skip: Collection[str] = ()
    ) -> list[PendingEmbedding]:
        """The next memories to embed with `model`, from the top of the embedding queue (most
        recalled first, then newest), leaving out `skip` (batches already in flight).

        Queue rows that need nothing (the memory is gone or forgotten, or has a vector of
        `model`) are dropped on the way; the triggers make them rare."""
        rows = await self.db.fetchall(
            "SELECT q.seq, m.id, m.content, m.content_hash, m.forgotten_at, v.model"
            " FROM embedding_queue q LEFT JOIN memories m ON m.seq = q.seq"
            " LEFT JOIN memory_vectors v ON v.memory_id = m.id"
            " ORDER BY q.priority DESC, q.seq DESC LIMIT ?",
            (limit + len(skip),),
        )
        found: list[PendingEmbedding] = []
        stale: list[int] = []
        for row in rows:
            if row["id"] is None or row["forgotten_at"] is not None or row["model"] == model:
                stale.append(int(row["seq"]))
            elif str(row["id"]) not in skip and len(found) < limit:
                found.append(PendingEmbedding.from_row(row))
        if stale and not self.db.read_only:
            await self._unqueue(stale)
        return found

    async def pending_by_ids(self, model: str, memory_ids: list[str]) -> list[PendingEmbedding]:
        """Those of `memory_ids` that are live and have no vector of `model`, in the given order."""
        if not memory_ids:
            return []
        rows = await self.db.fetchall(
            "SELECT m.id, m.content, m.content_hash FROM memories m"
            " LEFT JOIN memory_vectors v ON v.memory_id = m.id AND v.model = ?"
            f" WHERE m.id IN ({placeholders(memory_ids)}) AND m.forgotten_at IS NULL"
            " AND v.memory_id IS NULL",
            [model, *memory_ids],
        )
        by_id = {str(row["id"]): PendingEmbedding.from_row(row) for row in rows}
        return [by_id[memory_id] for memory_id in memory_ids if memory_id in by_id]

    async def requeue_other_models(self, model: str) -> int:
        """Queue the live memories whose vector is from another model (the model or its
        dimensions changed, or a fallback provider embedded them); return how many."""
        others = [m for m in await self._vector_models() if m != model]
        if not others:
            return 0

        def txn(conn: Connection) -> int:
            queued = 0
            for other in others:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO embedding_queue (seq, priority)"
                    " SELECT m.seq, m.access_count FROM memory_vectors v"
                    " JOIN memories m ON m.id = v.memory_id"
                    " WHERE v.model = ? AND m.forgotten_at IS NULL",
                    (other,),
                )
                queued += max(cursor.rowcount, 0)
            return queued

        return await self.db.transact(txn)

    async def queued(self) -> int:
        """Memories waiting in the embedding queue."""
        return int(await self.db.scalar("SELECT COUNT(*) FROM embedding_queue"))

    async def _vector_models(self) -> list[str]:
        """The distinct models of stored vectors, one index probe each (not a scan)."""
        models: list[str] = []
        while True:
            row = await self.db.fetchone(
                "SELECT model FROM memory_vectors WHERE model > ? ORDER BY model LIMIT 1",
                (models[-1] if models else "",),
            )
            if row is None:
                return models
            models.append(str(row[0]))

    async def _unqueue(self, seqs: list[int]) -> None:
        def txn(conn: Connection) -> None:
            conn.execute(f"DELETE FROM embedding_queue WHERE seq IN ({placeholders(seqs)})", seqs)

        await self.db.transact(txn)

    async def shape(self, model: str, dim: int) -> tuple[int, int]:
        """(count, highest row number) of the vectors of one model: a cheap change detector."""
        row = await self.db.fetchone(
            f"SELECT COUNT(*), COALESCE(MAX({self.ROW_NUMBER}), 0) FROM memory_vectors"
            " WHERE model = ? AND dim = ?",
            (model, dim),
        )
        assert row is not None
        return int(row[0]), int(row[1])

    async def watermark(self) -> tuple[int, int]:
        """(highest vector row number, vector deletions so far): two index lookups that change
        whenever a vector is added, replaced or deleted, by any process. A replaced vector
        gets a new row number; a deletion (a purge, a cascade) counts through a trigger."""
        rows = await self.db.fetch_small(
            f"SELECT (SELECT COALESCE(MAX({self.ROW_NUMBER}), 0) FROM memory_vectors),"
            " (SELECT value FROM meta WHERE key = 'vector_deletions')"
        )
        return int(rows[0][0]), int(rows[0][1] or 0)

    async def added_since(
        self, model: str, dim: int, after_rowid: int
    ) -> list[tuple[int, str, str, bytes]]:
        """(row number, memory_id, agent_id, vector) of the vectors written after `after_rowid`."""
        row_number = f"v.{self.ROW_NUMBER}"
        rows = await self.db.fetchall(
            f"SELECT {row_number}, v.memory_id, m.agent_id, v.vector FROM memory_vectors v"
            " JOIN memories m ON m.id = v.memory_id"
            f" WHERE {row_number} > ? AND v.model = ? AND v.dim = ? ORDER BY {row_number}",
            (after_rowid, model, dim),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), bytes(r[3])) for r in rows]

    async def agent_vectors(
        self, agent_id: str, model: str, dim: int, *, versioned: bool = False, window: int = 50_000
    ) -> AsyncIterator[tuple[list[str], list[int], np.ndarray]]:
        """One agent's vectors in blocks (ids, row versions, float32 matrix), a window of memory
        rows at a time: memory stays bounded by the block, not by the agent's size. The
        memories drive every agent-scoped read ("+v.model": the planner otherwise walks every
        vector of the model through its index, for each window).

        `versioned` (SQLite only) reads each row's version (search/saved_index.row_version),
        in the same read as its vector; otherwise the versions are empty."""
        columns = "v.memory_id, v.vector" + (", v.rowid, v.updated_at" if versioned else "")
        owned = int(
            await self.db.scalar("SELECT COUNT(*) FROM memories WHERE agent_id = ?", (agent_id,))
        )
        if owned <= window:  # a small agent among many: through its index, not a file scan
            rows = await self.db.fetchall(
                f"SELECT {columns} FROM memories m"
                " JOIN memory_vectors v ON v.memory_id = m.id"
                " WHERE m.agent_id = ? AND +v.model = ? AND +v.dim = ? ORDER BY m.seq",
                (agent_id, model, dim),
            )
            if rows:
                yield await asyncio.to_thread(_vector_block, rows, dim, versioned)
            return
        last = int(await self.db.scalar("SELECT COALESCE(MAX(seq), 0) FROM memories"))
        for start in range(0, last, window):
            rows = await self.db.fetchall(
                f"SELECT {columns} FROM memories m"
                " JOIN memory_vectors v ON v.memory_id = m.id"
                " WHERE m.seq > ? AND m.seq <= ? AND +m.agent_id = ? AND +v.model = ?"
                " AND +v.dim = ? ORDER BY m.seq",
                (start, start + window, agent_id, model, dim),
            )
            if rows:
                yield await asyncio.to_thread(_vector_block, rows, dim, versioned)

    async def agent_size(self, agent_id: str) -> int:
        """The agent's memories (live or not): an upper bound of its vectors, from an index."""
        return int(
            await self.db.scalar("SELECT COUNT(*) FROM memories WHERE agent_id = ?", (agent_id,))
        )

    async def agent_versions(self, agent_id: str, model: str, dim: int) -> dict[str, int]:
        """memory id -> row version of every vector the agent has of this model (SQLite)."""
        rows = await self.db.fetchall(
            "SELECT v.memory_id, v.rowid, v.updated_at FROM memories m"
            " JOIN memory_vectors v ON v.memory_id = m.id"
            " WHERE m.agent_id = ? AND +v.model = ? AND +v.dim = ?",
            (agent_id, model, dim),
        )
        return {str(r[0]): row_version(int(r[1]), str(r[2])) for r in rows}

    async def agent_vector_ids(self, agent_id: str, model: str, dim: int) -> set[str]:
        rows = await self.db.fetchall(
            "SELECT v.memory_id FROM memories m JOIN memory_vectors v ON v.memory_id = m.id"
            " WHERE m.agent_id = ? AND +v.model = ? AND +v.dim = ?",
            (agent_id, model, dim),
        )
        return {str(row[0]) for row in rows}

    async def vectors_of(self, ids: list[str], model: str, dim: int) -> dict[str, bytes]:
        if not ids:
            return {}
        rows = await self.db.fetchall(
            f"SELECT memory_id, vector FROM memory_vectors WHERE memory_id IN ({placeholders(ids)})"
            " AND model = ? AND dim = ?",
            [*ids, model, dim],
        )
        return {str(row[0]): bytes(row[1]) for row in rows}

    async def shared_vectors(self, agent_id: str, model: str, dim: int) -> dict[str, bytes]:
        """Vectors of the memories other agents marked shared (few; read at each search)."""
        rows = await self.db.fetchall(
            "SELECT m.id, v.vector FROM memories m JOIN memory_vectors v ON v.memory_id = m.id"
            " WHERE m.shared = 1 AND m.agent_id != ? AND m.forgotten_at IS NULL"
            " AND v.model = ? AND v.dim = ?",
            (agent_id, model, dim),
        )
        return {str(row[0]): bytes(row[1]) for row in rows}

    async def knn(self, query: bytes, k: int) -> list[tuple[str, float]]:
        """Exact cosine KNN through vec0: (memory_id, cosine distance)."""
        rows = await self.db.fetchall(
            "SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ?"
            " ORDER BY distance",
            (query, k),
        )
        return [(str(row[0]), float(row[1])) for row in rows]

    async def counts(self) -> dict[str, int]:
        rows = await self.db.fetchall("SELECT model, COUNT(*) FROM memory_vectors GROUP BY model")
        return {str(row[0]): int(row[1]) for row in rows}

    async def cache_size(self) -> int:
        return int(await self.db.scalar("SELECT COUNT(*) FROM embedding_cache"))
