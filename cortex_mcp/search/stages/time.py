"""Time: when the query names a window, the window's memories become candidates and rank first.

The window (the parse stage's `TimeQuery`, search/time_expressions.py) works as a third
channel beside text and vector, weighed as much as both together: a memory whose own time
(`occurred_at`) is in the window has `IN_WINDOW` added to its fused relevance (0..1) before the
signals (layer, recency, access) multiply it. So a memory of the named day that matches the
query at all outranks every match from another day; one that matches no word ties with the
best match from elsewhere (neither hides the other); and a query that is only a time ("what
happened last week?") ranks the window's memories by their own signals. A boost, not a filter:
matches outside keep their places below. `since`/`until` are the filter.

A loose window ("around May 6", "recently", "a few days ago", "最近", "前几天", "先日") also lifts
the memories just outside it, by at most `NEAR`, falling to nothing one window-width (1 to 30
days) away: people misplace a day by a day or two. An exact window ("on May 6", "in June
2023", "last week") does not.

The channels found the memories that match the query's other words best anywhere; the window
adds its own: those that match the words (one text search narrowed to the window, so a match
beyond the text channel's pool is still scored) and its most recent memories up to the pool
(`occurred_within`), their cosine filled when there is a query vector. Fusion and signals then
run again over all of them, so every candidate is on one scale.

A window that holds none of the agent's memories cannot be when any of them happened: its words
were probably about something else ("where did she move from 4 years ago?"), so they are
searched as words again and the ranking is the one without a window. A query without a window
is left exactly as it was."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cortex_mcp.models import SearchFilters, from_iso, to_iso
from cortex_mcp.search.fusion import Candidate, apply_signals, fuse
from cortex_mcp.search.stages.candidates import read_live
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.stages.text_channel import TextChannel, TextHits
from cortex_mcp.search.text import build_query
from cortex_mcp.search.time_expressions import TimeWindow
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage

IN_WINDOW = 1.0  # as much as the text and vector channels together (fused is 0..1)
NEAR = 0.5  # the most a loose window adds just outside itself
NEAR_DAYS = (1.0, 30.0)  # a loose window reaches its own width beyond each edge, within these
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)  # an open start ("before May") as stored times go
_LOOSE = re.compile(
    r"\b(?:around|about|approximately|roughly|recent|recently|lately|of\s+late|few|several"
    r"|couple|other\s+day)\b|最近|近来|近來|近期|近日|阵子|陣子|这段时间|這段時間|頃|ごろ|左右"
    r"|前后|前後|几|幾|数|數|先日|この間",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reach:
    """What a window lifts: [start, end) by IN_WINDOW and, for a loose one, `near` beyond each
    edge by NEAR falling linearly to 0."""

    start: datetime
    end: datetime
    near: timedelta

    @classmethod
    def of(cls, window: TimeWindow) -> Reach:
        start = max(window.start, _EARLIEST)
        end = max(window.end, start)
        near = timedelta(0)
        if _LOOSE.search(window.expression):
            days = (end - start) / timedelta(days=1)
            near = timedelta(days=min(max(days, NEAR_DAYS[0]), NEAR_DAYS[1]))
        return cls(start, end, near)

    def score(self, moment: datetime) -> float:
        if self.start <= moment < self.end:
            return IN_WINDOW
        distance = self.start - moment if moment < self.start else moment - self.end
        if distance >= self.near:
            return 0.0
        return NEAR * (1 - distance / self.near)

    def within(self, filters: SearchFilters) -> SearchFilters | None:
        """`filters` narrowed to the reach (and kept within their own since/until); None when
        nothing is left."""
        since, until = to_iso(max(self.start - self.near, _EARLIEST)), to_iso(self.end + self.near)
        if filters.since is not None:
            since = max(since, filters.since)
        if filters.until is not None:
            until = min(until, filters.until)
        if since >= until:
            return None
        return filters.model_copy(update={"since": since, "until": until})


class TimeStage:
    name = "time"

    def __init__(self, memories: MemoryStorage, index: VectorIndex, text: TextChannel) -> None:
        self.memories = memories
        self.index = index
        self.text = text

    async def run(self, state: SearchState) -> None:
        window = state.time.window if state.time is not None else None
        if window is None:
            return
        reach = Reach.of(window)
        narrowed = reach.within(state.filters)
        held = await self._held(state, narrowed)
        if not held:
            await self._as_words(state)
            state.facts["time"] = _facts(window, reach, held=0, added=0)
            return
        added = await self._add(state, held, await self._matches(state, narrowed))
        fuse(state.candidates, state.settings, has_vector=state.query_vector is not None)
        apply_signals(state.candidates, state.settings, state.now)
        for c in state.candidates:
            if c.memory is not None:
                c.time_boost = reach.score(from_iso(c.memory.occurred_at))
                c.rescore()
        state.sort()
        state.facts["time"] = _facts(window, reach, held=len(held), added=added)

    async def _held(self, state: SearchState, narrowed: SearchFilters | None) -> list[str]:
        """The reach's most recent memories, up to the pool."""
        if narrowed is None or narrowed.since is None or narrowed.until is None:
            return []
        return await self.memories.occurred_within(
            state.filters, narrowed.since, narrowed.until, state.pool
        )

    async def _matches(self, state: SearchState, narrowed: SearchFilters | None) -> TextHits:
        """The window's memories that match the query's words, best first. When the text
        channel brought fewer than its pool, it brought every match there is (or, on an index
        past the text budget, the best of the newest): none to add, the window's memories
        still come in by their time."""
        found = sum(c.text_rank is not None for c in state.candidates)
        if state.mode == "vector" or narrowed is None or found < state.pool:
            return []
        return await self.text.hits(state.text_query, narrowed, state.pool, state.limit)

    async def _add(self, state: SearchState, held: list[str], matches: TextHits) -> int:
        """The window's memories the channels did not bring, read and scored; how many."""
        known = {c.memory_id for c in state.candidates}
        after = max((c.text_rank for c in state.candidates if c.text_rank is not None), default=-1)
        fresh = {
            memory_id: Candidate(memory_id, text_rank=rank, bm25=bm25)
            for rank, (memory_id, bm25) in enumerate(matches, start=after + 1)
            if memory_id not in known
        }
        for memory_id in held:
            if memory_id not in known:
                fresh.setdefault(memory_id, Candidate(memory_id))
        live = await read_live(state, self.memories, self.index, list(fresh.values()))
        state.candidates.extend(live)
        return len(live)

    async def _as_words(self, state: SearchState) -> None:
        """The text channel again with the whole query: the window's words count as words."""
        if state.mode == "vector":
            return
        state.query = build_query(state.text)
        hits = await self.text.hits(state.query, state.filters, state.pool, state.limit)
        by_id = {c.memory_id: c for c in state.candidates}
        for c in by_id.values():
            c.text_rank, c.bm25 = None, None
        fresh = []
        for rank, (memory_id, bm25) in enumerate(hits):
            candidate = by_id.get(memory_id)
            if candidate is None:
                fresh.append(Candidate(memory_id, text_rank=rank, bm25=bm25))
            else:
                candidate.text_rank, candidate.bm25 = rank, bm25
        state.candidates.extend(await read_live(state, self.memories, self.index, fresh))
        state.candidates = [
            c for c in state.candidates if c.text_rank is not None or c.vector_rank is not None
        ]
        fuse(state.candidates, state.settings, has_vector=state.query_vector is not None)
        apply_signals(state.candidates, state.settings, state.now)
        state.sort()


def _facts(window: TimeWindow, reach: Reach, *, held: int, added: int) -> dict[str, object]:
    """The window as the search debugger and recall's meta show it."""
    return {
        "start": to_iso(window.start),
        "end": to_iso(window.end),
        "expression": window.expression,
        "granularity": window.granularity,
        "near_days": reach.near / timedelta(days=1),
        "memories_in_reach": held,
        "candidates_added": added,
        "boosted": held > 0,
    }
