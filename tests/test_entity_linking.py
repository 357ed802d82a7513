"""Linking on every way in (remember, correct, restore, ingest with and without an LLM, flush,
import), offline by rules, in English, Chinese and Japanese: the entities a memory names are
linked, a kinship phrase that introduces a name becomes its alias for the agent, and the
memories a read returns carry the names (`entities`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    FlushRequest,
    ForgetRequest,
    ImportRequest,
    IngestRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from tests.conftest import FakeClock
from tests.helpers.llm_stub import StubLLM, extraction, llm_stub

pytestmark = pytest.mark.anyio


async def _remember(svc: CortexService, content: str, agent: str | None = None) -> str:
    request = build(RememberRequest, content=content, category="fact", agent_id=agent)
    return (await svc.memories.remember(request)).id


async def _names(svc: CortexService, memory_id: str, agent: str = "default") -> list[str]:
    await svc.drain()  # remember and ingest link after they answer
    return (await svc.stores.entities.entities_of(agent, [memory_id])).get(memory_id, [])


async def test_remember_links_names_and_a_kinship_phrase_links_later_memories(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        first = await _remember(svc, "My sister Anna is a doctor in Lyon")
        later = await _remember(svc, "my sister starts a new job in March")
        assert await _names(svc, first) == ["Anna", "Lyon"]
        assert await _names(svc, later) == ["Anna"]
        (anna,) = await svc.stores.entities.entity_named("default", "my sister")
        assert (anna.name, anna.aliases, anna.mention_count) == ("Anna", ["My sister"], 2)
        found = await svc.memories.search(build(SearchRequest, query="new job"))
        assert [(m.id, m.entities) for m in found] == [(later, ["Anna"])]
        detail = await svc.reading.memory_detail(first)
        assert detail["memory"]["entities"] == ["Anna", "Lyon"]
        # nothing of it reaches another agent
        other = await _remember(svc, "my sister likes tea", agent="other")
        assert await _names(svc, other, "other") == []
        assert await svc.stores.entities.entity_named("other", "Anna") == []


async def test_kinship_aliases_in_chinese_and_japanese_link_the_phrase_said_alone(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as svc:
        await _remember(svc, "我的表弟张伟在北京工作")
        cousin = await _remember(svc, "我表弟下周来上海")
        await _remember(svc, "上司の田中さんは厳しい")
        boss = await _remember(svc, "上司は明日休みです")
        assert "张伟" in await _names(svc, cousin)
        assert await _names(svc, boss) == ["田中"]


async def test_an_alias_of_two_people_links_neither_and_is_kept_with_its_candidates(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as svc:
        await _remember(svc, "My sister Anna is a doctor")
        await _remember(svc, "My sister Beth plays the cello")
        said = await _remember(svc, "my sister called about the weekend")
        assert await _names(svc, said) == []
        (waiting,) = await svc.stores.entities.unresolved("default", 10)
        assert waiting["memory_id"] == said
        assert sorted(c["name"] for c in waiting["candidates"]) == ["Anna", "Beth"]


async def test_a_correction_is_linked_and_a_restored_memory_is_linked_again(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as svc:
        old = await _remember(svc, "I climb with Maya on Sundays")
        corrected = await svc.memories.forget(
            build(ForgetRequest, memory_id=old, correction="I climb with Maya twice a week")
        )
        assert corrected.new_id is not None
        assert await _names(svc, corrected.new_id) == ["Maya"]
        await svc.memories.forget(build(ForgetRequest, memory_id=corrected.new_id))
        assert await _names(svc, corrected.new_id) == []
        await svc.memories.restore(corrected.new_id)
        assert await _names(svc, corrected.new_id) == ["Maya"]


async def test_rules_only_ingest_and_flush_link_the_speaker_and_whom_they_name(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as svc:
        result = await svc.conversation.ingest(
            build(
                IngestRequest,
                user_message="Tom: I adopted a kitten named Luna last week",
                assistant_message="Congratulations!",
                session_id="s1",
            )
        )
        written = [*result.high_signals, *result.extracted]
        assert written
        await svc.drain()
        linked = await svc.stores.entities.entities_of("default", [m.id for m in written])
        assert {name for names in linked.values() for name in names} >= {"Tom", "Luna"}
        flushed = await svc.conversation.flush(
            build(
                FlushRequest,
                messages=[
                    {
                        "role": "user",
                        "content": "I always go hiking with my brother Ken on Sundays",
                    },
                    {"role": "assistant", "content": "Sounds fun."},
                ],
                session_id="s2",
            )
        )
        ids = [m.id for m in flushed.flushed]
        await svc.drain()
        names = await svc.stores.entities.entities_of("default", ids)
        assert "Ken" in {n for found in names.values() for n in found}


async def test_import_links_markdown_and_json_memories_with_their_source_line(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none")
    note = (
        "# 2025-11-27\n\n## Retain\n\n- W @Peter: Peter moved to Oslo\n- B: I met Sara at the gym\n"
    )
    async with open_cortex(settings, clock=clock) as svc:
        report = await svc.exchange.import_memories(
            build(ImportRequest, files={"memory/2025-11-27.md": note})
        )
        assert report["memories"] == 2
        await svc.drain()
        page, _ = await svc.stores.entities.list_entities("default", "", 10, 0)
        assert {e.name for e in page} >= {"Peter", "Oslo", "Sara"}
        (peter,) = await svc.stores.entities.entity_named("default", "Peter")
        (memory_id,) = await svc.stores.entities.memory_ids_of("default", peter.id, 10)
        memory = await svc.stores.memories.get(memory_id)
        assert memory is not None
        assert (memory.kind, memory.source) == ("world", "memory/2025-11-27.md#L5")


# ---- with an LLM: the extraction's entities ------------------------------------------------


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with llm_stub() as server:
        yield server


@pytest.fixture
async def llm_svc(tmp_path: Path, stub: StubLLM, clock: FakeClock) -> AsyncIterator[CortexService]:
    settings = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        llm_provider="openai",
        llm_base_url=stub.openai_url,
        llm_timeout_s=5,
    )
    async with open_cortex(settings, clock=clock) as service:
        yield service


async def test_the_entities_an_extraction_returns_are_linked_with_the_rules_names(
    llm_svc: CortexService, stub: StubLLM
) -> None:
    stub.queue(
        extraction(
            [
                {
                    "content": "The user's manager at Globex approved the budget",
                    "category": "fact",
                    "importance": 0.6,
                    "source": "user",
                    "entities": [
                        {"name": "Globex", "kind": "organization", "role": "mentioned"},
                        {"name": "Priya", "kind": "person", "role": "subject"},
                        {"name": "", "kind": "nonsense"},  # left out, the memory kept
                    ],
                }
            ]
        )
    )
    result = await llm_svc.conversation.ingest(
        build(
            IngestRequest,
            user_message="My manager Priya approved the Globex budget today.",
            assistant_message="Great news.",
        )
    )
    (memory,) = result.extracted
    assert sorted(await _names(llm_svc, memory.id)) == ["Globex", "Priya"]
    (globex,) = await llm_svc.stores.entities.entity_named("default", "globex")
    assert globex.kind == "organization"
    system = stub.received[0].system
    assert '"entities": [{"name": "Anna", "kind": "person", "role": "subject"}]' in system
