"""The lifecycle groups and dates by a memory's own time (`occurred_at`, issue 25), on SQLite
and PostgreSQL: archived memories stored on one day but about different months make one
summary per month they are about, the preview lists exactly what the run does, and each
compression writes its one audit row as before; a summary whose originals were deleted keeps
the period it covers when a late arrival is folded in."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import LifecycleLogRequest, RememberRequest, build
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

STORED = "2026-11-01T12:00:00.000000Z"  # the FakeClock's time: every memory is stored then
ABOUT = {  # content -> its own time
    "Repaired the bike chain": "2026-03-02T08:00:00Z",
    "Replaced the bike brake pads": "2026-03-20T18:30:00Z",
    "Rode to the coast and back": "2026-04-11T07:15:00Z",
    "Archived note with no date of its own": None,
}


async def _open(settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(settings, clock=clock) as svc:
        yield svc


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async for svc in _open(backend_settings, clock):
        yield svc


@pytest.fixture
async def deleting(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    """A service whose compressions delete the originals."""
    lifecycle = backend_settings.lifecycle.model_copy(update={"delete_compressed_archive": True})
    async for svc in _open(backend_settings.model_copy(update={"lifecycle": lifecycle}), clock):
        yield svc


async def _archive(service: CortexService, about: dict[str, str | None]) -> dict[str, str]:
    ids = {}
    for content, when in about.items():
        request = build(RememberRequest, content=content, layer="archive", occurred_at=when)
        ids[content] = (await service.memories.remember(request)).id
    return ids


async def test_archives_stored_on_one_day_are_summarised_by_the_month_each_is_about(
    service: CortexService, clock: FakeClock
) -> None:
    ids = await _archive(service, ABOUT)
    clock.advance(days=91)
    preview = await service.lifecycle.preview()
    run = await service.lifecycle.run()
    assert [a.model_dump() for a in run.actions] == [a.model_dump() for a in preview.actions]
    assert run.skipped == []
    by_period = {a.period: sorted(a.ids) for a in run.actions if a.kind == "compress"}
    assert by_period == {
        "2026-03": sorted([ids["Repaired the bike chain"], ids["Replaced the bike brake pads"]]),
        "2026-04": [ids["Rode to the coast and back"]],
        "2026-11": [ids["Archived note with no date of its own"]],
    }
    found = await service.stores.memories.get_many(list(run.created.values()))
    summaries = {m.metadata["period"]: m for m in found.values()}
    assert {p: (m.occurred_at, m.metadata["period_range"]) for p, m in summaries.items()} == {
        "2026-03": (
            "2026-03-02T08:00:00.000000Z",
            {"start": "2026-03-02T08:00:00.000000Z", "end": "2026-03-20T18:30:00.000000Z"},
        ),
        "2026-04": (
            "2026-04-11T07:15:00.000000Z",
            {"start": "2026-04-11T07:15:00.000000Z", "end": "2026-04-11T07:15:00.000000Z"},
        ),
        "2026-11": (STORED, {"start": STORED, "end": STORED}),
    }
    assert all(m.created_at > STORED for m in summaries.values())  # stored by the run
    log = [
        e
        for e in await service.lifecycle.log(build(LifecycleLogRequest, limit=100))
        if e["action"] == "compress"
    ]
    assert len(log) == 3
    for entry in log:
        [summary_id] = entry["details"]["after"]
        before = entry["details"]["before"]
        assert entry["memory_ids"] == [*before, summary_id]
        assert sorted(before) == by_period[found[summary_id].metadata["period"]]


async def test_a_summary_whose_originals_are_deleted_keeps_its_period_when_one_arrives_late(
    deleting: CortexService, clock: FakeClock
) -> None:
    march = {k: v for k, v in ABOUT.items() if v is not None and v.startswith("2026-03")}
    ids = await _archive(deleting, march)
    clock.advance(days=91)
    first = await deleting.lifecycle.run()
    [summary_id] = first.created.values()
    gone = await deleting.stores.memories.get_many(list(ids.values()))
    assert gone == {}  # the originals are deleted: only the summary knows their times
    await _archive(deleting, {"Fitted a new bike bell": "2026-03-25T10:00:00Z"})
    clock.advance(days=95)
    folded = await deleting.lifecycle.run()
    assert [a.into for a in folded.actions if a.kind == "compress"] == [summary_id]
    summary = await deleting.stores.memories.get(summary_id)
    assert summary is not None and summary.occurred_at == "2026-03-02T08:00:00.000000Z"
    assert summary.metadata["period_range"] == {
        "start": "2026-03-02T08:00:00.000000Z",
        "end": "2026-03-25T10:00:00.000000Z",
    }
    assert len(summary.metadata["covers"]) == 3
