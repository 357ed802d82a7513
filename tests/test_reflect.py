"""Reflect (issue 34): from the memories new since its last run it closes superseded slots,
gives beliefs their new evidence, refreshes each touched entity's page summary (extractively,
each fact with its source; with an LLM, one call per entity), and proposes edits to core that a
person accepts or rejects; the preview is the run's plan, a second run with nothing new changes
nothing, and the lifecycle runs it; on SQLite and PostgreSQL, over the CLI and REST too."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import EntityKind, EntityRef, Layer, LinkPlan, LinkRole, PlannedLink
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    LifecycleLogRequest,
    LifecycleRequest,
    ProposalDecision,
    ReflectRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock, llm_stub_settings
from tests.helpers.http_helpers import rest_client
from tests.helpers.llm_stub import Received, Reply, llm_stub, text
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.anyio


@pytest.fixture
async def cortex(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _remember(
    cortex: CortexService,
    content: str,
    when: str,
    about: str | None = None,
    category: str = "fact",
    importance: float = 0.5,
    layer: str = "core",
) -> str:
    result = await cortex.memories.remember(
        build(
            RememberRequest,
            content=content,
            category=category,
            occurred_at=when,
            importance=importance,
            layer=layer,
        )
    )
    if about is not None:  # linked as the rules link it, and to `about` as its subject
        await cortex.drain()
        names = await cortex.stores.entities.entities_of("default", [result.id])
        if about not in names.get(result.id, []):
            link = PlannedLink(EntityRef(about, EntityKind.person), LinkRole.subject)
            await cortex.stores.entities.link("default", [LinkPlan(result.id, (link,))], when)
    return result.id


async def _memory(cortex: CortexService, memory_id: str) -> Any:
    return (await cortex.stores.memories.get_many([memory_id]))[memory_id]


async def _reflect(cortex: CortexService, **extra: Any):
    return await cortex.lifecycle.reflect(build(ReflectRequest, **extra))


def _plan(report: Any) -> tuple[Any, ...]:
    return (
        report.memories,
        [(e.id, e.summary, e.memory_ids) for e in report.entities],
        [(p.memory_id, p.action, p.reason) for p in report.proposals],
    )


async def _marco(cortex: CortexService) -> dict[str, str]:
    return {
        "turin": await _remember(
            cortex, "Marco lives in Turin", "2025-01-10T09:00:00Z", "Marco", importance=0.8
        ),
        "milan": await _remember(
            cortex, "Marco moved to Milan", "2025-06-01T09:00:00Z", "Marco", importance=0.8
        ),
        "cycling": await _remember(
            cortex, "Marco cycles to work every day", "2025-06-10T09:00:00Z", "Marco"
        ),
    }


async def test_reflect_writes_each_touched_entitys_current_facts_with_their_sources(
    cortex: CortexService,
) -> None:
    ids = await _marco(cortex)
    report = await _reflect(cortex)
    assert report.status == "done" and report.memories == 3
    [page] = [e for e in report.entities if e.name == "Marco"]
    assert page.method == "extractive"
    assert "Marco moved to Milan" in page.summary and f"memory {ids['milan']}" in page.summary
    assert "Turin" not in page.summary  # superseded: no current fact
    assert ids["turin"] not in page.memory_ids
    stored = await cortex.stores.entities.get_entity("default", page.id)
    assert stored is not None and stored.summary == page.summary


async def test_preview_is_the_runs_plan_and_a_second_run_changes_nothing(
    cortex: CortexService,
) -> None:
    await _marco(cortex)
    preview = await _reflect(cortex, preview=True)
    again = await _reflect(cortex, preview=True)
    run = await _reflect(cortex)
    assert preview.status == "preview" and run.status == "done"
    assert _plan(preview) == _plan(again) == _plan(run)
    log_before = await cortex.lifecycle.log(build(LifecycleLogRequest, limit=1000))
    second = await _reflect(cortex)
    assert second.status == "nothing new" and second.entities == [] and second.proposals == []
    assert await cortex.lifecycle.log(build(LifecycleLogRequest, limit=1000)) == log_before


async def test_reflect_proposes_edits_to_core_and_applies_one_only_when_accepted(
    cortex: CortexService,
) -> None:
    ids = await _marco(cortex)
    belief = await _remember(
        cortex,
        "I prefer window seats on long flights",
        "2026-10-01",
        category="preference",
        layer="working",
    )
    for day, said in (
        ("05", "I booked a window seat on the long flight again"),
        ("09", "window seats on long flights let me sleep"),
        ("13", "asked for a window seat on the long flights home"),
        ("17", "got the window seat on my long flight"),
    ):
        await _remember(cortex, said, f"2026-10-{day}", category="context", layer="working")
    report = await _reflect(cortex)
    by_action = {p.action: p for p in report.proposals}
    assert by_action["archive"].memory_id == ids["turin"]
    assert "superseded on 2025-06-01" in by_action["archive"].reason
    assert by_action["promote"].memory_id == belief
    assert "for, 0 against" in by_action["promote"].reason
    memory = await _memory(cortex, belief)
    assert memory.layer is Layer.working  # proposed, not applied
    pending = await cortex.lifecycle.proposals()
    assert {p.id for p in pending} == {p.id for p in report.proposals}
    accepted = await cortex.lifecycle.decide(
        by_action["promote"].id, build(ProposalDecision, accept=True)
    )
    assert accepted.status == "accepted"
    assert (await _memory(cortex, belief)).layer is Layer.core
    rejected = await cortex.lifecycle.decide(
        by_action["archive"].id, build(ProposalDecision, accept=False)
    )
    assert rejected.status == "rejected"
    assert (await _memory(cortex, ids["turin"])).layer is Layer.core
    assert await cortex.lifecycle.proposals() == []
    with pytest.raises(InvalidInput):
        await cortex.lifecycle.decide(by_action["archive"].id, build(ProposalDecision, accept=True))
    await _remember(cortex, "Marco likes risotto", "2026-11-01", "Marco")
    assert (await _reflect(cortex)).proposals == []  # decided proposals are never made twice


async def test_since_leaves_out_older_memories_and_a_bad_period_is_refused(
    cortex: CortexService, clock: FakeClock
) -> None:
    await _marco(cortex)
    with pytest.raises(InvalidInput) as refused:
        await _reflect(cortex, since="a week")
    assert refused.value.field == "since"
    report = await _reflect(cortex, since="7d", preview=True)
    assert report.memories == 0  # the fake clock's now is long after 2025


async def test_the_lifecycle_run_reflects_after_its_phases(cortex: CortexService) -> None:
    await _marco(cortex)
    report = await cortex.lifecycle.run(build(LifecycleRequest, agent_id="default"))
    assert report.counts.get("reflect_summaries", 0) >= 1  # Marco's page, and the cities'?
    assert (await _reflect(cortex)).status == "nothing new"


def test_reflect_over_rest_and_the_command_line(settings: Settings, tmp_path: Any) -> None:
    with rest_client(settings) as client:
        for text in ("I prefer tea in the morning", "I drank tea in the morning again"):
            added = client.post(
                "/api/v1/memories", json={"content": text, "category": "preference"}
            )
            assert added.status_code == 201, added.text
        preview = client.post("/api/v1/reflect", json={"preview": True})
        assert preview.status_code == 200 and preview.json()["status"] == "preview"
        assert preview.json()["memories"] == 2
        lifecycle = client.get("/api/v1/lifecycle/preview").json()  # its reflect step too
        assert [r["memories"] for r in lifecycle["reflect"]] == [2]
        assert lifecycle["counts"]["reflect_memories"] == 2
        bad = client.post("/api/v1/reflect", json={"since": "a week"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "since"
        done = client.post("/api/v1/reflect", json={})
        assert done.json()["status"] == "done"
    db = settings.db_path
    shown = _cli_json(["reflect", "--preview"], db)
    assert shown["status"] == "nothing new" or shown["memories"] == 0
    assert _cli_json(["reflect", "proposals"], db) == {"proposals": []}


def _cli_json(args: list[str], db: Any) -> Any:
    done = subprocess.run(
        [*server_command(), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=90,
        env=server_env(db),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _summary_reply(request: Received) -> Reply:
    """The stub LLM's summary: the first fact line the prompt holds, reworded."""
    prompt = request.body["messages"][-1]["content"]
    first = next(line for line in prompt.splitlines() if line.startswith("- "))
    return text(f"In short: {first[2:]}")


async def test_with_an_llm_each_touched_entity_gets_one_call_and_its_summary(
    tmp_path: Any, clock: FakeClock
) -> None:
    with llm_stub() as stub:
        stub.responder = _summary_reply
        settings = llm_stub_settings(tmp_path / "brain.db", stub, llm_timeout_s=5)
        async with open_cortex(settings, clock=clock) as cortex:
            await _marco(cortex)
            stub.clear()
            report = await _reflect(cortex)
            summaries = [r for r in stub.received if "summary" in str(r.body)]
            assert report.llm_calls == len(report.entities) == len(summaries) >= 1
            [page] = [e for e in report.entities if e.name == "Marco"]
            assert page.method == "llm" and page.summary.startswith("In short: ")
            assert "[memory " in page.summary  # the source the prompt gave it
            stored = await cortex.stores.entities.get_entity("default", page.id)
            assert stored is not None and stored.summary == page.summary


async def test_a_failed_llm_call_keeps_the_extractive_summary_and_says_so(
    tmp_path: Any, clock: FakeClock
) -> None:
    with llm_stub() as stub:
        stub.default = Reply(status=400, text='{"error": {"message": "bad request"}}')
        settings = llm_stub_settings(tmp_path / "brain.db", stub, llm_timeout_s=5)
        async with open_cortex(settings, clock=clock) as cortex:
            await _marco(cortex)
            report = await _reflect(cortex)
            [page] = [e for e in report.entities if e.name == "Marco"]
            assert page.method == "extractive" and page.summary.startswith("Marco: ")
            assert any("LLM summary failed" in note for note in report.notes)


async def test_a_purged_memory_leaves_no_copy_on_an_entity_page(cortex: CortexService) -> None:
    ids = await _marco(cortex)
    [page] = [e for e in (await _reflect(cortex)).entities if e.name == "Marco"]
    assert "cycles to work" in page.summary
    await cortex.memories.forget(build(ForgetRequest, memory_id=ids["cycling"], purge=True))
    stored = await cortex.stores.entities.get_entity("default", page.id)
    assert stored is not None and "cycles to work" not in stored.summary
    assert "Marco moved to Milan" in stored.summary  # the rest of the page stays


async def test_the_mirror_writes_the_bank_folder_with_each_entitys_facts_and_history(
    tmp_path: Any, clock: FakeClock
) -> None:
    export = tmp_path / "workspace"
    settings = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        export_dir=export,
        mirrors={"debounce_s": 0.05},
    )
    async with open_cortex(settings, clock=clock) as cortex:
        ids = await _marco(cortex)
        await _reflect(cortex)
        assert cortex.engines.mirrors is not None
        await cortex.engines.mirrors.flush()
        page = (export / "bank/entities/marco.md").read_text()
        world = (export / "bank/world.md").read_text()
    current, history = page.split("## History")
    assert f"Marco moved to Milan (since 2025-06-01; memory:{ids['milan']})" in current
    assert f"Marco lives in Turin (2025-01-10 to 2025-06-01; memory:{ids['turin']})" in history
    assert "Turin" not in current.split("## Current facts")[1]
    assert f"memory:{ids['cycling']}" in world
    assert (export / "bank/experience.md").exists() and (
        export / "bank/opinions.md"
    ).exists() is False


async def test_a_run_stopped_on_the_way_is_resumed_from_its_stored_plan_not_planned_again(
    tmp_path: Any, clock: FakeClock
) -> None:
    """The first entity's LLM summary arrives, the second never does and the run is cancelled
    (a crash): the next preview shows the stored plan, the next run asks the LLM only for what
    is missing, and a memory said meanwhile waits for the run after."""
    import asyncio

    answered: list[str] = []

    def first_then_hold(request: Received) -> Reply:
        if answered:
            return Reply(text="never", held=True)
        answered.append(request.user)
        return _summary_reply(request)

    with llm_stub() as stub:
        stub.responder = first_then_hold
        settings = llm_stub_settings(tmp_path / "brain.db", stub, llm_timeout_s=30)
        async with open_cortex(settings, clock=clock) as cortex:
            await _marco(cortex)
            await _remember(cortex, "Anna lives in Oslo", "2025-06-20T09:00:00Z", "Anna")
            run = asyncio.create_task(_reflect(cortex))
            for _ in range(400):  # bounded: the second entity's call is on its way
                if len(stub.received) >= 2:
                    break
                await asyncio.sleep(0.025)
            assert len(stub.received) == 2
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            stored = await cortex.stores.reflect.stored_plan("default")
            assert stored is not None
            methods = [e["method"] for e in stored[1]["entities"]]
            assert methods.count("llm") == 1 and len(methods) >= 2
            await _remember(cortex, "Marco adopted a cat", "2025-07-01T09:00:00Z", "Marco")
            stub.responder = _summary_reply
            stub.release.set()
            stub.clear()
            preview = await _reflect(cortex, preview=True)
            assert any("resumed the stored plan" in note for note in preview.notes)
            resumed = await _reflect(cortex)

            def pages(report: Any) -> list[tuple[str, list[str]]]:
                return [(e.id, e.memory_ids) for e in report.entities]

            assert pages(resumed) == pages(preview) and _plan(resumed)[2] == _plan(preview)[2]
            missing = len(methods) - 1
            assert resumed.status == "done" and resumed.llm_calls == missing == len(stub.received)
            assert all(e.method == "llm" for e in resumed.entities)
            for page in resumed.entities:
                entity = await cortex.stores.entities.get_entity("default", page.id)
                assert entity is not None and entity.summary == page.summary
            assert await cortex.stores.reflect.stored_plan("default") is None
            after = await _reflect(cortex)  # the memory said meanwhile, now
            assert after.memories == 1 and after.notes == []


def test_proposals_are_listed_and_decided_over_rest_once_each(tmp_path: Any) -> None:
    settings = load_settings(db_path=tmp_path / "brain.db", embedding_provider="none")
    with rest_client(settings) as client:
        for text, when in (
            ("Ivo lives in Split", "2025-01-10"),
            ("Ivo moved to Zagreb", "2025-06-01"),
        ):
            body = {"content": text, "category": "fact", "layer": "core", "occurred_at": when}
            assert client.post("/api/v1/memories", json=body).status_code == 201
        assert client.post("/api/v1/reflect", json={}).json()["status"] == "done"
        [proposal] = client.get("/api/v1/reflect/proposals").json()["proposals"]
        assert proposal["action"] == "archive" and proposal["status"] == "pending"
        url = f"/api/v1/reflect/proposals/{proposal['id']}"
        decided = client.post(url, json={"accept": False})
        assert decided.status_code == 200 and decided.json()["status"] == "rejected"
        again = client.post(url, json={"accept": True})
        assert again.status_code == 400 and "already rejected" in again.json()["error"]["message"]
        assert client.get("/api/v1/reflect/proposals").json() == {"proposals": []}
        every = client.get("/api/v1/reflect/proposals", params={"status": "all"}).json()
        assert [p["status"] for p in every["proposals"]] == ["rejected"]
        missing = client.post("/api/v1/reflect/proposals/nope", json={"accept": True})
        assert missing.status_code == 404
        bad = client.get("/api/v1/reflect/proposals", params={"status": "maybe"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "status"


async def test_the_lifecycle_preview_lists_what_its_reflect_step_will_change_and_the_run_does_that(
    cortex: CortexService,
) -> None:
    await _marco(cortex)
    scope = build(LifecycleRequest, agent_id="default")
    preview = await cortex.lifecycle.preview(scope)
    [planned] = preview.reflect
    assert planned.memories == 3 and planned.entities and planned.proposals
    assert preview.counts["reflect_memories"] == 3
    assert preview.counts["reflect_summaries"] == len(planned.entities)
    assert preview.counts["reflect_proposals"] == len(planned.proposals)
    run = await cortex.lifecycle.run(scope)
    [done] = run.reflect
    assert done.status == "done" and _plan(done) == _plan(planned)
    reflect_counts = {k: v for k, v in run.counts.items() if k.startswith("reflect_")}
    assert reflect_counts == {k: v for k, v in preview.counts.items() if k.startswith("reflect_")}
    after = await cortex.lifecycle.preview(scope)
    assert after.reflect == [] and after.counts["reflect_summaries"] == 0
    assert (await _reflect(cortex)).status == "nothing new"


async def test_a_lifecycle_run_stopped_in_its_reflect_step_resumes_there_from_the_stored_plan(
    tmp_path: Any, clock: FakeClock
) -> None:
    """The run's reflect step holds the lifecycle's lease (a reflect of the same agent is busy
    meanwhile); the first entity's LLM summary arrives, the second never does and the run is
    cancelled (a crash): the run's marker stands at reflect, the preview lists the stored plan,
    and the next run resumes at reflect, asking the LLM only for what is missing."""
    import asyncio

    answered: list[str] = []

    def first_then_hold(request: Received) -> Reply:
        if answered:
            return Reply(text="never", held=True)
        answered.append(request.user)
        return _summary_reply(request)

    scope = build(LifecycleRequest, agent_id="default")
    with llm_stub() as stub:
        stub.responder = first_then_hold
        settings = llm_stub_settings(tmp_path / "brain.db", stub, llm_timeout_s=30)
        async with open_cortex(settings, clock=clock) as cortex:
            await _marco(cortex)
            await _remember(cortex, "Anna lives in Oslo", "2025-06-20T09:00:00Z", "Anna")
            run = asyncio.create_task(cortex.lifecycle.run(scope))
            for _ in range(400):  # bounded: the second entity's call is on its way
                if len(stub.received) >= 2:
                    break
                await asyncio.sleep(0.025)
            assert len(stub.received) == 2
            assert (await _reflect(cortex)).status == "busy"  # under the lifecycle's lease
            assert (await cortex.lifecycle.run(scope)).status == "busy"
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            engine = cortex.engines.lifecycle
            [row] = [r for r in await engine.store.recent_runs() if r["status"] == "running"]
            assert row["next_phase"] == 4  # promote, merge, archive and compress are done
            stored = await cortex.stores.reflect.stored_plan("default")
            assert stored is not None
            methods = [e["method"] for e in stored[1]["entities"]]
            assert methods.count("llm") == 1 and len(methods) >= 2
            await _remember(cortex, "Marco adopted a cat", "2025-07-01T09:00:00Z", "Marco")
            stub.responder = _summary_reply
            stub.release.set()
            stub.clear()
            preview = await cortex.lifecycle.preview(scope)
            assert preview.resumed and preview.actions == []
            [planned] = preview.reflect
            assert any("resumed the stored plan" in note for note in planned.notes)
            resumed = await cortex.lifecycle.run(scope)
            assert resumed.resumed and resumed.run_id == row["id"] and resumed.actions == []
            [done] = resumed.reflect
            assert [(e.id, e.memory_ids) for e in done.entities] == [
                (e.id, e.memory_ids) for e in planned.entities
            ]
            assert _plan(done)[2] == _plan(planned)[2]
            assert done.llm_calls == len(methods) - 1 == len(stub.received)
            assert await cortex.stores.reflect.stored_plan("default") is None
            finished = [r for r in await engine.store.recent_runs() if r["id"] == row["id"]]
            assert finished[0]["status"] == "done"
            after = await _reflect(cortex)  # the memory said meanwhile, now
            assert after.memories == 1


async def test_a_memory_the_runs_own_phases_archive_gets_no_reflect_proposal(
    cortex: CortexService, clock: FakeClock
) -> None:
    """Turin, superseded and in core, would be proposed for the archive; unused for a year at
    a low importance, the run's archive phase archives it itself, so its reflect phase proposes
    nothing for it (a proposal for a memory the run already decided would wait for no reason),
    in the preview as in the run."""
    turin = await _remember(
        cortex, "Marco lives in Turin", "2025-01-10T09:00:00Z", "Marco", importance=0.1
    )
    await _remember(cortex, "Marco moved to Milan", "2025-06-01T09:00:00Z", "Marco", importance=1)
    clock.advance(days=365)
    scope = build(LifecycleRequest, agent_id="default")
    preview = await cortex.lifecycle.preview(scope)
    assert any(turin in a.ids and a.kind == "archive" for a in preview.actions)
    planned = [p for r in preview.reflect for p in r.proposals]
    assert turin not in {p.memory_id for p in planned}
    run = await cortex.lifecycle.run(scope)
    assert [_plan(r) for r in run.reflect] == [_plan(r) for r in preview.reflect]
    assert (await _memory(cortex, turin)).layer is Layer.archive
    assert await cortex.lifecycle.proposals() == []
