"""What a detection rule is: a pattern, the part of a match that is the secret, and the tests
that tell a real secret from a look-alike."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Refine = Callable[[str], "tuple[int, int] | None"]


class LazyPattern:
    """A regular expression compiled when it is first used. The detector's ~80 patterns take
    tens of milliseconds to compile, which every command paid at start (`list` and `show`
    never redact anything); a server pays it once, on its first write. After the first use
    its methods are the compiled pattern's own (no extra call per search)."""

    search: Callable[..., re.Match[str] | None]
    match: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    finditer: Callable[..., Iterator[re.Match[str]]]
    findall: Callable[..., list[Any]]
    sub: Callable[..., str]

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern = source
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        if name not in _PATTERN_METHODS:
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self.flags)
        for method in _PATTERN_METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


_PATTERN_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub")


def lazy_pattern(source: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(source, flags)


class Hint:
    """Where a rule may find something: `pattern`, searched in the lower-cased text, which
    most texts hold nothing of. Two cheaper tests may come first: `needles`, words one of
    which is in every match of the pattern (tests/test_redaction_hints.py proves it from the
    pattern's parse), each looked for with `in` (for a pattern whose search tries most
    positions, such as one starting with `\\s`); and `within`, a hint every match of this one
    is a match of: when that one was searched in the same text and missed, so does this."""

    def __init__(
        self, pattern: str, needles: tuple[str, ...] = (), within: Hint | None = None
    ) -> None:
        self.pattern = lazy_pattern(pattern)
        self.needles = needles
        self.within = within


@dataclass(frozen=True)
class Rule:
    """`kind` names the secret in ``[REDACTED:kind]``. `groups` are tried in order and the
    first that took part in the match is the secret (the label around it is kept); no groups
    means the whole match. `refine` gets the secret's text and returns the part of it that is
    the secret, or None when it is a look-alike. `hint` skips the rule on most ordinary text
    (the detector runs on every write)."""

    kind: str | Callable[[re.Match[str]], str]
    pattern: LazyPattern
    groups: tuple[str, ...] = ()
    refine: Refine | None = None
    hint: Hint | None = None  # must be found in the lower-cased text for the rule to run
    # a secret that starts inside a match of this is part of something else (an id), not one
    not_inside: LazyPattern | None = None

    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        """Each secret this rule finds in `text` (the caller has checked the hint)."""
        hosts: list[tuple[int, int]] | None = None
        for match in self.pattern.finditer(text):
            start, end = self._secret_span(match)
            if start >= end:
                continue
            if self.not_inside is not None:
                if hosts is None:
                    hosts = [m.span() for m in self.not_inside.finditer(text)]
                if any(s <= start < e for s, e in hosts):
                    continue
            if self.refine is not None:
                found = self.refine(text[start:end])
                if found is None:
                    continue
                start, end = start + found[0], start + found[1]
                if start >= end:
                    continue
            kind = self.kind if isinstance(self.kind, str) else self.kind(match)
            yield kind, start, end

    def _secret_span(self, match: re.Match[str]) -> tuple[int, int]:
        for group in self.groups:
            if match.group(group) is not None:
                return match.span(group)
        return match.span()


def hinted(hint: str | Hint, rules: list[Rule]) -> list[Rule]:
    """The same rules, run only on texts where `hint` (lower case) is found in the lower-cased
    text."""
    found = hint if isinstance(hint, Hint) else Hint(hint)
    return [dataclasses.replace(rule, hint=found) for rule in rules]


def not_inside(pattern: LazyPattern, rules: list[Rule]) -> list[Rule]:
    """The same rules, ignoring what starts inside a match of `pattern`."""
    return [dataclasses.replace(rule, not_inside=pattern) for rule in rules]


def whole(value: str) -> tuple[int, int]:
    return 0, len(value)


def when(test: Callable[[str], bool]) -> Refine:
    """A refine that keeps the whole value when `test` holds."""
    return lambda value: (0, len(value)) if test(value) else None
