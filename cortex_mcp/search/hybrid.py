"""The search pipeline: text and vector channels, fusion, signals, MMR, with per-stage timings."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from cortex_mcp.config import SearchSettings
from cortex_mcp.errors import ProviderError
from cortex_mcp.models import SearchFilters
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.search.fusion import (
    Candidate,
    apply_signals,
    fill_cosines,
    fuse,
    merge_channels,
    mmr,
    token_similarity,
    vector_similarity,
    without_covered_twice,
)
from cortex_mcp.search.text import TextQuery, build_query, term_costs, within_budget, words_of
from cortex_mcp.search.vector import IN_PROCESS, IndexNotReady, VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.vectors import PendingEmbedding
from cortex_mcp.tokenize import index_text

log = logging.getLogger(__name__)

NO_EMBEDDINGS = "no embedding provider: text search only"
# FTS5 computes bm25 for every row a query matches before it can sort (microseconds each):
# past this many, a query's candidates are the memories matching its rarest terms only
# (search/text.py within_budget). An index this small is always searched exactly, so
# rankings on small data never change.
FTS_ROW_BUDGET = 4000
# The other terms still score every candidate while the index entries FTS5 reads for them fit
# this (bm25 counts each term's documents once per statement, ~0.2 us an entry: ~12 ms here).
FTS_SCAN_BUDGET = 60_000
LIKE_SCAN_ROWS = 50_000  # an identifier's substring scan reads at most the newest rows

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
    # vectors computed for pending memories along with the query: (model, [(pending, vector)])
    fresh_model: str = ""
    fresh: list[tuple[PendingEmbedding, np.ndarray]] = field(default_factory=list)


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
        memories: MemoryStorage,
        index: VectorIndex,
        embeddings: EmbeddingCascade,
        settings: SearchSettings,
    ) -> None:
        self.memories = memories
        self.index = index
        self.embeddings = embeddings
        self.settings = settings
        self.fts_row_budget = FTS_ROW_BUDGET
        self.fts_scan_budget = FTS_SCAN_BUDGET

    async def search(
        self,
        text: str,
        filters: SearchFilters,
        limit: int,
        now: datetime,
        *,
        mode: str = "hybrid",
        settings: SearchSettings | None = None,
        pending: Sequence[PendingEmbedding] = (),
    ) -> SearchOutcome:
        """`mode` is hybrid, text or vector (the last two for benchmarks and debugging).

        `pending` are memories with no vector yet: they are embedded in the same provider call
        as the query and scored with the indexed ones (the vectors come back in the outcome)."""
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
                _timed(self.text_hits(query, filters, pool, limit), text_ms)
            )
        vector_hits: list[tuple[str, float]] = []
        query_vector: np.ndarray | None = None
        model_key = ""
        try:
            if mode != "text":
                query_vector, model_key = await self._embed_query(text, pending, outcome, watch)
                if query_vector is not None:
                    try:
                        vector_hits, backend = await self.index.search(
                            query_vector, model_key, pool, filters
                        )
                    except IndexNotReady as building:  # it goes on in the background
                        outcome.degraded.append(building.note)
                        query_vector = None
                if query_vector is not None:
                    if outcome.fresh:
                        vector_hits = await self._with_fresh(
                            vector_hits, outcome.fresh, query_vector, pool, filters
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
        if query_vector is not None and outcome.providers.get("vector_backend") != "vec0":
            await self._fill_cosines(live, model_key, query_vector)
        fuse(live, s, has_vector=query_vector is not None)
        apply_signals(live, s, now)
        live.sort(key=lambda c: (-c.final, c.text_rank if c.text_rank is not None else 1 << 30))
        watch.lap("fusion")

        if s.mmr and len(live) > 1:
            similarity = await self._similarity(
                live,
                model_key,
                query_vector,
                outcome.fresh,
                outcome.providers.get("vector_backend"),
            )
            live = mmr(live, limit, s.mmr_lambda, similarity)
            watch.lap("mmr")
        outcome.ranked = without_covered_twice(live, limit)
        outcome.timings_ms = watch.timings
        return outcome

    async def text_hits(
        self, query: TextQuery, filters: SearchFilters, pool: int, limit: int
    ) -> list[tuple[str, float | None]]:
        hits: list[tuple[str, float | None]] = []
        if not query.empty:
            quoted = query.quoted
            budget, scan = self.fts_row_budget, self.fts_scan_budget
            size, rows, costs = await self._term_counts(quoted, max(budget, scan) + 1)
            if size <= budget:  # a small index: every term, every row, exactly
                hits.extend(await self.memories.text_search(query.match, filters, pool))
            elif await self.memories.own_rows(filters, budget + 1) <= budget:
                # an agent with few memories in a large file: all of them, exactly
                hits.extend(await self.memories.own_text_search(query.match, filters, pool))
            elif held := {term: n for term, n in rows.items() if n}:
                # a term no memory holds adds nothing to any score, and finding that out again
                # costs (PostgreSQL rechecks every row holding a phrase's words)
                bounded = within_budget(held, budget, costs, scan)
                hits.extend(
                    await self.memories.text_search(
                        bounded.match, filters, pool, newest=bounded.newest, rest=bounded.rest
                    )
                )
        if len(hits) < limit and query.like_patterns:
            seen = {memory_id for memory_id, _ in hits}
            found = await self.memories.like_search(
                query.like_patterns, filters, pool, newest=LIKE_SCAN_ROWS
            )
            for memory_id in found:
                if memory_id not in seen:
                    hits.append((memory_id, None))
        return hits

    async def _term_counts(
        self, quoted: list[str], cap: int
    ) -> tuple[int, dict[str, int], dict[str, int]]:
        """(index size, rows each term matches, index entries FTS5 reads to count it). A phrase
        ("video game", a CJK bigram) matches far fewer rows than its words, but reading it
        reads both words' lists: its rows are counted only up to what the row budget needs."""
        words = list(dict.fromkeys(w for term in quoted for w in words_of(term)))
        size, word_counts = await self.memories.term_counts(words, cap)
        phrases = [term for term in quoted if term not in word_counts]
        rows = dict(word_counts)
        if phrases and size > self.fts_row_budget:
            _, phrase_counts = await self.memories.term_counts(phrases, self.fts_row_budget + 1)
            rows.update(phrase_counts)
        costs = term_costs(quoted, word_counts)
        return size, {term: rows.get(term, 0) for term in quoted}, costs

    async def _fill_cosines(
        self, live: list[Candidate], model_key: str, query_vector: np.ndarray
    ) -> None:
        """Text hits the vector pool missed still have a meaning: score it rather than take 0
        (the vectors are in memory on the in-process backends, one read away on pgvector; on
        vec0 the pools alone decide)."""
        missing = [c.memory_id for c in live if c.cosine is None]
        if missing:
            dim = int(query_vector.shape[0])
            vectors = await self.index.vectors_for(missing, model_key, dim, refresh=False)
            fill_cosines(live, vectors, query_vector)

    async def _embed_query(
        self,
        text: str,
        pending: Sequence[PendingEmbedding],
        outcome: SearchOutcome,
        watch: _Stopwatch,
    ) -> tuple[np.ndarray | None, str]:
        if not self.embeddings.providers:
            outcome.degraded.append(NO_EMBEDDINGS)
            return None, ""
        try:
            result = await self.embeddings.embed([text, *(p.content for p in pending)])
        except ProviderError as exc:
            outcome.degraded.append(f"embeddings unavailable ({exc.message}): text search only")
            watch.lap("embed")
            return None, ""
        outcome.providers["embedding"] = {"provider": result.provider, "model": result.model_key}
        if result.passed_over:
            passed = "; ".join(result.passed_over)
            outcome.degraded.append(f"embeddings from {result.provider} ({passed})")
        outcome.fresh_model = result.model_key
        outcome.fresh = [
            (p, result.vectors[i + 1]) for i, p in enumerate(pending) if result.ok[i + 1]
        ]
        if outcome.fresh:
            outcome.providers["embedding"]["pending_embedded"] = len(outcome.fresh)
        watch.lap("embed")
        return result.vectors[0], result.model_key

    async def _with_fresh(
        self,
        hits: list[tuple[str, float]],
        fresh: list[tuple[PendingEmbedding, np.ndarray]],
        query_vector: np.ndarray,
        pool: int,
        filters: SearchFilters,
    ) -> list[tuple[str, float]]:
        """Indexed hits plus the pending memories `filters` allow, by cosine similarity."""
        allowed = await self.memories.eligible([p.memory_id for p, _ in fresh], filters)
        scores = dict(hits)
        for p, vector in fresh:
            if p.memory_id in allowed:
                scores[p.memory_id] = float(vector @ query_vector)
        return sorted(scores.items(), key=lambda hit: -hit[1])[:pool]

    async def _similarity(
        self,
        live: list[Candidate],
        model_key: str,
        query_vector: np.ndarray | None,
        fresh: list[tuple[PendingEmbedding, np.ndarray]],
        outcome_backend: Any = None,
    ) -> Any:
        if query_vector is not None:
            dim = int(query_vector.shape[0])
            ids = [c.memory_id for c in live]
            # the numpy search of this recall refreshed the matrix a moment ago
            in_process = outcome_backend in IN_PROCESS
            vectors = await self.index.vectors_for(ids, model_key, dim, refresh=not in_process)
            vectors.update((p.memory_id, v) for p, v in fresh)
            return vector_similarity(vectors)
        tokens = {
            c.memory_id: frozenset(index_text(c.memory.content).lower().split())
            for c in live
            if c.memory is not None
        }
        return token_similarity(tokens)
