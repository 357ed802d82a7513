"""The shortcuts a bulk import's hot paths take (issue 37 item 14) find exactly what the full
reading finds: each is compared with the pattern or function it stands for, on tricky texts and
on a few thousand texts built at random from the pieces the rules care about."""

from __future__ import annotations

import random
import re

import pytest

from cortex_mcp.engine import validate
from cortex_mcp.engine.entities.mentions import (
    _EN_ADDRESS,
    _EN_PRONOUN,
    _addresses,
    find_mentions,
    pronouns,
)
from cortex_mcp.engine.entities.resolve import _SENTENCE_END, _sentence_starts
from cortex_mcp.engine.redaction.detector import redact
from cortex_mcp.tokenize import content_hash, hash_and_index_text, index_text

TRICKY = [
    "",
    "Hey Maya!",
    "hi Bob, how are you?",
    "Thanks, Mel.\nHey Anna! Good morning Tom.",
    'He said "hey Sam!" (hi Joe) ok Bob… yes Ann: hi Eve?',
    "Note 12: the user said something about Kyoto (detail 298774)",
    "Tom: Anna arrived on Friday. Then Maya called.   \n  Bob left",
    "a" * 60 + ". " + "Anna is here",
    "Tom:\tAnna waved",
    "x.\u00a0\u3000Anna",
    "張偉说他明天来。她也来。彼女は東京にいる。",
    "Caroline: she told him her plan",
    "[REDACTED:password] and [REDACTED:api_token] stay as they are",
    "my password is hunter2 and the card 4111 1111 1111 1111",
    "用户：我的密码是 abc12345",
]
PIECES = [
    "Hey", "hi", "Thanks", "Maya", "Bob", "Anna's", ",", ", ", ".", "!", "?", "\n", "  ", "\t",
    ":", "Tom:", "(", '"', "“", "…", "he", "she", "her", "his", "他", "她", "彼女は", "张伟",
    "田中さん", "good morning", "see you", "Dr.", "New York", "you", "okay", "The", "said",
    "and I", "\u00a0", "é", "’s", "@bob", "password", "token", "1234 5678",
]  # fmt: skip


def _random_texts(count: int) -> list[str]:
    rng = random.Random(37)
    return [
        "".join(rng.choice(PIECES) + rng.choice(["", " "]) for _ in range(rng.randrange(1, 20)))
        for _ in range(count)
    ]


TEXTS = TRICKY + _random_texts(3000)


def test_greetings_are_tried_only_where_they_may_start_and_found_as_before() -> None:
    for text in TEXTS:
        expected = [(m.span(), m.group("name")) for m in _EN_ADDRESS.finditer(text)]
        assert [(m.span(), m.group("name")) for m in _addresses(text)] == expected, text


def test_a_sentence_start_is_read_from_the_end_of_the_text_before_a_word_as_before() -> None:
    for text in TEXTS:
        for end in range(len(text) + 1):
            before = text[:end]
            assert _sentence_starts(before) == bool(_SENTENCE_END.search(before)), before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline: she told him her plan", [("she", "f"), ("him", "m"), ("her", "f")]),
        ("Tom: 他说她明天来", [("他", "m"), ("她", "f")]),
        ("佐藤：彼女は来ます and he agrees", [("彼女", "f"), ("he", "m")]),
    ],
)
def test_pronouns_of_plain_and_cjk_texts_are_found_in_order(
    text: str, expected: list[tuple[str, str]]
) -> None:
    found = pronouns(text)
    assert [(text[p.start : p.end], p.gender) for p in found] == expected


def test_one_normalisation_gives_the_content_hash_and_the_index_text() -> None:
    for text in TEXTS:
        assert hash_and_index_text(text) == (content_hash(text), index_text(text))


def test_texts_with_and_without_markers_are_redacted_and_linked_as_the_rules_say() -> None:
    kept = redact("[REDACTED:password] and [REDACTED:api_token] stay as they are")
    assert kept.text == "[REDACTED:password] and [REDACTED:api_token] stay as they are"
    assert not kept.counts
    assert "hunter2" not in redact("my password is hunter2").text
    names = {m.name for m in find_mentions("Hey Maya! Thanks, Mel.").mentions}
    assert {"Maya", "Mel"} <= names


def test_an_english_pronoun_is_found_where_the_plain_pattern_finds_it() -> None:
    plain = re.compile(r"\b(?i:(?P<subject>he|she)|him|her|his)\b")
    for text in [*TEXTS, "ſhe said", "ſHE", "Him and HIS", "xhe", "héhe he"]:
        expected = [(m.span(), m.group("subject")) for m in plain.finditer(text)]
        assert [(m.span(), m.group("subject")) for m in _EN_PRONOUN.finditer(text)] == expected


def _json_like(rng: random.Random, depth: int = 0) -> object:
    pieces = ["", "a", "\x00", "x\x00y", "line", "é", "名前"]
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.choice(pieces) + rng.choice(pieces)
    if kind == 1:
        return rng.randrange(-5, 5)
    if kind == 2:
        return rng.choice([None, True, 1.5])
    if kind == 3:
        return type("Text", (str,), {})(rng.choice(pieces))  # a str subclass is walked
    if kind in (4, 5, 6):
        return {
            rng.choice([*pieces, 7]): _json_like(rng, depth + 1) for _ in range(rng.randrange(4))
        }
    return [_json_like(rng, depth + 1) for _ in range(rng.randrange(3))]


def test_a_flat_object_without_a_nul_is_answered_as_the_walk_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(14)
    values = [
        {},
        {"imported_from": "MEMORY.md", "line": 12},
        {"a\x00": 1},
        {"a": "b\x00"},
        {"a": ["\x00"]},
        {3: "x"},
        *(_json_like(rng) for _ in range(5_000)),
    ]
    fast = [validate.nul_path(value, "metadata") for value in values]
    shortcut = [v for v in values if isinstance(v, dict) and validate._flat_without_nul(v)]
    monkeypatch.setattr(validate, "_flat_without_nul", lambda value: False)
    assert [validate.nul_path(value, "metadata") for value in values] == fast
    assert sum(found is not None for found in fast) > 500 and len(shortcut) > 300
