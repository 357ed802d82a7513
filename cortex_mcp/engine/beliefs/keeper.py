"""Beliefs kept up with the evidence: each agent's new memories are read once, in the order
they were stored; an opinion that matches none of its holder's beliefs is a new belief (its
own memory its first evidence), and every memory that says much the same as a belief of its
holder, or of someone it names, is evidence for or against it (engine/beliefs/evidence.py).
A belief's confidence, counts, last evidence and trend are then computed from all of its live
evidence by `confidence.update` and `confidence.trend`: never a number a model picks. A belief
revised by repeated contradiction takes the words of its latest contradicting memory; the old
statement stays in its history. Every birth and change is a `belief` row in the lifecycle log.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from cortex_mcp.engine.beliefs import confidence
from cortex_mcp.engine.beliefs.evidence import (
    USER,
    content_words,
    holder_of,
    is_belief,
    related,
    stated_confidence,
    statement_of,
    supports,
    weight_of,
)
from cortex_mcp.models import BeliefSummary, Clock, Memory, from_iso, new_id, to_iso
from cortex_mcp.store.beliefs import (
    BeliefRow,
    BeliefStore,
    EvidenceRow,
    NewBelief,
    NewEvidence,
    Standing,
)
from cortex_mcp.tokenize import has_cjk, index_text, without_speaker

BATCH = 500  # memories read per transaction


def standing_of(belief: BeliefRow, pieces: Sequence[EvidenceRow], now: datetime) -> Standing:
    """A belief's standing from its evidence: `confidence.update` from its stated prior."""
    state = confidence.update(
        confidence.start(belief.stated),
        (confidence.Evidence(p.memory_id, from_iso(p.at), p.supports, p.weight) for p in pieces),
    )
    by_id = {p.memory_id: p for p in pieces}
    memory_id, statement = belief.memory_id, belief.statement
    if state.reversed != (belief.revisions % 2 == 1):
        # turned over (or back): the words of the latest memory for what is now held
        latest = max((by_id[i] for i in state.for_ids), key=lambda p: (p.at, p.memory_id))
        memory_id, statement = latest.memory_id, _statement_text(latest.content)
    agrees = [(from_iso(p.at), p.supports != state.reversed) for p in pieces]
    last = to_iso(state.last_evidence_at) if state.last_evidence_at else None
    return Standing(
        memory_id=memory_id,
        statement=statement,
        confidence=state.confidence,
        for_count=len(state.for_ids),
        against_count=len(state.against_ids),
        last_evidence_at=last,
        trend=confidence.trend(agrees, now).value,
        revisions=state.revisions,
    )


def _statement_text(content: str) -> str:
    return without_speaker(content).strip()


@dataclass
class _Known:
    """The agent's beliefs by holder, their words indexed for finding evidence."""

    words: dict[str, frozenset[str]] = field(default_factory=dict)
    statements: dict[str, str] = field(default_factory=dict)  # as each belief was born
    by_holder_word: dict[str, dict[str, set[str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(set))
    )
    origin: dict[str, str] = field(default_factory=dict)  # memory id -> the belief it started
    latin_holders: set[str] = field(default_factory=set)
    cjk_holders: set[str] = field(default_factory=set)

    def add(self, belief_id: str, holder: str, statement: str, memory_id: str) -> None:
        words = content_words(statement, holder)
        self.words[belief_id] = words
        self.statements[belief_id] = statement
        self.origin.setdefault(memory_id, belief_id)
        for word in words:
            self.by_holder_word[holder][word].add(belief_id)
        if holder != USER:
            (self.cjk_holders if has_cjk(holder) else self.latin_holders).add(holder)

    def holders_named(self, text: str) -> set[str]:
        folded = text.casefold()
        words = set(index_text(folded).split())
        named = {h for h in self.latin_holders if h in words or (" " in h and h in folded)}
        named |= {h for h in self.cjk_holders if h in folded}
        return named

    def matching(self, holders: set[str], words: frozenset[str]) -> list[str]:
        found: set[str] = set()
        for holder in holders:
            index = self.by_holder_word.get(holder)
            if not index:
                continue
            for word in words:
                found |= index.get(word, set())
        return sorted(b for b in found if related(self.words[b], words))


class BeliefKeeper:
    """Reads new memories for beliefs and their evidence, and settles the beliefs they touch."""

    def __init__(self, store: BeliefStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    async def settle(self, agent_id: str, *, batches: int | None = 1) -> int:
        """Read up to `batches` batches of the agent's new memories (None: all); how many
        beliefs changed standing."""
        changed = 0
        done = 0
        known: _Known | None = None
        while batches is None or done < batches:
            unread = await self.store.unread(agent_id, BATCH)
            if not unread:
                break
            if known is None:
                known = await self._known(agent_id)
            born, evidence = _read(known, [memory for _, memory in unread])
            now = self.clock.now()
            outcome = await self.store.record(
                agent_id,
                born,
                evidence,
                unread[-1][0],
                partial(standing_of, now=now),
                to_iso(now),
            )
            changed += len(outcome)
            done += 1
        return changed

    async def _known(self, agent_id: str) -> _Known:
        known = _Known()
        for belief in await self.store.beliefs(agent_id):
            # evidence is for or against the statement a belief was born with
            original = belief.history[0]["statement"] if belief.history else belief.statement
            known.add(belief.id, belief.holder, str(original), belief.memory_id)
        return known

    async def resettle(self, agent_id: str, belief_ids: Sequence[str]) -> int:
        now = self.clock.now()
        return len(
            await self.store.settle(
                agent_id,
                belief_ids,
                partial(standing_of, now=now),
                to_iso(now),
            )
        )

    async def left(self, agent_id: str, memory_id: str) -> int:
        """A memory left (forgotten, purged, corrected): the beliefs it was evidence of stand
        again on the evidence that remains."""
        return await self.resettle(agent_id, await self.store.beliefs_citing(agent_id, memory_id))

    async def summaries(
        self, agent_id: str, memory_ids: Sequence[str], now: datetime
    ) -> dict[str, BeliefSummary]:
        """Memory id -> the belief it states, computed afresh from its live evidence."""
        return await self.summaries_of(
            agent_id, await self.store.beliefs_stating(agent_id, memory_ids), now
        )

    async def summaries_of(
        self, agent_id: str, beliefs: list[BeliefRow], now: datetime
    ) -> dict[str, BeliefSummary]:
        """`summaries` of the beliefs its memories state, already read."""
        if not beliefs:
            return {}
        pieces: dict[str, list[EvidenceRow]] = defaultdict(list)
        for piece in await self.store.evidence(agent_id, [b.id for b in beliefs]):
            pieces[piece.belief_id].append(piece)
        out = {}
        for belief in beliefs:
            standing = standing_of(belief, pieces[belief.id], now)
            out[belief.memory_id] = summary_of(belief, standing)
        return out


async def bank_beliefs(store: BeliefStore, agent_id: str, now: datetime) -> list[dict[str, Any]]:
    """The agent's beliefs as the mirror's bank/opinions.md shows them: each standing computed
    from its live evidence, with the memories for and against it."""
    beliefs = await store.beliefs(agent_id)
    pieces: dict[str, list[EvidenceRow]] = defaultdict(list)
    for piece in await store.evidence(agent_id, [b.id for b in beliefs]):
        pieces[piece.belief_id].append(piece)
    shown = []
    for belief in beliefs:
        standing = standing_of(belief, pieces[belief.id], now)
        reversed_ = standing.revisions % 2 == 1
        shown.append(
            {
                "statement": standing.statement,
                "holder": belief.holder_name,
                "confidence": standing.confidence,
                "for": standing.for_count,
                "against": standing.against_count,
                "last_evidence_at": standing.last_evidence_at,
                "trend": standing.trend,
                "updated_at": belief.updated_at,
                "for_ids": [p.memory_id for p in pieces[belief.id] if p.supports != reversed_],
                "against_ids": [p.memory_id for p in pieces[belief.id] if p.supports == reversed_],
                "history": belief.history,
            }
        )
    return shown


def summary_of(belief: BeliefRow, standing: Standing) -> BeliefSummary:
    return BeliefSummary(
        id=belief.id,
        holder=belief.holder_name,
        statement=standing.statement,
        confidence=round(standing.confidence, 4),
        **{"for": standing.for_count},
        against=standing.against_count,
        last_evidence_at=standing.last_evidence_at,
        trend=standing.trend,
        revisions=standing.revisions,
    )


def _read(known: _Known, memories: Sequence[Memory]) -> tuple[list[NewBelief], list[NewEvidence]]:
    """The beliefs born and the evidence found among `memories` (in stored order)."""
    born: list[NewBelief] = []
    evidence: list[NewEvidence] = []
    for memory in memories:
        if memory.forgotten_at is not None or memory.superseded_by is not None:
            continue
        holder = holder_of(memory)
        text = statement_of(memory)
        words = content_words(text, holder.key)
        holders = {holder.key} | known.holders_named(text)
        matched = known.matching(holders, words) if words else []
        for belief_id in matched:
            evidence.append(
                NewEvidence(
                    belief_id,
                    memory.id,
                    supports(known.statements[belief_id], text),
                    weight_of(memory),
                    memory.valid_from or memory.occurred_at,
                )
            )
        if is_belief(memory) and not matched and words:
            belief = NewBelief(
                id=new_id(),
                holder=holder.key,
                holder_name=holder.name,
                memory_id=memory.id,
                statement=text,
                stated=stated_confidence(memory),
            )
            born.append(belief)
            known.add(belief.id, holder.key, text, memory.id)
            evidence.append(
                NewEvidence(
                    belief.id, memory.id, True, 1.0, memory.valid_from or memory.occurred_at
                )
            )
    return born, evidence
