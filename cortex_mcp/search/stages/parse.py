"""Parse: the time the question names (a window) and, without its words, the question as the
text channel searches it (safe FTS5 terms, identifier patterns)."""

from __future__ import annotations

from datetime import datetime

from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.text import TextQuery, build_query
from cortex_mcp.search.time_expressions import TimeQuery, parse_time


def read_query(text: str, now: datetime) -> tuple[TimeQuery, TextQuery]:
    """The window `text` names, and the rest of it as the text channel searches it."""
    time = parse_time(text, now)
    return time, build_query(time.text)


class Parse:
    name = "parse"

    async def run(self, state: SearchState) -> None:
        if state.time is None or state.query is None:  # else read when the search was begun
            state.time, state.query = read_query(state.text, state.now)
        state.pool = state.limit * state.settings.pool_factor
