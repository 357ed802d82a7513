"""How a belief's confidence follows its evidence: a deterministic function, written out.

A belief is a statement someone holds (the user prefers light mode in the evening). Each piece of
evidence is a memory that supports or contradicts it, with a weight in (0, 1] (how strongly it
says so: a stated preference weighs 1, something inferred less) and the moment it was said.
The update rule, applied to the evidence in time order:

- A belief is born at `PRIOR` (0.5), or at the confidence its author stated (`O(c=0.95)`).
- A supporting piece moves the confidence up by `MAX_STEP * weight / sqrt(1 + s) * (1 - c)`,
  where `s` is the weight of support already seen: the same thing said again counts, but less
  each time (diminishing returns), and the step shrinks as the confidence nears 1.
- A contradicting piece moves it down by `MAX_STEP * weight * c * k`, where `k` is 1/2 for the
  first contradiction and 1 from the second on: a single contradiction is weak, repeated ones
  are not.
- So no piece moves the confidence by more than `MAX_STEP` (0.15), support never lowers it and
  contradiction never raises it.
- The statement is revised only when contradiction outweighs support (`against > for`), there
  were at least `REVISE_AFTER` (2) contradicting pieces, and the confidence fell below 1/2. The
  revised belief holds the contradicting statement at confidence `1 - c`, with the roles of its
  evidence swapped; the old statement stays as its history.

The trend reads the times of the evidence: `stale` when the last piece is older than
`STALE_AFTER`, `new` while all of it is younger than `NEW_WITHIN`, `strengthening` or
`weakening` when the pieces of the last `RECENT_WITHIN` lean one way, `stable` otherwise.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

MAX_STEP = 0.15
PRIOR = 0.5
REVISE_AFTER = 2
FIRST_CONTRADICTION_FACTOR = 0.5
STALE_AFTER = timedelta(days=90)
NEW_WITHIN = timedelta(days=14)
RECENT_WITHIN = timedelta(days=30)


class Trend(enum.StrEnum):
    new = "new"
    strengthening = "strengthening"
    stable = "stable"
    weakening = "weakening"
    stale = "stale"


@dataclass(frozen=True)
class Evidence:
    """One memory's say on a belief."""

    memory_id: str
    at: datetime
    supports: bool
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.weight <= 1.0:
            raise ValueError(f"weight: must be in (0, 1], got {self.weight}")


@dataclass(frozen=True)
class BeliefState:
    """A belief's standing after its evidence: what `update` returns."""

    confidence: float
    support: float = 0.0  # the weight of the evidence for the current statement
    against: float = 0.0  # the weight of the evidence against it
    for_ids: tuple[str, ...] = ()
    against_ids: tuple[str, ...] = ()
    contradictions: int = 0  # pieces against the current statement
    last_evidence_at: datetime | None = None
    revisions: int = 0  # how many times the statement was turned over
    history: tuple[tuple[bool, float], ...] = field(default=())  # (reversed?, confidence) per piece

    @property
    def reversed(self) -> bool:
        """Whether the statement now held is the opposite of the one the belief was born with."""
        return self.revisions % 2 == 1


def start(stated: float | None = None) -> BeliefState:
    """A belief before any evidence: at its stated confidence, or at `PRIOR`."""
    confidence = PRIOR if stated is None else min(max(stated, 0.0), 1.0)
    return BeliefState(confidence=confidence)


def step(state: BeliefState, evidence: Evidence, *, agrees: bool | None = None) -> BeliefState:
    """The state after one more piece. `agrees`: whether the piece supports the statement now
    held (default: `evidence.supports`, flipped when the belief has been revised an odd number
    of times, since the evidence is stated against the original statement)."""
    if agrees is None:
        agrees = evidence.supports != state.reversed
    c = state.confidence
    when = _later(state.last_evidence_at, evidence.at)
    if agrees:
        size = MAX_STEP * evidence.weight / math.sqrt(1.0 + state.support)
        moved = BeliefState(
            confidence=min(1.0, c + size * (1.0 - c)),
            support=state.support + evidence.weight,
            against=state.against,
            for_ids=(*state.for_ids, evidence.memory_id),
            against_ids=state.against_ids,
            contradictions=state.contradictions,
            last_evidence_at=when,
            revisions=state.revisions,
        )
    else:
        factor = FIRST_CONTRADICTION_FACTOR if state.contradictions == 0 else 1.0
        moved = BeliefState(
            confidence=max(0.0, c - MAX_STEP * evidence.weight * c * factor),
            support=state.support,
            against=state.against + evidence.weight,
            for_ids=state.for_ids,
            against_ids=(*state.against_ids, evidence.memory_id),
            contradictions=state.contradictions + 1,
            last_evidence_at=when,
            revisions=state.revisions,
        )
    if _must_revise(moved):
        moved = _revised(moved)
    return _with_history(moved, state.history)


def update(state: BeliefState, evidence: Iterable[Evidence]) -> BeliefState:
    """`step` over the evidence in time order (ties by memory id, so the order is total)."""
    for piece in sorted(evidence, key=lambda e: (e.at, e.memory_id)):
        state = step(state, piece)
    return state


def trend(times: Sequence[tuple[datetime, bool]], now: datetime) -> Trend:
    """The trend from the evidence's (time, agrees-with-the-current-statement) pairs."""
    if not times:
        return Trend.stale
    first = min(t for t, _ in times)
    last = max(t for t, _ in times)
    if now - last > STALE_AFTER:
        return Trend.stale
    if now - first <= NEW_WITHIN:
        return Trend.new
    recent = [agrees for t, agrees in times if now - t <= RECENT_WITHIN]
    pro = sum(1 for agrees in recent if agrees)
    con = len(recent) - pro
    if pro > con:
        return Trend.strengthening
    if con > pro:
        return Trend.weakening
    return Trend.stable


def describe(statement: str, state: BeliefState) -> str:
    """The line an agent reads: `prefers light mode (0.82; 4 for, 1 against; last 2026-11-20)`."""
    standing = standing_text(
        state.confidence, len(state.for_ids), len(state.against_ids), state.last_evidence_at
    )
    return f"{statement} {standing}"


def standing_text(
    confidence: float, for_count: int, against_count: int, last_evidence_at: datetime | None
) -> str:
    """`(0.82; 4 for, 1 against; last 2026-11-20)`: what `describe` says after the statement."""
    last = last_evidence_at.date().isoformat() if last_evidence_at else "never"
    return f"({confidence:.2f}; {for_count} for, {against_count} against; last {last})"


def _must_revise(state: BeliefState) -> bool:
    return (
        state.contradictions >= REVISE_AFTER
        and state.against > state.support
        and state.confidence < 0.5
    )


def _revised(state: BeliefState) -> BeliefState:
    return BeliefState(
        confidence=1.0 - state.confidence,
        support=state.against,
        against=state.support,
        for_ids=state.against_ids,
        against_ids=state.for_ids,
        contradictions=len(state.for_ids),
        last_evidence_at=state.last_evidence_at,
        revisions=state.revisions + 1,
    )


def _with_history(state: BeliefState, before: tuple[tuple[bool, float], ...]) -> BeliefState:
    return BeliefState(
        confidence=state.confidence,
        support=state.support,
        against=state.against,
        for_ids=state.for_ids,
        against_ids=state.against_ids,
        contradictions=state.contradictions,
        last_evidence_at=state.last_evidence_at,
        revisions=state.revisions,
        history=(*before, (state.reversed, state.confidence)),
    )


def _later(a: datetime | None, b: datetime) -> datetime:
    return b if a is None or b > a else a
