"""The entity stage keeps the names, links and linked memories it read until the store changes:
a question asked again reads none of them, and whatever changes them (a new link, an alias, a
forget, another process's write) is seen by the next question. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.errors import StorageError
from cortex_mcp.models import EntityKind, EntityRef, LinkPlan, LinkRole, PlannedLink
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.stages import entity, entity_cache
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    AliasRequest,
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

# said by Maya, never naming her: only her links find them
SAID_BY_MAYA = [
    "I finally took up climbing at the gym near my office.",
    "I went to my first pottery class, my bowl came out lopsided.",
    "I ran the city half marathon on Sunday.",
]
LATER = "I've been growing tomatoes and basil on my balcony."
QUESTION = "What are Maya's hobbies?"


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    # the links are the tests' own: linking on write stays off
    return backend_settings.model_copy(update={"link_entities": False})


async def _said_by(service: CortexService, speaker: str, content: str) -> str:
    result = await service.memories.remember(
        RememberRequest(content=content, occurred_at="2026-03-02T10:00:00Z")
    )
    link = PlannedLink(EntityRef(speaker, EntityKind.person), LinkRole.speaker)
    await service.stores.entities.link(
        "default", [LinkPlan(result.id, (link,), ())], "2026-03-02T10:00:00Z"
    )
    return result.id


async def _top(service: CortexService, query: str = QUESTION) -> list[str]:
    hits = await service.memories.search(SearchRequest(query=query, limit=5))
    return [hit.content for hit in hits]


class Reads:
    """Counts the entity store's reads of names and links (the real store answers them)."""

    def __init__(self, service: CortexService, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        store = service.stores.entities
        for name in (
            "find_entities",
            "entity_keys",
            "linked_memories",
            "linked_moments",
            "links_and_kinds",
        ):
            monkeypatch.setattr(store, name, self._counted(getattr(store, name)))

    def _counted(self, read: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await read(*args, **kwargs)

        return counted


async def test_a_question_asked_again_reads_no_names_or_links_from_the_store(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    reads = Reads(service, monkeypatch)
    first = await _top(service)
    read_first = reads.count
    second = await _top(service)
    assert set(first) >= set(SAID_BY_MAYA)
    assert second == first
    assert read_first >= 2 and reads.count == read_first


async def test_a_memory_linked_after_a_question_is_lifted_by_the_next_one(
    service: CortexService,
) -> None:
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    await _top(service)
    await _said_by(service, "Maya", LATER)
    assert LATER in await _top(service)


async def test_an_alias_added_after_a_question_is_understood_by_the_next_one(
    service: CortexService,
) -> None:
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    question = "What are Mayo's hobbies?"
    assert not set(await _top(service, question)) & set(SAID_BY_MAYA)
    await service.entities.add_alias("Maya", AliasRequest(alias="Mayo"))
    assert set(await _top(service, question)) >= set(SAID_BY_MAYA)


async def test_a_memory_forgotten_after_a_question_is_not_brought_back_by_the_next_one(
    service: CortexService,
) -> None:
    ids = [await _said_by(service, "Maya", content) for content in SAID_BY_MAYA]
    assert SAID_BY_MAYA[0] in await _top(service)
    await service.memories.forget(ForgetRequest(memory_id=ids[0]))
    assert SAID_BY_MAYA[0] not in await _top(service)


@pytest.fixture
async def other_process(settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    """A second server on the same database: its commits are another connection's."""
    async with open_cortex(settings, clock=clock) as other:
        yield other


async def test_a_link_another_process_makes_is_seen_after_the_recheck_interval(
    service: CortexService, other_process: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    await _top(service)
    await _said_by(other_process, "Maya", LATER)
    monkeypatch.setattr(entity_cache, "RECHECK_S", 0.0)  # the interval has passed
    assert LATER in await _top(service)


async def test_a_question_whose_matches_are_far_from_the_entity_reads_no_turns_around_them(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turns next to a match are read only for a match the entity said something near:
    Tom's hobbies, a month after anything Maya said, need no neighbours read."""
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    result = await service.memories.remember(
        RememberRequest(content="My hobbies are chess and cycling.", occurred_at="2026-04-02")
    )
    link = PlannedLink(EntityRef("Tom", EntityKind.person), LinkRole.speaker)
    await service.stores.entities.link("default", [LinkPlan(result.id, (link,), ())], "2026-04-02")
    store = service.stores.entities
    asked: list[object] = []

    async def timeline_around(*args: Any, **kwargs: Any) -> Any:
        asked.append(args)
        return await read(*args, **kwargs)

    read = store.timeline_around
    monkeypatch.setattr(store, "timeline_around", timeline_around)
    top = await _top(service)
    assert set(top) >= set(SAID_BY_MAYA)
    assert asked == []


async def test_a_search_that_fails_before_the_entity_stage_leaves_no_lookup_running(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The names a question says are looked up while the channels search; when a stage
    before the entity stage fails, that lookup (here one the store never answers) stops."""
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    never = asyncio.Event()

    async def unanswered(*args: Any, **kwargs: Any) -> Any:
        await never.wait()

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise StorageError("the disk went away; nothing was changed")

    monkeypatch.setattr(service.stores.entities, "find_entities", unanswered)
    monkeypatch.setattr(service.stores.entities, "entity_keys", unanswered)
    monkeypatch.setattr(service.stores.memories, "get_many", broken)
    with pytest.raises(StorageError):
        await _top(service)
    started = [t for t in asyncio.all_tasks() if t.get_name() == "cortex-entity-names"]
    # a cancelled task ends within a few steps of the loop (a bound on a hang, not a speed)
    if started:
        await asyncio.wait(started, timeout=30)
    assert started and all(t.cancelled() for t in started)


async def test_a_question_asked_after_a_recalls_access_counts_were_written_reads_no_names_or_links(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recalls write their access counts once a second, before almost every question a person
    asks: that write keeps the names and links read (the memories read are read again, their
    counts weigh in their rank)."""
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    recalled = await service.memories.recall(RecallRequest(query=QUESTION))
    await service.memories.access.flush()
    reads = Reads(service, monkeypatch)
    again = await service.memories.recall(RecallRequest(query=QUESTION))
    assert reads.count == 0
    assert [m.id for m in again.memories] == [m.id for m in recalled.memories]
    assert {m.id: m.access_count for m in again.memories if m.content in SAID_BY_MAYA} == {
        m.id: m.access_count + 1 for m in recalled.memories if m.content in SAID_BY_MAYA
    }


async def test_a_person_first_named_after_a_question_is_understood_by_the_next_one(
    service: CortexService,
) -> None:
    """The agent's names are kept whole: one written after they were read is in the next read."""
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    assert set(await _top(service)) >= set(SAID_BY_MAYA)
    said = [await _said_by(service, "Tom", content) for content in SAID_BY_MAYA[:1]]
    hits = await service.memories.search(SearchRequest(query="What are Tom's hobbies?", limit=5))
    assert said[0] in [hit.id for hit in hits]


async def test_questions_naming_someone_else_or_no_one_read_no_names_again(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every name and alias of the agent is read with the first question: a question naming
    another of them, a name nobody has, or only Chinese words (each run a possible name) reads
    no names from the store until it changes."""
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    await _said_by(service, "Tom", LATER)
    await _top(service)
    reads = Reads(service, monkeypatch)
    assert LATER in await _top(service, "What are Tom's hobbies?")
    links_read = reads.count
    await _top(service, "What are Zoltan's hobbies?")
    await _top(service, "我表弟的老家在哪里？")
    assert links_read == 1 and reads.count == links_read  # Tom's links, once


async def test_an_agent_with_more_names_than_are_kept_has_each_questions_names_looked_up(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    await _said_by(service, "Tom", LATER)
    monkeypatch.setattr(entity_cache, "MAX_NAME_ROWS", 1)
    looked_up: list[list[str]] = []
    find = service.stores.entities.find_entities

    async def find_entities(agent_id: str, keys: list[str]) -> Any:
        looked_up.append(list(keys))
        return await find(agent_id, keys)

    monkeypatch.setattr(service.stores.entities, "find_entities", find_entities)
    assert set(await _top(service)) >= set(SAID_BY_MAYA)
    assert LATER in await _top(service, "What are Tom's hobbies?")
    # Tom's other forms are asked with his name (a person may be known as Thomas only)
    assert looked_up == [["maya"], ["tom", "thom", "thomas", "tommy"]]


async def test_one_agents_names_never_resolve_a_question_of_another(
    service: CortexService,
) -> None:
    """Each agent's names are kept apart: Maya is a person to agent "a" only, and "b"'s
    question about her lifts nothing, before and after "a" asked about her."""
    ids = []
    for agent, content in (("a", SAID_BY_MAYA[0]), ("b", SAID_BY_MAYA[1])):
        result = await service.memories.remember(
            RememberRequest(content=content, agent_id=agent, occurred_at="2026-03-02T10:00:00Z")
        )
        ids.append(result.id)
    link = PlannedLink(EntityRef("Maya", EntityKind.person), LinkRole.speaker)
    await service.stores.entities.link("a", [LinkPlan(ids[0], (link,), ())], "2026-03-02")

    async def lifted(agent: str) -> list[str]:
        request = SearchRequest(query=QUESTION, limit=5, agent_id=agent)
        return [hit.id for hit in await service.memories.search(request)]

    assert await lifted("b") == []  # no word of the question in "b"'s memory, no Maya
    assert await lifted("a") == [ids[0]]
    assert await lifted("b") == []


PETS = "What are the names of Maya's pets?"
ASKED = "Tom: What are the names of your pets, by the way?"
ANSWER = "Maya: Luna and Oliver! They are so sweet and playful."


async def _turn(service: CortexService, speaker: str, content: str, at: str) -> str:
    result = await service.memories.remember(RememberRequest(content=content, occurred_at=at))
    link = PlannedLink(EntityRef(speaker, EntityKind.person), LinkRole.speaker)
    await service.stores.entities.link("default", [LinkPlan(result.id, (link,), ())], at)
    return result.id


async def _answer_boost(service: CortexService) -> float:
    report = await service.memories.search_debug(SearchDebugRequest(query=PETS))
    return {hit["content"]: hit["entity_boost"] for hit in report["hits"]}[ANSWER]


async def test_the_turns_around_a_match_read_once_answer_the_next_questions_about_that_stretch(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read around a match shows twice the turns each side: the next question whose match
    is among them reads nothing, and finds the same turns next to it."""
    await _turn(service, "Tom", ASKED, "2026-03-02T10:00:00Z")
    await _turn(service, "Sam", "Sam: The bus was late again.", "2026-03-02T10:01:00Z")
    await _turn(service, "Maya", ANSWER, "2026-03-02T10:02:00Z")
    store = service.stores.entities
    reads: list[object] = []

    async def timeline_around(*args: Any, **kwargs: Any) -> Any:
        reads.append(args)
        return await read(*args, **kwargs)

    read = store.timeline_around
    monkeypatch.setattr(store, "timeline_around", timeline_around)
    first = await _answer_boost(service)
    assert len(reads) == 1
    assert first > 0.5  # her link's lift and what the match two turns before lends
    other = "What was late, Maya's bus?"  # the bus turn is the best match now
    await _top(service, other)
    assert await _answer_boost(service) == first
    assert len(reads) == 1


async def test_a_turn_remembered_between_a_match_and_her_answer_is_seen_by_the_next_question(
    service: CortexService,
) -> None:
    """The turns read around a match go with any change: a turn said in between puts her
    answer three turns after the match, too far to be lent its relevance."""
    await _turn(service, "Tom", ASKED, "2026-03-02T10:00:00Z")
    await _turn(service, "Sam", "Sam: The bus was late again.", "2026-03-02T10:01:00Z")
    await _turn(service, "Maya", ANSWER, "2026-03-02T10:02:00Z")
    assert await _answer_boost(service) > 0.5
    await _turn(service, "Sam", "Sam: And the tram too.", "2026-03-02T10:01:30Z")
    assert await _answer_boost(service) == 0.5  # her link's lift, nothing lent


async def test_the_turns_around_a_match_and_the_answer_brought_beside_it_are_read_in_one_trip(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Her answer shares no word with the question: her link brings it and the match before
    it lends it relevance. The read of the turns around the match reads that memory too, in
    the same trip to the store, not in a second read by id after it."""
    bare = "Luna and Oliver! They are so sweet and playful."
    await _turn(service, "Tom", ASKED, "2026-03-02T10:00:00Z")
    answer = await _turn(service, "Maya", bare, "2026-03-02T10:01:00Z")
    memories = service.stores.memories
    read_by_id: list[list[str]] = []
    get_many = memories.get_many

    async def counted(ids: list[str], **kwargs: Any) -> Any:
        read_by_id.append(list(ids))
        return await get_many(ids, **kwargs)

    monkeypatch.setattr(memories, "get_many", counted)
    report = await service.memories.search_debug(SearchDebugRequest(query=PETS))
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert boosts[bare] > 0.5  # her link's lift and what the match before it lends
    assert read_by_id and not any(answer in ids for ids in read_by_id)


async def test_a_memorys_lift_is_worked_out_once_until_the_store_changes(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text only a link's lift is no share of a memory's relevance: the next question that
    lifts the same way reuses it, and a write (here her next memory) works it out again."""
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    worked_out: list[str] = []
    of = entity._Lift.of

    def counted(lift: Any, memory_id: str, *args: Any) -> float:
        worked_out.append(memory_id)
        return of(lift, memory_id, *args)

    monkeypatch.setattr(entity._Lift, "of", counted)
    first = await _top(service)
    assert set(first) >= set(SAID_BY_MAYA)
    assert len(worked_out) >= len(SAID_BY_MAYA)
    worked_out.clear()
    assert await _top(service) == first
    assert worked_out == []
    await _said_by(service, "Maya", LATER)
    assert LATER in await _top(service)
    assert len(worked_out) >= len(SAID_BY_MAYA) + 1


async def test_a_turn_naming_no_one_new_keeps_the_names_read_and_a_new_name_is_read_again(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation remembers every turn: a turn and its links that add no name or alias
    keep the agent's names read (her links are read again, so the turn is lifted); a person
    named for the first time, or an alias added, is read by the next recall."""
    monkeypatch.setattr(entity_cache, "RECHECK_S", 3600.0)  # no other process writes
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    await _top(service)
    store = service.stores.entities
    names_read: list[object] = []
    entity_keys = store.entity_keys

    async def counted(*args: Any) -> Any:
        names_read.append(args)
        return await entity_keys(*args)

    monkeypatch.setattr(store, "entity_keys", counted)
    await _said_by(service, "Maya", LATER)
    assert LATER in await _top(service)
    assert names_read == []
    luna = await _said_by(service, "Tom", "I adopted a kitten named Luna.")
    recalled = await service.memories.recall(RecallRequest(query="What are Tom's pets?"))
    assert luna in [m.id for m in recalled.memories]
    assert len(names_read) == 1
    await service.entities.add_alias("Maya", AliasRequest(alias="Mayo"))
    recalled = await service.memories.recall(RecallRequest(query="What are Mayo's hobbies?"))
    assert set(SAID_BY_MAYA) <= {m.content for m in recalled.memories}
    assert len(names_read) == 2


def test_linked_memories_are_ordered_the_kind_asked_for_first_then_by_role_then_as_linked() -> None:
    """The order the stage picks linked memories in, for any kinds a question asks for: its
    own memories that name a thing of such a kind beside it first, then speakers and subjects,
    then mentions, each part in the entities' order (newest first)."""
    at = "2026-03-02T10:00:00Z"
    maya = entity_cache.Links.of(
        [
            ("m1", "maya", LinkRole.mentioned, at),
            ("m2", "maya", LinkRole.speaker, at),
            ("m3", "maya", LinkRole.subject, at),
            ("m4", "maya", LinkRole.mentioned, at),
            ("m5", "maya", LinkRole.speaker, at),
        ]
    )
    maya.beside = {"m1": {EntityKind.place}, "m3": {EntityKind.place}, "m5": {EntityKind.pet}}
    tom = entity_cache.Links.of(
        [("m4", "tom", LinkRole.speaker, at), ("m6", "tom", LinkRole.subject, at)]
    )
    view = entity_cache.AgentView("default", None)  # type: ignore[arg-type]
    links = {"maya": maya, "tom": tom}
    for _ in range(2):  # worked out, then kept
        assert view.ordered(links) == (
            ["m2", "m4", "m5", "m3", "m6", "m1"],
            set(),
            {*"m1 m2 m3 m4 m5 m6".split()},
        )
        order, fitting, _ = view.ordered(links, frozenset({EntityKind.place}))
        assert (order, fitting) == (["m3", "m2", "m4", "m5", "m6", "m1"], {"m3"})
        order, fitting, _ = view.ordered(links, frozenset({EntityKind.pet, EntityKind.place}))
        assert (order, fitting) == (["m5", "m3", "m2", "m4", "m6", "m1"], {"m3", "m5"})


async def test_a_question_whose_names_and_links_are_kept_starts_no_lookup_task(
    service: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the question names is looked up while the channels search, as a task when the
    store must be read; when the names and links are kept it is worked out at once."""
    monkeypatch.setattr(entity_cache, "RECHECK_S", 3600.0)  # no other process's commits due
    for content in SAID_BY_MAYA:
        await _said_by(service, "Maya", content)
    lookups: list[str] = []
    create_task = asyncio.create_task

    def counted(coro: Any, **kwargs: Any) -> Any:
        if kwargs.get("name") == "cortex-entity-names":
            lookups.append(kwargs["name"])
        return create_task(coro, **kwargs)

    monkeypatch.setattr(asyncio, "create_task", counted)
    first = await _top(service)
    assert set(first) >= set(SAID_BY_MAYA)
    assert len(lookups) == 1
    assert await _top(service, "What hobbies does Maya have?") != []
    assert await _top(service) == first
    assert len(lookups) == 1
