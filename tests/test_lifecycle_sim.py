"""A smaller simulated year (bench/lifecycle_sim.py prints the full one): the lifecycle
every night keeps every invariant of issue 8."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.lifecycle_sim import simulate

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_two_months_of_turns_recalls_and_nightly_runs_lose_nothing_and_stay_bounded(
    tmp_path: Path,
) -> None:
    sim = await simulate(
        tmp_path / "sim.db",
        days=45,
        turns=12,
        recalls=3,
        core_facts=4,
        export_dir=tmp_path / "workspace",
        lifecycle={"core_max_entries": 60},
        archive_ttl_days=10,
        words=400,
    )
    assert sim.problems == []
    assert sim.summaries >= 1  # the archive was compressed back into core
    assert 0 < sim.memory_md_words <= 400
    assert len(sim.written) >= 6 + 45 * 4  # turns through ingest may yield 0..n memories
    assert all(month["working"] <= 2 * 12 + 12 for month in sim.months)
