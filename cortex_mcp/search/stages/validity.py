"""Validity: what is true now ranks above what was, and a question about a slot finds its facts.

A question that asks about a single-valued slot ("where does Marco live now?", "我表弟在哪工作",
"田中さんは何歳?") brings that slot's facts in as candidates (engine/beliefs/validity.py reads
them from each memory), whether or not they share a word with the question ("I moved to Milan"
answers "where does Marco live"), and lifts them by `SLOT_BOOST`:

- by default the current fact is lifted and a superseded one is not;
- a question for the history ("before", "used to", "以前", "前は", or `include_history`) lifts
  every fact of the slot and orders them oldest first;
- a question with a time window ("where did I live in March 2026?") lifts the facts valid
  during the window (their [valid_from, valid_to) overlaps it), not only those said then.

Outside a slot question a superseded memory weighs `SUPERSEDED_WEIGHT` unless the history is
asked for: found, never hidden, below what replaced it. A contested fact keeps its weight and
is marked where it is shown. A query with no slot and no superseded candidate is untouched.
"""

from __future__ import annotations

from datetime import datetime

from cortex_mcp.models import Memory, ValidityStatus, from_iso
from cortex_mcp.search.fusion import apply_signals, fuse
from cortex_mcp.search.slot_questions import (
    SlotQuestion,
    asks_for_history,
    holders_meant,
    slot_question,
)
from cortex_mcp.search.stages.candidates import add_by_id
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.time_expressions import TimeWindow
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.validity import ValidityStore

SLOT_BOOST = 2.0  # above anything a word or a date alone gives (fused <= 1, the window 1)
SUPERSEDED_WEIGHT = 0.5


class ValidityStage:
    name = "validity"

    def __init__(
        self, memories: MemoryStorage, index: VectorIndex, validity: ValidityStore
    ) -> None:
        self.memories = memories
        self.index = index
        self.validity = validity

    async def run(self, state: SearchState) -> None:
        question = slot_question(state.text)
        history = state.filters.include_history or asks_for_history(state.text)
        window = state.time.window if state.time is not None else None
        slot_ids: set[str] = set()
        if question is not None:
            slot_ids = await self._slot_facts(state, question)
        superseded = any(_superseded(c.memory) for c in state.candidates)
        if not slot_ids and not superseded:
            return
        added = await add_by_id(state, self.memories, self.index, slot_ids)
        if added:
            fuse(state.candidates, state.settings, has_vector=state.query_vector is not None)
            apply_signals(state.candidates, state.settings, state.now)
        for c in state.candidates:
            if c.memory is None:
                continue
            c.validity_boost = _boost(c.memory, c.memory_id in slot_ids, history, window)
            c.standing = _standing(c.memory, history, window)
            c.rescore()
        state.sort()
        if history and slot_ids:
            _in_time_order(state, slot_ids)
        state.facts["validity"] = {
            "slots": list(question.slots) if question else [],
            "holder": question.holder if question else None,
            "history": history,
            "slot_facts": len(slot_ids),
            "added": added,
        }

    async def _slot_facts(self, state: SearchState, question: SlotQuestion) -> set[str]:
        agent_id = state.filters.agent_id
        known = await self.validity.holders_of(agent_id, question.slots)
        holders = holders_meant(question.holder, known)
        return set(await self.validity.slot_memories(agent_id, holders, question.slots))


_SUPERSEDED = ValidityStatus.superseded  # looked up once: asked of every candidate


def _superseded(memory: Memory | None) -> bool:
    return memory is not None and memory.status is _SUPERSEDED


def _boost(memory: Memory, slot_fact: bool, history: bool, window: TimeWindow | None) -> float:
    if not slot_fact:
        return 0.0
    if window is not None:
        return SLOT_BOOST if valid_during(memory, window.start, window.end) else 0.0
    if history or memory.status is not ValidityStatus.superseded:
        return SLOT_BOOST
    return 0.0


def _standing(memory: Memory, history: bool, window: TimeWindow | None) -> float:
    if memory.status is not ValidityStatus.superseded or history:
        return 1.0
    if window is not None and valid_during(memory, window.start, window.end):
        return 1.0
    return SUPERSEDED_WEIGHT


def valid_during(memory: Memory, start: datetime, end: datetime) -> bool:
    """Whether [valid_from, valid_to) overlaps [start, end)."""
    began = from_iso(memory.valid_from or memory.occurred_at)
    ended = from_iso(memory.valid_to) if memory.valid_to else None
    return began < end and (ended is None or ended > start)


def _in_time_order(state: SearchState, slot_ids: set[str]) -> None:
    """The slot's facts, where the ranking put them, reordered oldest first."""
    places = [i for i, c in enumerate(state.candidates) if c.memory_id in slot_ids]
    facts = sorted(
        (state.candidates[i] for i in places),
        key=lambda c: c.memory.valid_from if c.memory is not None else "",
    )
    for place, candidate in zip(places, facts, strict=True):
        state.candidates[place] = candidate
