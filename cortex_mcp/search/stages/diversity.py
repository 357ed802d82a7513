"""Diversity: maximal marginal relevance over the ranked candidates (when `mmr` is on)."""

from __future__ import annotations

from cortex_mcp.search.fusion import (
    Candidate,
    Similarity,
    mmr,
    token_similarity,
    vector_similarity,
)
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import IN_PROCESS, VectorIndex
from cortex_mcp.tokenize import index_text


class Diversity:
    name = "diversity"

    def __init__(self, index: VectorIndex) -> None:
        self.index = index

    async def run(self, state: SearchState) -> None:
        s = state.settings
        if s.mmr and len(state.candidates) > 1:
            similarity = await self._similarity(state)
            state.candidates = mmr(state.candidates, state.limit, s.mmr_lambda, similarity)

    async def _similarity(self, state: SearchState) -> Similarity:
        live: list[Candidate] = state.candidates
        query_vector = state.query_vector
        if query_vector is not None:
            dim = int(query_vector.shape[0])
            ids = [c.memory_id for c in live]
            # the numpy search of this recall refreshed the matrix a moment ago
            in_process = state.providers.get("vector_backend") in IN_PROCESS
            vectors = await self.index.vectors_for(
                ids, state.model_key, dim, refresh=not in_process
            )
            vectors.update((p.memory_id, v) for p, v in state.fresh)
            return vector_similarity(vectors)
        tokens = {
            c.memory_id: frozenset(index_text(c.memory.content).lower().split())
            for c in live
            if c.memory is not None
        }
        return token_similarity(tokens)
