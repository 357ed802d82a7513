"""Parse: the question as the text channel searches it (safe FTS5 terms, identifier patterns)."""

from __future__ import annotations

from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.text import build_query


class Parse:
    name = "parse"

    async def run(self, state: SearchState) -> None:
        state.query = build_query(state.text)
        state.pool = state.limit * state.settings.pool_factor
