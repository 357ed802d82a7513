"""Parse: the time the question names (a window) and, without its words, the question as the
text channel searches it (safe FTS5 terms, identifier patterns)."""

from __future__ import annotations

from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.text import build_query
from cortex_mcp.search.time_expressions import parse_time


class Parse:
    name = "parse"

    async def run(self, state: SearchState) -> None:
        state.time = parse_time(state.text, state.now)
        state.query = build_query(state.time.text)
        state.pool = state.limit * state.settings.pool_factor
