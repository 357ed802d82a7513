"""Channels: the text and vector channels' hits, merged into one candidate per memory.

The text channel runs on the database thread while the query is embedded and the vector
channel computed, so a search costs the slower of the two, not their sum."""

from __future__ import annotations

import asyncio
import time

from cortex_mcp.search.fusion import merge_channels
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.stages.text_channel import TextChannel, TextHits
from cortex_mcp.search.stages.vector_channel import VectorChannel, VectorHits


class Channels:
    name = "channels"

    def __init__(self, text: TextChannel, vector: VectorChannel) -> None:
        self.text = text
        self.vector = vector

    async def run(self, state: SearchState) -> None:
        text_task = None
        if state.mode != "vector":
            state.channels.append("text")
            text_task = state.started.pop(self.name, None) or asyncio.create_task(
                self._text_hits(state)
            )
        vector_hits: VectorHits = []
        try:
            if state.mode != "text":
                vector_hits = await self.vector.hits(state)
            text_hits = await text_task if text_task is not None else []
        finally:
            if text_task is not None and not text_task.done():
                text_task.cancel()
        state.candidates = list(merge_channels(text_hits, vector_hits).values())

    def start_text(self, state: SearchState) -> None:
        """The text channel's search started now, for a search whose stages run later: the
        database thread works while the caller does (the search's `started`)."""
        if state.mode != "vector":
            state.started[self.name] = asyncio.create_task(self._text_hits(state))

    async def _text_hits(self, state: SearchState) -> TextHits:
        started = time.perf_counter()
        try:
            return await self.text.hits(state.text_query, state.filters, state.pool, state.limit)
        finally:
            state.timings_ms["text"] = round((time.perf_counter() - started) * 1000, 3)
