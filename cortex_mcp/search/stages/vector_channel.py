"""The vector channel: the query embedded (with the memories not embedded yet, in the same
provider call) and its nearest memories in the agent's vector index."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cortex_mcp.errors import ProviderError
from cortex_mcp.models import SearchFilters
from cortex_mcp.providers.cascade import EmbeddingCascade, EmbeddingResult
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import IndexNotReady, VectorIndex
from cortex_mcp.search.vector_text import vector_text
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.vectors import PendingEmbedding

NO_EMBEDDINGS = "no embedding provider: text search only"

VectorHits = list[tuple[str, float]]  # (memory id, cosine)
Embedding = asyncio.Task[EmbeddingResult]  # a query's embedding under way
TopicOf = Callable[[str], str | None]  # a question -> itself without the names it gives


class VectorChannel:
    def __init__(
        self,
        memories: MemoryStorage,
        index: VectorIndex,
        embeddings: EmbeddingCascade,
        topic_of: TopicOf | None = None,
    ) -> None:
        """`topic_of`: the question without its names, embedded in the query's call (the
        entity stage ranks a named person's memories by it)."""
        self.memories = memories
        self.index = index
        self.embeddings = embeddings
        self.topic_of = topic_of

    async def hits(self, state: SearchState) -> VectorHits:
        """Sets the state's query vector (None when there is none to search with)."""
        started = time.perf_counter()
        # what changed in the index is read while the query is embedded, not after
        refreshing = asyncio.create_task(self.index.refresh(), name="cortex-index-refresh")
        vector = None
        try:
            vector = await self._embed_query(state)
        finally:
            if vector is None:  # no search follows
                drop(refreshing)
        embedded = time.perf_counter()
        state.timings_ms["embed"] = _ms(started, embedded)
        if vector is None:
            return []
        try:
            refreshed = await refreshing
            hits, backend = await self.index.search(
                vector, state.model_key, state.pool, state.filters, refreshed=refreshed
            )
        except IndexNotReady as building:  # it goes on in the background
            state.degraded.append(building.note)
            return []
        if state.fresh:
            hits = await self._with_fresh(hits, state.fresh, vector, state.pool, state.filters)
        state.query_vector = vector
        state.channels.append("vector")
        state.providers["vector_backend"] = backend
        state.timings_ms["vector"] = _ms(embedded, time.perf_counter())
        return hits

    def embed_soon(self, text: str, pending: Sequence[PendingEmbedding]) -> Embedding | None:
        """The query (and `pending`) embedded from now on, for a search that starts later
        (recall settles new facts first): the provider's round trip overlaps that work."""
        if not self.embeddings.providers:
            return None
        return asyncio.create_task(self._embed(text, pending), name="cortex-embed-query")

    async def _embed(self, text: str, pending: Sequence[PendingEmbedding]) -> EmbeddingResult:
        """The query, its topic (when it names someone) and `pending`, in one call."""
        return await self.embeddings.embed(
            [text, *self._topic(text), *(vector_text(p.content) for p in pending)]
        )

    def _topic(self, text: str) -> list[str]:
        topic = self.topic_of(text) if self.topic_of is not None else None
        return [topic] if topic else []

    async def _embed_query(self, state: SearchState) -> np.ndarray | None:
        if not self.embeddings.providers:
            state.degraded.append(NO_EMBEDDINGS)
            return None
        pending = state.pending
        topic = self._topic(state.text)
        try:
            early, state.embedding = state.embedding, None
            result = await (early if early is not None else self._embed(state.text, pending))
        except ProviderError as exc:
            state.degraded.append(f"embeddings unavailable ({exc.message}): text search only")
            return None
        state.providers["embedding"] = {"provider": result.provider, "model": result.model_key}
        if result.passed_over:
            passed = "; ".join(result.passed_over)
            state.degraded.append(f"embeddings from {result.provider} ({passed})")
        state.model_key = state.fresh_model = result.model_key
        if topic and result.ok[1]:
            state.topic_text, state.topic_vector = topic[0], result.vectors[1]
        state.fresh = _fresh(pending, result.vectors[len(topic) :], result.ok[len(topic) :])
        if state.fresh:
            state.providers["embedding"]["pending_embedded"] = len(state.fresh)
        return result.vectors[0]

    async def _with_fresh(
        self,
        hits: VectorHits,
        fresh: list[tuple[PendingEmbedding, np.ndarray]],
        query_vector: np.ndarray,
        pool: int,
        filters: SearchFilters,
    ) -> VectorHits:
        """Indexed hits plus the pending memories `filters` allow, by cosine similarity."""
        allowed = await self.memories.eligible([p.memory_id for p, _ in fresh], filters)
        scores = dict(hits)
        for p, vector in fresh:
            if p.memory_id in allowed:
                scores[p.memory_id] = float(vector @ query_vector)
        return sorted(scores.items(), key=lambda hit: -hit[1])[:pool]


def _fresh(
    pending: Sequence[PendingEmbedding], vectors: np.ndarray, ok: np.ndarray
) -> list[tuple[PendingEmbedding, np.ndarray]]:
    return [(p, vectors[i + 1]) for i, p in enumerate(pending) if ok[i + 1]]


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


def drop(task: asyncio.Task[Any] | None) -> None:
    """A task started for work that will not use it: stopped, and a failure it had already
    met taken (asyncio would log it as never retrieved)."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()
