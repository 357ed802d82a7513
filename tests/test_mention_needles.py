"""Rules that find names skip their scan on a text without the marks or words every match of
their pattern holds (an `@`, a colon, "named"): proved from each pattern's parse, and checked
on conversation turns and memories: every text gives the same mentions with every scan run.
The greetings before a name said to someone are gathered under their first letters: the same
matches as the flat alternation."""

from __future__ import annotations

import re

import pytest

from cortex_mcp.engine.entities import mentions
from tests.helpers.redaction_corpus import ORDINARY, locomo_turns
from tests.helpers.regex_needles import every_match_holds_one

# (pattern, the needles its rule tests first, whether it tests them in the lower-cased text)
GATED = [
    (mentions._RETAIN, mentions._RETAIN_NEEDS, False),
    (mentions._LABEL_LATIN, mentions._LABEL_NEEDS, False),
    (mentions._LABEL_CJK, mentions._LABEL_NEEDS, False),
    (mentions._LABEL_HANDLE, mentions._HANDLE_NEEDS, False),
    (mentions._SLUG, mentions._SLUG_NEEDS, False),
    (mentions._EN_NAMED, mentions._EN_NAMED_NEEDS, False),
    (mentions._EN_SELF, mentions._EN_SELF_NEEDS, True),
    (mentions._EN_OTHER_NAMED, mentions._EN_OTHER_NAMED_NEEDS, False),
]
NEEDS = sorted({name for name in dir(mentions) if name.endswith("_NEEDS")})


def test_every_needle_list_is_checked_here() -> None:
    assert {id(needles) for _, needles, _ in GATED} == {id(getattr(mentions, n)) for n in NEEDS}


@pytest.mark.parametrize("pattern, needles, lowered", GATED, ids=lambda v: str(v)[:24])
def test_every_match_of_a_gated_pattern_holds_one_of_its_needles(
    pattern: re.Pattern[str], needles: tuple[str, ...], lowered: bool
) -> None:
    if lowered:
        assert all(needle == needle.lower() for needle in needles)
    else:
        assert not pattern.flags & re.IGNORECASE
    assert every_match_holds_one(pattern.pattern, needles, pattern.flags)


def _texts() -> list[str]:
    texts = [*ORDINARY, *locomo_turns()[:4000]]
    return [
        *texts,
        *(text.upper() for text in texts[:300]),
        "- W @alice @bob: met at the cafe",
        "ping @maya_k about the deploy, and @theo too",
        "mkrause: Great, thanks!\nmkrause: see you then",
        "Anna: I'll bring the cake.\nTom: I'll bring drinks.",
        "丽丽：周末过得怎么样？",
        "My name is Jonas and I live in Porto.",
        "MY NAME IS JONAS",
        "Call me Ishmael.",
        "I'm called Bea by friends",
        "We got a dog named Rex and a cat called Milo.",
        "Her name is Shadow; I named her Tilly later.",
        "Hi Tom. Thank you Anna! See you tomorrow, Bea.",
        "Note: hey Maya, how was the trip?",
        *(f"{text} Hiya Jo. Good night, Sam!" for text in texts[:300]),
    ]


def test_a_text_of_ascii_alone_leaves_no_subject_unsaid() -> None:
    """`zero_subject` answers None for ASCII text before reading it: the Chinese and Japanese
    characters it looks for are none of ASCII's."""
    assert not any(chr(c) for c in range(128) if mentions.CJK_CHAR.match(chr(c)))
    assert mentions.zero_subject("Anna: what about the trip?") is None
    assert mentions.zero_subject("生意怎么样？") == "question"


def test_the_greetings_start_with_a_letter_and_are_all_kept() -> None:
    flat = mentions._GREETINGS.split("|")
    assert all(word[0].isalpha() for word in flat)
    for word in ("hey", "thank you", "see you tomorrow", "awww", "me too", "good luck"):
        assert re.fullmatch(mentions._EN_GREETING, word.upper())
    assert not re.fullmatch(mentions._EN_GREETING, "hay")


def test_every_text_gives_the_same_mentions_with_every_scan_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _texts()
    gated = [mentions.find_mentions(text) for text in texts]
    labels = [mentions.handle_labels(text) for text in texts]
    said = [mentions.pronouns(text) for text in texts]
    for name in NEEDS:
        monkeypatch.setattr(mentions, name, ("",))  # "" is in every text: no scan skipped
    flat = f"(?i:{mentions._GREETINGS})"  # the greetings as one flat alternation
    address = mentions._EN_ADDRESS
    monkeypatch.setattr(
        mentions,
        "_EN_ADDRESS",
        re.compile(address.pattern.replace(mentions._EN_GREETING, flat), address.flags),
    )
    monkeypatch.setattr(mentions, "_EN_GREETING", flat)
    assert mentions._EN_ADDRESS.pattern != address.pattern
    assert [mentions.find_mentions(text) for text in texts] == gated
    assert [mentions.handle_labels(text) for text in texts] == labels
    assert [mentions.pronouns(text) for text in texts] == said
    assert sum(bool(found) for found in said) > 50
    assert sum(bool(found.mentions) for found in gated) > 100
