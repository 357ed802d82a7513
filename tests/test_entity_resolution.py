"""Resolution from mentions built by hand: a name or a known alias links, an alias that names
several entities links none and is reported with its candidates, a speaker's own kinship alias
wins over another speaker's, and a kinship phrase that introduces a name becomes its alias."""

from __future__ import annotations

from cortex_mcp.engine.entities.mentions import Mention, Mentions, Reference
from cortex_mcp.engine.entities.resolve import Known, Named, lookup_keys, plan_links
from cortex_mcp.models import (
    AliasOrigin,
    EntityKind,
    EntityMatch,
    EntityRef,
    LinkRole,
    PlannedAlias,
    PlannedLink,
)


def _mention(
    name: str,
    role: LinkRole = LinkRole.mentioned,
    *aliases: str,
    kind: EntityKind = EntityKind.person,
    rule: str = "name",
) -> Mention:
    return Mention(name, kind, role, 0, len(name), rule, tuple(aliases))


def _found(*mentions: Mention, references: tuple[Reference, ...] = ()) -> Mentions:
    return Mentions(tuple(mentions), references)


def _ref(phrase: str, role: LinkRole = LinkRole.subject) -> Reference:
    return Reference(phrase, role, 0, len(phrase))


ANNA = EntityMatch("anna", "e-anna", "Anna", EntityKind.person, "name")
BETH = EntityMatch("beth", "e-beth", "Beth", EntityKind.person, "name")
TOM = EntityMatch("tom", "e-tom", "Tom", EntityKind.person, "name")
MAYA = EntityMatch("maya", "e-maya", "Maya", EntityKind.person, "name")


def test_a_name_links_to_its_entity_and_an_unknown_name_makes_a_new_one() -> None:
    found = _found(_mention("ANNA's", LinkRole.subject), _mention("Rex", kind=EntityKind.pet))
    plan = plan_links("m1", found, Known([ANNA]))
    assert plan.links == (
        PlannedLink(EntityRef("Anna", EntityKind.person, "e-anna"), LinkRole.subject),
        PlannedLink(EntityRef("Rex", EntityKind.pet), LinkRole.mentioned),
    )
    assert plan.unresolved == ()


def test_a_known_alias_links_to_the_one_entity_it_names() -> None:
    mel = EntityMatch("mel", "e-melanie", "Melanie", EntityKind.person, "alias")
    plan = plan_links("m1", _found(_mention("Mel", LinkRole.subject)), Known([mel]))
    assert plan.links == (
        PlannedLink(EntityRef("Melanie", EntityKind.person, "e-melanie"), LinkRole.subject),
    )


def test_an_alias_of_several_entities_links_none_and_is_reported_with_its_candidates() -> None:
    known = Known(
        [
            EntityMatch("my sister", "e-anna", "Anna", EntityKind.person, "alias"),
            EntityMatch("my sister", "e-beth", "Beth", EntityKind.person, "alias"),
        ]
    )
    plan = plan_links("m1", _found(references=(_ref("My Sister"),)), known)
    assert plan.links == ()
    (unresolved,) = plan.unresolved
    assert (unresolved.phrase, unresolved.key, unresolved.candidates) == (
        "My Sister",
        "my sister",
        ("Anna", "Beth"),
    )
    # a name that is an ambiguous alias is not a new entity either
    nick = [
        EntityMatch("kit", "e-kate", "Kate", EntityKind.person, "alias"),
        EntityMatch("kit", "e-kitty", "Kitty", EntityKind.person, "alias"),
    ]
    plan = plan_links("m2", _found(_mention("Kit")), Known(nick))
    assert plan.links == () and plan.unresolved[0].candidates == ("Kate", "Kitty")


def test_the_speakers_own_kinship_alias_wins_over_another_speakers() -> None:
    known = Known(
        [
            TOM,
            MAYA,
            EntityMatch("my sister", "e-anna", "Anna", EntityKind.person, "alias", "e-tom"),
            EntityMatch("my sister", "e-beth", "Beth", EntityKind.person, "alias", "e-maya"),
        ]
    )
    said_by_tom = _found(_mention("Tom", LinkRole.speaker), references=(_ref("my sister"),))
    plan = plan_links("m1", said_by_tom, known)
    assert PlannedLink(EntityRef("Anna", EntityKind.person, "e-anna"), LinkRole.subject) in (
        plan.links
    )
    unknown_speaker = _found(references=(_ref("my sister"),))
    assert plan_links("m2", unknown_speaker, known).unresolved[0].candidates == ("Anna", "Beth")


def test_a_kinship_phrase_that_introduces_a_name_becomes_its_alias_in_the_speakers_words() -> None:
    found = _found(
        _mention("Tom", LinkRole.speaker, rule="label"),
        _mention("Anna", LinkRole.mentioned, "my sister", rule="kinship"),
    )
    known = Known([TOM])
    plan = plan_links("m1", found, known)
    assert plan.aliases == (
        PlannedAlias(
            EntityRef("Anna", EntityKind.person),
            "my sister",
            AliasOrigin.rule,
            EntityRef("Tom", EntityKind.person, "e-tom"),
        ),
    )
    # the next memory of the same batch resolves the phrase to her
    later = plan_links(
        "m2", _found(_mention("Tom", LinkRole.speaker), references=(_ref("my sister"),)), known
    )
    assert PlannedLink(EntityRef("Anna", EntityKind.person), LinkRole.subject) in later.links


def test_the_user_s_own_alias_is_not_another_speakers() -> None:
    known = Known(
        [
            EntityMatch("我表弟", "e-zw", "张伟", EntityKind.person, "alias"),  # the user's
            EntityMatch("我表弟", "e-ll", "李磊", EntityKind.person, "alias", "e-tom"),
        ]
    )
    plan = plan_links("m1", _found(references=(_ref("我表弟"),)), known)
    assert plan.links == (
        PlannedLink(EntityRef("张伟", EntityKind.person, "e-zw"), LinkRole.subject),
    )


def test_names_an_llm_gave_resolve_like_the_rules_names_and_every_key_is_asked_once() -> None:
    named = (
        Named("ANNA", EntityKind.person, LinkRole.subject),
        Named("Acme", EntityKind.organization),
    )
    found = _found(_mention("Anna", LinkRole.mentioned, "my sister"), references=(_ref("部長"),))
    # 部長 is also looked up as the general word for a superior (the speaker's one 上司)
    assert lookup_keys(found, named) == [
        "anna",
        "my sister",
        "部長",
        "上司",
        "我上司",
        "我的上司",
        "acme",
        # and a person's other forms, Anna's once though two said her name
        "anne",
        "annette",
        "annie",
        "bryanna",
    ]
    plan = plan_links("m1", found, Known([ANNA, BETH]), named=named)
    assert [(link.entity.name, link.role) for link in plan.links] == [
        ("Anna", LinkRole.mentioned),
        ("Anna", LinkRole.subject),
        ("Acme", LinkRole.mentioned),
    ]
