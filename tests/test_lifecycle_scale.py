"""The lifecycle at scale: near-duplicates found by blocking (MinHash bands, an inverted file of
vectors) are the ones comparing all pairs finds; novelty scores are the one-by-one Dice; a run
over thousands of memories does what its preview showed, merges the planted near-duplicates
and writes one audit row of the usual shape per action."""

from __future__ import annotations

import itertools
import json
import random
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bench.lifecycle_data import TEMPLATES, _slots, build, near_duplicate
from bench.lifecycle_scale import MODEL, make_store
from cortex_mcp.config import load_settings
from cortex_mcp.engine.lifecycle.blocking import candidate_pairs
from cortex_mcp.engine.lifecycle.similarity import TextSimilarity, dice, shingles
from cortex_mcp.engine.lifecycle.vector_blocking import close_pairs
from cortex_mcp.models import LifecycleAction
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import LifecycleLogRequest
from tests.conftest import FakeClock

NOW = datetime(2026, 6, 1, 3, 0, tzinfo=UTC)


def _texts(count: int, rng: random.Random) -> list[str]:
    """Template lines in three languages (alike by construction), each with a near-duplicate
    now and then."""
    texts = []
    while len(texts) < count:
        _, pattern = rng.choice(TEMPLATES)
        text = pattern.format(**_slots(rng, NOW))
        texts.append(text)
        twin = near_duplicate(text, rng) if rng.random() < 0.1 else None
        if twin is not None:
            texts.append(twin)
    return texts


def test_bands_find_every_pair_that_comparing_all_pairs_finds() -> None:
    sets = [shingles(t) for t in _texts(900, random.Random(3))]
    truth = {
        (i, j)
        for i, j in itertools.combinations(range(len(sets)), 2)
        if dice(sets[i], sets[j]) >= 0.85
    }
    found = {tuple(p) for p in candidate_pairs(sets, 0.85).tolist()}
    assert len(truth) > 50  # planted twins and chance look-alikes of one template
    assert truth <= found
    assert len(found) < len(sets) * 20  # candidates, not all pairs


def test_a_thousand_lines_of_one_template_still_end_in_one_cluster() -> None:
    index = TextSimilarity()
    for n in range(1000):  # every pair is a near-duplicate (Dice 0.87): one crowded bucket
        index.add(f"m{n}", f"The weekly report for team {n} is due on Friday at noon")
    index.add("other", "Harry is allergic to peanuts and carries an EpiPen")
    clusters = index.clusters(0.85)
    assert [len(c) for c in clusters] == [1000]


def test_novelty_is_the_best_dice_among_the_rare_word_candidates() -> None:
    rng = random.Random(5)
    texts = _texts(600, rng)
    index = TextSimilarity()
    for n, text in enumerate(texts[:500]):
        index.add(str(n), text)
    for text in texts[500:]:
        items = shingles(text)
        expected = max(
            (dice(items, shingles(texts[p])) for p in index._candidates(items)), default=0.0
        )
        assert index.best(text)[1] == expected


def test_vector_pairs_beyond_the_exact_size_are_the_pairs_all_pairs_finds() -> None:
    rng = np.random.default_rng(9)
    unit = rng.standard_normal((6000, 48)).astype(np.float32)
    for n in range(0, 600, 2):  # 300 near-duplicates: a vector and a slightly moved copy
        unit[n + 1] = unit[n] + rng.normal(0, 0.08, 48).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    sims = unit @ unit.T
    rows, cols = np.nonzero(np.triu(sims >= 0.85, k=1))
    truth = set(zip(rows.tolist(), cols.tolist(), strict=True))
    found = {tuple(p) for p in close_pairs(unit, 0.85).tolist()}
    assert len(truth) >= 300
    assert found == truth


@pytest.mark.anyio
@pytest.mark.parametrize("dim", [0, 24])
async def test_a_run_over_thousands_does_what_its_preview_showed(tmp_path: Path, dim: int) -> None:
    data = build(3000, NOW, dim=dim, seed=3)
    db = tmp_path / "big.db"
    await make_store(db, data)
    settings = load_settings(db_path=db, embedding_provider="none", llm_provider="none")
    async with open_cortex(settings, clock=FakeClock(NOW), background=False) as service:
        assert service.engines.lifecycle is not None
        if dim:
            service.engines.lifecycle.vector_model = lambda: MODEL
        preview = await service.lifecycle.preview()
        report = await service.lifecycle.run()

        def steps(actions: list[LifecycleAction]) -> list[tuple[object, ...]]:
            return sorted((a.phase, a.kind, a.agent_id, a.ids, a.into, a.score) for a in actions)

        assert steps(report.actions) == steps(preview.actions)
        assert report.skipped == []
        assert {k for k, v in report.counts.items() if v} >= {"promote", "merge", "archive"}
        merged = {frozenset(a.ids) for a in report.actions if a.kind == "merge"}
        for original, twin in data.planted:
            assert any({original, twin} <= ids for ids in merged), (original, twin)
        log = await service.lifecycle.log(LifecycleLogRequest(limit=10_000))
        mine = [e for e in log if e["details"].get("run_id") in report.run_ids]
        assert len(mine) == len(report.actions)
        for entry in mine:
            assert set(entry["details"]) == {
                "run_id",
                "before",
                "after",
                "reason",
                "score",
                "actor",
            }
            assert entry["details"]["actor"] == {"kind": "local"}  # the schedule's own run
            assert (
                entry["memory_ids"][: len(entry["details"]["before"])] == entry["details"]["before"]
            )


@pytest.mark.anyio
async def test_reasons_are_redacted_before_a_plan_is_stored(tmp_path: Path) -> None:
    settings = load_settings(db_path=tmp_path / "r.db", embedding_provider="none")
    async with open_cortex(settings, clock=FakeClock(NOW), background=False) as service:
        assert service.engines.lifecycle is not None
        secret = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
        actions = [
            LifecycleAction(phase="archive", kind="archive", agent_id="a", ids=["x"], reason=r)
            for r in (f"decayed; key {secret}", "core is full")
        ]
        await service.engines.lifecycle.redact_reasons(actions)
    assert secret not in json.dumps([a.reason for a in actions])
    assert "[REDACTED" in actions[0].reason
    assert actions[1].reason == "core is full"
