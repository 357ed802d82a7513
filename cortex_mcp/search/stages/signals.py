"""Signals: layer weight, recency, the access tie-breaker and optional decay, then best first."""

from __future__ import annotations

from cortex_mcp.search.fusion import apply_signals
from cortex_mcp.search.stages.state import SearchState


class Signals:
    name = "signals"

    async def run(self, state: SearchState) -> None:
        apply_signals(state.candidates, state.settings, state.now)
        state.scored = "final"
        state.sort()
