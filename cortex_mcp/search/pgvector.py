"""Vector search on PostgreSQL: each agent's vectors searched by pgvector, where they are.

The default on PostgreSQL (`search.vector_backend=auto`): no process holds a copy of the
vectors, so a new server answers its first recall at once and every server sees every other's
writes. An agent's search is exact (its rows through an index on the agent) until it has
`HNSW_MIN_ROWS` vectors; then its own HNSW index is built in the background and serves it (the
planner takes it). The candidates come back with their vectors and are scored here exactly as
the in-process index scores them (float32 dot products), so fusion and ranking, and so the
top 10, are the same as on SQLite for the same data.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from cortex_mcp.models import SearchFilters
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.postgres.vectors import HNSW_MIN_ROWS, PgVectorStore

log = logging.getLogger(__name__)

BACKEND = "pgvector"
SIZE_CHECK_S = 60.0  # how often an agent's vector count is looked at (for its HNSW index)
# candidates' vectors kept for the same recall's fusion and MMR: how many, how long (a
# summary's text, and so its vector, may be rewritten by the lifecycle)
RECENT_VECTORS = 4096
RECENT_S = 5.0


class PgVectorIndex(VectorIndex):
    vectors: PgVectorStore

    def __init__(
        self,
        vectors: PgVectorStore,
        memories: MemoryStorage,
        *,
        backend: str,
        numpy_max_mb: int,
        saved_dir: Path | None = None,
    ) -> None:
        # no index file: the vectors and their HNSW indexes live in PostgreSQL
        super().__init__(vectors, memories, backend=backend, numpy_max_mb=numpy_max_mb)
        self._sized: dict[tuple[str, str, int], float] = {}  # when each agent was counted
        self._building: asyncio.Task[None] | None = None
        self.hnsw_min_rows = HNSW_MIN_ROWS
        # (model, id) -> (when, vector) of recent candidates: a recall's fusion and MMR read
        # the vectors its search has just returned
        self._recent: OrderedDict[tuple[str, str], tuple[float, np.ndarray]] = OrderedDict()

    async def backend_for(self, agent_id: str, model_key: str, dim: int) -> str:
        return BACKEND

    async def refresh(self) -> bool:
        """Nothing kept in process to bring up to date: the vectors are searched where they are."""
        return False

    async def search(
        self,
        query: np.ndarray,
        model_key: str,
        k: int,
        filters: SearchFilters,
        *,
        refreshed: bool = False,
    ) -> tuple[list[tuple[str, float]], str]:
        """Top-k (id, cosine similarity) among the memories `filters` allow."""
        dim = int(query.shape[0])
        query = query.astype(np.float32)
        self._check_size(filters.agent_id, model_key, dim)
        shared = await self._shared(filters, model_key, dim)
        widen = 1
        while True:
            want = max(k * 3, 32) * widen
            rows = await self.vectors.agent_knn(
                filters.agent_id, model_key, dim, query.tobytes(), want
            )
            found = self._scored(rows, query, model_key, dim)
            found.extend((i, float(v @ query)) for i, v in shared.items())
            found.sort(key=lambda hit: -hit[1])
            allowed = await self.memories.eligible([i for i, _ in found], filters)
            hits = [hit for hit in found if hit[0] in allowed]
            exhausted = len(rows) < want
            if len(hits) >= k or exhausted or widen >= 64:
                return hits[:k], BACKEND
            widen *= 4

    async def vectors_for(
        self, ids: list[str], model_key: str, dim: int, *, refresh: bool = True
    ) -> dict[str, np.ndarray]:
        """Vectors of these memories: those of recent candidates at hand, the others from
        the table (one statement)."""
        fresh_after = time.monotonic() - RECENT_S
        found = {}
        for memory_id in ids:
            seen = self._recent.get((model_key, memory_id))
            if seen is not None and seen[0] > fresh_after:
                found[memory_id] = seen[1]
        missing = [i for i in ids if i not in found]
        for memory_id, blob in (await self.vectors.vectors_of(missing, model_key, dim)).items():
            found[memory_id] = self._remember(model_key, memory_id, blob)
        return found

    def _scored(
        self, rows: list[tuple[str, bytes]], query: np.ndarray, model_key: str, dim: int
    ) -> list[tuple[str, float]]:
        """(id, cosine) as the in-process index computes it: one float32 matrix product."""
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
        scores = matrix.reshape(len(rows), dim) @ query
        for memory_id, blob in rows:
            self._remember(model_key, memory_id, blob)
        return [(i, float(score)) for (i, _), score in zip(rows, scores, strict=True)]

    def _remember(self, model_key: str, memory_id: str, blob: bytes) -> np.ndarray:
        vector = np.frombuffer(blob, dtype=np.float32)
        self._recent[(model_key, memory_id)] = (time.monotonic(), vector)
        self._recent.move_to_end((model_key, memory_id))
        while len(self._recent) > RECENT_VECTORS:
            self._recent.popitem(last=False)
        return vector

    # ---- an HNSW index per large agent --------------------------------------------------

    async def close(self) -> None:
        """Stop a size check or HNSW build under way: the build's statement is cancelled in
        the server too (`PgDatabase.run`), so a shutdown does not wait minutes for it; the
        interrupted build's invalid index is dropped and built again by the next check."""
        if self._building is not None and not self._building.done():
            self._building.cancel()
            await asyncio.gather(self._building, return_exceptions=True)
        await super().close()

    async def index_builds_done(self) -> None:
        """Wait for the background size check (and build) under way, if any."""
        if self._building is not None:
            await asyncio.shield(self._building)

    def _check_size(self, agent_id: str, model_key: str, dim: int) -> None:
        """Now and then (in the background), whether the agent has outgrown exact search."""
        key = (agent_id, model_key, dim)
        now = time.monotonic()
        if now - self._sized.get(key, -SIZE_CHECK_S) < SIZE_CHECK_S:
            return
        if self._building is not None and not self._building.done():
            return
        self._sized[key] = now
        self._building = asyncio.create_task(self._index_if_large(*key))

    async def _index_if_large(self, agent_id: str, model_key: str, dim: int) -> None:
        try:
            if await self.vectors.agent_count(agent_id, model_key, dim) < self.hnsw_min_rows:
                return
            started = time.perf_counter()
            if await self.vectors.build_agent_hnsw(agent_id, model_key, dim):
                seconds = time.perf_counter() - started
                if seconds > 1:
                    log.info("HNSW index of agent %s ready in %.1f s", agent_id, seconds)
        except Exception as exc:  # the exact scan keeps answering; the next check retries
            log.warning("HNSW index of agent %s not built: %s", agent_id, exc)
