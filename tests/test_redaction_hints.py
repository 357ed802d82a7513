"""The detector's hints skip rules on texts where they cannot find anything; the cheap tests in
front of a hint's search (its needles, the hint it lies within) must never skip a text the
search would find something in. Proved from each pattern's parse here, and checked on the
redaction corpus: every text redacts the same with the plain searches."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from cortex_mcp.engine.redaction import Redactor, detector, redactor
from cortex_mcp.engine.redaction.rules import Hint
from tests.helpers.redaction_corpus import ORDINARY, SECRETS, locomo_turns
from tests.helpers.regex_needles import every_match_holds_one

HINTS = [hint for hint, _ in detector._BY_HINT if hint is not None]


def test_some_hints_have_needles_and_one_lies_within_another() -> None:
    assert sum(bool(hint.needles) for hint in HINTS) >= 3
    assert any(hint.within is not None for hint in HINTS)


@pytest.mark.parametrize(
    "hint", [h for h in HINTS if h.needles], ids=lambda hint: hint.pattern.pattern[:30]
)
def test_every_match_of_a_hint_holds_one_of_its_needles(hint: Hint) -> None:
    assert hint.pattern.flags == 0  # searched as written, as `in` finds a needle
    assert all(needle == needle.lower() for needle in hint.needles)  # the text is lowered
    assert every_match_holds_one(hint.pattern.pattern, hint.needles)


def test_the_needle_proof_refuses_a_needle_a_match_may_lack() -> None:
    assert not every_match_holds_one(r"ab(?:cd)?|x[yz]e", ("cd", "x"))  # "ab" holds no "cd"
    assert every_match_holds_one(r"ab(?:cd)?|x[yz]e", ("ab", "x"))
    assert not every_match_holds_one(r"x[yz]e", ("ye",))
    assert not every_match_holds_one(r"\s-p|net", ("-",))
    assert every_match_holds_one(r"a[:：]b", (":", "："))


def _one_repeated_class(hint: Hint) -> tuple[str, int]:
    match = re.fullmatch(r"(\[[^\]]+\])\{(\d+)\}", hint.pattern.pattern)
    assert match is not None, hint.pattern.pattern
    return match.group(1), int(match.group(2))


def _words(hint: Hint) -> set[str]:
    words = hint.pattern.pattern.split("|")
    assert not set("".join(words)) & set(".^$*+?{}[]\\()")  # literal words alone
    return set(words)


def test_a_hint_within_another_matches_only_where_the_other_does() -> None:
    """A hint of words lies within the search for all of them: each of its words is one of
    those. Otherwise both are runs of one class of characters, of the same length, and every
    character of the inner class is one of the outer's: an inner run is an outer run."""
    every_char = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    runs = words = 0
    for hint in HINTS:
        assert hint.within is None or hint.within.pattern.flags == hint.pattern.flags == 0
        if hint.within is detector.ANY_WORD:
            assert _words(hint) <= _words(detector.ANY_WORD)
            words += 1
        elif hint.within is not None:
            chars, length = _one_repeated_class(hint)
            outer_chars, outer_length = _one_repeated_class(hint.within)
            assert length == outer_length
            inner = set(re.findall(chars, every_char))
            assert inner and inner <= set(re.findall(outer_chars, every_char))
            runs += 1
    assert runs and words >= 5


def _texts() -> list[str]:
    texts = [*ORDINARY, *(secret.text for secret in SECRETS), *locomo_turns()[:3000]]
    texts += [text.upper() for text in texts[:500]]
    return [
        *texts,
        "run psql -h db -p 5432 -U app pass hunter2",
        "sshpass -p 'Tr0ub4dor&3' ssh deploy@host",
        "net user admin Passw0rd! /add",
        "the api key: 8f3kQ9zLmW2xR7tV1bN4",
        "my card's CVV is 123 and the verification code 4711",
        "安全码 123",
        "セキュリティコードは 123",
    ]


def test_every_text_redacts_as_with_the_plain_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts()
    with_needles = [detector.find(text) for text in texts]
    for hint in HINTS:
        monkeypatch.setattr(hint, "needles", ())
        monkeypatch.setattr(hint, "within", None)
    assert [detector.find(text) for text in texts] == with_needles
    assert sum(detector.ANY_WORD.pattern.search(text.lower()) is None for text in texts) > 1000
    assert sum(bool(found) for found in with_needles) > 100


class _Recorded:
    def __init__(self) -> None:
        self.counts: list[dict[str, int]] = []

    async def __call__(self, counts: Mapping[str, int]) -> None:
        self.counts.append(dict(counts))


@pytest.mark.anyio
async def test_a_memory_without_a_secret_is_kept_as_it_is_without_walking_its_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its content, source and metadata read once each by the detector and nothing else done
    (most memories of an import); one with a secret is redacted and counted as before."""
    recorded = _Recorded()
    cleaner = Redactor(recorded)
    memory = {"content": "the user said something about Kyoto", "source": None, "metadata": {}}
    real = redactor.redact_json

    def refused(value: Any, counts: Any = None) -> Any:
        if value == memory["content"]:
            raise AssertionError("a text without a secret was walked again")
        return real(value, counts)

    monkeypatch.setattr(redactor, "redact_json", refused)
    assert await cleaner.clean_memory(memory) is memory
    found: Counter[str] = Counter()
    secret = {"content": "my password is hunter2xyz!", "metadata": {"note": "ok"}}
    cleaned = await cleaner.clean_memory(secret, found)
    assert "hunter2xyz" not in cleaned["content"] and cleaned["metadata"] == {"note": "ok"}
    assert found and recorded.counts == [
        dict(Counter({f"redacted.{k}": n for k, n in found.items()}))
    ]
