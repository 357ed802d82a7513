"""The one door every stored or sent text goes through: redacts, counts by kind (counts only,
never values) and reports what it removed to the caller."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from cortex_mcp.engine.redaction.detector import Redacted, redact

log = logging.getLogger(__name__)

Recorder = Callable[[Mapping[str, int]], Awaitable[None]]


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
        counts.update(result.counts)
        return result.text, counts
    if isinstance(value, Mapping):
        return {k: redact_json(v, counts)[0] for k, v in value.items()}, counts
    if isinstance(value, list | tuple):
        return [redact_json(v, counts)[0] for v in value], counts
    return value, counts


class Redactor:
    """Redacts texts before a write and records how many secrets of each kind it removed
    (``redacted.<kind>`` counters). `scan`/`scan_json` also hand the counts to the caller, so
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

    async def clean_json(self, value: Any) -> Any:
        cleaned, counts = redact_json(value)
        await self._recorded(counts)
        return cleaned

    async def scan(self, text: str, counts: Counter[str]) -> str:
        """`text` redacted; what was removed is added to `counts` (and recorded)."""
        result = redact(text)
        counts.update(result.counts)
        await self._recorded(result.counts)
        return result.text

    async def scan_json(self, value: Any, counts: Counter[str]) -> Any:
        cleaned, found = redact_json(value)
        counts.update(found)
        await self._recorded(found)
        return cleaned

    async def _recorded(self, counts: Counter[str]) -> None:
        if counts:
            log.info("redacted %d secret(s): %s", sum(counts.values()), dict(counts))
            await self._record({f"redacted.{kind}": n for kind, n in counts.items()})


__all__ = ["Redacted", "Redactor", "redact", "redact_all", "redact_json"]
