"""Fusion of the text and vector channels (pure functions over candidates)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from cortex_mcp.config import SearchSettings
from cortex_mcp.models import Category, Layer, Memory, to_iso
from cortex_mcp.search.fusion import (
    Candidate,
    access_factor,
    apply_signals,
    fill_cosines,
    fuse,
    fuse_added,
)


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_text_hit_the_vector_pool_missed_is_scored_by_its_meaning_too() -> None:
    query = _unit(1, 0)
    both = Candidate("both", text_rank=0, bm25=-8.0)  # best text hit, outside the vector pool
    near = Candidate("near", vector_rank=0, cosine=0.9)  # best vector hit, no shared word
    candidates = [both, near]
    fill_cosines(candidates, {"both": _unit(1, 0.2), "near": _unit(0.9, 0.44)}, query)
    fuse(candidates, SearchSettings(), has_vector=True)
    assert both.cosine is not None and both.cosine > 0.95
    assert both.fused > near.fused


def test_maxnorm_scales_each_channel_by_its_best_hit_and_keeps_the_gaps() -> None:
    candidates = [
        Candidate("a", text_rank=0, bm25=-10.0, vector_rank=1, cosine=0.4),
        Candidate("b", text_rank=1, bm25=-5.0, vector_rank=0, cosine=0.8),
        Candidate("c", text_rank=2, bm25=-4.9, vector_rank=2, cosine=0.1),
    ]
    fuse(candidates, SearchSettings(), has_vector=True)
    a, b, c = candidates
    assert (a.text_score, b.text_score) == (1.0, 0.5)
    assert (a.vector_score, b.vector_score) == (0.5, 1.0)
    assert c.text_score > 0.45  # min-max would have made the pool's last text hit worth 0
    assert a.fused == b.fused == 0.75


def test_without_vectors_maxnorm_ranks_as_bm25_does() -> None:
    candidates = [
        Candidate("x", text_rank=1, bm25=-2.0),
        Candidate("y", text_rank=0, bm25=-6.0),
        Candidate("z", text_rank=2),  # a LIKE-only identifier hit: no bm25
    ]
    fuse(candidates, SearchSettings(), has_vector=False)
    ranked = sorted(candidates, key=lambda c: (-c.fused, c.text_rank))
    assert [c.memory_id for c in ranked] == ["y", "x", "z"]
    assert ranked[0].fused == 1.0


NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _memory(memory_id: str, access_count: int, last_accessed: datetime | None = None) -> Memory:
    stamp = to_iso(NOW - timedelta(days=60))  # outside the recency window: no recency boost
    return Memory(
        id=memory_id,
        agent_id="default",
        layer=Layer.core,
        category=Category.fact,
        content=f"memory {memory_id}",
        importance=0.7,
        confidence=0.8,
        decay_score=1.0,
        access_count=access_count,
        last_accessed=to_iso(last_accessed) if last_accessed else None,
        created_at=stamp,
        updated_at=stamp,
    )


def _ranked(*candidates: tuple[str, float, Memory]) -> list[str]:
    scored = [
        Candidate(memory_id, fused=fused, memory=memory) for memory_id, fused, memory in candidates
    ]
    apply_signals(scored, SearchSettings(), NOW)
    return [c.memory_id for c in sorted(scored, key=lambda c: -c.final)]


def _scores(candidates: list[Candidate]) -> list[tuple[float, float, float]]:
    return [(c.text_score, c.vector_score, c.fused) for c in candidates]


@pytest.mark.parametrize("fusion", ["maxnorm", "rrf", "minmax", "weighted"])
def test_candidates_added_after_fusing_score_as_fusing_them_all_again_would(fusion: str) -> None:
    """The entity stage adds linked memories after the channels were fused: scoring only them
    (when none beats a channel's best) gives every candidate what fusing all again gives."""
    settings = SearchSettings(fusion=fusion)
    rng = np.random.default_rng(7)
    kept = 0
    for case in range(300):
        has_vector = bool(case % 2)
        before = [
            Candidate(
                f"b{n}",
                text_rank=n if rng.random() < 0.7 else None,
                bm25=-float(rng.uniform(0.5, 12)) if rng.random() < 0.7 else None,
                vector_rank=n if rng.random() < 0.6 else None,
                cosine=float(rng.uniform(-0.2, 0.9)) if rng.random() < 0.6 else None,
            )
            for n in range(int(rng.integers(1, 12)))
        ]
        fuse(before, settings, has_vector)
        # linked memories: no text score; a cosine (below or above the best) with a vector
        added = [
            Candidate(f"a{n}", cosine=float(rng.uniform(-0.2, 1.0)) if has_vector else None)
            for n in range(int(rng.integers(1, 6)))
        ]
        together = [*before, *added]
        expected = [
            Candidate(c.memory_id, c.text_rank, c.bm25, vector_rank=c.vector_rank, cosine=c.cosine)
            for c in together
        ]
        fuse(expected, settings, has_vector)
        again = fuse_added(together, len(added), settings, has_vector)
        assert _scores(together) == _scores(expected), case
        kept += not again
    # with maxnorm most of the time only the added were scored (the others fuse all again)
    assert kept > 100 if fusion == "maxnorm" else kept == 0


def test_linked_memories_with_no_score_of_their_own_leave_the_others_as_fused() -> None:
    settings = SearchSettings()
    before = [Candidate("a", text_rank=0, bm25=-6.0), Candidate("b", text_rank=1, bm25=-3.0)]
    fuse(before, settings, has_vector=False)
    added = [Candidate("linked")]
    assert fuse_added([*before, *added], 1, settings, has_vector=False) is False
    assert (added[0].text_score, added[0].fused) == (0.0, 0.0)
    beats = [Candidate("x", text_rank=0, bm25=-9.0)]  # a better text hit: all fused again
    assert fuse_added([*before, *beats], 1, settings, has_vector=False) is True
    assert [c.fused for c in before] == [6.0 / 9.0, 3.0 / 9.0]


def test_a_memory_recalled_often_wins_a_near_tie() -> None:
    often = _memory("often", access_count=12, last_accessed=NOW - timedelta(hours=1))
    never = _memory("never", access_count=0)
    assert _ranked(("never", 0.80, never), ("often", 0.79, often)) == ["often", "never"]


def test_recall_history_cannot_overturn_a_clear_difference_in_relevance() -> None:
    # the old formula (+5% per access up to +50%) put "often" first here: every recall counts
    # as an access of what it returned, so whatever came back once kept coming back
    often = _memory("often", access_count=500, last_accessed=NOW)
    never = _memory("never", access_count=0)
    assert _ranked(("never", 0.80, never), ("often", 0.70, often)) == ["never", "often"]


def test_the_access_boost_grows_ever_more_slowly_and_fades_after_the_last_access() -> None:
    settings = SearchSettings()
    boosts = [
        access_factor(_memory("m", n, last_accessed=NOW), settings, NOW) - 1 for n in (1, 2, 10, 99)
    ]
    assert 0 < boosts[0] < boosts[1] < boosts[2] == boosts[3]
    assert boosts[3] == pytest.approx(settings.access_boost)
    assert boosts[1] - boosts[0] < boosts[0]  # diminishing returns
    fresh = access_factor(_memory("m", 10, last_accessed=NOW), settings, NOW) - 1
    stale = _memory("m", 10, last_accessed=NOW - timedelta(days=settings.half_life_days))
    assert access_factor(stale, settings, NOW) - 1 == pytest.approx(fresh / 2)


@pytest.mark.parametrize("fusion", ["maxnorm", "minmax", "rrf", "weighted"])
def test_a_memory_without_a_vector_yet_is_ranked_by_its_text_by_every_fusion(fusion: str) -> None:
    """The best text hit, not yet embedded, against a weaker text hit that has a vector: the
    missing channel is not a zero (which ranked memories by the indexer's progress)."""
    waiting = Candidate("waiting", text_rank=0, bm25=-9.0)
    indexed = Candidate("indexed", text_rank=1, bm25=-5.0, vector_rank=0, cosine=0.5)
    other = Candidate("other", vector_rank=1, cosine=0.45)
    candidates = [waiting, indexed, other]
    fuse(candidates, SearchSettings(fusion=fusion), has_vector=True)
    assert waiting.fused > indexed.fused > 0


def test_recency_and_decay_weigh_when_it_happened_not_when_it_was_stored() -> None:
    """Told today about October: no "this week" boost; told in October about this week's
    plan (occurred_at now): the boost."""
    stored_today = _memory("old-news", 0)
    stored_today.created_at = stored_today.updated_at = to_iso(NOW)
    stored_today.occurred_at = to_iso(NOW - timedelta(days=120))
    fresh = _memory("fresh", 0)
    fresh.occurred_at = to_iso(NOW - timedelta(days=1))
    settings = SearchSettings(temporal_decay=True)
    scored = [Candidate(m.id, fused=1.0, memory=m) for m in (stored_today, fresh)]
    apply_signals(scored, settings, NOW)
    old, new = scored
    assert old.recency == 1.0 and new.recency > 1.0
    assert old.decay < new.decay


def test_ages_are_the_floats_datetime_arithmetic_gives_whatever_the_zones_and_microseconds() -> (
    None
):
    """Signals reckon times as whole microseconds: every age, recency, decay and access boost
    is the float a datetime subtraction's `total_seconds()` gives, to the last bit."""
    now = datetime(2026, 3, 1, 12, 0, 0, 999_999, tzinfo=ZoneInfo("Asia/Kolkata"))
    settings = SearchSettings(temporal_decay=True, recency_window_days=4000, half_life_days=7.3)
    rng = random.Random(37)
    zones = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
    times = [  # around now (some after it: no age below 0) and years before
        (now + timedelta(microseconds=rng.randint(-(10**14), 10**9))).astimezone(rng.choice(zones))
        for _ in range(300)
    ]
    memories = []
    for n, moment in enumerate(times):
        memory = _memory(f"m{n}", access_count=n % 12 + 1)
        memory.occurred_at, memory.last_accessed = moment.isoformat(), times[-1 - n].isoformat()
        memories.append(memory)
    scored = [Candidate(m.id, fused=0.5, memory=m) for m in memories]
    apply_signals(scored, settings, now)
    for candidate, memory in zip(scored, memories, strict=True):
        age = max((now - datetime.fromisoformat(memory.occurred_at)).total_seconds() / 86400, 0.0)
        window = settings.recency_window_days
        boosted = 1.0 + settings.recency_boost * (window - age) / window
        assert candidate.recency == (boosted if age < window else 1.0)
        assert candidate.decay == math.exp(-math.log(2) * age / settings.half_life_days)
        assert memory.last_accessed is not None
        idle = (now - datetime.fromisoformat(memory.last_accessed)).total_seconds() / 86400
        count = min(memory.access_count, settings.access_boost_cap)
        strength = math.log1p(count) / math.log1p(settings.access_boost_cap)
        strength *= 0.5 ** (max(idle, 0.0) / settings.half_life_days)
        assert candidate.access == access_factor(memory, settings, now)
        assert candidate.access == 1.0 + settings.access_boost * strength
