"""What every importer shares: the parsed form of a file, the problem a bad line raises, and
the memory and relation rows the importers build."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cortex_mcp.models import Category, Layer, Memory, new_id


@dataclass
class ImportProblem:
    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class BadLine(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class ParsedFile:
    path: str
    memories: list[Memory] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Parsed:
    files: list[ParsedFile] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)


def make_memory(
    agent_id: str,
    content: str,
    category: Category,
    layer: Layer,
    created: str,
    source: str,
    *,
    importance: float = 0.7,
    confidence: float = 0.8,
    metadata: dict[str, Any] | None = None,
) -> Memory:
    return Memory(
        id=new_id(),
        agent_id=agent_id,
        layer=layer,
        category=category,
        content=content,
        source=source,
        importance=importance,
        confidence=confidence,
        decay_score=1.0,
        access_count=0,
        created_at=created,
        updated_at=created,
        metadata=metadata or {},
    )


def check_day(text: str, line: int) -> str:
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise BadLine(line, f"{text!r} is not a real date (YYYY-MM-DD)") from None
    return text


def make_relation(
    agent_id: str, subject: str, predicate: str, obj: str, created: str
) -> dict[str, Any]:
    return {
        "id": None,
        "agent_id": agent_id,
        "subject": subject.strip(),
        "predicate": predicate.strip(),
        "object": obj.strip(),
        "confidence": 0.8,
        "source_memory_id": None,
        "created_at": created,
        "updated_at": created,
    }
