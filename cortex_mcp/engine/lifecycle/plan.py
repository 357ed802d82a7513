"""The lifecycle's decisions as a pure function of a snapshot and a moment.

`plan()` walks the four acting phases in order over the snapshot it is given (and changes it), each
phase seeing what the previous one did, so the list it returns is exactly what a run applies
(a run re-checks every step against the database and skips one whose memories changed).
Formulas from seed 000 §5.4 and seed 003: promotion from access, high-signal origin and
novelty; merge by cosine >= the threshold where both memories have a vector of the current
embedding model, by a text measure otherwise; decay from 1.0 at the last store, change or use,
slower for identity and preferences and for what matters and is used, and no core memory archived
for it before `min_core_age_days`; archive compressed by month after the archive TTL.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from cortex_mcp.config import LifecycleSettings
from cortex_mcp.engine.lifecycle.similarity import TextSimilarity, shingles
from cortex_mcp.models import Category, Layer, LifecycleAction, Memory, from_iso, to_iso
from cortex_mcp.tokenize import speaker_of

PHASES = ("promote", "merge", "archive", "compress")

# seed 000 §5.4: base importance by category (identity barely decays, context fastest)
CATEGORY_BASE = {
    Category.identity: 1.0,
    Category.preference: 0.9,
    Category.relationship: 0.8,
    Category.decision: 0.7,
    Category.correction: 0.7,
    Category.skill: 0.6,
    Category.project_state: 0.6,
    Category.insight: 0.6,
    Category.fact: 0.5,
    Category.todo: 0.3,
    Category.context: 0.2,
}
# seed 003: decay speed per type, as a multiple of lambda
DECAY_RATE = {
    Category.identity: 0.1,
    Category.preference: 0.2,
    Category.relationship: 0.3,
    Category.decision: 0.5,
    Category.correction: 0.5,
    Category.skill: 0.5,
    Category.insight: 0.8,
    Category.todo: 2.0,
    Category.context: 3.0,
}
PERMANENT = {Category.summary, Category.profile}  # never archived nor merged by the lifecycle
HIGH_SIGNAL = {Category.identity, Category.preference, Category.decision, Category.correction}
SUMMARY_ITEMS = 8
SUMMARY_ITEM_CHARS = 160


@dataclass
class Plan:
    now: str
    actions: list[LifecycleAction] = field(default_factory=list)
    decay_scores: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0

    def phase(self, name: str) -> list[LifecycleAction]:
        return [a for a in self.actions if a.phase == name]


def plan(
    memories: list[Memory],
    now: datetime,
    settings: LifecycleSettings,
    archive_ttl: timedelta,
    *,
    llm_available: bool = False,
    vectors: dict[str, np.ndarray] | None = None,
) -> Plan:
    result = Plan(now=to_iso(now))
    budget = [settings.llm_max_calls if llm_available else 0]
    by_agent: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        by_agent[memory.agent_id].append(memory)  # a fresh snapshot: changed in place
    for agent in sorted(by_agent):
        state = {m.id: m for m in by_agent[agent]}
        texts: dict[str, frozenset[str]] = {}  # shingles by memory id: promote and merge share them
        _promote(state, now, settings, result, texts)
        _merge(state, now, settings, result, budget, vectors or {}, texts)
        reserve = _new_summaries(state, now, archive_ttl)  # summaries about to join core
        _archive(state, now, settings, result, reserve)
        _compress(state, now, archive_ttl, settings, result, budget)
    result.llm_calls = (settings.llm_max_calls if llm_available else 0) - budget[0]
    return result


# ---- phase 1: promote ----------------------------------------------------------------------


def promotion_score(memory: Memory, novelty: float) -> float:
    access = min(1.0, memory.access_count / 3)
    signal = 1.0 if is_high_signal(memory) else 0.0
    return 0.35 * access + 0.35 * signal + 0.15 * memory.importance + 0.15 * novelty


def is_high_signal(memory: Memory) -> bool:
    meta = memory.metadata or {}
    return bool(meta.get("high_signal") or meta.get("signals")) or memory.category in HIGH_SIGNAL


def _promote(
    state: dict[str, Memory],
    now: datetime,
    settings: LifecycleSettings,
    result: Plan,
    texts: dict[str, frozenset[str]],
) -> None:
    core = TextSimilarity()
    for m in state.values():
        if m.layer is Layer.core:
            core.add(m.id, m.content, _shingles(m, texts))
    min_age = timedelta(hours=settings.promote_min_age_hours)
    for m in _ordered(state, Layer.working):
        expired = m.expires_at is not None and from_iso(m.expires_at) <= now
        if now - from_iso(m.created_at) < min_age and not expired:
            continue
        _, similarity = core.best(m.content, _shingles(m, texts))
        score = round(promotion_score(m, 1.0 - similarity), 4)
        if score >= settings.promote_threshold:
            _add(result, "promote", "promote", m, [m.id], score, "score >= threshold")
            _relayer(m, Layer.core, now)
            core.add(m.id, m.content, _shingles(m, texts))
        elif expired:
            _add(result, "promote", "expire", m, [m.id], score, "working TTL passed")
            _relayer(m, Layer.archive, now)


# ---- phase 2: merge ------------------------------------------------------------------------


def _merge(
    state: dict[str, Memory],
    now: datetime,
    settings: LifecycleSettings,
    result: Plan,
    budget: list[int],
    vectors: dict[str, np.ndarray],
    texts: dict[str, frozenset[str]],
) -> None:
    candidates = [m for m in _ordered(state, Layer.core) if m.category not in PERMANENT]
    # near-duplicates of the same category and the same speaker: two people's alike lines
    # are two memories, never one superseding the other
    by_kind: dict[tuple[Category, str], list[Memory]] = defaultdict(list)
    for m in candidates:
        by_kind[(m.category, speaker_of(m.content, m.metadata) or "")].append(m)
    for kind in sorted(by_kind):
        group = by_kind[kind]
        index = TextSimilarity(searchable=False)
        for m in group:
            index.add(m.id, m.content, _shingles(m, texts))
        for cluster in index.clusters(settings.merge_threshold, vectors):
            members = sorted((state[i] for i in cluster), key=lambda x: (x.created_at, x.id))
            keeper = members[-1]  # the latest wins a conflict; the others chain to it
            use_llm = budget[0] > 0
            budget[0] -= 1 if use_llm else 0
            action = _add(
                result,
                "merge",
                "merge",
                keeper,
                [m.id for m in members],
                None,
                f"{len(members)} near-duplicates (similarity >= {settings.merge_threshold})",
            )
            action.into = None if use_llm else keeper.id
            action.llm = use_llm
            for m in members[:-1]:
                _relayer(m, Layer.archive, now)
                m.superseded_by = keeper.id
            keeper.updated_at = to_iso(now) if use_llm else keeper.updated_at
            keeper.access_count += sum(m.access_count for m in members[:-1])
            keeper.occurred_at = min(m.occurred_at for m in members)
            keeper.importance = max(m.importance for m in members)


# ---- phase 3: archive ----------------------------------------------------------------------


def decay_score(memory: Memory, now: datetime, max_access: int, decay_lambda: float) -> float:
    """1.0 when a memory is stored, changed or used, then exp(-lambda x rate x days / liveliness):
    the days since then, a rate by category and importance, and a liveliness (base importance by
    category and importance x access frequency) that slows the fall of what matters and is used.
    """
    base = (CATEGORY_BASE.get(memory.category, 0.5) + memory.importance) / 2
    frequency = 0.5 + 0.5 * math.log1p(memory.access_count) / math.log1p(max(max_access, 10))
    seen = max(memory.last_accessed or "", memory.updated_at)
    days = max(0.0, (now - from_iso(seen)).total_seconds() / 86400)
    rate = decay_lambda * DECAY_RATE.get(memory.category, 1.0) * (1 - memory.importance * 0.5)
    return math.exp(-rate * days / (base * min(frequency, 1.0)))


def _archive(
    state: dict[str, Memory],
    now: datetime,
    settings: LifecycleSettings,
    result: Plan,
    reserve: int = 0,
) -> None:
    core = _ordered(state, Layer.core)
    mortal = [m for m in core if m.category not in PERMANENT]
    max_access = max((m.access_count for m in mortal), default=0)
    scores = {m.id: decay_score(m, now, max_access, settings.decay_lambda) for m in mortal}
    settled = to_iso(now - timedelta(days=settings.min_core_age_days))
    young = {m.id for m in mortal if m.created_at > settled}  # not yet had time to be used
    kept = []
    for m in mortal:
        if scores[m.id] < settings.archive_threshold and m.id not in young:
            _add(result, "archive", "archive", m, [m.id], round(scores[m.id], 4), "decayed")
            _relayer(m, Layer.archive, now)
        else:
            kept.append(m)
    overflow = len(core) - (len(mortal) - len(kept)) + reserve - settings.core_max_entries
    for m in sorted(kept, key=lambda x: (scores[x.id], x.created_at))[: max(0, overflow)]:
        _add(result, "archive", "archive", m, [m.id], round(scores[m.id], 4), "core is full")
        _relayer(m, Layer.archive, now)
    for m in kept:
        if m.layer is Layer.core:
            result.decay_scores[m.id] = scores[m.id]


# ---- phase 4: compress ---------------------------------------------------------------------


def _compress(
    state: dict[str, Memory],
    now: datetime,
    archive_ttl: timedelta,
    settings: LifecycleSettings,
    result: Plan,
    budget: list[int],
) -> None:
    periods = _compress_groups(state, now, archive_ttl)
    existing = {  # a month already summarised takes its late arrivals into the same summary
        str(m.metadata.get("period")): m
        for m in _ordered(state, Layer.core)
        if m.category is Category.summary and m.metadata.get("section") == "history"
    }
    for period in sorted(periods):
        members = periods[period]
        use_llm = budget[0] > 0
        budget[0] -= 1 if use_llm else 0
        action = _add(
            result,
            "compress",
            "compress",
            members[0],
            [m.id for m in members],
            None,
            f"archived more than {archive_ttl.days} days",
        )
        action.period, action.llm = period, use_llm
        action.into = existing[period].id if period in existing else None
        for m in members:
            m.metadata = {**m.metadata, "compressed_into": "pending"}
            m.layer = Layer.archive


def _compress_groups(
    state: dict[str, Memory], now: datetime, archive_ttl: timedelta
) -> dict[str, list[Memory]]:
    """Archive memories past the archive TTL, by the month they happened (`occurred_at`)."""
    cutoff = to_iso(now - archive_ttl)
    periods: dict[str, list[Memory]] = defaultdict(list)
    for m in _ordered(state, Layer.archive):
        if m.updated_at <= cutoff and m.superseded_by is None:
            periods[m.occurred_at[:7]].append(m)
    return periods


def _new_summaries(state: dict[str, Memory], now: datetime, archive_ttl: timedelta) -> int:
    summarised = {
        str(m.metadata.get("period"))
        for m in _ordered(state, Layer.core)
        if m.category is Category.summary and m.metadata.get("section") == "history"
    }
    return len(set(_compress_groups(state, now, archive_ttl)) - summarised)


def summary_items(memories: list[Memory], limit: int = SUMMARY_ITEMS) -> list[Memory]:
    """Most important, then most recalled, first."""
    return sorted(memories, key=lambda m: (-m.importance, -m.access_count, m.created_at))[:limit]


def extractive_summary(period: str, memories: list[Memory], total: int | None = None) -> str:
    """`memories` may be only the highest ranked of the `total` the summary covers."""
    items = [_clip(m.content) for m in summary_items(memories)]
    total = len(memories) if total is None else total
    more = total - len(items)
    tail = f"; and {more} more" if more > 0 else ""
    return f"[{period}] {total} archived memories: " + "; ".join(items) + tail


# ---- helpers -------------------------------------------------------------------------------


def _shingles(memory: Memory, texts: dict[str, frozenset[str]]) -> frozenset[str]:
    found = texts.get(memory.id)
    if found is None:
        found = texts[memory.id] = shingles(memory.content)
    return found


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_ITEM_CHARS else flat[: SUMMARY_ITEM_CHARS - 1] + "…"


def _ordered(state: dict[str, Memory], layer: Layer) -> list[Memory]:
    return [
        m
        for m in state.values()
        if m.layer is layer
        and m.superseded_by is None
        and "compressed_into" not in (m.metadata or {})
    ]


def _relayer(memory: Memory, layer: Layer, now: datetime) -> None:
    memory.layer = layer
    memory.updated_at = to_iso(now)
    memory.expires_at = None


def _add(
    result: Plan,
    phase: str,
    kind: str,
    memory: Memory,
    ids: list[str],
    score: float | None,
    reason: str,
) -> LifecycleAction:
    action = LifecycleAction.model_construct(  # typed values: validation would only cost
        phase=phase, kind=kind, agent_id=memory.agent_id, ids=ids, score=score, reason=reason
    )
    result.actions.append(action)
    return action
