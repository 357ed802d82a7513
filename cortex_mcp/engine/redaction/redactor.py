"""The one door every stored or sent text goes through: redacts, counts by kind (counts only,
never values) and reports what it removed to the caller."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from cortex_mcp.engine.redaction.assignments import assigned_secret
from cortex_mcp.engine.redaction.detector import Redacted, find, mark, redact

log = logging.getLogger(__name__)

Recorder = Callable[[Mapping[str, int]], Awaitable[None]]
Written = TypeVar("Written", bound=BaseModel | dict[str, Any])
_MEMORY_TEXT = ("content", "source", "metadata")  # what a memory holds that a person wrote


def redact_all(texts: list[str]) -> tuple[list[str], Counter[str]]:
    total: Counter[str] = Counter()
    out = []
    for text in texts:
        result = redact(text)
        total.update(result.counts)
        out.append(result.text)
    return out, total


def redact_json(value: Any, counts: Counter[str] | None = None) -> tuple[Any, Counter[str]]:
    """Every string inside a JSON-like value (metadata, audit details) redacted; keys, numbers
    and structure kept."""
    counts = Counter() if counts is None else counts
    if isinstance(value, str):
        result = redact(value)
        if result.counts:
            counts.update(result.counts)
        return result.text, counts
    if isinstance(value, Mapping):
        return {k: _redact_entry(k, v, counts) for k, v in value.items()}, counts
    if isinstance(value, list | tuple):
        return [redact_json(v, counts)[0] for v in value], counts
    return value, counts


def redact_joined(parts: list[str], counts: Counter[str], glue: str = ": ") -> list[str]:
    """Parts that read as one sentence (a relation's subject, predicate and object), each
    redacted on its own and in context: what a part holds alone (an object that is a whole
    `aws_secret_access_key = ...`) is cut whatever the sentence around it reads like, and what
    only the sentence shows ("has password" names the secret in the object) is cut too."""
    joined = glue.join(parts)
    bounds, start = [], 0
    for part in parts:
        bounds.append((start, start + len(part)))
        start += len(part) + len(glue)
    cuts: list[list[tuple[int, int, str]]] = [find(part) for part in parts]
    for begin, end, kind in find(joined):
        for index, (low, high) in enumerate(bounds):
            if begin < high and end > low:
                cuts[index].append((max(begin, low) - low, min(end, high) - low, kind))
    out = []
    for part, spans in zip(parts, cuts, strict=True):
        merged = _merged(spans)
        counts.update(kind for _, _, kind in merged)
        out.append(_cut(part, merged))
    return out


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans as one, in order (the first one's kind names it)."""
    merged: list[tuple[int, int, str]] = []
    for begin, end, kind in sorted(spans):
        if merged and begin < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((begin, end, kind))
    return merged


def _cut(text: str, spans: list[tuple[int, int, str]]) -> str:
    out, cursor = [], 0
    for begin, end, kind in spans:
        out += [text[cursor:begin], mark(kind)]
        cursor = end
    return "".join([*out, text[cursor:]])


def _redact_entry(key: Any, value: Any, counts: Counter[str]) -> Any:
    """A mapping's value; a string under a key that names a secret ({"api_key": "..."}) is a
    secret whole."""
    if isinstance(key, str) and isinstance(value, str) and not value.startswith("[REDACTED:"):
        kind = assigned_secret(key, value)
        if kind is not None:
            counts[kind] += 1
            return mark(kind)
    return redact_json(value, counts)[0]


class Redactor:
    """Redacts texts before a write and records how many secrets of each kind it removed
    (``redacted.<kind>`` counters). `clean_memory` also hands the counts to its caller, so
    a tool can say what it redacted."""

    def __init__(self, record: Recorder) -> None:
        self._record = record

    async def clean(self, text: str) -> str:
        return (await self.clean_many([text]))[0]

    async def clean_optional(self, text: str | None) -> str | None:
        return None if text is None else await self.clean(text)

    async def clean_many(self, texts: list[str]) -> list[str]:
        cleaned, counts = redact_all(texts)
        await self._recorded(counts)
        return cleaned

    async def clean_relation(
        self, subject: str, predicate: str, object: str
    ) -> tuple[str, str, str]:
        """A relation's three texts, read together as the sentence they make."""
        counts: Counter[str] = Counter()
        subject, predicate, object = redact_joined([subject, predicate, object], counts)
        await self._recorded(counts)
        return subject, predicate, object

    async def clean_json(self, value: Any) -> Any:
        cleaned, counts = redact_json(value)
        await self._recorded(counts)
        return cleaned

    async def clean_memory(self, memory: Written, counts: Counter[str] | None = None) -> Written:
        """A memory (a model, or an importer's dict of fields) with its content, source and
        every metadata value redacted; what was removed is added to `counts` when given."""
        fields = memory if isinstance(memory, dict) else memory.__dict__
        found: Counter[str] | None = None  # made for the first secret (most memories hold none)
        changes = {}
        for name in _MEMORY_TEXT:
            value = fields.get(name)
            if value is None or (isinstance(value, str) and not (value and find(value))):
                continue  # nothing, or a text without a secret: kept as it is
            found = Counter() if found is None else found
            cleaned, _ = redact_json(value, found)
            if cleaned != value:
                changes[name] = cleaned
        if found:
            await self._recorded(found)
            if counts is not None:
                counts.update(found)
        if not changes:
            return memory
        if isinstance(memory, dict):
            return {**memory, **changes}  # type: ignore[return-value]
        return memory.model_copy(update=changes)

    async def _recorded(self, counts: Counter[str]) -> None:
        if counts:
            log.info("redacted %d secret(s): %s", sum(counts.values()), dict(counts))
            await self._record({f"redacted.{kind}": n for kind, n in counts.items()})


__all__ = ["Redacted", "Redactor", "redact", "redact_all", "redact_json"]
