"""Another form of an English given name: "Bea" for Beatrice, "Kenny" for Ken, "Mel" for Melanie
link to the one person known by the other form and become that person's alias; two such people
link neither (candidates); a new name that is no other form of anyone's is a new person; a word
that is no Latin name, and every non-person, is left to the other rules."""

from __future__ import annotations

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.engine.entities.given_names import is_cut_from, other_forms
from cortex_mcp.engine.entities.mentions import Mention, Mentions
from cortex_mcp.engine.entities.resolve import Known, lookup_keys, plan_links
from cortex_mcp.models import (
    AliasOrigin,
    EntityKind,
    EntityMatch,
    EntityRef,
    LinkRole,
    PlannedAlias,
    PlannedLink,
)
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest, SearchDebugRequest, build
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


def _person(name: str, entity_id: str, by: str = "name", key: str | None = None) -> EntityMatch:
    return EntityMatch(key or name.lower(), entity_id, name, EntityKind.person, by)


def _said(name: str, kind: EntityKind = EntityKind.person) -> Mentions:
    return Mentions((Mention(name, kind, LinkRole.subject, 0, len(name), "name", ()),), ())


@pytest.mark.parametrize(
    ("said", "known_as"),
    [
        ("Bea", "Beatrice"),  # the table's nickname
        ("Beatrice", "Bea"),  # and the other way round
        ("Kenny", "Ken"),  # a diminutive of the name itself
        ("Matty", "Matt"),  # of a name that ends in a double consonant
        ("Mikey", "Mike"),
        ("Mel's", "Melanie"),  # cut short, said as a possessive
        ("Chris", "Christopher"),
        ("Liz", "Elizabeth"),
        ("Katherine", "Kate"),
    ],
)
def test_another_form_of_a_persons_name_links_to_them_and_becomes_their_alias(
    said: str, known_as: str
) -> None:
    person = _person(known_as, "e-1")
    plan = plan_links("m1", _said(said), Known([person]))
    ref = EntityRef(known_as, EntityKind.person, "e-1")
    assert plan.links == (PlannedLink(ref, LinkRole.subject),)
    assert plan.aliases == (PlannedAlias(ref, said.removesuffix("'s"), AliasOrigin.rule, None),)
    assert plan.unresolved == ()


def test_the_form_is_asked_of_the_store_and_found_among_aliases_too() -> None:
    assert {"beatrice", "ken", "mike"} <= set(
        lookup_keys(Mentions(tuple(_said(n).mentions[0] for n in ("Bea", "Kenny", "Mikey")), ()))
    )
    # Ken is known only as the alias of the handle k_nakamura: Kenny is that person too
    handle = _person("k_nakamura", "e-k", by="alias", key="ken")
    plan = plan_links("m1", _said("Kenny"), Known([handle]))
    assert [link.entity.entity_id for link in plan.links] == ["e-k"]


def test_two_people_known_by_other_forms_link_neither_and_are_the_candidates() -> None:
    known = Known([_person("Alexander", "e-1"), _person("Alexandra", "e-2")])
    plan = plan_links("m1", _said("Alex"), known)
    assert plan.links == () and plan.aliases == ()
    (unresolved,) = plan.unresolved
    assert (unresolved.phrase, unresolved.candidates) == ("Alex", ("Alexander", "Alexandra"))


def test_a_name_of_its_own_or_an_alias_wins_over_another_form() -> None:
    known = Known([_person("Bea", "e-bea"), _person("Beatrice", "e-beatrice")])
    plan = plan_links("m1", _said("Bea"), known)
    assert [link.entity.entity_id for link in plan.links] == ["e-bea"]
    assert plan.aliases == ()


@pytest.mark.parametrize(
    ("said", "known"),
    [
        ("Liam", _person("Bill", "e-1")),  # both William's nicknames: not each other's
        ("Nancy", _person("Ann", "e-1")),  # the table pairs them; they share no sound
        ("Anna", _person("Hannah", "e-1")),  # two names of their own, though paired too
        ("Louise", _person("Louis", "e-1")),  # one letter more: another name, not a nickname
        ("Edwina", _person("Edwin", "e-1")),
        ("Danielle", _person("Dan", "e-1")),  # a longer name is no short one's full form
        ("Melanie", _person("Mel", "e-1")),
    ],
)
def test_names_that_are_no_other_form_of_a_known_persons_make_a_new_one(
    said: str, known: EntityMatch
) -> None:
    plan = plan_links("m1", _said(said), Known([known]))
    (link,) = plan.links
    assert link.entity == EntityRef(said, EntityKind.person)
    assert plan.aliases == ()


def test_places_pets_and_names_in_other_scripts_are_left_to_the_other_rules() -> None:
    known = Known([_person("Melanie", "e-1"), _person("张伟", "e-2", key="张伟")])
    for said, kind in (
        ("Mel", EntityKind.place),
        ("Melly", EntityKind.pet),
        ("张", EntityKind.person),
    ):
        plan = plan_links("m1", _said(said, kind), known)
        assert [link.entity.entity_id for link in plan.links] == [None]
    assert other_forms("Zoë") == other_forms("O'Brien") == other_forms("张伟") == ()


def test_a_name_cut_short_keeps_three_letters_and_drops_two() -> None:
    assert is_cut_from("mel", "melanie") and is_cut_from("chris", "christopher")
    assert not is_cut_from("al", "alan")  # too short to tell
    assert not is_cut_from("mela", "melan")  # one letter less is a spelling, not a cut
    assert not is_cut_from("mel", "amelia")


async def test_a_nickname_said_later_links_to_the_person_on_either_store(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        first = await svc.memories.remember(
            build(
                RememberRequest, content="My daughter Beatrice started school today, she loved it"
            )
        )
        later = await svc.memories.remember(
            build(RememberRequest, content="Bea and Poppy had a sleepover, nobody slept")
        )
        await svc.drain()
        entities = svc.stores.entities
        (beatrice,) = await entities.entity_named("default", "Bea")
        assert beatrice.name == "Beatrice" and "Bea" in beatrice.aliases
        linked = await entities.entities_of("default", [first.id, later.id])
        assert linked == {first.id: ["Beatrice"], later.id: ["Beatrice", "Poppy"]}
        assert await entities.entity_named("default", "Beatrice") == [beatrice]


async def _remember_beatrice_and_two_alexes(svc: CortexService) -> None:
    """Beatrice, the one person Bea can be; Alexander and Alexandra, both of whom Alex can."""
    for content in (
        "My daughter Beatrice started the violin this term",
        "My colleague Alexander moved to the Berlin office",
        "My cousin Alexandra runs a bakery in Galway",
    ):
        await svc.memories.remember(build(RememberRequest, content=content))
    await svc.drain()


async def test_a_question_by_another_form_of_a_name_asks_about_that_person(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _remember_beatrice_and_two_alexes(svc)
        report = await svc.memories.search_debug(
            build(SearchDebugRequest, query="What has Bea been up to?")
        )
        understood = report["query"]["entity"]
        assert [e["name"] for e in understood["entities"]] == ["Beatrice"]
        assert report["hits"][0]["content"].startswith("My daughter Beatrice")
        # Alex: Alexander or Alexandra, so neither
        report = await svc.memories.search_debug(
            build(SearchDebugRequest, query="Where does Alex work?")
        )
        assert report["query"]["entity"]["entities"] == []
        assert report["query"]["entity"]["ambiguous"] == {"Alex": ["Alexander", "Alexandra"]}


async def test_tell_me_about_another_form_of_a_name_gives_that_persons_page(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _remember_beatrice_and_two_alexes(svc)
        result = await svc.memories.recall(build(RecallRequest, query="Tell me about Bea"))
        assert result.meta.entity is not None and result.meta.entity.name == "Beatrice"
        assert result.context.startswith("About Beatrice (person")
        result = await svc.memories.recall(build(RecallRequest, query="hobbies", about="Alex"))
        assert result.meta.entity is None
        assert [c.name for c in result.meta.entity_candidates] == ["Alexander", "Alexandra"]
