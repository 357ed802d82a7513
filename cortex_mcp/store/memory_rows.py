"""A memory row as the store reads and writes it: its columns, its conversion to a model, and
the small value types the writes return."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from cortex_mcp.models import Category, Layer, Memory, from_iso, to_iso
from cortex_mcp.store.database import Row

MEMORY_COLUMNS = (
    "id, agent_id, layer, category, content, source, importance, confidence, decay_score,"
    " access_count, last_accessed, created_at, updated_at, expires_at, superseded_by,"
    " forgotten_at, metadata, shared"
)


@dataclass(frozen=True)
class LayerTtl:
    working: timedelta
    archive: timedelta

    def expiry(self, layer: Layer, now: str) -> str | None:
        if layer is Layer.working:
            return to_iso(from_iso(now) + self.working)
        return None  # core and archive never expire: the lifecycle compresses the archive


@dataclass(frozen=True)
class Accesses:
    """What one recall returned: (memory id, rank) pairs, the query, and when."""

    hits: list[tuple[str, int]]
    query: str
    at: str


@dataclass(frozen=True)
class WriteOutcome:
    memory: Memory
    deduplicated: bool
    superseded: list[str]


def row_to_memory(row: Row) -> Memory:
    """Rows come from our own schema (CHECKed columns), so skip re-validation: on the search
    path pydantic validation of a few dozen rows cost more than the SQL that fetched them."""
    data = dict(row)
    data["layer"] = _LAYERS[data["layer"]]  # a dict lookup: Enum(value) is ~10x slower
    data["category"] = _CATEGORIES[data["category"]]
    metadata = data.get("metadata")
    data["metadata"] = json.loads(metadata) if metadata and metadata != "{}" else {}
    data["shared"] = bool(data.get("shared"))
    return Memory.model_construct(**data)


_LAYERS = {layer.value: layer for layer in Layer}
_CATEGORIES = {category.value: category for category in Category}
