"""The search pipeline: text and vector channels, fusion, signals, MMR, with per-stage timings."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from cortex_mcp.config import SearchSettings
from cortex_mcp.errors import ProviderError
from cortex_mcp.models import SearchFilters
from cortex_mcp.providers.embeddings import EmbeddingCascade
from cortex_mcp.search.fusion import (
    Candidate,
    apply_signals,
    fuse,
    merge_channels,
    mmr,
    token_similarity,
    vector_similarity,
)
from cortex_mcp.search.text import TextQuery, build_query
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.memories import MemoryStore
from cortex_mcp.tokenize import index_text

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class SearchOutcome:
    ranked: list[Candidate]
    query: TextQuery
    timings_ms: dict[str, float] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    providers: dict[str, Any] = field(default_factory=dict)
    pool: int = 0


async def _timed(work: Awaitable[T], elapsed_ms: list[float]) -> T:
    started = time.perf_counter()
    try:
        return await work
    finally:
        elapsed_ms.append(round((time.perf_counter() - started) * 1000, 3))


class _Stopwatch:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round((now - self._last) * 1000, 3)
        self._last = now


class HybridSearch:
    def __init__(
        self,
        memories: MemoryStore,
        index: VectorIndex,
        embeddings: EmbeddingCascade,
        settings: SearchSettings,
    ) -> None:
        self.memories = memories
        self.index = index
        self.embeddings = embeddings
        self.settings = settings

    async def search(
        self,
        text: str,
        filters: SearchFilters,
        limit: int,
        now: datetime,
        *,
        mode: str = "hybrid",
        settings: SearchSettings | None = None,
    ) -> SearchOutcome:
        """`mode` is hybrid, text or vector (the last two for benchmarks and debugging)."""
        s = settings or self.settings
        watch = _Stopwatch()
        query = build_query(text)
        pool = limit * s.pool_factor
        outcome = SearchOutcome([], query, pool=pool)
        watch.lap("parse")

        # The text channel runs on the database thread while the query is embedded and the
        # vector channel computed, so a recall costs the slower of the two, not their sum.
        text_ms: list[float] = []
        text_task = None
        if mode != "vector":
            outcome.channels.append("text")
            text_task = asyncio.create_task(
                _timed(self._text_channel(query, filters, pool, limit), text_ms)
            )
        vector_hits: list[tuple[str, float]] = []
        query_vector: np.ndarray | None = None
        model_key = ""
        try:
            if mode != "text":
                query_vector, model_key = await self._embed_query(text, outcome, watch)
                if query_vector is not None:
                    vector_hits, backend = await self.index.search(
                        query_vector, model_key, pool, filters
                    )
                    outcome.channels.append("vector")
                    outcome.providers["vector_backend"] = backend
                watch.lap("vector")
            text_hits = await text_task if text_task is not None else []
        finally:
            if text_task is not None and not text_task.done():
                text_task.cancel()
        watch.lap("wait_text")
        if text_ms:
            watch.timings["text"] = text_ms[0]

        candidates = merge_channels(text_hits, vector_hits)
        rows = await self.memories.get_many(list(candidates))
        for candidate in candidates.values():
            candidate.memory = rows.get(candidate.memory_id)
        live = [c for c in candidates.values() if c.memory is not None]
        fuse(live, s, has_vector=query_vector is not None)
        apply_signals(live, s, now)
        live.sort(key=lambda c: (-c.final, c.text_rank if c.text_rank is not None else 1 << 30))
        watch.lap("fusion")

        if s.mmr and len(live) > 1:
            similarity = await self._similarity(live, model_key, query_vector)
            live = mmr(live, limit, s.mmr_lambda, similarity)
            watch.lap("mmr")
        outcome.ranked = live[:limit]
        outcome.timings_ms = watch.timings
        return outcome

    async def _text_channel(
        self, query: TextQuery, filters: SearchFilters, pool: int, limit: int
    ) -> list[tuple[str, float | None]]:
        hits: list[tuple[str, float | None]] = []
        if not query.empty:
            hits.extend(await self.memories.text_search(query.match, filters, pool))
        if len(hits) < limit and query.like_patterns:
            seen = {memory_id for memory_id, _ in hits}
            for memory_id in await self.memories.like_search(query.like_patterns, filters, pool):
                if memory_id not in seen:
                    hits.append((memory_id, None))
        return hits

    async def _embed_query(
        self, text: str, outcome: SearchOutcome, watch: _Stopwatch
    ) -> tuple[np.ndarray | None, str]:
        if not self.embeddings.providers:
            outcome.degraded.append("no embedding provider: text search only")
            return None, ""
        try:
            result = await self.embeddings.embed([text])
        except ProviderError as exc:
            outcome.degraded.append(f"embeddings unavailable ({exc}): text search only")
            watch.lap("embed")
            return None, ""
        outcome.providers["embedding"] = {"provider": result.provider, "model": result.model_key}
        watch.lap("embed")
        return result.vectors[0], result.model_key

    async def _similarity(
        self, live: list[Candidate], model_key: str, query_vector: np.ndarray | None
    ) -> Any:
        if query_vector is not None:
            dim = int(query_vector.shape[0])
            ids = [c.memory_id for c in live]
            return vector_similarity(await self.index.vectors_for(ids, model_key, dim))
        tokens = {
            c.memory_id: frozenset(index_text(c.memory.content).lower().split())
            for c in live
            if c.memory is not None
        }
        return token_similarity(tokens)
