"""The lifecycle engine on a real database file with a fake clock: each phase, preview == run,
the audit log, resumable runs and no silent loss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.models import Layer
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    LifecycleLogRequest,
    RecallRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    """Every test here runs on SQLite and on PostgreSQL."""
    return backend_settings


async def _layer(service: CortexService, memory_id: str) -> Layer:
    memory = await service.stores.memories.get(memory_id)
    assert memory is not None
    return memory.layer


async def test_a_high_signal_working_memory_is_promoted_and_idle_small_talk_is_archived(
    service: CortexService, clock: FakeClock
) -> None:
    decision = await service.memories.remember(
        RememberRequest(
            content="Decided to host the blog on an Oracle Cloud ARM VPS",
            category="decision",
            layer="working",
        )
    )
    chatter = await service.memories.remember(
        RememberRequest(
            content="Talked about the router today",
            category="context",
            importance=0.3,
            layer="working",
        )
    )
    clock.advance(hours=30)
    report = await service.lifecycle.run()
    assert report.counts["promote"] == 1
    assert await _layer(service, decision.id) is Layer.core
    assert await _layer(service, chatter.id) is Layer.working  # not expired yet: waits
    clock.advance(hours=24)
    report = await service.lifecycle.run()
    assert report.counts["expire"] == 1
    assert await _layer(service, chatter.id) is Layer.archive


async def test_near_duplicates_in_core_merge_into_the_latest_as_a_correction_chain(
    service: CortexService, clock: FakeClock
) -> None:
    old = await service.memories.remember(
        RememberRequest(content="The user lives in Tokyo", category="identity")
    )
    clock.advance(minutes=5)
    new = await service.memories.remember(
        RememberRequest(content="User lives in Tokyo.", category="identity")
    )
    other = await service.memories.remember(
        RememberRequest(content="The user likes green tea", category="preference")
    )
    report = await service.lifecycle.run()
    merges = [a for a in report.actions if a.kind == "merge"]
    assert [(a.ids, a.into) for a in merges] == [([old.id, new.id], new.id)]
    kept_old = await service.stores.memories.get(old.id)
    assert kept_old is not None and kept_old.superseded_by == new.id  # chained, not overwritten
    assert kept_old.content == "The user lives in Tokyo"
    assert await _layer(service, other.id) is Layer.core
    log = await service.lifecycle.log()
    merge_log = next(entry for entry in log if entry["action"] == "merge")
    assert merge_log["details"]["before"] == [old.id, new.id]
    assert merge_log["details"]["after"] == [new.id]


async def test_unused_facts_decay_into_the_archive_while_identity_stays_in_core(
    service: CortexService, clock: FakeClock
) -> None:
    fact = await service.memories.remember(
        RememberRequest(content="The Shinagawa flat yields 5% gross", category="fact")
    )
    who = await service.memories.remember(
        RememberRequest(content="Harry lives in Tokyo and invests in property", category="identity")
    )
    clock.advance(days=60)
    report = await service.lifecycle.run()
    archived = {a.ids[0] for a in report.actions if a.kind == "archive"}
    assert archived == {fact.id}
    assert await _layer(service, who.id) is Layer.core
    memory = await service.stores.memories.get(who.id)
    assert memory is not None and 0.2 < memory.decay_score <= 1.0


NEWCOMER = "The nightly backup job runs at 02:30 UTC on the staging box"


async def test_a_new_core_memory_stays_in_core_until_its_minimum_age_then_decays_by_the_rule(
    service: CortexService, clock: FakeClock
) -> None:
    added = RememberRequest(content=NEWCOMER, importance=0.3, source="cli")  # `cortex-mcp add`
    made = await service.memories.remember(added)
    clock.advance(minutes=1)
    assert (await service.lifecycle.run()).actions == []
    memory = await service.stores.memories.get(made.id)
    assert memory is not None and memory.decay_score > 0.99  # decay starts from its age
    clock.advance(minutes=1)
    assert (await service.lifecycle.preview()).actions == []
    clock.advance(days=1)
    assert (await service.lifecycle.run()).actions == []
    assert await _layer(service, made.id) is Layer.core
    min_age = service.settings.lifecycle.min_core_age_days
    assert min_age == 30
    clock.advance(days=min_age - 1, minutes=-3)  # a minute before its minimum age
    assert (await service.lifecycle.preview()).actions == []
    clock.advance(minutes=2)  # its decay score was under the threshold long ago: archived now
    preview = await service.lifecycle.preview()
    [action] = preview.actions
    assert (action.kind, action.ids, action.reason) == ("archive", [made.id], "decayed")
    assert action.score is not None and action.score < service.settings.lifecycle.archive_threshold
    run = await service.lifecycle.run()
    assert [a.model_dump() for a in run.actions] == [a.model_dump() for a in preview.actions]
    assert await _layer(service, made.id) is Layer.archive


async def test_a_full_core_archives_the_least_lively_and_a_memory_just_stored_is_lively(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(
        db_path=tmp_path / "b.db", embedding_provider="none", lifecycle={"core_max_entries": 10}
    )
    async with open_cortex(settings, clock=clock) as service:
        old = []
        for n in range(8):
            said = RememberRequest(
                content=f"Preference {n} about topic {n * 7}", category="preference"
            )
            old.append((await service.memories.remember(said)).id)
        clock.advance(days=40)  # past the minimum age, still lively (preferences decay slowly)
        new = []
        for n in range(5):
            said = RememberRequest(content=f"Fact {n} about the garden bed {n * 3}", importance=0.2)
            new.append((await service.memories.remember(said)).id)
        report = await service.lifecycle.run()
        archived = [a.ids[0] for a in report.actions if a.kind == "archive"]
        assert [a.reason for a in report.actions] == ["core is full"] * 3
        assert set(archived) <= set(old) and len(archived) == 3
        assert [await _layer(service, i) for i in new] == [Layer.core] * 5


async def test_archive_older_than_its_ttl_becomes_a_core_summary_citing_every_id(
    service: CortexService, clock: FakeClock
) -> None:
    ids = []
    for text in ("NTT router needs IPv6 port forwarding", "The .ai domain renews at $80 a year"):
        ids.append(
            (
                await service.memories.remember(
                    RememberRequest(content=text, category="fact", layer="archive")
                )
            ).id
        )
    clock.advance(days=91)
    report = await service.lifecycle.run()
    [compress] = [a for a in report.actions if a.kind == "compress"]
    assert sorted(compress.ids) == sorted(ids)
    summary = await service.stores.memories.get(report.created[next(iter(report.created))])
    assert summary is not None and summary.layer is Layer.core
    assert summary.category.value == "summary"
    assert sorted(summary.metadata["covers"]) == sorted(ids)
    assert "NTT router" in summary.content and summary.content.startswith("[2026-11]")
    for memory_id in ids:  # originals kept, and never compressed twice
        original = await service.stores.memories.get(memory_id)
        assert original is not None and original.metadata["compressed_into"] == summary.id
    again = await service.lifecycle.run()
    assert again.counts["compress"] == 0


async def test_archived_memories_stay_searchable_past_the_old_ninety_day_expiry(
    service: CortexService, clock: FakeClock
) -> None:
    kept = await service.memories.remember(
        RememberRequest(content="Bought a Raspberry Pi 5 for the NAS", layer="archive")
    )
    clock.advance(days=200)
    result = await service.memories.recall(RecallRequest(query="Raspberry Pi NAS"))
    assert [m.id for m in result.memories] == [kept.id]


async def test_preview_lists_exactly_what_the_run_then_does(
    service: CortexService, clock: FakeClock
) -> None:
    await service.memories.remember(
        RememberRequest(
            content="Decided to use SQLite for everything", category="decision", layer="working"
        )
    )
    await service.memories.remember(
        RememberRequest(content="The user lives in Osaka", category="identity")
    )
    await service.memories.remember(
        RememberRequest(content="User lives in Osaka.", category="identity")
    )
    await service.memories.remember(
        RememberRequest(
            content="A fact nobody will ask about again", category="fact", importance=0.3
        )
    )
    await service.memories.remember(
        RememberRequest(content="Old archived note about routers", layer="archive")
    )
    clock.advance(days=100)
    preview = await service.lifecycle.preview()
    assert preview.counts["promote"] + preview.counts["expire"] == 1
    assert preview.counts["merge"] == 1 and preview.counts["archive"] >= 1
    assert preview.counts["compress"] == 1
    run = await service.lifecycle.run()
    assert [a.model_dump() for a in run.actions] == [a.model_dump() for a in preview.actions]
    assert run.skipped == []
    assert (await service.lifecycle.preview()).actions == []


async def test_a_preview_changes_nothing(service: CortexService, clock: FakeClock) -> None:
    await service.memories.remember(
        RememberRequest(content="Decided to learn Rust", category="decision", layer="working")
    )
    clock.advance(days=3)
    # new memories read for their slots and beliefs first, as every recall and search reads
    # them (the preview does too, so that its reflect step is the run's)
    await service.engines.reflector.validity.settle("default", batches=None)
    await service.engines.reflector.keeper.settle("default", batches=None)
    before = await service.stores.memories.counts()
    await service.lifecycle.preview()
    assert await service.stores.memories.counts() == before


async def test_core_never_exceeds_max_entries_after_a_run(tmp_path: Path, clock: FakeClock) -> None:
    settings = load_settings(
        db_path=tmp_path / "b.db", embedding_provider="none", lifecycle={"core_max_entries": 10}
    )
    async with open_cortex(settings, clock=clock) as service:
        for n in range(25):
            await service.memories.remember(
                RememberRequest(
                    content=f"Preference number {n} about topic {n * 7}", category="preference"
                )
            )
        await service.lifecycle.run()
        stats = await service.stores.memories.counts()
        assert stats["by_layer"]["core"] == 10
        assert stats["by_layer"]["archive"] == 15


async def test_a_resumed_run_finishes_the_plan_of_an_interrupted_one(
    service: CortexService, clock: FakeClock
) -> None:
    await service.memories.remember(
        RememberRequest(content="Decided to move to Fukuoka", category="decision", layer="working")
    )
    fact = await service.memories.remember(
        RememberRequest(content="Some fact that will decay", category="fact", importance=0.2)
    )
    clock.advance(days=40)
    engine = service.engines.lifecycle
    assert engine is not None
    # the first phase commits, then the process "dies" before the next one
    made = await engine.preview()
    run_id = await engine.store.start_run("*", made.now, made.actions, made.now)
    promote = [a for a in made.actions if a.phase == "promote"]
    await engine.store.apply_phase(run_id, 0, promote, made.now)
    assert (await engine.preview()).resumed
    report = await service.lifecycle.run()
    assert report.resumed and report.run_id == run_id
    assert await _layer(service, fact.id) is Layer.archive
    assert [a.kind for a in report.actions] == ["archive"]
    runs = await engine.store.recent_runs()
    assert runs[0]["status"] == "done"


async def test_every_memory_ever_written_is_active_archived_or_cited_by_a_summary(
    service: CortexService, clock: FakeClock
) -> None:
    written = []
    for day in range(200):
        written.append(
            (
                await service.memories.remember(
                    RememberRequest(
                        content=f"Day {day} note about topic {day % 13}", layer="working"
                    )
                )
            ).id
        )
        clock.advance(days=1)
        await service.lifecycle.run()
    cited = set()
    for memory in (await service.stores.memories.get_many(written)).values():
        if memory.category.value == "summary":
            cited.update(memory.metadata["covers"])
    summaries = await service.engines.lifecycle.store.snapshot(None)  # type: ignore[union-attr]
    for memory in summaries:
        cited.update(memory.metadata.get("covers", []))
    present = await service.stores.memories.get_many(written)
    assert all(i in present or i in cited for i in written)
    assert any(i in cited for i in written)
    log = await service.lifecycle.log(build(LifecycleLogRequest, limit=10_000))
    assert {entry["action"] for entry in log} >= {"expire", "compress"}
    assert json.dumps(log)  # serialisable for export


async def test_purging_a_memory_also_removes_its_text_from_the_summary_that_quoted_it(
    service: CortexService, clock: FakeClock
) -> None:
    secret = await service.memories.remember(
        RememberRequest(content="The safe stands behind painting 31-7-12", layer="archive")
    )
    other = await service.memories.remember(
        RememberRequest(content="The bike was repaired in March", layer="archive")
    )
    clock.advance(days=95)
    report = await service.lifecycle.run()
    summary_id = next(iter(report.created.values()))
    before = await service.stores.memories.get(summary_id)
    assert before is not None and "31-7-12" in before.content
    await service.memories.forget(ForgetRequest(memory_id=secret.id, purge=True))
    after = await service.stores.memories.get(summary_id)
    assert after is not None and "31-7-12" not in after.content
    assert "bike was repaired" in after.content
    assert after.metadata["covers"] == [other.id]
    assert (
        await service.memories.recall(RecallRequest(query="safe behind painting"))
    ).memories == []


async def test_late_arrivals_of_an_already_summarised_month_join_its_summary(
    service: CortexService, clock: FakeClock
) -> None:
    first = await service.memories.remember(
        RememberRequest(content="Repaired the bike chain", layer="archive")
    )
    late = await service.memories.remember(
        RememberRequest(content="Fitted a new bike saddle", category="fact", importance=0.5)
    )
    clock.advance(days=95)
    report = await service.lifecycle.run()  # compresses the first, archives the second
    summary_id = next(iter(report.created.values()))
    assert [a.ids for a in report.actions if a.kind == "archive"] == [[late.id]]
    clock.advance(days=95)
    folded = await service.lifecycle.run()
    [compress] = [a for a in folded.actions if a.kind == "compress"]
    assert compress.into == summary_id and compress.ids == [late.id]
    summary = await service.stores.memories.get(summary_id)
    assert summary is not None and summary.metadata["covers"] == [first.id, late.id]
    assert "bike chain" in summary.content and "bike saddle" in summary.content
    assert summary.content.startswith("[2026-11] 2 archived memories")
    snapshot = await service.engines.lifecycle.store.snapshot(None)  # type: ignore[union-attr]
    assert [m.id for m in snapshot if m.category.value == "summary"] == [summary_id]
