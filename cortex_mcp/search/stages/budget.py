"""Budget: the first `limit` candidates, where no two places go to one thing said twice."""

from __future__ import annotations

from cortex_mcp.search.fusion import without_covered_twice
from cortex_mcp.search.stages.state import SearchState


class Budget:
    name = "budget"

    async def run(self, state: SearchState) -> None:
        state.candidates = without_covered_twice(state.candidates, state.limit)
