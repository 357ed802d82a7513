"""Fusing the text and vector channels, then the ranking signals (layer, recency, access,
decay) and MMR. Pure functions over candidates, so the benchmark can try every variant.

The default, `maxnorm`, scores every candidate in both channels (a text hit's cosine is
looked up, not taken as 0 because it missed the vector pool) and divides each channel by its
best score. Both scores have a natural zero (no shared term; an orthogonal meaning), so
scaling keeps how far a hit is from the best one, where min-max over the pool stretches
whatever range the pool happens to have to 0..1 and makes the pool's weakest member worth
nothing. Equal weights: no channel is trusted more on data we have not seen."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import numpy as np

from cortex_mcp.config import SearchSettings
from cortex_mcp.models import Category, Layer, Memory, from_iso
from cortex_mcp.tokenize import without_speaker


@dataclass(slots=True)  # ~60 per recall, each read and written by every stage
class Candidate:
    memory_id: str
    text_rank: int | None = None  # 0-based rank in the text channel
    bm25: float | None = None  # raw FTS5 bm25 (lower is better); None for LIKE-only hits
    text_score: float = 0.0  # normalised to 0..1
    vector_rank: int | None = None
    cosine: float | None = None
    vector_score: float = 0.0
    fused: float = 0.0
    layer_weight: float = 1.0
    recency: float = 1.0
    access: float = 1.0
    decay: float = 1.0
    final: float = 0.0
    # what the time stage added to `fused`: 1.0 in the window the query names, up to 0.5 near a
    # loose one, else 0 (search/stages/time.py)
    time_boost: float = 0.0
    # what the entity stage added to `fused`: a speaker's or subject's memory of the entity the
    # query names, less for a mention, else 0 (search/stages/entity.py)
    entity_boost: float = 0.0
    # what the validity stage added: a fact of the slot a question asks about; and the weight
    # of its standing (a superseded fact below what replaced it) (search/stages/validity.py)
    validity_boost: float = 0.0
    standing: float = 1.0
    # what the belief stage added: a belief of the one a "what does X prefer?" question asks
    # about, in proportion to its confidence (search/stages/belief.py)
    belief_boost: float = 0.0
    rerank_score: float | None = None  # the reranker's relevance, when it ran
    mmr_step: int | None = None
    # the score after each stage, kept only for the search debugger (SearchState.debug)
    stage_scores: dict[str, float] = field(default_factory=dict, repr=False)
    memory: Memory | None = field(default=None, repr=False)

    def rescore(self) -> None:
        """`final`: the fused relevance with what the stages added to it (a window, an entity,
        a slot, a belief), times the signals and the memory's standing."""
        lifted = (
            self.fused
            + self.time_boost
            + self.entity_boost
            + self.validity_boost
            + self.belief_boost
        )
        signals = self.layer_weight * self.recency * self.access * self.decay
        self.final = lifted * signals * self.standing


def _minmax(values: list[float]) -> list[float]:
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return [1.0 for _ in values]
    return [(v - low) / (high - low) for v in values]


def merge_channels(
    text_hits: list[tuple[str, float | None]], vector_hits: list[tuple[str, float]]
) -> dict[str, Candidate]:
    """One candidate per memory with its rank and raw score in each channel."""
    candidates: dict[str, Candidate] = {}
    for rank, (memory_id, bm25) in enumerate(text_hits):
        candidates[memory_id] = Candidate(memory_id, text_rank=rank, bm25=bm25)
    for rank, (memory_id, cosine) in enumerate(vector_hits):
        candidate = candidates.setdefault(memory_id, Candidate(memory_id))
        candidate.vector_rank, candidate.cosine = rank, cosine
    return candidates


def fill_cosines(
    candidates: list[Candidate], vectors: dict[str, np.ndarray], query: np.ndarray
) -> None:
    """The cosine of every candidate whose vector is known, also those the vector pool missed."""
    for c in candidates:
        vector = vectors.get(c.memory_id)
        if c.cosine is None and vector is not None:
            c.cosine = float(vector @ query)


def fuse(candidates: list[Candidate], settings: SearchSettings, has_vector: bool) -> None:
    """Set text_score, vector_score and fused on every candidate, by the configured method."""
    if settings.fusion == "maxnorm":
        _fuse_maxnorm(candidates, settings, has_vector)
        return
    texts = [c for c in candidates if c.text_rank is not None]
    vectors = [c for c in candidates if c.vector_rank is not None]
    scored_text = [c for c in texts if c.bm25 is not None]
    for c, value in zip(scored_text, _minmax([-(c.bm25 or 0.0) for c in scored_text]), strict=True):
        c.text_score = value
    for c, value in zip(vectors, _minmax([c.cosine or 0.0 for c in vectors]), strict=True):
        c.vector_score = value
    has_text = bool(texts)
    for c in candidates:
        c.fused = _fused(c, settings, has_text=has_text, has_vector=has_vector and bool(vectors))


def fuse_added(
    candidates: list[Candidate], added: int, settings: SearchSettings, has_vector: bool
) -> bool:
    """`fuse` after the last `added` candidates joined the others, which were fused with the
    same `has_vector` and not changed since: `maxnorm` divides each channel by its best score,
    so when no candidate added beats either best, the others' scores stand and only the added
    are scored (the same values `fuse` gives them). Otherwise every candidate is fused again:
    True then."""
    before, new = candidates[: len(candidates) - added], candidates[len(candidates) - added :]
    if settings.fusion != "maxnorm" or not before:
        fuse(candidates, settings, has_vector)
        return True
    best_text = max(-(c.bm25 or 0.0) for c in before)
    best_cosine = max(c.cosine or 0.0 for c in before)
    if any(-(c.bm25 or 0.0) > best_text or (c.cosine or 0.0) > best_cosine for c in new):
        fuse(candidates, settings, has_vector)
        return True
    _fuse_maxnorm(new, settings, has_vector, best=(best_text, best_cosine))
    return False


def _fuse_maxnorm(
    candidates: list[Candidate],
    s: SearchSettings,
    has_vector: bool,
    best: tuple[float, float] | None = None,
) -> None:
    """`best`: each channel's best score (text, cosine), when more candidates than these
    share it."""
    if best is None:
        best_text = max((-(c.bm25 or 0.0) for c in candidates), default=0.0)
        best_cosine = max((c.cosine or 0.0 for c in candidates), default=0.0)
    else:
        best_text, best_cosine = best
    use_vector = has_vector and best_cosine > 0
    text_weight, vector_weight = s.text_weight, s.vector_weight
    total = vector_weight + text_weight or 1.0
    for c in candidates:
        # FTS5's bm25 is negative, more so the better; a LIKE-only hit has none and scores 0
        c.text_score = max(-(c.bm25 or 0.0), 0.0) / best_text if best_text > 0 else 0.0
        c.vector_score = max(c.cosine or 0.0, 0.0) / best_cosine if use_vector else 0.0
        if use_vector and c.cosine is not None:
            c.fused = (text_weight * c.text_score + vector_weight * c.vector_score) / total
        else:  # no vector yet (the indexer has not reached it): ranked by the text it has
            c.fused = c.text_score


def _fused(c: Candidate, s: SearchSettings, *, has_text: bool, has_vector: bool) -> float:
    # a memory the indexer has not reached yet has no cosine: rank it by its text alone
    has_vector = has_vector and c.cosine is not None
    if s.fusion == "rrf":
        score = 0.0
        if c.text_rank is not None:
            score += 1.0 / (s.rrf_k + c.text_rank + 1)
        if c.vector_rank is not None:
            score += 1.0 / (s.rrf_k + c.vector_rank + 1)
        return score * (s.rrf_k + 1) / (2 if has_text and has_vector else 1)
    if s.fusion == "weighted":  # the seed design: 0.7 * cosine + 0.3 * 1 / (1 + rank)
        text = 1.0 / (1 + c.text_rank) if c.text_rank is not None else 0.0
        if not has_vector:
            return text
        vector = max(c.cosine or 0.0, 0.0)
        return s.vector_weight * vector + s.text_weight * text if has_text else vector
    # minmax: min-max normalised scores in each channel, weighted
    if not has_vector:
        return c.text_score if c.text_rank is not None else 0.0
    if not has_text:
        return c.vector_score
    total = s.vector_weight + s.text_weight or 1.0
    return (s.vector_weight * c.vector_score + s.text_weight * c.text_score) / total


def apply_signals(candidates: list[Candidate], settings: SearchSettings, now: datetime) -> None:
    """Layer weight, recency boost, the access tie-breaker and optional half-life decay.

    Times are reckoned in whole microseconds since 1970 (`micros`): a datetime difference's
    `total_seconds()` is its microseconds / 10**6, so every age is the same float it was
    reckoned from datetimes, without parsing a stored time again or building a timedelta per
    candidate (a recall weighs ~60)."""
    if not candidates:
        return
    now_us = micros_of(now)
    weights = settings.layer_weights
    window, boost = settings.recency_window_days, settings.recency_boost
    decay, half_life = settings.temporal_decay, settings.half_life_days
    access = _AccessBoost(settings)
    for c in candidates:
        memory = c.memory
        if memory is None:
            continue
        c.layer_weight = weights.get(_layer_at(memory, now_us), 1.0)
        age_days = max((now_us - _dated_us(memory)) / 1_000_000 / 86400, 0.0)
        if window > 0 and age_days < window:
            c.recency = 1.0 + boost * (window - age_days) / window
        c.access = access.factor(memory, now_us)
        if decay:
            c.decay = math.exp(-math.log(2) * age_days / half_life)
        c.rescore()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# looked up once: an enum's members and their values are class attributes found through its
# metaclass, ~0.1 us each, several per candidate
_SUMMARY = Category.summary
_WORKING = Layer.working
_ARCHIVE = Layer.archive


def micros_of(moment: datetime) -> int:
    """`moment` as whole microseconds since 1970 (exact: datetimes count microseconds)."""
    return (moment - _EPOCH) // _MICROSECOND


@lru_cache(maxsize=8192)
def micros(text: str) -> int:
    """A stored time (`to_iso` text) as `micros_of` its moment: a recall weighs the same few
    hundred memories' times again and again, each parsed once."""
    return micros_of(from_iso(text))


def _layer_at(memory: Memory, now_us: int) -> str:
    """The layer a memory is weighed as (a `Layer`, which is its value as a string). A working
    note past its TTL is an archive memory until the lifecycle moves it (found, never hidden
    by the schedule); a history summary stands for the archived memories it covers and
    weighs what they weigh."""
    if memory.category is _SUMMARY and memory.metadata.get("covers"):
        return _ARCHIVE
    layer = memory.layer
    if layer is _WORKING and memory.expires_at is not None and micros(memory.expires_at) <= now_us:
        return _ARCHIVE
    return layer


def _dated_us(memory: Memory) -> int:
    """When what a memory says happened, which recency and decay weigh (not when it was
    stored: a memory about October added today is not news): its `occurred_at`; a history
    summary is dated by the end of the period it covers ("2026-03" -> 1 April), not by the
    night it was written."""
    if memory.category is _SUMMARY:
        period = _period_end(memory.metadata.get("period"))
        if period is not None:
            return micros_of(period)
    return micros(memory.occurred_at or memory.created_at)


def _period_end(period: Any) -> datetime | None:
    """The first moment after the month ("2026-03") a history summary covers."""
    if isinstance(period, str) and len(period) == 7:
        try:
            year, month = int(period[:4]), int(period[5:])
            return datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        except ValueError:
            pass
    return None


def without_covered_twice(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """The first `limit` candidates, where no two places go to one thing said twice.

    A history summary gives way whenever a memory it covers was found at all (that memory is
    the exact one; the summary only quotes it): it stands in for its memories where none of
    them matches. A sentence kept from a turn and that turn's verbatim history: the one
    ranked higher stays."""
    found = {c.memory_id for c in ranked}
    chosen: list[Candidate] = []
    for candidate in ranked:
        if len(chosen) >= limit:
            break
        if _covers(candidate) & found:
            continue
        if not any(_says_again(candidate, c) for c in chosen):
            chosen.append(candidate)
    return chosen


def _says_again(a: Candidate, b: Candidate) -> bool:
    """`a` adds nothing to `b` already chosen: both come from one turn and one holds the
    other's text."""
    if a.memory is None or b.memory is None:
        return False
    turn = a.memory.metadata.get("turn_id")
    if turn is None or turn != b.memory.metadata.get("turn_id"):
        return False
    first, second = (without_speaker(m.content).strip() for m in (a.memory, b.memory))
    return first in b.memory.content or second in a.memory.content


def _covers(candidate: Candidate) -> set[str]:
    memory = candidate.memory
    if memory is None or memory.category is not _SUMMARY:
        return set()
    return {str(i) for i in memory.metadata.get("covers", [])}


def access_factor(memory: Memory, settings: SearchSettings, now: datetime) -> float:
    """A tie-breaker, not a relevance signal: at most ``1 + access_boost``.

    Every recall counts as an access of what it returned, useful or not, so a boost that grows
    with the count feeds itself (what was returned before is promoted, returned again, promoted
    more). Bounding the whole boost to `access_boost` means it can only reorder candidates whose
    relevance is within that fraction of each other; it grows with the log of the count
    (saturating at `access_boost_cap` accesses) and halves every `half_life_days` since the last
    access, so an old burst of recalls does not pin a memory to the top."""
    return _AccessBoost(settings).factor(memory, micros_of(now))


class _AccessBoost:
    """`access_factor` with the settings it reads taken once for all of a search's candidates."""

    def __init__(self, settings: SearchSettings) -> None:
        self.boost, self.cap = settings.access_boost, settings.access_boost_cap
        self.on = self.boost > 0 and self.cap > 0
        self.cap_log = math.log1p(self.cap) if self.on else 0.0
        self.half_life = settings.half_life_days

    def factor(self, memory: Memory, now_us: int) -> float:
        if not self.on or memory.access_count <= 0:
            return 1.0
        strength = math.log1p(min(memory.access_count, self.cap)) / self.cap_log
        if memory.last_accessed:
            idle_days = max((now_us - micros(memory.last_accessed)) / 1_000_000 / 86400, 0.0)
            strength *= 0.5 ** (idle_days / self.half_life)
        return 1.0 + self.boost * strength


Similarity = Callable[[Candidate, Candidate], float]


def mmr(ranked: list[Candidate], k: int, lam: float, similarity: Similarity) -> list[Candidate]:
    """Maximal marginal relevance: trade relevance against similarity to what is chosen."""
    chosen: list[Candidate] = []
    pool = list(ranked)
    top = max((c.final for c in pool), default=1.0) or 1.0
    while pool and len(chosen) < k:
        best = max(
            pool,
            key=lambda c: (
                lam * c.final / top
                - (1 - lam) * max((similarity(c, s) for s in chosen), default=0.0)
            ),
        )
        best.mmr_step = len(chosen)
        chosen.append(best)
        pool.remove(best)
    return chosen


def vector_similarity(vectors: dict[str, np.ndarray]) -> Similarity:
    def similarity(a: Candidate, b: Candidate) -> float:
        va, vb = vectors.get(a.memory_id), vectors.get(b.memory_id)
        if va is None or vb is None:
            return 0.0
        return float(va @ vb)

    return similarity


def token_similarity(tokens: dict[str, frozenset[str]]) -> Similarity:
    def similarity(a: Candidate, b: Candidate) -> float:
        ta, tb = tokens.get(a.memory_id, frozenset()), tokens.get(b.memory_id, frozenset())
        union = len(ta | tb)
        return len(ta & tb) / union if union else 0.0

    return similarity
