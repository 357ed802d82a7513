"""SQL of an import's writes: one batch of memories (new by id and by content, with their FTS
rows), relations (new by id or by triple) and lifecycle-log entries (not already present), in
the caller's one transaction."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cortex_mcp.models import new_id
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.interfaces import Connection
from cortex_mcp.store.memories import MEMORY_COLUMNS, without_origin
from cortex_mcp.tokenize import hash_and_index_text

MEMORY_FIELDS = [c.strip() for c in MEMORY_COLUMNS.split(",")]
RELATION_FIELDS = [
    "id",
    "agent_id",
    "subject",
    "predicate",
    "object",
    "confidence",
    "source_memory_id",
    "created_at",
    "updated_at",
]
_CHUNK = 500  # ids per IN (...) lookup


@dataclass
class ImportCounts:
    memories: int = 0
    relations: int = 0
    logs: int = 0
    existing: int = 0
    dropped_ids: int = 0  # ids of other agents' memories taken out of the items' id lists


def new_memories(memories: list[dict[str, Any]], agent_id: str) -> list[NewMemory]:
    """The rows to offer `write_batch`, built before its transaction (not under the lock)."""
    return [NewMemory(m["id"], *_memory_row(m, agent_id)) for m in memories]


def write_batch(
    conn: Connection,
    agent_id: str,
    memories: list[NewMemory],
    relations: list[dict[str, Any]],
    logs: list[dict[str, Any]],
    *,
    assign_seq: bool,
    insert: InsertFresh | None = None,
    log_agents: Collection[str] | None = None,
) -> ImportCounts:
    """`insert`: how the new memories' rows and text index go in, when the backend does it
    its own way (PostgreSQL); else rows and FTS rows, with `assign_seq` as below. A log entry
    goes to the agent of `log_agents` (default: `agent_id` alone) whose memories it names."""
    counts = ImportCounts()
    counts.dropped_ids = _without_foreign_ids(conn, agent_id, memories)
    counts.memories, counts.existing = _insert_memories(
        conn, agent_id, memories, assign_seq, insert
    )
    for relation in relations:
        counts.relations += _insert_relation(conn, agent_id, relation)
    if logs:
        counts.logs, dropped = _insert_logs(conn, log_agents or {agent_id}, logs)
        counts.dropped_ids += dropped
    return counts


def _exists(conn: Connection, sql: str, params: list[Any]) -> bool:
    return conn.execute(sql, params).fetchone() is not None


def _column(conn: Connection, sql: str, params: list[Any]) -> set[str]:
    return {str(r[0]) for r in conn.execute(sql, params).fetchall()}


class NewMemory(NamedTuple):
    """A memory to insert: its row (seq left to the transaction) and FTS text."""

    id: str
    row: list[Any]
    digest: str
    text: str


InsertFresh = Callable[[Connection, list[NewMemory]], None]


def _memory_row(memory: dict[str, Any], agent_id: str) -> tuple[list[Any], str, str]:
    """A memory's row in `ROW_FIELDS` order (its seq still 0), content hash and FTS text."""
    data = {**memory, "agent_id": agent_id}
    metadata = memory.get("metadata")
    data["metadata"] = json.dumps(metadata, ensure_ascii=False) if metadata else "{}"
    data["shared"] = int(bool(memory.get("shared")))
    data["occurred_at"] = memory.get("occurred_at") or memory.get("created_at")
    data["status"] = memory.get("status") or "current"
    digest, text = hash_and_index_text(memory["content"])
    return [0, *map(data.get, MEMORY_FIELDS), digest], digest, text


def _insert_memories(
    conn: Connection,
    agent_id: str,
    memories: list[NewMemory],
    assign_seq: bool,
    insert: InsertFresh | None,
) -> tuple[int, int]:
    """(inserted, already known): two indexed lookups per 500 rows, then one executemany for
    the rows and one for their FTS text. With `assign_seq` (SQLite, whose write lock is held)
    the rows take the next `seq` values themselves, so their FTS rows need no lookup by id;
    otherwise (an identity column other writers draw from too) the database numbers them."""
    if not memories:
        return 0, 0
    taken: set[str] = set()
    known: set[str] = set()
    for start in range(0, len(memories), _CHUNK):
        ids = [m.id for m in memories[start : start + _CHUNK]]
        hashes = [m.digest for m in memories[start : start + _CHUNK]]
        taken |= _column(conn, f"SELECT id FROM memories WHERE id IN ({placeholders(ids)})", ids)
        known |= _column(
            conn,
            "SELECT content_hash FROM memories WHERE agent_id = ?"
            f" AND content_hash IN ({placeholders(hashes)})",
            [agent_id, *hashes],
        )
    fresh = []
    for memory in memories:
        if memory.id in taken or memory.digest in known:
            continue
        taken.add(memory.id)
        known.add(memory.digest)
        fresh.append(memory)
    if insert is not None:
        insert(conn, fresh)
    elif assign_seq:
        last = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memories").fetchone()[0])
        for seq, memory in enumerate(fresh, start=last + 1):
            memory.row[0] = seq
        _insert_rows(conn, _INSERT_WITH_SEQ_HEAD, [m.row for m in fresh])
        _insert_rows(conn, _INSERT_FTS_HEAD, [(m.row[0], m.text) for m in fresh])
    else:
        conn.executemany(_INSERT_WITHOUT_SEQ, [m.row[1:] for m in fresh])
        conn.executemany(
            "INSERT INTO memories_fts(rowid, text) SELECT seq, ? FROM memories WHERE id = ?",
            [(m.text, m.id) for m in fresh],
        )
    return len(fresh), len(memories) - len(fresh)


ROW_FIELDS = ["seq", *MEMORY_FIELDS, "content_hash"]  # `NewMemory.row`
_METADATA = ROW_FIELDS.index("metadata")
# the lists of memory ids a memory's metadata and a log entry's details hold: an agent's own
# lists name only its own memories (or ones gone: a summary's compressed originals)
METADATA_ID_LISTS = ("covers", "merged_from")
DETAILS_ID_LISTS = ("before", "after")
_INSERT_WITH_SEQ_HEAD = f"INSERT INTO memories ({', '.join(ROW_FIELDS)}) VALUES "
_INSERT_FTS_HEAD = "INSERT INTO memories_fts(rowid, text) VALUES "
# values bound by one multi-row INSERT (SQLite takes up to 32,766): the driver takes each
# statement in one step, where executemany steps once per row and hands the GIL over twice
# for each (the caller's thread prepares the next batch meanwhile). And a statement that
# writes several rows inside a transaction keeps a journal of its own (SQLite's statement
# journal, for undoing it alone): every page it changes is copied there first, once per
# statement. An import's rows land on pages all over the memories' indexes (random ids and
# content hashes), so fewer, longer statements copy fewer pages: 560 rows of memories a
# statement (14,000 values) instead of 200 take a fifth less CPU to insert 100,000 rows (the
# statement journal, kept in memory, holds more pages at once: 7 MB more RSS; 1,120 rows
# saved little more for 16 MB).
_VALUES_PER_INSERT = 14_000
_INSERT_WITHOUT_SEQ = (
    f"INSERT INTO memories ({', '.join(ROW_FIELDS[1:])}) VALUES ({placeholders(ROW_FIELDS[1:])})"
)


def _insert_rows(conn: Connection, head: str, rows: Sequence[Sequence[Any]]) -> None:
    """`head` (INSERT INTO ... VALUES) with `rows`, as many a statement as bind at most
    `_VALUES_PER_INSERT` values."""
    if not rows:
        return
    per_statement = max(1, _VALUES_PER_INSERT // len(rows[0]))
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        values = ", ".join([f"({placeholders(chunk[0])})"] * len(chunk))
        conn.execute(head + values, [value for row in chunk for value in row])


def _foreign(conn: Connection, agent_id: str, ids: set[str]) -> set[str]:
    """Those of `ids` that name a memory of another agent than `agent_id`."""
    found: set[str] = set()
    listed = sorted(ids)
    for start in range(0, len(listed), _CHUNK):
        chunk = listed[start : start + _CHUNK]
        found |= _column(
            conn,
            f"SELECT id FROM memories WHERE id IN ({placeholders(chunk)}) AND agent_id != ?",
            [*chunk, agent_id],
        )
    return found


def _without_foreign_ids(conn: Connection, agent_id: str, memories: list[NewMemory]) -> int:
    """Take the ids of other agents' memories out of the memories' id lists (a summary's
    covers, a merge's merged_from), in their rows; how many were taken out."""
    listing = []
    for memory in memories:
        text = memory.row[_METADATA]
        if any(f'"{key}"' in text for key in METADATA_ID_LISTS):  # most hold none: no parse
            listing.append((memory, json.loads(text)))
    if not listing:
        return 0
    named = {i for _, meta in listing for i in _listed_ids(meta, METADATA_ID_LISTS)}
    foreign = _foreign(conn, agent_id, named)
    if not foreign:
        return 0
    dropped = 0
    for memory, meta in listing:
        kept, taken = _keep_ids(meta, METADATA_ID_LISTS, lambda i: i not in foreign)
        if taken:
            memory.row[_METADATA] = json.dumps(kept, ensure_ascii=False)
            dropped += taken
    return dropped


def _listed_ids(data: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    return [
        i
        for key in keys
        if isinstance(data.get(key), list)
        for i in data[key]
        if isinstance(i, str)
    ]


def _keep_ids(
    data: dict[str, Any], keys: tuple[str, ...], keep: Callable[[str], bool]
) -> tuple[dict[str, Any], int]:
    """`data` with only the ids `keep` accepts in its lists of `keys`; how many went."""
    kept = dict(data)
    taken = 0
    for key in keys:
        ids = data.get(key)
        if isinstance(ids, list):
            kept[key] = [i for i in ids if not isinstance(i, str) or keep(i)]
            taken += len(ids) - len(kept[key])
    return kept, taken


def _insert_relation(conn: Connection, agent_id: str, relation: dict[str, Any]) -> int:
    relation_id = relation.get("id") or new_id()
    owner = _column(conn, "SELECT agent_id FROM relations WHERE id = ?", [relation_id])
    if agent_id in owner:
        return 0
    if owner:  # another agent's relation has this id: ours gets a new one
        relation_id = new_id()
    if _exists(
        conn,
        "SELECT 1 FROM relations WHERE agent_id = ? AND subject = ? AND predicate = ?"
        " AND object = ?",
        [agent_id, relation["subject"], relation["predicate"], relation["object"]],
    ):
        return 0
    source = relation.get("source_memory_id")
    if source and not _exists(
        conn, "SELECT 1 FROM memories WHERE id = ? AND agent_id = ?", [source, agent_id]
    ):
        source = None
    values = {**relation, "id": relation_id, "agent_id": agent_id, "source_memory_id": source}
    conn.execute(
        f"INSERT INTO relations ({', '.join(RELATION_FIELDS)})"
        f" VALUES ({placeholders(RELATION_FIELDS)})",
        [values.get(f) for f in RELATION_FIELDS],
    )
    return 1


def _comparable(details: str) -> str:
    """Details compared without an import's mark: an entry imported before, or the server's own
    one exported and imported back, is the same entry."""
    return json.dumps(without_origin(json.loads(details)), ensure_ascii=False)


def _insert_logs(
    conn: Connection, agents: Collection[str], logs: list[dict[str, Any]]
) -> tuple[int, int]:
    """Entries not already present that name a memory of one of `agents` (as an export of one
    agent selects them): each is that agent's, the first such memory's owner. Ids of other
    agents' memories are dropped from it (from its details' before/after too), and an
    `agent_id` in its details names its agent (an agent's log is read by it). (entries
    added, ids dropped)"""
    named = sorted(
        {i for entry in logs for i in entry["memory_ids"]}
        | {i for entry in logs for i in _listed_ids(entry.get("details") or {}, DETAILS_ID_LISTS)}
    )
    owners: dict[str, str] = {}
    for start in range(0, len(named), _CHUNK):
        chunk = named[start : start + _CHUNK]
        rows = conn.execute(
            f"SELECT id, agent_id FROM memories WHERE id IN ({placeholders(chunk)})", chunk
        ).fetchall()
        owners |= {str(r[0]): str(r[1]) for r in rows}
    times = sorted({entry["executed_at"] for entry in logs})
    present: set[tuple[str, str, str, str]] = set()
    for start in range(0, len(times), _CHUNK):  # one read per batch, not one per entry
        chunk = times[start : start + _CHUNK]
        rows = conn.execute(
            "SELECT action, memory_ids, executed_at, details FROM lifecycle_log"
            f" WHERE executed_at IN ({placeholders(chunk)})",
            chunk,
        ).fetchall()
        present |= {(str(r[0]), str(r[1]), str(r[2]), _comparable(str(r[3]))) for r in rows}
    added = dropped = 0
    for entry in logs:
        agent_id = next((owners[i] for i in entry["memory_ids"] if owners.get(i) in agents), None)
        if agent_id is None:
            continue

        def own(memory_id: str, agent_id: str = agent_id) -> bool:  # or no memory (any more)
            return owners.get(memory_id, agent_id) == agent_id

        ids = [i for i in entry["memory_ids"] if own(i)]
        kept, taken = _keep_ids(entry.get("details") or {}, DETAILS_ID_LISTS, own)
        if "agent_id" in kept:
            kept["agent_id"] = agent_id
        memory_ids = json.dumps(ids)
        details = json.dumps(kept, ensure_ascii=False)
        key = (str(entry["action"]), memory_ids, str(entry["executed_at"]), _comparable(details))
        if key in present:
            continue
        present.add(key)
        dropped += taken + len(entry["memory_ids"]) - len(ids)
        conn.execute(
            "INSERT INTO lifecycle_log (action, memory_ids, details, executed_at)"
            " VALUES (?, ?, ?, ?)",
            (entry["action"], memory_ids, details, entry["executed_at"]),
        )
        added += 1
    return added, dropped
