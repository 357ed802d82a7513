"""Fuse: each candidate's memory read, its missing cosine looked up, and the two channels'
scores combined into one (search/fusion.py has the methods)."""

from __future__ import annotations

from cortex_mcp.search.fusion import Candidate, fill_cosines, fuse
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage


class Fuse:
    name = "fuse"

    def __init__(self, memories: MemoryStorage, index: VectorIndex) -> None:
        self.memories = memories
        self.index = index

    async def run(self, state: SearchState) -> None:
        candidates = state.candidates
        rows = await self.memories.get_many([c.memory_id for c in candidates])
        for candidate in candidates:
            candidate.memory = rows.get(candidate.memory_id)
        live = [c for c in candidates if c.memory is not None]
        if state.query_vector is not None and state.providers.get("vector_backend") != "vec0":
            await self._fill_cosines(state, live)
        fuse(live, state.settings, has_vector=state.query_vector is not None)
        state.candidates = live

    async def _fill_cosines(self, state: SearchState, live: list[Candidate]) -> None:
        """Text hits the vector pool missed still have a meaning: score it rather than take 0
        (the vectors are in memory on the in-process backends, one read away on pgvector; on
        vec0 the pools alone decide)."""
        query_vector = state.query_vector
        missing = [c.memory_id for c in live if c.cosine is None]
        if missing and query_vector is not None:
            dim = int(query_vector.shape[0])
            vectors = await self.index.vectors_for(missing, state.model_key, dim, refresh=False)
            fill_cosines(live, vectors, query_vector)
