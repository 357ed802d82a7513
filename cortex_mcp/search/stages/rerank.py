"""Rerank: a cross-encoder reorders the top candidates before the cut (off unless configured).

The reranked candidates take the places, and the scores, of the same number of top
candidates in the reranker's order, so the later stages and the scores a recall returns stay
on one scale. A reranker that fails, is slow or answers nonsense changes nothing: the order
stays as it was and `degraded` says why."""

from __future__ import annotations

from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.rerank import Reranker
from cortex_mcp.search.stages.state import SearchState


class Rerank:
    name = "rerank"

    def __init__(self, reranker: Reranker | None, top_n: int = 20) -> None:
        self.reranker = reranker
        self.top_n = top_n

    async def run(self, state: SearchState) -> None:
        reranker = self.reranker
        top = state.candidates[: self.top_n]  # every candidate has its memory from fuse on
        if reranker is None or len(top) < 2:
            return
        try:
            scores = await reranker.scores(state.text, [c.memory.content for c in top if c.memory])
        except ProviderError as exc:
            state.degraded.append(f"reranker {reranker.name}: {exc.message}; order kept")
            return
        places = sorted((c.final for c in top), reverse=True)
        for candidate, score in zip(top, scores, strict=True):
            candidate.rerank_score = score
        reordered = sorted(top, key=lambda c: -(c.rerank_score or 0.0))
        for candidate, final in zip(reordered, places, strict=True):
            candidate.final = final
        state.candidates[: len(top)] = reordered
        state.facts["rerank"] = {"reranker": reranker.name, "reranked": len(top)}
