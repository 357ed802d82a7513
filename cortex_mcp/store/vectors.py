"""Vectors: the BLOB table (source of truth), the embedding cache, and the optional vec0 index."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import aiosqlite

from cortex_mcp.store.database import Database, placeholders, set_meta

log = logging.getLogger(__name__)

_VEC_META_KEY = "vec_index"


@dataclass(frozen=True)
class PendingEmbedding:
    memory_id: str
    content: str
    content_hash: str


@dataclass(frozen=True)
class StoredVector:
    rowid: int
    memory_id: str
    vector: bytes


class VectorStore:
    def __init__(self, db: Database) -> None:
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

        async def txn(conn: aiosqlite.Connection) -> int:
            saved = 0
            for pending, blob in items:
                await conn.execute(
                    "INSERT INTO embedding_cache (content_hash, model, dim, vector, created_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (pending.content_hash, model, dim, blob, now),
                )
                cursor = await conn.execute(
                    "INSERT OR REPLACE INTO memory_vectors (memory_id, model, dim, vector, updated_at)"
                    " SELECT id, ?, ?, ?, ? FROM memories WHERE id = ?",
                    (model, dim, blob, now, pending.memory_id),
                )
                if cursor.rowcount and use_vec:
                    await conn.execute(
                        "DELETE FROM memories_vec WHERE memory_id = ?", (pending.memory_id,)
                    )
                    await conn.execute(
                        "INSERT INTO memories_vec (memory_id, embedding) VALUES (?, ?)",
                        (pending.memory_id, blob),
                    )
                saved += max(cursor.rowcount, 0)
            return saved

        return await self.db.write(txn)

    async def ensure_vec_index(self, model: str, dim: int) -> bool:
        """(Re)build the vec0 index for this model and dimension from the BLOB table."""
        if not self.db.vec_loaded:
            return False
        if await self._vec_index_matches(model, dim):
            return True
        if self.db.read_only:
            return False  # cannot build it here: the numpy search serves instead

        async def txn(conn: aiosqlite.Connection) -> None:
            await conn.execute("DROP TABLE IF EXISTS memories_vec")
            await conn.execute(
                "CREATE VIRTUAL TABLE memories_vec USING vec0("
                f"memory_id TEXT PRIMARY KEY, embedding float[{int(dim)}] distance_metric=cosine)"
            )
            await conn.execute(
                "INSERT INTO memories_vec (memory_id, embedding)"
                " SELECT memory_id, vector FROM memory_vectors WHERE model = ? AND dim = ?",
                (model, dim),
            )
            await set_meta(conn, _VEC_META_KEY, f"{model}|{dim}")

        await self.db.write(txn)
        log.info("built vec0 index for %s (%d dims)", model, dim)
        return True

    async def _vec_index_matches(self, model: str, dim: int) -> bool:
        return self.db.vec_loaded and await self.db.get_meta(_VEC_META_KEY) == f"{model}|{dim}"

    # ---- reads --------------------------------------------------------------------------

    async def missing(self, model: str, limit: int) -> list[PendingEmbedding]:
        """Memories with no vector from `model` (new, after an outage, or after a model switch)."""
        rows = await self.db.fetchall(
            "SELECT m.id, m.content, m.content_hash FROM memories m"
            " LEFT JOIN memory_vectors v ON v.memory_id = m.id AND v.model = ?"
            " WHERE v.memory_id IS NULL AND m.forgotten_at IS NULL ORDER BY m.seq DESC LIMIT ?",
            (model, limit),
        )
        return [
            PendingEmbedding(str(row["id"]), str(row["content"]), str(row["content_hash"]))
            for row in rows
        ]

    async def load(self, model: str, dim: int, after_rowid: int) -> list[StoredVector]:
        rows = await self.db.fetchall(
            "SELECT rowid, memory_id, vector FROM memory_vectors"
            " WHERE model = ? AND dim = ? AND rowid > ? ORDER BY rowid",
            (model, dim, after_rowid),
        )
        return [StoredVector(int(r[0]), str(r[1]), bytes(r[2])) for r in rows]

    async def shape(self, model: str, dim: int) -> tuple[int, int]:
        """(count, max rowid) of the vectors of one model: a cheap change detector."""
        row = await self.db.fetchone(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM memory_vectors WHERE model = ? AND dim = ?",
            (model, dim),
        )
        assert row is not None
        return int(row[0]), int(row[1])

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
