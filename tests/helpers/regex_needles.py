"""Proofs from a regular expression's parse that every match of it holds one of some words:
what lets a cheap `in` test skip a pattern's scan on a text that holds none of them."""

from __future__ import annotations

import re._constants as _constants  # the parse of a pattern: private, read by tests alone
import re._parser as _parser
from typing import Any

_REPEATS = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)


def _runs(items: list[tuple[Any, Any]]) -> list[str]:
    """The runs of literal characters every match of this sequence holds."""
    runs, current = [], ""
    for op, value in items:
        if op is _constants.LITERAL:
            current += chr(value)
            continue
        runs.append(current)
        current = ""
    return [*runs, current]


def _holds_one(items: list[tuple[Any, Any]], needles: tuple[str, ...]) -> bool:
    """Whether every match of the parsed sequence `items` holds one of `needles`: a literal run
    of its own holds one, or a character class of needles alone is in it, or a group or
    alternation it always passes through does (each of its branches), or a repeat taken at
    least once does."""
    if any(needle in run for run in _runs(items) for needle in needles):
        return True
    for op, value in items:
        if op is _constants.IN and all(
            o is _constants.LITERAL and chr(v) in needles for o, v in value
        ):
            return True
        if op is _constants.SUBPATTERN and _holds_one(list(value[-1]), needles):
            return True
        if op is _constants.BRANCH and all(_holds_one(list(b), needles) for b in value[1]):
            return True
        if op in _REPEATS and value[0] >= 1 and _holds_one(list(value[2]), needles):
            return True
    return False


def every_match_holds_one(pattern: str, needles: tuple[str, ...], flags: int = 0) -> bool:
    """Whether each match of `pattern` holds one of `needles` as written (with `re.I` in
    `flags` or `(?i:...)` groups: in its lower-cased form, when the needles are lower case)."""
    return _holds_one(list(_parser.parse(pattern, flags).data), needles)
