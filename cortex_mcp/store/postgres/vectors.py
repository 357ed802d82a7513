"""Vectors on PostgreSQL with pgvector: the same VectorStore surface as SQLite's.

Vectors travel as the little-endian float32 bytes the rest of cortex-mcp uses (the adapters
below convert pgvector's own format), so the search layer's numpy matrix and the lifecycle
read them unchanged. By default a recall asks for the agent's own nearest vectors
(`agent_knn`): an exact scan of the agent's rows, or, once the agent has `HNSW_MIN_ROWS`
vectors, its own HNSW index (partial: `WHERE agent_id = ...`, so other agents' vectors never
crowd its candidates out), built in the background (`build_agent_hnsw`). With
`vector_backend=vec0`, `knn` searches every agent's vectors through one HNSW index instead.

The embedding backfill holds across processes: `pending` claims the memories it returns
(`FOR UPDATE SKIP LOCKED`, then a claim row that expires after `CLAIM_S`), so two servers do
not embed the same memories; `save` releases the claims.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from cortex_mcp.models import to_iso
from cortex_mcp.store.interfaces import Connection
from cortex_mcp.store.postgres.database import PgDatabase
from cortex_mcp.store.vectors import (
    CACHE_INSERT,
    PendingEmbedding,
    VectorStore,
    cache_rows,
)

log = logging.getLogger(__name__)

# an agent's vectors from which its own HNSW index serves it: the crossover measured by
# bench/pg_vectors.py (384 dims, 150 candidates, load 8-11: exact 13 ms and HNSW 15 ms at 5K,
# 25 and 18 ms at 10K, 51 and 19 ms at 20K; recall@10 1.000 against exact)
HNSW_MIN_ROWS = 10_000
# the candidates an HNSW search keeps (pgvector returns at most this many; set on every pooled
# connection); a search for more scans exactly
HNSW_EF_SEARCH = 400
_BUILD_LOCK = 0x63767864  # pg_try_advisory_lock key: one HNSW build at a time, any server
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
    ROW_NUMBER = "seq"  # SQLite's rowid here: an identity column `save` draws again on a replace
    db: PgDatabase  # `run` builds indexes outside a transaction

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)

    async def save(
        self, items: list[tuple[PendingEmbedding, bytes]], model: str, dim: int, now: str
    ) -> int:
        """Store vectors (skipping memories purged meanwhile), fill the cache, drop claims."""
        if not items:
            return 0

        def txn(conn: Connection) -> int:
            conn.executemany(CACHE_INSERT, cache_rows(items, model, dim, now))
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

        def txn(conn: Connection) -> list[PendingEmbedding]:
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
            return [PendingEmbedding.from_row(row) for row in rows]

        return await self.db.transact(txn)

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

            def txn(conn: Connection) -> None:
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

    # ---- per agent (the default on PostgreSQL) ----------------------------------------

    async def agent_knn(
        self, agent_id: str, model: str, dim: int, query: bytes, k: int
    ) -> list[tuple[str, bytes]]:
        """The agent's `k` nearest vectors (id, float32 bytes), nearest first: through its HNSW
        index when it has one (PostgreSQL's planner takes it), else exactly; a search for
        more than HNSW_EF_SEARCH is exact (HNSW would stop short)."""
        dim = int(dim)
        distance = f"(vector::vector({dim})) <=> %s::vector({dim})"
        if k > HNSW_EF_SEARCH:
            distance += " + 0"  # an expression no index serves: an exact scan
        sql = (
            f"SELECT memory_id, vector FROM memory_vectors WHERE agent_id = %s AND model = %s"
            f" AND dim = {dim} ORDER BY {distance} LIMIT %s"
        )
        params = (agent_id, model, VectorValue(query), k)
        rows = await self.db.run(lambda raw: raw.execute(sql, params, binary=True).fetchall())
        return [(str(row[0]), bytes(row[1])) for row in rows]

    async def agent_count(self, agent_id: str, model: str, dim: int) -> int:
        return int(
            await self.db.scalar(
                "SELECT COUNT(*) FROM memory_vectors WHERE agent_id = ? AND model = ? AND dim = ?",
                (agent_id, model, dim),
            )
        )

    async def build_agent_hnsw(self, agent_id: str, model: str, dim: int) -> bool:
        """The agent's own HNSW index (cosine), built without blocking writers; one build at a
        time across servers (False when another is building). An interrupted build's invalid
        index is dropped and built again."""
        from psycopg import sql

        name = hnsw_index_name(agent_id, model, dim)
        create = sql.SQL(
            "CREATE INDEX CONCURRENTLY {} ON memory_vectors USING hnsw"
            " ((vector::vector({})) vector_cosine_ops)"
            " WHERE agent_id = {} AND model = {} AND dim = {}"
        ).format(
            sql.Identifier(name),
            sql.Literal(int(dim)),
            sql.Literal(agent_id),
            sql.Literal(model),
            sql.Literal(int(dim)),
        )

        def build(raw: Any) -> bool:
            if not raw.execute("SELECT pg_try_advisory_lock(%s)", (_BUILD_LOCK,)).fetchone()[0]:
                return False
            try:
                state = raw.execute(
                    "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
                    " WHERE c.relname = %s",
                    (name,),
                ).fetchone()
                if state is not None and state[0]:
                    return True
                if state is not None:
                    raw.execute(sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(name)))
                raw.execute(create)
                log.info("built the HNSW index of agent %s (%d dimensions)", agent_id, dim)
                return True
            finally:
                raw.execute("SELECT pg_advisory_unlock(%s)", (_BUILD_LOCK,))

        return await self.db.run(build)


def hnsw_index_name(agent_id: str, model: str, dim: int) -> str:
    """A fixed name per (agent, model, dim): any server finds the index another one built."""
    digest = hashlib.sha256(f"{agent_id}\x00{model}\x00{dim}".encode()).hexdigest()[:16]
    return f"idx_memory_vectors_hnsw_a{digest}"
