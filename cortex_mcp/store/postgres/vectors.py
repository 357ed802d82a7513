"""Vectors on PostgreSQL with pgvector: the same VectorStore surface as SQLite's.

Vectors travel as the little-endian float32 bytes the rest of cortex-mcp uses (the adapters
below convert pgvector's own format), so the search layer's numpy matrix and the lifecycle
read them unchanged. `knn` asks pgvector: exact below `HNSW_MIN_ROWS` vectors of a model,
through an HNSW index (cosine) from there on.

The embedding backfill holds across processes: `pending` claims the memories it returns
(`FOR UPDATE SKIP LOCKED`, then a claim row that expires after `CLAIM_S`), so two servers do
not embed the same memories; `save` releases the claims.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from cortex_mcp.models import to_iso
from cortex_mcp.store.vectors import PendingEmbedding, VectorStore

log = logging.getLogger(__name__)

HNSW_MIN_ROWS = 20_000  # below it an exact scan answers within a few ms (see the README)
HNSW_EF_SEARCH = 200
CLAIM_S = 120.0
_VEC_META_KEY = "vec_index"  # "model|dim" knn searches (the search layer reads it too)
_HNSW_META_KEY = "vec_index_hnsw"  # "model|dim" once its HNSW index exists


class VectorValue(bytes):
    """float32 bytes to be sent as a pgvector `vector`."""


def register_vector_adapters(conn: Any, oid: int) -> None:
    """pgvector values arrive as float32 bytes and `VectorValue` is sent as one."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format

    class TextLoader(Loader):
        def load(self, data: Any) -> bytes:
            text = bytes(data)[1:-1]
            return np.array(text.split(b","), dtype=np.float32).tobytes()

    class BinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> bytes:
            return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype("<f4").tobytes()

    class BinaryDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            values = np.frombuffer(obj, dtype="<f4").astype(">f4")
            header = len(values).to_bytes(2, "big") + b"\x00\x00"
            return header + values.tobytes()

    class TextDumper(Dumper):
        def dump(self, obj: Any) -> bytes:
            values = np.frombuffer(obj, dtype="<f4")
            return ("[" + ",".join(repr(float(v)) for v in values) + "]").encode()

    BinaryDumper.oid = TextDumper.oid = oid
    conn.adapters.register_loader(oid, TextLoader)
    conn.adapters.register_loader(oid, BinaryLoader)
    conn.adapters.register_dumper(VectorValue, TextDumper)
    conn.adapters.register_dumper(VectorValue, BinaryDumper)


class PgVectorStore(VectorStore):
    async def save(
        self, items: list[tuple[PendingEmbedding, bytes]], model: str, dim: int, now: str
    ) -> int:
        """Store vectors (skipping memories purged meanwhile), fill the cache, drop claims."""
        if not items:
            return 0

        def txn(conn: Any) -> int:
            conn.executemany(
                "INSERT INTO embedding_cache (content_hash, model, dim, vector, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(p.content_hash, model, dim, blob, now) for p, blob in items],
            )
            ids = [p.memory_id for p, _ in items]
            cursor = conn.execute(
                "INSERT INTO memory_vectors (memory_id, model, dim, vector, updated_at)"
                " SELECT m.id, ?, ?, v.vector, ? FROM unnest(?::text[], ?::vector[])"
                " AS v(memory_id, vector) JOIN memories m ON m.id = v.memory_id"
                " ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model,"
                " dim = excluded.dim, vector = excluded.vector,"
                " updated_at = excluded.updated_at, seq = DEFAULT",
                (model, dim, now, ids, [VectorValue(blob) for _, blob in items]),
            )
            saved = max(cursor.rowcount, 0)
            conn.execute(
                "DELETE FROM embedding_claims WHERE model = ? AND memory_id = ANY(?::text[])",
                (model, ids),
            )
            return saved

        return await self.db.transact(txn)

    async def pending(
        self, model: str, limit: int, skip: Collection[str] = ()
    ) -> list[PendingEmbedding]:
        """The top of the embedding queue (most recalled, then newest) without `skip`, claimed
        for this process for CLAIM_S: another server's indexer takes the next ones instead
        (`FOR UPDATE SKIP LOCKED` while claiming, the claim row afterwards)."""
        now = datetime.now(UTC)

        def txn(conn: Any) -> list[PendingEmbedding]:
            rows = conn.execute(
                "SELECT q.seq, m.id, m.content, m.content_hash FROM embedding_queue q"
                " JOIN memories m ON m.seq = q.seq"
                " WHERE m.forgotten_at IS NULL AND m.id <> ALL(?::text[])"
                " AND NOT EXISTS (SELECT 1 FROM memory_vectors v"
                " WHERE v.memory_id = m.id AND v.model = ?)"
                " AND NOT EXISTS (SELECT 1 FROM embedding_claims c"
                " WHERE c.memory_id = m.id AND c.model = ? AND c.expires_at > ?)"
                " ORDER BY q.priority DESC, q.seq DESC LIMIT ? FOR UPDATE OF q SKIP LOCKED",
                (list(skip), model, model, to_iso(now), limit),
            ).fetchall()
            if rows:
                expires = to_iso(now + timedelta(seconds=CLAIM_S))
                conn.execute(
                    "INSERT INTO embedding_claims (memory_id, model, expires_at)"
                    " SELECT unnest(?::text[]), ?, ? ON CONFLICT (memory_id, model)"
                    " DO UPDATE SET expires_at = excluded.expires_at",
                    ([str(row[1]) for row in rows], model, expires),
                )
            return [PendingEmbedding(str(r[1]), str(r[2]), str(r[3])) for r in rows]

        return await self.db.transact(txn)

    async def watermark(self) -> tuple[int, int]:
        """(highest vector row number, vector deletions so far), as SQLite's rowid gives it."""
        row = await self.db.fetchone(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM memory_vectors),"
            " (SELECT value FROM meta WHERE key = 'vector_deletions')"
        )
        assert row is not None
        return int(row[0]), int(row[1] or 0)

    async def added_since(
        self, model: str, dim: int, after_rowid: int
    ) -> list[tuple[int, str, str, bytes]]:
        rows = await self.db.fetchall(
            "SELECT v.seq, v.memory_id, m.agent_id, v.vector FROM memory_vectors v"
            " JOIN memories m ON m.id = v.memory_id"
            " WHERE v.seq > ? AND v.model = ? AND v.dim = ? ORDER BY v.seq",
            (after_rowid, model, dim),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), bytes(r[3])) for r in rows]

    async def shape(self, model: str, dim: int) -> tuple[int, int]:
        row = await self.db.fetchone(
            "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM memory_vectors WHERE model = ? AND dim = ?",
            (model, dim),
        )
        assert row is not None
        return int(row[0]), int(row[1])

    async def ensure_vec_index(self, model: str, dim: int) -> bool:
        """pgvector always answers; past HNSW_MIN_ROWS vectors an HNSW index serves them."""
        key = f"{model}|{dim}"
        if await self.db.get_meta(_HNSW_META_KEY) == key:
            return True
        count, _ = await self.shape(model, dim)
        hnsw = count >= HNSW_MIN_ROWS
        if hnsw:
            await self._build_hnsw(dim)
        if hnsw or await self.db.get_meta(_VEC_META_KEY) != key:

            def txn(conn: Any) -> None:
                for name in [_VEC_META_KEY, *([_HNSW_META_KEY] if hnsw else [])]:
                    conn.execute(
                        "INSERT INTO meta(key, value) VALUES (?, ?)"
                        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                        (name, key),
                    )

            await self.db.transact(txn)
        return True

    async def _build_hnsw(self, dim: int) -> None:
        """One HNSW index per dimension (cosine), built without blocking writers."""
        name = f"idx_memory_vectors_hnsw_{int(dim)}"
        await self.db.run(  # CONCURRENTLY: outside a transaction, writers go on
            lambda raw: raw.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON memory_vectors USING hnsw"
                f" ((vector::vector({int(dim)})) vector_cosine_ops) WHERE dim = {int(dim)}"
            )
        )
        log.info("built the HNSW index for %d-dimensional vectors", dim)

    async def knn(self, query: bytes, k: int) -> list[tuple[str, float]]:
        """Nearest vectors of the indexed model: (memory_id, cosine distance)."""
        model, dim = await self._indexed_model()
        if not dim:
            return []
        literal = f"vector({int(dim)})"

        def search(raw: Any) -> list[Any]:
            with raw.transaction():
                raw.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, int(k))}")
                return list(
                    raw.execute(
                        f"SELECT memory_id, (vector::{literal}) <=> %s::{literal} AS distance"
                        f" FROM memory_vectors WHERE dim = {int(dim)} AND model = %s"
                        " ORDER BY distance LIMIT %s",
                        (VectorValue(query), model, k),
                    ).fetchall()
                )

        rows = await self.db.run(search)
        return [(str(row[0]), float(row[1])) for row in rows]

    async def _indexed_model(self) -> tuple[str, int]:
        value = await self.db.get_meta(_VEC_META_KEY) or "|0"
        model, dim = value.rsplit("|", 1)
        return model, int(dim)
