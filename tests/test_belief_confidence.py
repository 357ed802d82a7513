"""The belief update rule (engine/beliefs/confidence.py): bounded, monotone, explainable."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from cortex_mcp.engine.beliefs.confidence import (
    MAX_STEP,
    Evidence,
    Trend,
    describe,
    start,
    step,
    trend,
    update,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _in_original_terms(state) -> float:
    return 1.0 - state.confidence if state.reversed else state.confidence


pieces = st.lists(
    st.tuples(st.booleans(), st.floats(min_value=0.05, max_value=1.0)), min_size=1, max_size=40
)


def _evidence(raw):
    return [
        Evidence(f"m{i:03d}", T0 + timedelta(days=i), supports, weight)
        for i, (supports, weight) in enumerate(raw)
    ]


@given(raw=pieces, stated=st.none() | st.floats(min_value=0.0, max_value=1.0))
@settings(max_examples=300, deadline=None)
def test_no_piece_moves_confidence_by_more_than_the_max_step(raw, stated):
    state = start(stated)
    for piece in _evidence(raw):
        after = step(state, piece)
        assert abs(_in_original_terms(after) - _in_original_terms(state)) <= MAX_STEP + 1e-12
        assert 0.0 <= after.confidence <= 1.0
        state = after


@given(raw=pieces)
@settings(max_examples=300, deadline=None)
def test_support_never_lowers_and_contradiction_never_raises_the_original_statement(raw):
    state = start()
    for piece in _evidence(raw):
        after = step(state, piece)
        delta = _in_original_terms(after) - _in_original_terms(state)
        assert delta >= -1e-12 if piece.supports else delta <= 1e-12
        state = after


@given(raw=pieces)
@settings(max_examples=200, deadline=None)
def test_the_same_evidence_in_any_order_of_arrival_gives_the_same_state(raw):
    evidence = _evidence(raw)
    assert update(start(), evidence) == update(start(), list(reversed(evidence)))


@given(support=st.integers(min_value=1, max_value=30))
def test_repeated_support_adds_less_each_time(support):
    state = start()
    steps = []
    for i in range(support + 1):
        after = step(state, Evidence(f"m{i}", T0 + timedelta(days=i), True))
        steps.append(after.confidence - state.confidence)
        state = after
    assert all(later < earlier for earlier, later in itertools.pairwise(steps))


def test_one_contradiction_never_reverses_a_belief_even_a_weak_one():
    state = update(start(0.3), [Evidence("against", T0, False, 1.0)])
    assert not state.reversed
    assert state.against_ids == ("against",)


def test_repeated_contradiction_reverses_and_keeps_the_evidence_with_roles_swapped():
    evidence = [Evidence("for1", T0, True)] + [
        Evidence(f"against{i}", T0 + timedelta(days=i + 1), False) for i in range(8)
    ]
    state = start()
    reversed_at = None
    for i, piece in enumerate(sorted(evidence, key=lambda e: e.at)):
        state = step(state, piece)
        if state.reversed and reversed_at is None:
            reversed_at = i
    assert reversed_at is not None and reversed_at >= 2
    assert state.reversed
    assert "for1" in state.against_ids
    assert state.confidence > 0.5


def test_describe_names_confidence_counts_and_the_last_evidence_day():
    state = update(
        start(),
        [
            Evidence("a", T0, True),
            Evidence("b", T0 + timedelta(days=3), True),
            Evidence("c", T0 + timedelta(days=9), False),
        ],
    )
    text = describe("prefers light mode in the evening", state)
    assert text.startswith("prefers light mode in the evening (0.")
    assert "2 for, 1 against; last 2026-01-10)" in text


def test_the_trend_follows_the_times_of_the_evidence():
    now = T0 + timedelta(days=200)
    assert trend([(now - timedelta(days=3), True)], now) is Trend.new
    assert trend([(now - timedelta(days=120), True)], now) is Trend.stale
    leaning_for = [(now - timedelta(days=100), False), (now - timedelta(days=5), True)]
    assert trend(leaning_for, now) is Trend.strengthening
    leaning_against = [(now - timedelta(days=100), True), (now - timedelta(days=5), False)]
    assert trend(leaning_against, now) is Trend.weakening
    assert trend([(now - timedelta(days=60), True), (now - timedelta(days=50), True)], now) is (
        Trend.stable
    )


def test_a_weight_outside_its_range_is_refused_with_the_field_named():
    try:
        Evidence("x", T0, True, 0.0)
    except ValueError as error:
        assert str(error).startswith("weight: must be in (0, 1]")
    else:
        raise AssertionError("a zero weight was accepted")
