"""The official MCP memory server's `memory.jsonl` (`npx @modelcontextprotocol/server-memory`):
each entity's observations become memories, each relation a relation and a memory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from cortex_mcp.engine.exchange.common import BadLine, Item, memory_fields, relation_fields
from cortex_mcp.engine.exchange.sources import Source
from cortex_mcp.models import Category, Layer, to_iso


def read_memory_jsonl(source: Source, now: datetime) -> Iterator[Item]:
    created = to_iso(now)
    name = PurePosixPath(source.name).name
    origin = f"import:{name}"
    for number, raw in enumerate(source.lines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as exc:
            message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
            raise BadLine(number, f"not JSON ({message})") from None
        if not isinstance(item, dict):
            raise BadLine(number, "expected a JSON object per line")
        where = f"{source.name}:{number}"
        kind = item.get("type")
        if kind == "entity":
            yield from _entity(item, where, number, created, origin, name)
        elif kind == "relation":
            parts = [item.get("from"), item.get("relationType"), item.get("to")]
            if not all(isinstance(p, str) and p.strip() for p in parts):
                raise BadLine(number, "a relation needs string 'from', 'relationType' and 'to'")
            subject, predicate, obj = (str(p) for p in parts)
            yield Item("relation", where, relation_fields(subject, predicate, obj, created))
            content = f"{subject} {predicate.replace('_', ' ')} {obj}"
            meta = {"imported_from": name}
            yield Item(
                "memory",
                where,
                memory_fields(
                    content, Category.relationship, Layer.core, created, origin, metadata=meta
                ),
            )
        else:
            raise BadLine(number, f"'type' must be 'entity' or 'relation', got {kind!r}")


def _entity(
    item: dict[str, Any], where: str, number: int, created: str, origin: str, name: str
) -> Iterator[Item]:
    entity, etype, observations = (
        item.get("name"),
        item.get("entityType"),
        item.get("observations", []),
    )
    if not isinstance(entity, str) or not entity.strip():
        raise BadLine(number, "an entity needs a non-empty string 'name'")
    if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
        raise BadLine(number, "'observations' must be a list of strings")
    label = f"{entity} ({etype})" if isinstance(etype, str) and etype else entity
    meta = {"entity": entity, "entity_type": etype, "imported_from": name}
    for observation in observations:
        if observation.strip():
            yield Item(
                "memory",
                where,
                memory_fields(
                    f"{label}: {observation}",
                    Category.fact,
                    Layer.core,
                    created,
                    origin,
                    metadata=meta,
                ),
            )
