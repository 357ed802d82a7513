"""Recall that knows who: the entity a question names lifts what is linked to it (a boost, not a
filter), a question after several things spreads over days, "tell me about X" and `about`
answer with the entity's page, an ambiguous alias with its candidates, and every hit says its
kind, entities and source, in the structured result and in the text a model reads. On SQLite
and PostgreSQL.

The memories are linked the way linking on write links them, through the store's `link` (so a
test here says what the recall does with given links, whatever the linking rules find)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from cortex_mcp.config import Settings
from cortex_mcp.models import (
    AliasOrigin,
    EntityKind,
    EntityRef,
    LinkPlan,
    LinkRole,
    PlannedAlias,
    PlannedLink,
)
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
)
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState, embedding_stub, stub_vector
from tests.helpers.http_helpers import authed_rest_client

pytestmark = pytest.mark.anyio

# a friend whose every turn is hers, though hardly one says her name, and turns by others that
# do say it: the name alone would find the wrong ones
MAYA = [
    ("2026-03-02", "Tom: Maya is coming to the party on Friday, right?", "Tom~Maya"),
    ("2026-03-02", "Tom: I told Maya about the new cafe downtown.", "Tom~Maya"),
    ("2026-03-02", "Tom: Maya, did you see the game last night?", "Tom~Maya"),
    ("2026-03-02", "Maya: I finally took up climbing at the gym near my office.", "Maya"),
    ("2026-04-11", "Maya: I went to my first pottery class, my bowl came out lopsided.", "Maya"),
    ("2026-05-20", "Maya: I ran the city half marathon on Sunday.", "Maya"),
    ("2026-06-07", "Maya: I've been growing tomatoes and basil on my balcony.", "Maya"),
]
HOBBIES = {
    "Maya: I finally took up climbing at the gym near my office.",
    "Maya: I went to my first pottery class, my bowl came out lopsided.",
    "Maya: I ran the city half marathon on Sunday.",
    "Maya: I've been growing tomatoes and basil on my balcony.",
}


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    # the links are the tests' own (`_remember`): linking on write stays off
    return backend_settings.model_copy(update={"link_entities": False})


Turn = tuple[str, str, str]  # (day, content, links as _links reads them)


async def _remember(
    service: CortexService, turns: list[Turn], aliases: tuple[tuple[str, str, str], ...] = ()
) -> dict[str, str]:
    """Remember each turn and link it: the name before ">" as its speaker, the names after it
    (or the only name) as its subjects ("Maya": Maya's own turn, said by her); `aliases` are
    (entity, alias, whose words) made on the first turn. Content -> memory id."""
    ids = {}
    for day, content, links in turns:
        result = await service.memories.remember(
            RememberRequest(content=content, occurred_at=f"{day}T10:00:00Z")
        )
        ids[content] = result.id
        planned = _links(links)
        if aliases and len(ids) == 1:
            planned_aliases = tuple(
                PlannedAlias(_ref(name), alias, AliasOrigin.rule, _ref(speaker))
                for name, alias, speaker in aliases
            )
        else:
            planned_aliases = ()
        plan = LinkPlan(result.id, planned, planned_aliases)
        await service.stores.entities.link("default", [plan], f"{day}T10:00:00Z")
    return ids


def _links(spec: str) -> tuple[PlannedLink, ...]:
    """ "Tom>Anna+Lisbon": Tom said it, about Anna and Lisbon; "Tom~Maya": Tom said it and
    merely mentions Maya; "Maya": Maya said it."""
    if not spec:
        return ()
    speaker, _, mentioned = spec.partition("~")
    if mentioned:
        return (
            PlannedLink(_ref(speaker), LinkRole.speaker),
            PlannedLink(_ref(mentioned), LinkRole.mentioned),
        )
    speaker, _, subjects = spec.partition(">")
    if not subjects:  # "Maya": her own turn
        return (PlannedLink(_ref(speaker), LinkRole.speaker),)
    links = [PlannedLink(_ref(speaker), LinkRole.speaker)]
    links += [PlannedLink(_ref(name), LinkRole.subject) for name in subjects.split("+")]
    return tuple(links)


def _ref(name: str) -> EntityRef:
    places = {"Lisbon", "成都", "札幌"}
    return EntityRef(name, EntityKind.place if name in places else EntityKind.person)


async def _top(service: CortexService, query: str, limit: int = 5) -> list[str]:
    hits = await service.memories.search(SearchRequest(query=query, limit=limit))
    return [hit.content for hit in hits]


async def test_a_question_naming_a_person_finds_what_she_said_though_it_never_names_her(
    service: CortexService,
) -> None:
    await _remember(service, MAYA)
    top = await _top(service, "What are Maya's hobbies?", limit=4)
    assert set(top) == HOBBIES


async def test_the_entity_lifts_and_does_not_filter_a_strong_match_about_someone_else_stays(
    service: CortexService,
) -> None:
    await _remember(
        service, [*MAYA, ("2026-06-08", "Tom: My hobbies are chess and hiking.", "Tom")]
    )
    top = await _top(service, "What are Maya's hobbies?", limit=10)
    assert "Tom: My hobbies are chess and hiking." in top
    assert set(top) >= HOBBIES


async def test_a_question_after_several_things_spreads_over_the_days_rather_than_one_afternoon(
    service: CortexService,
) -> None:
    # eight lines of one later afternoon: the newest, and as linked to Maya as her hobbies
    afternoon = [
        ("2026-07-01", f"Maya: I keep practising scales on the piano, part {n}.", "Maya")
        for n in range(8)
    ]
    await _remember(service, [*MAYA, *afternoon])
    top = await _top(service, "What are Maya's hobbies?", limit=8)
    assert set(top) >= HOBBIES, top
    assert sum("piano" in line for line in top) == 4


async def test_her_lines_that_only_ask_the_other_about_himself_give_way_to_what_she_told(
    service: CortexService,
) -> None:
    # short lines of hers match her name best, but each only asks Tom about himself and says
    # nothing of her: her link lifts them as a mention, and what she told of herself (never
    # naming her) fills the places after the best match
    asking = [
        ("2026-06-08", "Maya: And you, Tom?", "Maya"),
        ("2026-06-09", "Maya: Did it rain there?", "Maya"),
        ("2026-06-10", "Maya: Who won, Tom?", "Maya"),
        ("2026-06-11", "Maya: How was it?", "Maya"),
    ]
    tom = ("2026-06-12", "Tom: My hobbies are chess and hiking.", "Tom")
    await _remember(service, [*MAYA[3:], *asking, tom])
    top = await _top(service, "What are Maya's hobbies?", limit=5)
    assert set(top) == HOBBIES | {tom[1]}, top


async def _chat(service: CortexService, day: str, turns: list[tuple[str, str]]) -> dict[str, str]:
    """One conversation, a turn a minute from 10:00, each linked to its speaker. Content ->
    memory id."""
    ids = {}
    for minute, (speaker, content) in enumerate(turns):
        at = f"{day}T10:{minute:02d}:00Z"
        result = await service.memories.remember(RememberRequest(content=content, occurred_at=at))
        ids[content] = result.id
        plan = LinkPlan(result.id, (PlannedLink(_ref(speaker), LinkRole.speaker),), ())
        await service.stores.entities.link("default", [plan], at)
    return ids


async def test_the_answer_in_the_turn_after_a_matching_question_is_found_though_it_shares_no_word(
    service: CortexService,
) -> None:
    # Tom asks in words the question shares; Maya's answer shares none and does not say whose
    # pets: only the turn right after the match finds it. Her later turns are newer, so the
    # stage's newest unmatched picks do not bring it either.
    answer = "Luna and Oliver! They are so sweet and playful."
    await _chat(
        service,
        "2026-03-02",
        [("Tom", "What are the names of your pets, by the way?"), ("Maya", answer)],
    )
    await _chat(
        service,
        "2026-05-02",
        [("Maya", f"I repainted the kitchen wall, coat {n} of it.") for n in range(12)],
    )
    assert answer in await _top(service, "What are the names of Maya's pets?", limit=3)


async def test_a_turn_of_another_conversation_hours_away_lends_nothing(
    service: CortexService,
) -> None:
    await _chat(service, "2026-03-02", [("Tom", "What are the names of your pets, by the way?")])
    later = "Luna and Oliver! They are so sweet and playful."
    await _chat(service, "2026-03-03", [("Maya", later)])
    report = await service.memories.search_debug(
        SearchDebugRequest(query="What are the names of Maya's pets?")
    )
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert boosts[later] == 0.5  # her link's lift, nothing lent


async def test_turns_imported_a_moment_apart_lend_only_to_the_turn_next_to_the_match(
    service: CortexService,
) -> None:
    """An import stores a whole conversation within a second: time alone would call every
    turn of it "right after" the match; only the turns next to it in order count."""
    turns = [("Tom", "What are the names of your pets, by the way?")]
    turns += [("Sam", f"The bus was late again, stop {n}.") for n in range(6)]
    far = "Luna and Oliver! They are so sweet and playful."
    turns += [("Maya", far)]
    ids = {}
    for n, (_, content) in enumerate(turns):  # a few milliseconds apart
        at = f"2026-03-02T10:00:00.{n * 3:03d}Z"
        request = RememberRequest(content=content, occurred_at=at)
        ids[content] = (await service.memories.remember(request)).id
    speakers = dict((content, speaker) for speaker, content in turns)
    for content, memory_id in ids.items():
        plan = LinkPlan(memory_id, (PlannedLink(_ref(speakers[content]), LinkRole.speaker),), ())
        await service.stores.entities.link("default", [plan], "2026-03-02T10:00:00Z")
    report = await service.memories.search_debug(
        SearchDebugRequest(query="What are the names of Maya's pets?")
    )
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert boosts[far] == 0.5  # her link's lift, nothing lent: seven turns after the match


async def test_with_vectors_a_link_adds_a_share_of_the_memorys_own_relevance(
    tmp_path: Path, clock: FakeClock
) -> None:
    # with a query vector every memory has a relevance of its own: Maya's turns get half of
    # theirs added for a question after one fact (a relevant one rises more than one that only
    # she said), 0.8 for a question after several things, whose answers are her own words
    # spread over months; Tom's mentions of her a fifth of theirs
    with embedding_stub(StubState(meaning=True)) as (url, _):
        settings = stub_settings(tmp_path / "brain.db", url, timeout_s=30.0)
        settings = settings.model_copy(update={"link_entities": False})
        async with open_cortex(settings, clock=clock, background=False) as service:
            await _remember(service, MAYA)
            await service.embed_pending()
            several = await service.memories.search_debug(
                SearchDebugRequest(query="What are Maya's hobbies?")
            )
            one = await service.memories.search_debug(
                SearchDebugRequest(query="Where is Maya's gym?")
            )
    for report, own in ((several, 0.8), (one, 0.5)):
        hits = {hit["content"]: hit for hit in report["hits"]}
        if own == 0.8:
            assert set(hits) >= HOBBIES
        for content, hit in hits.items():
            share = own if content.startswith("Maya:") else 0.2
            assert hit["entity_boost"] == pytest.approx(share * hit["fused"], abs=1e-5), content


async def test_a_question_asking_for_places_lifts_her_memories_that_name_a_place_more(
    service: CortexService,
) -> None:
    trip = "Maya: Last spring I finally took the night train down to Lisbon."
    cake = "Maya: I finally baked the lemon cake from my grandmother's recipe."
    await _remember(service, [("2026-03-02", trip, "Maya>Lisbon"), ("2026-03-09", cake, "Maya")])
    report = await service.memories.search_debug(
        SearchDebugRequest(query="Which cities has Maya been to?")
    )
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert boosts[trip] == pytest.approx(0.7) and boosts[cake] == pytest.approx(0.5)
    report = await service.memories.search_debug(
        SearchDebugRequest(query="What has Maya been baking?")
    )
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert boosts[trip] == pytest.approx(0.5)  # asks for no place: her link's lift alone


@pytest.mark.parametrize(
    ("met", "cake", "question", "links"),
    [
        (
            "Maya: At the shelter I had a long talk with someone named David.",
            "Maya: I finally baked the lemon cake from my grandmother's recipe.",
            "What people has Maya met while volunteering?",
            ("Maya>David", "Maya"),
        ),
        (
            "小丽：我在收容所认识了张伟。",
            "小丽：我终于烤好了柠檬蛋糕。",
            "小丽认识了哪些人？",
            ("小丽>张伟", "小丽"),
        ),
        (
            "由紀：施設で田中さんと話した。",
            "由紀：レモンケーキを焼いた。",
            "由紀はどんな人たちに会った？",
            ("由紀>田中", "由紀"),
        ),
    ],
)
async def test_a_question_asking_what_people_she_met_lifts_her_memories_that_name_a_person_more(
    service: CortexService, met: str, cake: str, question: str, links: tuple[str, str]
) -> None:
    await _remember(service, [("2026-03-02", met, links[0]), ("2026-03-09", cake, links[1])])
    report = await service.memories.search_debug(SearchDebugRequest(query=question))
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert boosts[met] == pytest.approx(0.7) and boosts[cake] == pytest.approx(0.5)


async def test_search_debug_shows_the_entity_understood_and_each_hits_boost(
    service: CortexService,
) -> None:
    await _remember(service, MAYA)
    report = await service.memories.search_debug(
        SearchDebugRequest(query="What are Maya's hobbies?")
    )
    understood = report["query"]["entity"]
    assert understood["names"] == ["Maya"]
    assert [e["name"] for e in understood["entities"]] == ["Maya"]
    assert "entity" in [stage["name"] for stage in report["stages"]]
    boosts = {hit["content"]: hit["entity_boost"] for hit in report["hits"]}
    assert all(boosts[content] > 0 for content in HOBBIES)


async def test_a_kinship_word_finds_the_person_it_was_said_of(service: CortexService) -> None:
    await _remember(
        service,
        [
            ("2026-01-10", "Tom: My sister Anna just moved to Lisbon for a new job.", "Tom>Anna"),
            ("2026-01-11", "Tom: Work was busy, the whole team stayed late.", "Tom"),
            ("2026-02-14", "Tom: My sister got promoted to head of translation.", "Tom>Anna"),
        ],
        aliases=(("Anna", "my sister", "Tom"),),
    )
    top = await _top(service, "What does my sister do?", limit=2)
    assert "Tom: My sister got promoted to head of translation." in top


@pytest.mark.parametrize(
    ("turns", "question", "name"),
    [
        (
            [
                ("2026-01-10", "Tom: My sister Anna just moved to Lisbon.", "Tom>Anna+Lisbon"),
                ("2026-02-14", "Tom: Anna paints every weekend.", "Tom>Anna"),
                ("2026-03-01", "Tom: The weather was great for hiking.", "Tom"),
            ],
            "Tell me about Anna",
            "Anna",
        ),
        (
            [("2026-01-10", "Tom: My sister Anna just moved to Lisbon.", "Tom>Anna")],
            "what do you know about Anna?",
            "Anna",
        ),
        (
            [
                ("2026-01-05", "小林: 我表弟张伟下个月要从成都搬来上海工作。", "小林>张伟+成都"),
                ("2026-02-20", "小林: 张伟找到房子了，在公司附近。", "小林>张伟"),
            ],
            "告诉我关于张伟的事",
            "张伟",
        ),
        (
            [
                (
                    "2026-01-15",
                    "佐藤: 上司の田中さんが来月から札幌支店に異動するんだ。",
                    "佐藤>田中+札幌",
                ),
                ("2026-02-25", "佐藤: 田中さんから札幌の写真が届いた。", "佐藤>田中+札幌"),
            ],
            "田中さんについて教えて",
            "田中",
        ),
    ],
)
async def test_tell_me_about_answers_with_the_entity_page_first(
    service: CortexService, turns: list[Turn], question: str, name: str
) -> None:
    ids = await _remember(service, turns)
    result = await service.memories.recall(RecallRequest(query=question, max_results=10))
    page = result.meta.entity
    assert page is not None and page.name == name
    assert page.memory_ids and set(page.memory_ids) <= set(ids.values())
    assert page.first_seen is not None and page.last_seen is not None
    assert result.context.startswith(f"About {name} (")
    assert [m.id for m in result.memories][: len(page.memory_ids)] == page.memory_ids


async def test_about_gives_the_page_on_any_query_through_an_alias(service: CortexService) -> None:
    await _remember(
        service,
        [
            ("2026-01-10", "Tom: My sister Anna just moved to Lisbon.", "Tom>Anna"),
            ("2026-02-14", "Tom: My sister got promoted to head of translation.", "Tom>Anna"),
        ],
        aliases=(("Anna", "my sister", "Tom"),),
    )
    result = await service.memories.recall(RecallRequest(query="work", about="my sister"))
    assert result.meta.entity is not None and result.meta.entity.name == "Anna"
    assert "my sister" in [a.casefold() for a in result.meta.entity.aliases]


async def test_an_ambiguous_alias_answers_with_its_candidates_and_no_page(
    service: CortexService,
) -> None:
    await _remember(
        service,
        [
            ("2026-01-10", "Tom: My sister Anna just moved to Lisbon.", "Tom>Anna"),
            ("2026-01-12", "Priya: My sister Beth is a nurse in Leeds.", "Priya>Beth"),
        ],
        aliases=(("Anna", "my sister", "Tom"), ("Beth", "my sister", "Priya")),
    )
    result = await service.memories.recall(RecallRequest(query="news", about="my sister"))
    assert result.meta.entity is None
    assert sorted(c.name for c in result.meta.entity_candidates) == ["Anna", "Beth"]
    assert result.context.startswith('"my sister" could mean: Anna (person), Beth (person).')


async def test_about_a_name_nobody_has_says_so_and_recalls_as_usual(service: CortexService) -> None:
    await _remember(service, MAYA)
    result = await service.memories.recall(RecallRequest(query="pottery", about="Zelda"))
    assert result.meta.entity is None and not result.meta.entity_candidates
    assert any("no person, pet or place is called 'Zelda'" in note for note in result.meta.notes)
    assert result.memories


async def test_every_hit_says_its_kind_entities_and_source_in_the_context(
    service: CortexService,
) -> None:
    result = await service.memories.remember(
        RememberRequest(content="Tom: My sister Anna just moved to Lisbon.", source="chat-import")
    )
    plan = LinkPlan(result.id, _links("Tom>Anna+Lisbon"))
    await service.stores.entities.link("default", [plan], "2026-11-01T12:00:00Z")
    recalled = await service.memories.recall(RecallRequest(query="Lisbon"))
    hit = recalled.memories[0]
    assert hit.kind is not None and hit.source == "chat-import"
    assert set(hit.entities) == {"Tom", "Anna", "Lisbon"}
    line = recalled.context.splitlines()[1]
    assert f"(fact, {hit.kind.value}; about " in line and "Anna" in line
    assert "; source chat-import) Tom: My sister" in line
    searched = await service.memories.search(SearchRequest(query="Lisbon"))
    assert set(searched[0].entities) == {"Tom", "Anna", "Lisbon"}


async def _seed(settings: Settings, clock: FakeClock) -> None:
    """Anna's memories in the database, linked, before a server opens it."""
    async with open_cortex(settings, clock=clock) as service:
        await _remember(
            service,
            [
                ("2026-01-10", "Tom: My sister Anna just moved to Lisbon.", "Tom>Anna+Lisbon"),
                ("2026-02-14", "Tom: Anna paints every weekend.", "Tom>Anna"),
            ],
            aliases=(("Anna", "my sister", "Tom"),),
        )


@pytest.fixture
async def mcp_client(settings: Settings, clock: FakeClock) -> AsyncIterator[Client]:
    await _seed(settings, clock)
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server) as c:
        yield c


async def test_the_recall_tool_takes_about_and_its_text_shows_the_page_and_who_each_hit_is_about(
    mcp_client: Client,
) -> None:
    result = await mcp_client.call_tool("cortex_recall", {"query": "weekend", "about": "my sister"})
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("About Anna (person; also called my sister)")
    assert "world; about Tom, Anna" in text
    structured: Any = result.structured_content
    assert structured["meta"]["entity"]["name"] == "Anna"
    assert all("entities" in m and "kind" in m and "source" in m for m in structured["memories"])


async def test_rest_recall_takes_about_as_the_tool_does(
    settings: Settings, clock: FakeClock, tmp_path: Any
) -> None:
    await _seed(settings, clock)
    url = settings.database_url.get_secret_value() if settings.database_url else None
    with authed_rest_client(tmp_path, clock, database_url=url) as rest:
        reply = rest.post("/api/v1/recall", json={"query": "Lisbon", "about": "Anna"})
        assert reply.status_code == 200, reply.text
        assert reply.json()["meta"]["entity"]["name"] == "Anna"
        refused = rest.post("/api/v1/recall", json={"query": "Lisbon", "about": "x" * 201})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "about"


@pytest.mark.parametrize(
    ("said", "question", "name"),
    [
        (
            ["Tom: My sister Anna just moved to Lisbon.", "Tom: Anna paints every weekend."],
            "Tell me about Anna",
            "Anna",
        ),
        (["小林: 我表弟张伟下个月要从成都搬来上海工作。"], "告诉我关于张伟的事", "张伟"),
        (
            ["佐藤: 上司の田中さんが来月から札幌支店に異動するんだ。"],
            "田中さんについて教えて",
            "田中",
        ),
    ],
)
async def test_what_linking_on_remember_finds_gives_the_page(
    backend_settings: Settings, clock: FakeClock, said: list[str], question: str, name: str
) -> None:
    async with open_cortex(backend_settings, clock=clock) as service:  # linking on write on
        await _ask_page(service, said, question, name)


async def _ask_page(service: CortexService, said: list[str], question: str, name: str) -> None:
    for content in [*said, "Tom: The weather was great for hiking."]:
        await service.memories.remember(RememberRequest(content=content))
    await service.drain()
    result = await service.memories.recall(RecallRequest(query=question))
    assert result.meta.entity is not None and result.meta.entity.name == name
    shown = {m.id: m.content for m in result.memories}
    assert [shown[i] for i in result.meta.entity.memory_ids] == said[::-1] or sorted(
        shown[i] for i in result.meta.entity.memory_ids
    ) == sorted(said)


async def test_with_vectors_her_memories_rank_by_what_is_asked_not_by_how_much_they_say_her_name(
    tmp_path: Path, clock: FakeClock
) -> None:
    # every memory she said carries her name: beside it the question's vector is mostly who, so
    # each memory's cosine is to the question without the name (search debug says so)
    balcony = "Maya: Tomatoes and basil, they grow fast on my balcony."
    turns = [
        ("2026-03-02", "Maya: Maya here! What does Maya think, what?", "Maya"),
        ("2026-03-03", "Maya: Tom, did you hear what Maya said?", "Maya"),
        ("2026-03-04", "Tom: Maya, what does Maya think of Maya's new job?", "Tom~Maya"),
        ("2026-03-05", balcony, "Maya"),
    ]
    state = StubState()
    with embedding_stub(state) as (url, _):
        settings = stub_settings(tmp_path / "brain.db", url, timeout_s=30.0)
        settings = settings.model_copy(update={"link_entities": False})
        async with open_cortex(settings, clock=clock, background=False) as service:
            await _remember(service, turns)
            await service.embed_pending()
            query = "What does Maya grow on her balcony?"
            top = await _top(service, query, limit=1)
            report = await service.memories.search_debug(SearchDebugRequest(query=query))
    topic = "What does grow on her balcony?"
    assert top == [balcony]
    assert report["query"]["entity"]["ranked_by"] == topic
    asked = stub_vector(topic, state.default_dim)
    for hit in report["hits"]:
        cosine = float(stub_vector(hit["content"], state.default_dim) @ asked)
        assert hit["vector"]["cosine_distance"] == pytest.approx(1 - cosine, abs=1e-5)


async def test_a_name_that_is_no_entity_stays_in_what_the_vectors_rank_by(
    tmp_path: Path, clock: FakeClock
) -> None:
    with embedding_stub(StubState()) as (url, _):
        settings = stub_settings(tmp_path / "brain.db", url, timeout_s=30.0)
        settings = settings.model_copy(update={"link_entities": False})
        async with open_cortex(settings, clock=clock, background=False) as service:
            await _remember(service, MAYA)
            await service.embed_pending()
            report = await service.memories.search_debug(
                SearchDebugRequest(query="What does Maya think of Python?")
            )
    assert report["query"]["entity"]["ranked_by"] is None
