"""Fuse: each candidate's memory read, its missing cosine looked up, and the two channels'
scores combined into one (search/fusion.py has the methods)."""

from __future__ import annotations

from cortex_mcp.search.fusion import Candidate, fill_cosines, fuse
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage

# the share of the text hits that must have a vector before the vector channel ranks them
MIN_VECTOR_COVERAGE = 0.5


class Fuse:
    name = "fuse"

    def __init__(self, memories: MemoryStorage, index: VectorIndex) -> None:
        self.memories = memories
        self.index = index

    async def run(self, state: SearchState) -> None:
        candidates = state.candidates
        rows = await self.memories.get_many([c.memory_id for c in candidates], reuse=True)
        for candidate in candidates:
            candidate.memory = rows.get(candidate.memory_id)
        live = [c for c in candidates if c.memory is not None]
        if state.query_vector is not None:
            await self._fill_cosines(state, live)
            _rank_by_text_while_few_have_vectors(state, live)
        fuse(live, state.settings, has_vector=state.query_vector is not None)
        state.candidates = live
        state.scored = "fused"

    async def _fill_cosines(self, state: SearchState, live: list[Candidate]) -> None:
        """Text hits the vector pool missed still have a meaning: score it rather than take 0
        (the vectors are in memory on the in-process backends, one read away on pgvector and
        vec0). A hit left without a cosine has no vector yet, and fusion ranks it by its text."""
        query_vector = state.query_vector
        missing = [c.memory_id for c in live if c.cosine is None]
        if missing and query_vector is not None:
            dim = int(query_vector.shape[0])
            vectors = await self.index.vectors_for(missing, state.model_key, dim, refresh=False)
            # the waiting memories embedded with the query, not saved yet
            vectors |= {p.memory_id: v for p, v in state.fresh if p.memory_id not in vectors}
            fill_cosines(live, vectors, query_vector)


def _rank_by_text_while_few_have_vectors(state: SearchState, live: list[Candidate]) -> None:
    """Until the indexer has reached most of the memories the words found, the vector channel
    would rank the few it has against the many it lacks (after an import, or while a slow
    provider catches up): rank by text alone, and say so."""
    text_hits = [c for c in live if c.text_rank is not None]
    if not text_hits:
        return
    covered = sum(c.cosine is not None for c in text_hits) / len(text_hits)
    if covered >= MIN_VECTOR_COVERAGE:
        return
    state.query_vector = None
    state.degraded.append(
        f"vectors for {covered:.0%} of the text hits so far: ranked by text"
        " until the indexer catches up"
    )
