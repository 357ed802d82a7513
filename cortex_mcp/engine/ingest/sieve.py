"""The fast channel of the Memory Sieve: high-signal sentences of the user's own words.

Only what the user wrote counts: fenced code, quoted lines and any paragraph that carries an
injected instruction ("ignore previous instructions") are external content and never become the
user's identity or preference. See `signals.py` for the patterns and importance rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from cortex_mcp.engine.ingest import signals

_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_TAGGED = re.compile(r"<(\w[\w-]*)[^>]*>.*?</\1>", re.DOTALL)
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
_QUOTED_SPAN = re.compile(r"\"[^\"\n]{12,}\"|“[^”\n]{12,}”|「[^」\n]{12,}」|『[^』\n]{12,}』")
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[。！？!?\n])|(?<=[.;])\s+")

_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,30}\b(?:previous|prior|above|earlier|"
    r"all|system|your)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules|messages|context)\b"
    r"|\byou are now\b|\bnew instructions?:|\bsystem prompt\b|\bjailbreak\b"
    r"|忽略[^。\n]{0,10}(?:指令|指示|说明|提示|规则)|无视[^。\n]{0,10}(?:指令|指示|规则)"
    r"|(?:以前|前|上記|これまで)の(?:指示|命令|プロンプト)を(?:無視|忘れ)",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"\b(?:always|only|never) (?:reply|respond|answer|write|speak|talk)\b|\bfrom now on\b"
    r"|\bignore\b[^.\n]{0,30}\binstructions?\b"
    r"|(?:总是|永远|一律|只)用[^。\n]{0,10}(?:回复|回答)|以后都用"
    r"|(?:常に|必ず|いつも)[^。\n]{0,10}で(?:返答|回答|答え)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class HighSignal:
    category: str  # the stored category (identity, preference, decision, correction, todo, fact)
    kind: str  # the rule family that matched (same names, plus "important")
    content: str  # the sentence, verbatim
    importance: float
    language: str
    corrected_term: str | None = None  # for "不是X而是Y" / "not X, but Y": X


def looks_injected(text: str) -> bool:
    return _INJECTION.search(text) is not None


def instruction_like(text: str) -> bool:
    return _INSTRUCTION.search(text) is not None or looks_injected(text)


def own_words(message: str) -> str:
    """The part of a user message the user wrote themselves: no fenced or tagged blocks, no
    quoted lines, no paragraph that carries an injected instruction."""
    text = _FENCE.sub("\n\n", message)
    text = _TAGGED.sub("\n\n", text)
    text = _QUOTED_LINE.sub("", text)
    kept = [p for p in _PARAGRAPH.split(text) if p.strip() and not looks_injected(p)]
    return "\n\n".join(kept)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


@cache
def _compiled(language: str, category: str) -> re.Pattern[str]:
    return re.compile("|".join(signals.PATTERNS[language][category]), re.IGNORECASE)


@cache
def _guard(language: str) -> re.Pattern[str]:
    return re.compile("|".join(signals.GUARDS[language]), re.IGNORECASE)


@cache
def _explicit() -> list[tuple[re.Pattern[str], float]]:
    return [(re.compile(p, re.IGNORECASE), boost) for p, boost in signals.EXPLICIT]


def importance(category: str, sentence: str) -> float:
    """The seed's rule: intrinsic score + explicit signal, capped at 1.0 (floored at 0.1)."""
    score = signals.INTRINSIC[category]
    for pattern, boost in _explicit():
        if pattern.search(sentence):
            score += boost
    return round(min(1.0, max(0.1, score)), 3)


def classify(sentence: str) -> tuple[str, str] | None:
    """(kind, language) of the first category whose pattern matches and no guard vetoes."""
    masked = _QUOTED_SPAN.sub('""', sentence)
    for kind in signals.CATEGORY_ORDER:
        for language in signals.PATTERNS:
            if not _compiled(language, kind).search(masked):
                continue
            if kind != "todo" and _guard(language).search(masked):
                continue
            return kind, language
    return None


_CORRECTED = [
    re.compile(r"不是([^，。！？,]{1,40}?)[，,]?\s*(?:而)?是"),
    re.compile(r"([^、。]{1,40}?)(?:ではなく|じゃなくて)"),
    re.compile(r"\bnot ([^,.;]{1,40}), but\b", re.IGNORECASE),
]


def corrected_term(sentence: str) -> str | None:
    for pattern in _CORRECTED:
        match = pattern.search(sentence)
        if match:
            term = match.group(1).strip(" 　\"'“”「」")
            return term or None
    return None


def detect_high_signals(user_message: str) -> list[HighSignal]:
    """High-signal sentences in what the user wrote, one per sentence, deduplicated."""
    found: dict[str, HighSignal] = {}
    for sentence in sentences(own_words(user_message)):
        hit = classify(sentence)
        if hit is None:
            continue
        kind, language = hit
        key = sentence.casefold()
        if key in found:
            continue
        found[key] = HighSignal(
            category=signals.STORED_AS.get(kind, kind),
            kind=kind,
            content=sentence,
            importance=importance(kind, sentence),
            language=language,
            corrected_term=corrected_term(sentence) if kind == "correction" else None,
        )
    return list(found.values())
