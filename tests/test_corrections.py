"""Corrections supersede only a memory about the same thing, every supersede is in the audit
log with both ids and its rule, and a superseded memory can be restored (CLI and REST)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.engine.ingest.corrections import choose_superseded
from cortex_mcp.errors import NotFound
from cortex_mcp.models import Category, Layer, Memory
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    IngestRequest,
    LifecycleLogRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from tests.conftest import FakeClock, llm_stub_settings
from tests.helpers.embedding_stub import StubState, embedding_stub
from tests.helpers.http_helpers import authed_rest_client
from tests.helpers.llm_stub import StubLLM, extraction, llm_stub
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.anyio
API = "/api/v1"


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args], capture_output=True, text=True, timeout=60, env=server_env(db)
    )


def test_the_issue_reproduction_leaves_the_first_memory_recallable(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    added = _cli(db, "add", "Melanie: We have a big grassy area behind the house", "--json")
    assert added.returncode == 0, added.stderr
    grassy = json.loads(added.stdout)["id"]
    ingested = _cli(db, "ingest", "--user", "It's not big, but we can all have fun")
    assert ingested.returncode == 0, ingested.stderr
    found = _cli(db, "search", "grassy area", "--json")
    assert found.returncode == 0, found.stderr
    assert grassy in found.stdout


def test_a_superseded_memory_is_restored_from_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    old = json.loads(_cli(db, "add", "My daughter is seven", "--json").stdout)["id"]
    assert (
        _cli(db, "ingest", "--user", "Sorry, my daughter is not seven, but eight").returncode == 0
    )
    assert old not in _cli(db, "search", "daughter seven", "--json").stdout
    restored = _cli(db, "restore", old)
    assert restored.returncode == 0, restored.stderr
    assert f"restored: {old}" in restored.stdout
    assert old in _cli(db, "search", "daughter seven", "--json").stdout
    missing = _cli(db, "restore", "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr


# ---- the sieve's "not X, but Y" rule, per language, with near misses ---------------------


async def _supersedes(service: CortexService) -> list[dict[str, Any]]:
    entries = await service.lifecycle.log(build(LifecycleLogRequest, limit=100))
    return [e for e in entries if e["action"] in ("supersede", "correct")]


async def _is_live(service: CortexService, memory_id: str) -> bool:
    memory = (await service.reading.memory_detail(memory_id))["memory"]
    return memory["superseded_by"] is None and memory["forgotten_at"] is None


@pytest.mark.parametrize(
    ("old", "correction"),
    [
        ("My daughter is seven", "Sorry, my daughter is not seven, but eight"),
        ("Caroline: My daughter is seven", "Caroline: My daughter is not seven, but eight."),
        ("Our team meeting is on Tuesday", "Our team meeting is not on Tuesday, but Wednesday"),
        ("My daughter is seven", "My daughter is eight, not seven"),
        ("I work at Apple in the design team", "I work at Google, not Apple"),
        ("用户的预算是5000万日元", "预算不是5000万，而是4000万。"),
        ("会議は火曜日です", "会議は火曜日ではなく水曜日です"),
    ],
)
async def test_a_correction_supersedes_the_same_speakers_memory_of_the_same_thing(
    service: CortexService, old: str, correction: str
) -> None:
    first = await service.memories.remember(RememberRequest(content=old, category="fact"))
    result = await service.conversation.ingest(
        build(IngestRequest, user_message=correction, assistant_message="")
    )
    (corrected,) = [m for m in result.high_signals if m.category.value == "correction"]
    assert not await _is_live(service, first.id)
    (entry,) = await _supersedes(service)
    assert entry["memory_ids"] == [first.id, corrected.id]
    assert entry["details"]["rule"].startswith("sieve:correction:")


@pytest.mark.parametrize(
    ("old", "correction"),
    [
        # the same words from another speaker
        ("Melanie: My daughter is seven", "Caroline: My daughter is not seven, but eight"),
        ("Melanie: My daughter is seven", "Caroline: My daughter is eight, not seven"),
        # the corrected word only inside a longer word
        ("My daughter is seventeen", "Sorry, my daughter is not seven, but eight"),
        # the same word as the object of another predicate
        ("I met my wife in Leeds", "My wife is not in Leeds, but in York"),
        ("My son was born at seven in the morning", "My son is eight, not seven"),
        # nothing shared beyond the corrected word
        ("The concert was in March", "My exam is not in March, but in May"),
        ("我的跑步目标是5000万步", "预算不是5000万，而是4000万。"),
        ("火曜日のジムが好きです", "火曜日ではなく水曜日に行きます"),
    ],
)  # fmt: skip
async def test_a_correction_about_something_else_leaves_the_old_memory_alone(
    service: CortexService, old: str, correction: str
) -> None:
    first = await service.memories.remember(RememberRequest(content=old, category="fact"))
    result = await service.conversation.ingest(
        build(IngestRequest, user_message=correction, assistant_message="")
    )
    assert [m.category.value for m in result.high_signals] == ["correction"]
    assert await _is_live(service, first.id)
    assert await _supersedes(service) == []


def test_the_issue_sentence_corrects_nothing_even_if_a_rule_takes_it_for_a_correction() -> None:
    # "It's not big, but we can all have fun": the sieve no longer calls it a correction;
    # should any rule do so, the matcher still finds no memory it is about
    grassy = Memory(
        id="01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51", agent_id="a", layer=Layer.core,
        category=Category.fact, content="Melanie: We have a big grassy area behind the house",
        importance=0.7, confidence=0.8, decay_score=1.0, access_count=0,
        created_at="2026-01-01T00:00:00.000000Z", updated_at="2026-01-01T00:00:00.000000Z",
    )  # fmt: skip
    sentence = "It's not big, but we can all have fun"
    for speaker in (None, "melanie"):
        assert choose_superseded(sentence, "big", speaker, [grassy]).memory is None
    mine = grassy.model_copy(update={"content": "It's a big garden, we can all have fun"})
    assert choose_superseded(sentence, "big", None, [mine]).memory is None  # another predicate


async def test_the_newest_matching_memory_is_the_one_corrected(
    service: CortexService, clock: FakeClock
) -> None:
    older = await service.memories.remember(
        RememberRequest(content="My daughter is seven years old", category="fact")
    )
    clock.advance(days=1)
    newer = await service.memories.remember(
        RememberRequest(content="My daughter is seven and loves chess", category="fact")
    )
    await service.conversation.ingest(
        build(
            IngestRequest, user_message="My daughter is not seven, but eight", assistant_message=""
        )
    )
    assert await _is_live(service, older.id) and not await _is_live(service, newer.id)


# ---- the other rules that supersede ----------------------------------------------------


async def test_an_explicit_supersedes_is_logged_and_can_be_restored(
    service: CortexService,
) -> None:
    old = await service.memories.remember(RememberRequest(content="Deploy target is Heroku"))
    new = await service.memories.remember(
        RememberRequest(content="Deploy target is Fly.io", supersedes=old.id)
    )
    (entry,) = await _supersedes(service)
    assert entry["memory_ids"] == [old.id, new.id] and entry["details"]["rule"] == "explicit"
    restored = await service.memories.restore(old.id)
    assert restored["superseded_by"] is None
    assert {m.id for m in await service.memories.search(SearchRequest(query="deploy target"))} == {
        old.id,
        new.id,
    }
    assert (await service.lifecycle.log(build(LifecycleLogRequest, limit=1)))[0][
        "action"
    ] == "restore"


async def test_forget_with_a_correction_is_logged_with_its_rule_and_can_be_restored(
    service: CortexService,
) -> None:
    old = await service.memories.remember(RememberRequest(content="The office is in Shibuya"))
    done = await service.memories.forget(
        ForgetRequest(memory_id=old.id, correction="The office is in Shinagawa")
    )
    (entry,) = await _supersedes(service)
    assert entry["memory_ids"] == [old.id, done.new_id]
    assert entry["details"]["rule"] == "forget_correction"
    await service.memories.restore(old.id)
    assert old.id in {
        m.id for m in await service.memories.search(SearchRequest(query="office Shibuya"))
    }


async def test_a_forgotten_memory_can_be_restored_and_another_agent_cannot(
    service: CortexService,
) -> None:
    memory = await service.memories.remember(
        RememberRequest(content="Parking spot 42", agent_id="ann")
    )
    await service.memories.forget(ForgetRequest(memory_id=memory.id, agent_id="ann"))
    with pytest.raises(NotFound, match="no memory"):
        await service.memories.restore(memory.id, agent_id="bob")
    await service.memories.restore(memory.id, agent_id="ann")
    assert memory.id in {
        m.id for m in await service.memories.search(SearchRequest(query="parking", agent_id="ann"))
    }


async def test_the_lifecycle_merges_one_speakers_near_duplicates_never_two_speakers(
    service: CortexService, clock: FakeClock
) -> None:
    mine = [
        await service.memories.remember(
            RememberRequest(content="Caroline: I really love painting sunsets by the lake")
        ),
        await service.memories.remember(
            RememberRequest(content="Caroline: I really love painting the sunsets by the lake")
        ),
    ]
    theirs = await service.memories.remember(
        RememberRequest(content="Melanie: I really love painting sunsets by the lake")
    )
    clock.advance(days=1)
    report = await service.lifecycle.run()
    merges = [a for a in report.actions if a.kind == "merge"]
    assert [sorted(a.ids) for a in merges] == [sorted(m.id for m in mine)]
    assert await _is_live(service, theirs.id)
    logged = [
        e
        for e in await service.lifecycle.log(build(LifecycleLogRequest, limit=100))
        if e["action"] == "merge"
    ]
    assert {mine[0].id, mine[1].id} <= set(logged[0]["memory_ids"])


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with llm_stub() as s:
        yield s


@pytest.fixture
async def with_llm(tmp_path: Path, stub: StubLLM, clock: FakeClock) -> AsyncIterator[Any]:
    async with open_cortex(llm_stub_settings(tmp_path / "llm.db", stub), clock=clock) as svc:
        yield svc


async def test_an_llm_correction_is_stored_beside_the_old_memory_never_over_it(
    with_llm: CortexService, stub: StubLLM
) -> None:
    old = await with_llm.memories.remember(
        RememberRequest(content="User's favourite colour is blue")
    )
    item = {"content": "User's favourite colour is green", "category": "correction",
            "importance": 0.8, "source": "user"}  # fmt: skip
    stub.queue(extraction([item]))
    result = await with_llm.conversation.ingest(
        build(
            IngestRequest,
            user_message="I'd like to update my profile details",
            assistant_message="Noted.",
        )
    )
    assert [m.category.value for m in result.extracted] == ["correction"]
    assert await _is_live(with_llm, old.id)
    assert await _supersedes(with_llm) == []


# ---- REST -----------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path, clock: FakeClock) -> Iterator[TestClient]:
    with authed_rest_client(tmp_path, clock, db_name="rest.db") as c:
        yield c


def test_restore_over_rest_brings_a_superseded_memory_back(client: TestClient) -> None:
    old = client.post(f"{API}/memories", json={"content": "Deploy target is Heroku"}).json()["id"]
    client.post(f"{API}/memories", json={"content": "Deploy target is Fly.io", "supersedes": old})
    hits = client.post(f"{API}/search", json={"query": "deploy target"}).json()["results"]
    assert old not in [h["id"] for h in hits]
    reply = client.post(f"{API}/memories/{old}/restore", json={})
    assert reply.status_code == 200, reply.text
    assert reply.json()["superseded_by"] is None
    hits = client.post(f"{API}/search", json={"query": "deploy target"}).json()["results"]
    assert old in [h["id"] for h in hits]
    other = client.post(f"{API}/memories/{old}/restore", json={}, headers={"X-Cortex-Agent": "B"})
    assert other.status_code == 404
    assert client.post(f"{API}/memories/nope/restore", json={}).status_code in (400, 422)
    log = client.get(f"{API}/lifecycle/log").json()["entries"]
    assert [e["action"] for e in log][:2] == ["restore", "supersede"]


# ---- by meaning, when an embedding provider answers -------------------------------------


@pytest.fixture
def embedder() -> Iterator[tuple[str, StubState]]:
    with embedding_stub() as served:
        yield served


@pytest.fixture
async def with_vectors(
    tmp_path: Path, embedder: tuple[str, StubState], clock: FakeClock
) -> AsyncIterator[CortexService]:
    settings = load_settings(
        db_path=tmp_path / "vec.db",
        embedding_provider="openai",
        embedding_base_url=embedder[0],
        embedding_model="stub-embed",
        embedding_timeout_s=10.0,
    )
    async with open_cortex(settings, clock=clock) as svc:
        yield svc


async def test_with_vectors_the_same_subject_is_told_by_meaning(
    with_vectors: CortexService,
) -> None:
    old = await with_vectors.memories.remember(RememberRequest(content="My daughter is seven"))
    await with_vectors.conversation.ingest(
        build(
            IngestRequest, user_message="My daughter is not seven, but eight", assistant_message=""
        )
    )
    (entry,) = await _supersedes(with_vectors)
    assert entry["memory_ids"][0] == old.id


async def test_with_vectors_a_correction_far_in_meaning_leaves_the_old_memory(
    with_vectors: CortexService,
) -> None:
    # the text measure alone would take it (they share "daughter" beyond "seven")
    old = await with_vectors.memories.remember(RememberRequest(content="My daughter is seven"))
    await with_vectors.conversation.ingest(
        build(
            IngestRequest,
            user_message="My daughter is not seven, but the twins turned eight and love football, chess and"
            " long walks by the river every weekend",
            assistant_message="",
        )
    )
    assert await _is_live(with_vectors, old.id)
    assert await _supersedes(with_vectors) == []


async def test_when_the_embedding_provider_fails_the_text_measure_decides(
    with_vectors: CortexService, embedder: tuple[str, StubState]
) -> None:
    old = await with_vectors.memories.remember(RememberRequest(content="My daughter is seven"))
    embedder[1].mode = "http500"
    await with_vectors.conversation.ingest(
        build(
            IngestRequest, user_message="My daughter is not seven, but eight", assistant_message=""
        )
    )
    (entry,) = await _supersedes(with_vectors)
    assert entry["memory_ids"][0] == old.id
