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

import numpy as np

from cortex_mcp.models import SearchFilters
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.postgres.vectors import HNSW_MIN_ROWS, PgVectorStore

log = logging.getLogger(__name__)

BACKEND = "pgvector"
SIZE_CHECK_S = 60.0  # how often an agent's vector count is looked at (for its HNSW index)


class PgVectorIndex(VectorIndex):
    vectors: PgVectorStore

    def __init__(self, vectors: PgVectorStore, *args: object, **kwargs: object) -> None:
        super().__init__(vectors, *args, **kwargs)  # type: ignore[arg-type]
        self._sized: dict[tuple[str, str, int], float] = {}  # when each agent was counted
        self._building: asyncio.Task[None] | None = None
        self.hnsw_min_rows = HNSW_MIN_ROWS

    async def backend_for(self, agent_id: str, model_key: str, dim: int) -> str:
        return BACKEND

    async def search(
        self, query: np.ndarray, model_key: str, k: int, filters: SearchFilters
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
            found = _scored(rows, query, dim)
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
        """Vectors of these memories, from the table (one statement)."""
        blobs = await self.vectors.vectors_of(ids, model_key, dim)
        return {i: np.frombuffer(blob, dtype=np.float32) for i, blob in blobs.items()}

    # ---- an HNSW index per large agent --------------------------------------------------

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


def _scored(rows: list[tuple[str, bytes]], query: np.ndarray, dim: int) -> list[tuple[str, float]]:
    """(id, cosine) as the in-process index computes it: one float32 matrix product."""
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    scores = matrix.reshape(len(rows), dim) @ query
    return [(memory_id, float(score)) for (memory_id, _), score in zip(rows, scores, strict=True)]
