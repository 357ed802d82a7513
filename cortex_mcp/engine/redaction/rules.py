"""What a detection rule is: a pattern, the part of a match that is the secret, and the tests
that tell a real secret from a look-alike."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Refine = Callable[[str], "tuple[int, int] | None"]


@dataclass(frozen=True)
class Rule:
    """`kind` names the secret in ``[REDACTED:kind]``. `groups` are tried in order and the
    first that took part in the match is the secret (the label around it is kept); no groups
    means the whole match. `refine` gets the secret's text and returns the part of it that is
    the secret, or None when it is a look-alike. `hint` skips the rule on most ordinary text
    (the detector runs on every write)."""

    kind: str | Callable[[re.Match[str]], str]
    pattern: re.Pattern[str]
    groups: tuple[str, ...] = ()
    refine: Refine | None = None
    hint: re.Pattern[str] | None = None  # searched in the lower-cased text; must hit to run

    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        """Each secret this rule finds in `text` (the caller has checked the hint)."""
        for match in self.pattern.finditer(text):
            start, end = self._secret_span(match)
            if start >= end:
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


def hinted(hint: str, rules: list[Rule]) -> list[Rule]:
    """The same rules, run only on texts where `hint` (lower case) is found in the lower-cased
    text."""
    pattern = re.compile(hint)
    return [dataclasses.replace(rule, hint=pattern) for rule in rules]


def whole(value: str) -> tuple[int, int]:
    return 0, len(value)


def when(test: Callable[[str], bool]) -> Refine:
    """A refine that keeps the whole value when `test` holds."""
    return lambda value: (0, len(value)) if test(value) else None
