"""What every importer shares: the raw item a reader yields, the problem a bad line raises,
and helpers that build the raw memory and relation fields the admission rules then check."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from cortex_mcp.models import Category, Layer

ItemKind = Literal["memory", "relation", "log", "entity"]


@dataclass(slots=True)
class Item:
    """One thing to import, as the file wrote it: `where` names it for a person
    (`path:line`), `label` for a field path (`memories[12]`) when the format has indexes."""

    kind: ItemKind
    where: str
    data: dict[str, Any]
    label: str = ""


class BadLine(Exception):
    """A line a reader cannot make sense of (not JSON, an unknown Retain option...)."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def memory_fields(
    content: str,
    category: Category,
    layer: Layer,
    created: str,
    source: str,
    *,
    importance: float = 0.7,
    confidence: float = 0.8,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "content": content,
        "category": category.value,
        "layer": layer.value,
        "created_at": created,
        "source": source,
        "importance": importance,
        "confidence": confidence,
        "metadata": metadata or {},
    }


def relation_fields(subject: str, predicate: str, obj: str, created: str) -> dict[str, Any]:
    return {
        "subject": subject.strip(),
        "predicate": predicate.strip(),
        "object": obj.strip(),
        "confidence": 0.8,
        "created_at": created,
    }


def check_day(text: str, line: int) -> str:
    """`text` (YYYY-MM-DD by the caller's pattern) when it is a real date."""
    try:
        date.fromisoformat(text)
    except ValueError:
        raise BadLine(line, f"{text!r} is not a real date (YYYY-MM-DD)") from None
    return text
