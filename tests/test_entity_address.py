"""Who a chat's display names are (issue 33): a lower-case handle labelling the turns of an agent
("mkrause: ...", "yuki_h: ...") is their speaker, and the name one speaker of a two-person
exchange calls the other ("Maya, how was your weekend?", "丽丽，周末过得怎么样？", "由紀、週末どう
だった？") becomes that person's alias, so "What are Maya's hobbies?" finds mkrause's turns. Built
as real stores (the turns imported as one agent's memories, linked as every import is), with the
near misses a careless rule would take: label words ("note:", "todo:"), a handle said once,
times, a word before a comma, a third person in the exchange, an alias another entity has."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import AliasOrigin
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    AliasRequest,
    ImportRequest,
    RecallRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

DAY = datetime(2025, 1, 10, 10, tzinfo=UTC)


async def _import(svc: CortexService, turns: list[str], agent: str = "default") -> list[str]:
    """The turns as one agent's memories, a minute apart, as a chat export is imported."""
    memories = []
    for n, text in enumerate(turns):
        at = (DAY + timedelta(minutes=n)).isoformat()
        memories.append(
            {
                "id": _id(agent, n),
                "content": text,
                "layer": "core",
                "category": "fact",
                "importance": 0.5,
                "created_at": at,
                "occurred_at": at,
            }
        )
    document = {"format": "cortex-mcp-export", "memories": memories}
    await svc.exchange.import_memories(build(ImportRequest, document=document, agent_id=agent))
    await svc.drain()
    return [m["id"] for m in memories]


def _id(agent: str, n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{agent}-{n}"))


async def _entities_of(
    svc: CortexService, ids: list[str], agent: str = "default"
) -> list[list[str]]:
    found = await svc.stores.entities.entities_of(agent, ids)
    return [sorted(found.get(memory_id, [])) for memory_id in ids]


async def _aliases(
    svc: CortexService, name: str, agent: str = "default"
) -> list[tuple[str, AliasOrigin]]:
    (entity,) = await svc.stores.entities.entity_named(agent, name)
    return [(a.alias, a.origin) for a in entity.alias_details]


async def test_a_handle_labelling_turns_is_their_speaker_and_the_name_said_to_them_its_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    turns = [
        "Tom: Maya, how was your weekend?",
        "mkrause: Great, thanks Tom! I finally took up climbing at the gym.",
        "Tom: My kitten Luna knocked my coffee off the desk again.",
        "mkrause: I went to my first pottery class last night.",
        "Tom: That sounds relaxing, Maya.",
        "note: the gym closes early today",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = await _import(svc, turns)
        linked = await _entities_of(svc, ids)
        assert linked[1] == ["Tom", "mkrause"] and linked[3] == ["mkrause"]
        assert linked[0] == ["Tom", "mkrause"]  # "Maya" said to mkrause is mkrause
        assert linked[4] == ["Tom", "mkrause"]  # and so is the Maya said later
        assert linked[5] == []  # a label word said once is no one
        assert await _aliases(svc, "mkrause") == [("Maya", AliasOrigin.rule)]
        assert await svc.stores.entities.entity_named("default", "note") == []
        hits = await svc.memories.search(build(SearchRequest, query="What are Maya's hobbies?"))
        assert {ids[1], ids[3]} <= {m.id for m in hits[:4]}


async def test_chinese_and_japanese_turns_call_the_other_speaker_by_a_name_their_handle_does_not_show(
    backend_settings: Settings, clock: FakeClock
) -> None:
    chinese = [
        "小林: 丽丽，周末过得怎么样？",
        "Lily_W: 挺好的！我开始学游泳了，每周去两次。",
        "小林: 今天，你去哪了？",  # a time word before the comma is no name
        "Lily_W: 我最近在学做川菜。",
    ]
    japanese = [
        "佐藤: 由紀、週末どうだった？",
        "yuki_h: 楽しかったよ！最近ボルダリングを始めたの。",
        "佐藤: 今日、雨だった？",  # nor in Japanese
        "yuki_h: 週末に陶芸教室に行ってお皿を作ったよ。",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        zh = await _entities_of(svc, await _import(svc, chinese, "zh"), "zh")
        ja = await _entities_of(svc, await _import(svc, japanese, "ja"), "ja")
        assert zh == [["Lily_W", "小林"], ["Lily_W"], ["小林"], ["Lily_W"]]
        assert ja == [["yuki_h", "佐藤"], ["yuki_h"], ["佐藤"], ["yuki_h"]]
        assert await _aliases(svc, "Lily_W", "zh") == [("丽丽", AliasOrigin.rule)]
        assert await _aliases(svc, "yuki_h", "ja") == [("由紀", AliasOrigin.rule)]
        assert await svc.stores.entities.entity_named("zh", "今天") == []
        assert await svc.stores.entities.entity_named("ja", "今日") == []
        asked = build(SearchRequest, query="由紀の趣味は何？", agent_id="ja")
        hits = await svc.memories.search(asked)
        assert {_id("ja", 1), _id("ja", 3)} <= {m.id for m in hits[:3]}


async def test_a_handle_said_once_or_a_name_among_three_speakers_is_no_ones_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        # one "mkrause:" line: may be any word before a colon; a time is no label at all
        once = await _entities_of(
            svc, await _import(svc, ["mkrause: see you at 10:30 then"], "a"), "a"
        )
        assert once == [[]]
        # between Ann and Bea comes Cal: "Maya" may be either of them
        turns = [
            "ann: hi there all",
            "Bea: Maya, are you coming?",
            "cal: yes I am on my way",
            "cal: almost there now",
            "ann: ok see you",
        ]
        await _import(svc, turns, "b")
        (maya,) = await svc.stores.entities.entity_named("b", "Maya")
        assert (maya.name, maya.aliases) == ("Maya", [])


async def test_a_name_another_entity_already_has_stays_a_candidate_and_links_no_one(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        await svc.memories.remember(
            build(RememberRequest, content="my friend Maya Lopez is a nurse", category="fact")
        )
        await svc.drain()
        (lopez,) = await svc.stores.entities.entity_named("default", "Maya Lopez")
        await svc.entities.add_alias(lopez.id, build(AliasRequest, alias="Maya"))
        ids = await _import(
            svc,
            [
                "Tom: Maya, how was your weekend?",
                "mkrause: Great, thanks Tom!",
                "mkrause: I took up climbing.",
            ],
        )
        assert (await _entities_of(svc, ids))[0] == ["Tom"]
        waiting = [
            w
            for w in await svc.stores.entities.unresolved("default", 10)
            if w["memory_id"] == ids[0]
        ]
        assert sorted(c["name"] for c in waiting[0]["candidates"]) == ["Maya Lopez", "mkrause"]


async def test_in_a_group_the_name_called_twice_is_the_one_speaker_around_every_call(
    backend_settings: Settings, clock: FakeClock
) -> None:
    # three handles; "Kasia" is called twice, each time with someone else around it: only
    # kbear is next to both calls (the second time she answers two turns later)
    turns = [
        "t.wozniak: Morning all",
        "lulu_88: Kasia, how was Lisbon?",
        "kbear: Amazing! I finally tried surfing there.",
        "t.wozniak: I spent the weekend fixing my bike.",
        "lulu_88: nice one",
        "t.wozniak: Kasia, are you still doing pottery on Tuesdays?",
        "lulu_88: I want to join a pottery class too",
        "kbear: Yes, every Tuesday, I made a teapot last week.",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = await _import(svc, turns, "g")
        assert await _aliases(svc, "kbear", "g") == [("Kasia", AliasOrigin.rule)]
        linked = await _entities_of(svc, ids, "g")
        assert "kbear" in linked[1] and "kbear" in linked[5]
        asked = build(SearchRequest, query="What are Kasia's hobbies?", agent_id="g")
        hits = await svc.memories.search(asked)
        # neither says her name or a word of the question: only the alias finds them
        assert {_id("g", 2), _id("g", 7)} <= {m.id for m in hits[:4]}


async def test_in_a_group_a_name_two_people_are_around_every_time_is_no_ones_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    # "Kasia" is called twice, and kbear and lulu_88 both answer around each call: either
    # may be Kasia
    turns = [
        "t.wozniak: Kasia, did you see the match?",
        "kbear: yes, what a goal",
        "lulu_88: I missed it",
        "t.wozniak: Kasia, are you coming on Friday?",
        "lulu_88: I am!",
        "kbear: me too",
        "t.wozniak: see you Friday",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _import(svc, turns, "h")
        (kasia,) = await svc.stores.entities.entity_named("h", "Kasia")
        assert (kasia.name, kasia.aliases) == ("Kasia", [])
        for handle in ("kbear", "lulu_88"):
            assert await _aliases(svc, handle, "h") == []


async def test_in_a_group_one_call_between_two_lines_of_someone_else_is_no_ones_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    # "@Aya" comes between two lines of mk2, but Aya is kuro: among three speakers, who speaks
    # beside one call is not who was called (two speakers only: the other one is)
    turns = [
        "kuro_neko88: my boss Mori wants the whole deck redone by Friday",
        "mk2: ouch",
        "mk2: landed in Sapporo, so cold",
        "ponzu: @Aya did things calm down with Mori?",
        "mk2: ate three bowls of ramen",
        "kuro_neko88: kind of! Mori is moving to Nagoya in April",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _import(svc, turns, "j")
        for handle in ("mk2", "kuro_neko88"):
            assert await _aliases(svc, handle, "j") == []


async def test_a_name_called_in_lower_case_is_read_when_that_person_is_known(
    backend_settings: Settings, clock: FakeClock
) -> None:
    # chat is typed in lower case: "morning jules!" calls jb.88 once "Jules" is known as theirs;
    # a lower-case word after a greeting that is no known person's name stays a word
    first = [
        "dani_k: Jules, how was the climbing gym?",
        "jb.88: brutal, my forearms are dead",
        "dani_k: lol that sounds rough",
        "jb.88: going again on thursday",
    ]
    later = [
        "dani_k: morning jules! did you go bouldering again?",
        "jb.88: yes, and my forearms survived this time",
        "dani_k: thanks man, see you there",
        "jb.88: hey there, running late",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _import(svc, first, "w1")
        assert await _aliases(svc, "jb.88", "w1") == [("Jules", AliasOrigin.rule)]
        ids = []
        for text in later:  # a week later, remembered turn by turn
            ids.append(await _remember_turn(svc, text, "w1"))
        await svc.drain()
        # (a handle said once per remember may or may not be a speaker yet: not asserted)
        linked = await _entities_of(svc, ids, "w1")
        assert "jb.88" in linked[0]
        assert "jb.88" not in linked[2]
        entities, _ = await svc.stores.entities.list_entities("w1", "", 50, 0)
        assert sorted(e.name for e in entities) == ["dani_k", "jb.88"]  # no "Man", no "There"


async def _remember_turn(svc: CortexService, text: str, agent: str) -> str:
    result = await svc.memories.remember(
        build(RememberRequest, content=text, category="fact", agent_id=agent)
    )
    return result.id


async def test_display_names_a_chat_app_decorates_or_shows_as_a_number_are_speakers(
    backend_settings: Settings, clock: FakeClock
) -> None:
    """An export's timestamps, WhatsApp's "~ " and a number for someone not in the contacts,
    emoji around a name or instead of one, pronouns after it: the speaker is the name (or the
    number, the pictographs) and the name friends call them is its alias."""
    turns = [
        "[12/03/2024, 14:22:05] Tom (he/him): Maya, how was your weekend?",
        "[12/03/2024, 14:23:10] 🌸: Great, thanks Tom! I finally took up climbing at the gym.",
        "[12/03/2024, 14:24:00] Tom (he/him): Nice, Maya! My kitten Luna ate my sock again.",
        "[12/03/2024, 14:25:31] 🌸: I went to my first pottery class last night too.",
        "12/03/2024, 14:30 - ~ Jules ✨: Jo, are you coming to the climbing gym later?",
        "12/03/2024, 14:31 - +44 7700 900123: Sorry Jules, I have band practice on Tuesdays.",
        "12/03/2024, 14:32 - ~ Jules ✨: Jo, you play the drums, right?",
        "12/03/2024, 14:33 - +44 7700 900123: Bass guitar, since last spring.",
        "✅: done with the slides for Friday",
        "✅: booked the room for the demo",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = await _import(svc, turns, "chat")
        linked = await _entities_of(svc, ids, "chat")
        assert "Tom" in linked[0] and "🌸" in linked[1] and "🌸" in linked[3]
        assert "Jules" in linked[4] and "+44 7700 900123" in linked[5]
        assert linked[8] == [] and linked[9] == []  # a list's check marks are no one
        assert await _aliases(svc, "🌸", "chat") == [("Maya", AliasOrigin.rule)]
        assert await _aliases(svc, "+44 7700 900123", "chat") == [("Jo", AliasOrigin.rule)]
        names = {e.name for e in (await svc.stores.entities.list_entities("chat", "", 50, 0))[0]}
        assert not names & {"Tom (he/him)", "Jules ✨", "~ Jules", "he/him"}
        hits = await svc.memories.search(
            build(SearchRequest, query="What are Maya's hobbies?", agent_id="chat")
        )
        assert {ids[1], ids[3]} <= {m.id for m in hits[:4]}
        hits = await svc.memories.search(
            build(SearchRequest, query="What instrument does Jo play?", agent_id="chat")
        )
        assert ids[7] in {m.id for m in hits[:3]}


async def test_tell_me_about_the_kitten_is_the_page_of_the_one_someone_calls_my_kitten(
    backend_settings: Settings, clock: FakeClock
) -> None:
    turns = [
        "Tom: My kitten Luna knocked my coffee off the desk again.",
        "Maya: Ha! Is she still hiding in the laundry basket?",
        "Tom: Every day. Luna learned to open the fridge last week.",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = await _import(svc, turns, "pets")
        result = await svc.memories.recall(
            build(RecallRequest, query="Tell me about the kitten", agent_id="pets")
        )
        page = result.meta.entity
        assert page is not None and page.name == "Luna"
        assert {ids[0], ids[2]} <= set(page.memory_ids)
