"""Time: memories in the window a query names are boosted before the cut.

A pass-through until the time stage is written (issue 25): it changes no score."""

from __future__ import annotations

from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.store.interfaces import MemoryStorage


class TimeStage:
    name = "time"

    def __init__(self, memories: MemoryStorage) -> None:
        self.memories = memories

    async def run(self, state: SearchState) -> None:
        return None
