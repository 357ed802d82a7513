"""One pass over a text: fold it, let every rule find its secrets, keep the first rule's
claim where two overlap, and cut the secrets out of the original text."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from cortex_mcp.engine.redaction import assignments, crypto, nearby, numbers, prose, providers
from cortex_mcp.engine.redaction.rules import Hint, Rule, lazy_pattern
from cortex_mcp.engine.redaction.text import fold

# Order is priority: a provider's format names a secret better than the sentence around it.
RULES: list[Rule] = [
    *providers.RULES,
    *crypto.RULES,
    *assignments.RULES,
    *prose.RULES,
    *numbers.RULES,
    nearby.NEAR_SECRET_WORD,
    # a run of 32 token characters holds one of 16: the hint is searched once for the three
    *[
        replace(rule, hint=nearby.NEAR_SECRET_WORD.hint)
        for rule in (crypto.WALLET_KEY, nearby.GENERATED_KEY)
    ],
]
_MARKER = lazy_pattern(r"\[REDACTED:[a-z_]+\]")


def _runs_by_hint(rules: list[Rule]) -> list[tuple[Hint | None, list[Rule]]]:
    """Neighbouring rules that share a hint, in order: each hint is searched once per text."""
    runs: list[tuple[Hint | None, list[Rule]]] = []
    for rule in rules:
        if runs and runs[-1][0] is rule.hint:
            runs[-1][1].append(rule)
        else:
            runs.append((rule.hint, [rule]))
    return runs


_BY_HINT = _runs_by_hint(RULES)


def _only_words(hint: Hint) -> bool:
    """A hint that is words and bars alone ("bearer|token|basic"): it matches where one is."""
    return not any(char in ".^$*+?{}[]\\|()" for char in hint.pattern.pattern.replace("|", ""))


# The hints that are words alone, searched for all at once: most texts hold none of them, and
# one search tells so for all; a text that holds one has each hint searched on its own.
_WORD_HINTS = [hint for hint, _ in _BY_HINT if hint is not None and _only_words(hint)]
ANY_WORD = Hint(
    "|".join(dict.fromkeys(w for h in _WORD_HINTS for w in h.pattern.pattern.split("|")))
)
for _hint in _WORD_HINTS:
    _hint.within = ANY_WORD


def mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


@dataclass
class Redacted:
    text: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def changed(self) -> bool:
        return bool(self.counts)


@dataclass
class _Claims:
    spans: list[tuple[int, int, str | None]] = field(default_factory=list)

    def take(self, start: int, end: int, kind: str | None) -> None:
        if all(end <= s or start >= e for s, e, _ in self.spans):
            self.spans.append((start, end, kind))


def find(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each secret in `text`, in order, positions in `text` itself."""
    folded = fold(text)
    claims = _Claims()
    if "[REDACTED:" in folded.text:  # already redacted: leave the marker alone
        for match in _MARKER.finditer(folded.text):
            claims.take(*match.span(), None)
    lowered = folded.text.lower()
    missed = [] if ANY_WORD.pattern.search(lowered) else [ANY_WORD]  # hints that found nothing
    for hint, rules in _BY_HINT:
        if hint is not None and (
            (hint.within is not None and hint.within in missed)
            or (hint.needles and not any(needle in lowered for needle in hint.needles))
            or hint.pattern.search(lowered) is None
        ):
            missed.append(hint)
            continue
        for rule in rules:
            for kind, start, end in rule.spans(folded.text):
                claims.take(start, end, kind)
    found = [
        (*folded.span_in_original(start, end), kind)
        for start, end, kind in claims.spans
        if kind is not None
    ]
    return sorted(found)


def redact(text: str) -> Redacted:
    """`text` with every secret replaced by ``[REDACTED:kind]``, and how many of each kind.
    Everything else is kept exactly as given."""
    if not text:
        return Redacted(text)
    spans = find(text)
    if not spans:
        return Redacted(text)
    counts: Counter[str] = Counter()
    parts: list[str] = []
    cursor = 0
    for start, end, kind in spans:
        parts += [text[cursor:start], mark(kind)]
        counts[kind] += 1
        cursor = end
    parts.append(text[cursor:])
    return Redacted("".join(parts), counts)


def describe_redactions(counts: dict[str, int]) -> str:
    """What was cut before storing, by kind and count, never the values."""
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    markers = ", ".join(mark(kind) for kind in counts)
    return f"Secrets redacted before storing: {kinds} (stored as {markers})."
