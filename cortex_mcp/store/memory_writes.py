"""The bodies of memory write transactions: synchronous functions on the connection a
transaction is given (`DatabaseHandle.transact`). `MemoryStore` (memories.py) is their
public face."""

from __future__ import annotations

import json
from typing import Any

from cortex_mcp.errors import NotFound
from cortex_mcp.models import Layer, Memory, MemoryChanges, NewMemory, new_id
from cortex_mcp.store.database import Row
from cortex_mcp.store.interfaces import Connection
from cortex_mcp.store.memory_rows import MEMORY_COLUMNS, LayerTtl, WriteOutcome, row_to_memory
from cortex_mcp.tokenize import content_hash, index_text


def insert_or_bump(
    conn: Connection, new: NewMemory, now: str, ttl: LayerTtl, *, audit: bool = True
) -> WriteOutcome:
    """Insert `new`, or bump the row with the same content; with `supersedes`, chain the
    old memory to it (audited here unless the caller writes its own log row)."""
    digest = content_hash(new.content)
    existing = conn.execute(
        "SELECT seq, id FROM memories WHERE agent_id = ? AND content_hash = ?",
        (new.agent_id, digest),
    ).fetchone()
    if existing is not None:
        memory_id = str(existing["id"])
        bump_row(conn, memory_id, new, now, ttl)
    else:
        memory_id = new_id()
        _insert(conn, memory_id, digest, new, now, ttl)
    return written(conn, new, memory_id, existing is not None, now, audit=audit)


def written(
    conn: Connection,
    new: NewMemory,
    memory_id: str,
    deduplicated: bool,
    now: str,
    *,
    audit: bool,
) -> WriteOutcome:
    """The end of every remember, once `new` is stored as `memory_id` (a new row or a bumped
    one): chain the memory it supersedes to it, and read the row back."""
    superseded: list[str] = []
    if new.supersedes and new.supersedes != memory_id:
        mark_superseded(conn, new, memory_id, now, audit)
        superseded.append(new.supersedes)
    return WriteOutcome(read_back(conn, memory_id), deduplicated, superseded)


# the columns a new memory is inserted with, and `insert_values` their values
INSERT_COLUMNS = (
    "id, agent_id, layer, category, content, content_hash, source, importance, confidence,"
    " created_at, updated_at, expires_at, metadata, shared"
)


def insert_values(
    memory_id: str, digest: str, new: NewMemory, now: str, ttl: LayerTtl
) -> tuple[Any, ...]:
    return (
        memory_id,
        new.agent_id,
        new.layer.value,
        new.category.value,
        new.content,
        digest,
        new.source,
        new.importance,
        new.confidence,
        now,
        now,
        ttl.expiry(new.layer, now),
        json.dumps(new.metadata, ensure_ascii=False),
        int(new.shared),
    )


def _insert(
    conn: Connection, memory_id: str, digest: str, new: NewMemory, now: str, ttl: LayerTtl
) -> None:
    cursor = conn.execute(
        f"INSERT INTO memories ({INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        insert_values(memory_id, digest, new, now, ttl),
    )
    conn.execute(
        "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)",
        (cursor.lastrowid, index_text(new.content)),
    )


# a layer's rank (core above working above archive): a bump only ever moves a memory up
LAYER_RANK = "CASE layer WHEN 'core' THEN 3 WHEN 'working' THEN 2 ELSE 1 END"


def bump_values(memory_id: str, new: NewMemory, now: str, ttl: LayerTtl) -> tuple[Any, ...]:
    """The parameters of a bump statement (`bump_row`'s, and PostgreSQL's that has the same
    placeholders in the same order)."""
    new_rank = {Layer.core: 3, Layer.working: 2, Layer.archive: 1}[new.layer]
    expires_at = ttl.expiry(new.layer, now)
    return (
        new.importance,
        now,
        now,
        int(new.shared),
        new_rank,
        expires_at,
        new_rank,
        new.layer.value,
        memory_id,
    )


def bump_row(conn: Connection, memory_id: str, new: NewMemory, now: str, ttl: LayerTtl) -> None:
    """The same content again: keep one row, raise its importance, revive it if it was
    forgotten, archived or compressed into a summary (the lifecycle acts on it again), and
    move it up to the requested layer."""
    conn.execute(
        f"UPDATE memories SET importance = MAX(importance, ?), updated_at = ?,"
        f" access_count = access_count + 1, last_accessed = ?, forgotten_at = NULL,"
        f" shared = MAX(shared, ?),"
        f" superseded_by = NULL, metadata = json_remove(metadata, '$.compressed_into'),"
        f" expires_at = CASE WHEN {LAYER_RANK} < ? OR forgotten_at IS NOT NULL THEN ?"
        f" ELSE expires_at END,"
        f" layer = CASE WHEN {LAYER_RANK} < ? OR forgotten_at IS NOT NULL THEN ? ELSE layer END"
        f" WHERE id = ?",
        bump_values(memory_id, new, now, ttl),
    )


_LOG_ROW = (
    "INSERT INTO lifecycle_log (action, memory_ids, details, executed_at) VALUES (?, ?, ?, ?)"
)


def _log_params(action: str, ids: list[str], details: dict[str, Any], now: str) -> tuple[Any, ...]:
    return (action, json.dumps(ids), json.dumps(details, ensure_ascii=False), now)


def add_log_row(
    conn: Connection, action: str, ids: list[str], details: dict[str, Any], now: str
) -> None:
    """One `lifecycle_log` row, inside the caller's transaction."""
    conn.execute(_LOG_ROW, _log_params(action, ids, details, now))


def read_back(conn: Connection, memory_id: str) -> Memory:
    row = conn.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    assert row is not None
    return row_to_memory(row)


def require_owned(conn: Connection, memory_id: str, agent_id: str, field: str = "memory_id") -> Row:
    row = conn.execute(
        "SELECT seq, content_hash FROM memories WHERE id = ? AND agent_id = ?",
        (memory_id, agent_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"{field}: no memory {memory_id} for agent {agent_id!r}", field=field)
    return row


def mark_superseded(conn: Connection, new: NewMemory, new_id_: str, now: str, audit: bool) -> None:
    """Chain the old memory to the new one; the audit log names both and the rule."""
    old_id = str(new.supersedes)
    require_owned(conn, old_id, new.agent_id, field="supersedes")
    conn.execute(
        "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ?", (new_id_, now, old_id)
    )
    if audit:
        details = supersede_details(new, new_id_)
        add_log_row(conn, "supersede", [old_id, new_id_], details, now)


def supersede_details(new: NewMemory, new_id_: str) -> dict[str, Any]:
    return {"rule": new.supersede_rule, "superseded": new.supersedes, "by": new_id_}


def erase_row(conn: Connection, seq: int, digest: str) -> None:
    """Delete a purged memory's row, and its cached embedding unless another row has the
    same content."""
    conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
    conn.execute(
        "DELETE FROM embedding_cache WHERE content_hash = ? AND NOT EXISTS"
        " (SELECT 1 FROM memories WHERE content_hash = ?)",
        (digest, digest),
    )


def drop_vec_row(conn: Connection, memory_id: str) -> None:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").fetchone()
    if exists:
        conn.execute("DELETE FROM memories_vec WHERE memory_id = ?", (memory_id,))


def change_columns(changes: MemoryChanges, ttl: LayerTtl, now: str) -> tuple[list[str], list[Any]]:
    sets: list[str] = []
    params: list[Any] = []
    if changes.category is not None:
        sets.append("category = ?")
        params.append(changes.category.value)
    if changes.importance is not None:
        sets.append("importance = ?")
        params.append(changes.importance)
    if changes.layer is not None:
        sets += ["layer = ?", "expires_at = ?"]
        params += [changes.layer.value, ttl.expiry(changes.layer, now)]
    if changes.shared is not None:
        sets.append("shared = ?")
        params.append(int(changes.shared))
    return sets, params
