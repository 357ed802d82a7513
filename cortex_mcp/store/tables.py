"""The tables a store copy carries, described once for every backend.

A copy (`cortex-mcp migrate`) moves rows, not memories: every column as stored, keys included,
so nothing is re-derived but the indexes (the text index, the vector index) that each backend
builds from the copied rows itself. Rows travel between backends as tuples in SQLite's
representation: text, int, float, bytes (a vector as float32 little-endian), None; a time as
`models.to_iso` text, a JSON value as its text, a flag as 0/1. Each backend converts its own
types to and from that form.

Not copied: `leases` (they name live processes of the source's machine) and the meta keys a
backend keeps about its own indexes and an unfinished copy (`DERIVED_META`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["text", "int", "real", "flag", "time", "json", "vector"]

# the vector index in use and its HNSW index; a copy in progress (`postgres.target.MARK`); the
# highest vector rowid SQLite deleted (schema.VECTOR_ROWID_TOP: the copy numbers rows anew)
DERIVED_META = frozenset({"vec_index", "vec_index_hnsw", "copy_unfinished", "vector_rowid_top"})


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind = "text"


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]  # unique; a copy reads and pages in this order
    serial: str | None = None  # an integer key the backend otherwise assigns itself

    @property
    def names(self) -> list[str]:
        return [column.name for column in self.columns]

    def kinds(self, kind: Kind) -> list[int]:
        """Positions of the columns of one kind."""
        return [i for i, column in enumerate(self.columns) if column.kind == kind]


def _columns(spec: str) -> tuple[Column, ...]:
    """`"id, importance:real, created_at:time"` -> columns (text unless a kind is given)."""
    columns = []
    for item in spec.split(","):
        name, _, kind = item.strip().partition(":")
        columns.append(Column(name, kind or "text"))  # type: ignore[arg-type]
    return tuple(columns)


# In the order a copy writes them: rows that others reference first.
TABLES: tuple[Table, ...] = (
    Table(
        "memories",
        _columns(
            "seq:int, id, agent_id, layer, category, content, content_hash, source,"
            " importance:real, confidence:real, decay_score:real, access_count:int,"
            " last_accessed:time, created_at:time, updated_at:time, expires_at:time,"
            " superseded_by, forgotten_at:time, metadata:json, shared:flag, occurred_at:time,"
            " valid_from:time, valid_to:time, status, slot"
        ),
        key=("seq",),
        serial="seq",
    ),
    Table(
        "memory_vectors",
        _columns("memory_id, model, dim:int, vector:vector, updated_at:time"),
        key=("memory_id",),
    ),
    Table(
        "embedding_cache",
        _columns("content_hash, model, dim:int, vector:vector, created_at:time"),
        key=("content_hash", "model"),
    ),
    Table(
        "relations",
        _columns(
            "id, agent_id, subject, predicate, object, confidence:real, source_memory_id,"
            " created_at:time, updated_at:time"
        ),
        key=("id",),
    ),
    Table(
        "access_log",
        _columns(
            "id:int, memory_id, query, query_hash, rank:int, was_useful:int, accessed_at:time"
        ),
        key=("id",),
        serial="id",
    ),
    Table(
        "lifecycle_log",
        _columns("id:int, action, memory_ids:json, details:json, executed_at:time"),
        key=("id",),
        serial="id",
    ),
    Table(
        "lifecycle_runs",
        _columns(
            "id:int, scope, run_at:time, started_at:time, finished_at:time, status,"
            " next_phase:int, plan:json, report:json"
        ),
        key=("id",),
        serial="id",
    ),
    Table(
        "turns",
        _columns(
            "seq:int, id, agent_id, session_id, turn_hash, user_message, assistant_message,"
            " status, outcome, result:json, claimed_by, claimed_at:time, attempts:int,"
            " created_at:time, updated_at:time, said_at:time"
        ),
        key=("seq",),
        serial="seq",
    ),
    Table(
        "profiles",
        _columns(
            "agent_id, generated:json, manual:json, fingerprint, built_by, built_at:time,"
            " updated_at:time"
        ),
        key=("agent_id",),
    ),
    Table(
        "agent_tokens",
        _columns(
            "id, kind, name, agent_id, salt, hash, parent, created_at:time, last_used_at:time,"
            " expires_at:time, revoked_at:time"
        ),
        key=("id",),
    ),
    Table(
        "entities",
        _columns(
            "id, agent_id, name, name_key, kind, summary, first_seen:time, last_seen:time,"
            " mention_count:int, created_at:time, updated_at:time"
        ),
        key=("id",),
    ),
    Table(
        "entity_aliases",
        _columns("entity_id, agent_id, alias_key, alias, origin, speaker_id, created_at:time"),
        key=("entity_id", "alias_key"),
    ),
    Table(
        "memory_entities",
        _columns("memory_id, entity_id, agent_id, role"),
        key=("memory_id", "entity_id"),
    ),
    Table(
        "entity_unresolved",
        _columns("memory_id, agent_id, alias_key, phrase, role, created_at:time"),
        key=("memory_id", "alias_key"),
    ),
    Table(
        "entity_log",
        _columns(
            "id:int, agent_id, action, entity_ids:json, details:json, executed_at:time,"
            " undone_at:time"
        ),
        key=("id",),
        serial="id",
    ),
    Table(
        "memory_slots",
        _columns("agent_id, memory_id, holder, slot, value, speaker"),
        key=("memory_id", "holder", "slot"),
    ),
    Table("validity_progress", _columns("agent_id, seq:int"), key=("agent_id",)),
    Table(
        "beliefs",
        _columns(
            "id, agent_id, holder, holder_name, memory_id, statement, stated:real,"
            " confidence:real, for_count:int, against_count:int, last_evidence_at:time, trend,"
            " revisions:int, history:json, created_at:time, updated_at:time"
        ),
        key=("id",),
    ),
    Table(
        "belief_evidence",
        _columns("belief_id, memory_id, agent_id, supports:int, weight:real, at:time"),
        key=("belief_id", "memory_id"),
    ),
    Table("belief_progress", _columns("agent_id, seq:int"), key=("agent_id",)),
    Table(
        "reflect_runs",
        _columns("id, agent_id, through_seq:int, plan:json, started_at:time, finished_at:time"),
        key=("id",),
    ),
    Table(
        "core_proposals",
        _columns(
            "id, agent_id, memory_id, action, reason, status, created_at:time, decided_at:time"
        ),
        key=("id",),
    ),
    Table("meta", _columns("key, value"), key=("key",)),
)

TABLE_NAMES = [table.name for table in TABLES]


def table(name: str) -> Table:
    for candidate in TABLES:
        if candidate.name == name:
            return candidate
    raise KeyError(name)


Row = tuple[Any, ...]


class TableDigest:
    """A count and a checksum of a table's rows that does not depend on the order they come
    in: the sum (mod 2**256) of each row's SHA-256 over its canonical encoding. Two stores hold
    the same rows when both agree. JSON is compared as values (a backend may reorder keys)."""

    _MOD = 1 << 256

    def __init__(self, spec: Table) -> None:
        self.spec = spec
        self.count = 0
        self._sum = 0
        self._json = spec.kinds("json")
        self._real = spec.kinds("real")

    def add(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            self.count += 1
            digest = hashlib.sha256(self._encode(row)).digest()
            self._sum = (self._sum + int.from_bytes(digest, "big")) % self._MOD

    def _encode(self, row: Sequence[Any]) -> bytes:
        values = list(row)
        for i in self._json:
            if values[i] is not None:
                values[i] = canonical_json(values[i])
        for i in self._real:
            if values[i] is not None:
                values[i] = float(values[i])
        return repr([_plain(v) for v in values]).encode("utf-8", "surrogatepass")

    @property
    def checksum(self) -> str:
        return f"{self._sum:064x}"


def canonical_json(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, bool):
        return int(value)
    return value
