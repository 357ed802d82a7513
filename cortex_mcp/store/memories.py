"""Memory rows: the row as the store reads and writes it (its columns, its conversion to a
model, the value types writes return), the bodies of write transactions (synchronous functions
on the connection `DatabaseHandle.transact` gives them), and `MemoryStore`, their public face:
remember, forget, correct, purge, restore, and the reads search needs."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from cortex_mcp.errors import NotFound
from cortex_mcp.models import (
    ACTING,
    IMPORTED_ORIGIN,
    LOG_ORIGIN_KEY,
    SERVER_ORIGIN,
    Category,
    Layer,
    Memory,
    MemoryChanges,
    NewMemory,
    SearchFilters,
    from_iso,
    new_id,
    to_iso,
    with_actor,
)
from cortex_mcp.store.database import OF_AGENT, Row, placeholders
from cortex_mcp.store.entities import drop_links_in
from cortex_mcp.store.interfaces import Connection, DatabaseHandle, Read
from cortex_mcp.store.text import TextReads, filter_sql, on_primary_key
from cortex_mcp.tokenize import content_hash, index_text, query_key

MEMORY_COLUMNS = (
    "id, agent_id, layer, category, content, source, importance, confidence, decay_score,"
    " access_count, last_accessed, created_at, updated_at, expires_at, superseded_by,"
    " forgotten_at, metadata, shared, occurred_at, valid_from, valid_to, status, slot"
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
    """A memory from a row of our own schema. Validated: pydantic's compiled validator builds
    one in ~5 us where `model_construct`, in Python, took ~15 us (a recall reads a few dozen
    rows: ~0.6 ms of its CPU)."""
    data = dict(row)
    data["layer"] = _LAYERS[data["layer"]]  # a dict lookup: Enum(value) is ~10x slower
    data["category"] = _CATEGORIES[data["category"]]
    metadata = data.get("metadata")
    data["metadata"] = json.loads(metadata) if metadata and metadata != "{}" else {}
    data["shared"] = bool(data.get("shared"))
    if not data.get("occurred_at"):  # a row of a reader that selected other columns
        data["occurred_at"] = data.get("created_at", "")
    for unset in ("status", "valid_from"):  # NULL: the model's default (its occurred_at)
        if not data.get(unset):
            data.pop(unset, None)
    return Memory.model_validate(data)


V = TypeVar("V")

_LAYERS = {layer.value: layer for layer in Layer}
_CATEGORIES = {category.value: category for category in Category}
REUSED_MAX = 4096  # memories `ReusedMemories` keeps before it starts over
_FILTERS_KEPT = 16  # filters whose answers `eligible` keeps (a layer filter's change each time)


# the places in MEMORY_COLUMNS of the two columns a recall's access counts change
_ACCESS_COUNT, _LAST_ACCESSED = (
    [column.strip() for column in MEMORY_COLUMNS.split(",")].index(name)
    for name in ("access_count", "last_accessed")
)


def _only_accessed(before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
    """Whether two rows of one memory differ in its access count and last access alone."""
    first, second = sorted((_ACCESS_COUNT, _LAST_ACCESSED))
    return (
        before[:first] == after[:first]
        and before[first + 1 : second] == after[first + 1 : second]
        and before[second + 1 :] == after[second + 1 :]
    )


class AtVersion(Generic[V]):
    """What small reads found, by memory id, while the database stood at one version
    (`inline_version`), forgotten as soon as it moves on (any commit by any connection):
    until then, reading again would find the same. At most `most` are kept."""

    def __init__(self, most: int = REUSED_MAX) -> None:
        self.most = most
        self.version: int | None = None
        self._found: dict[str, V] = {}

    def found(self, version: int) -> dict[str, V]:
        """What was found at `version` (nothing when the database stood elsewhere)."""
        if version != self.version:
            self.version, self._found = version, {}
        return self._found

    def keep(self, version: int, found: dict[str, V]) -> None:
        """Keep what was read at `version` (no longer current, it is dropped)."""
        if version != self.version:
            return
        if len(self._found) + len(found) > self.most:
            self._found = {}
        self._found.update(found)


class ReusedMemories:
    """Memories built from rows, each kept with the row's values: searches read the same rows
    again and again (a recall reads ~60, the next one many of them again), and building a
    Memory costs ~8 us where comparing a row with the one it was built from costs well under
    one. A row that differs in any column (an access count, a correction, a forget) builds a
    new one, so nothing is ever stale; one never read is never given. The memories are shared
    by every reader that asks for them: a reader never changes one (`model_copy` does).

    `current` holds those read while the database stood at one version (`inline_version`):
    until any connection commits, they are what reading their rows again would give."""

    def __init__(self, most: int = REUSED_MAX) -> None:
        self.most = most
        self._built: dict[Any, tuple[tuple[Any, ...], Memory]] = {}
        self.current: AtVersion[Memory] = AtVersion(most)

    def memory(self, row: Row) -> Memory:
        values = tuple(row)  # the columns of MEMORY_COLUMNS, the id first
        known = self._built.get(values[0])
        if known is None:
            memory = row_to_memory(row)
        elif known[0] == values:
            return known[1]
        elif _only_accessed(known[0], values):  # what recalls change most: a copy, ~4x cheaper
            count, last = values[_ACCESS_COUNT], values[_LAST_ACCESSED]
            memory = known[1].model_copy(update={"access_count": count, "last_accessed": last})
        else:
            memory = row_to_memory(row)
        if len(self._built) >= self.most:
            self._built.clear()
        self._built[values[0]] = (values, memory)
        return memory


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
    one): record who wrote a new memory, chain the memory it supersedes to it, and read the
    row back."""
    if not deduplicated:
        record_writer(conn, new, memory_id, now)
    superseded: list[str] = []
    if new.supersedes and new.supersedes != memory_id:
        mark_superseded(conn, new, memory_id, now, audit)
        superseded.append(new.supersedes)
    return WriteOutcome(read_back(conn, memory_id), deduplicated, superseded)


# the columns a new memory is inserted with, and `insert_values` their values
INSERT_COLUMNS = (
    "id, agent_id, layer, category, content, content_hash, source, importance, confidence,"
    " created_at, updated_at, expires_at, metadata, shared, occurred_at"
)


INSERT_PLACEHOLDERS = placeholders(INSERT_COLUMNS.split(","))
_INSERT_ROW = f"INSERT INTO memories ({INSERT_COLUMNS}) VALUES ({INSERT_PLACEHOLDERS})"


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
        new.occurred_at or now,
    )


def _insert(
    conn: Connection, memory_id: str, digest: str, new: NewMemory, now: str, ttl: LayerTtl
) -> None:
    cursor = conn.execute(
        _INSERT_ROW,
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
    return (action, json.dumps(ids), json.dumps(with_actor(details), ensure_ascii=False), now)


def log_entry(row: Any) -> dict[str, Any]:
    """A lifecycle-log row as the readers show it: with its `origin` ("import" for an entry an
    import wrote, "server" for the server's own), the mark taken out of `details`."""
    details = json.loads(row["details"])
    imported = isinstance(details, dict) and details.get(LOG_ORIGIN_KEY) == IMPORTED_ORIGIN
    return {
        **dict(row),
        "memory_ids": json.loads(row["memory_ids"]),
        "details": without_origin(details) if imported else details,
        "origin": IMPORTED_ORIGIN if imported else SERVER_ORIGIN,
    }


def without_origin(details: Any) -> Any:
    """Details as a document holds them: an import's mark is this database's, not the data's."""
    if not isinstance(details, dict) or details.get(LOG_ORIGIN_KEY) != IMPORTED_ORIGIN:
        return details
    return {k: v for k, v in details.items() if k != LOG_ORIGIN_KEY}


def add_log_row(
    conn: Connection, action: str, ids: list[str], details: dict[str, Any], now: str
) -> None:
    """One `lifecycle_log` row, inside the caller's transaction."""
    conn.execute(_LOG_ROW, _log_params(action, ids, details, now))


def record_writer(conn: Connection, new: NewMemory, memory_id: str, now: str) -> None:
    """Who wrote a new memory, when it came from someone over the network (an agent token, an
    identity provider's user, the admin token): a `remember` entry in the audit log, which
    `show`, the dashboard and exports carry. The person at this machine (stdio, the CLI) and
    the server's own jobs write none: every memory would get one, saying "local"."""
    caller = ACTING.get()
    if caller is None or caller.kind == "local":
        return
    add_log_row(conn, "remember", [memory_id], {"agent_id": new.agent_id}, now)


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


log = logging.getLogger(__name__)


class MemoryStore(TextReads):
    def __init__(self, db: DatabaseHandle, ttl: LayerTtl) -> None:
        self.db = db
        self.ttl = ttl
        self.reused = ReusedMemories()
        # (filter SQL, its values) -> whether it allows each memory id asked about
        self._eligible: dict[tuple[Any, ...], AtVersion[bool]] = {}

    # ---- writes -------------------------------------------------------------------------
    # Each write is one synchronous function run as one transaction on the writer's thread
    # (`DatabaseHandle.transact`): one trip, however many statements.

    async def remember(self, new: NewMemory, now: str) -> WriteOutcome:
        return await self.db.transact(
            lambda conn: self._insert_or_bump(conn, new, now), names=False
        )

    def remember_in(self, conn: Connection, new: NewMemory, now: str) -> WriteOutcome:
        """`remember` inside a transaction another store method holds (`transact`)."""
        return self._insert_or_bump(conn, new, now)

    def reindex_in(self, conn: Connection, seq: int, content: str) -> None:
        """A memory's text index for its new content, inside the caller's transaction."""
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
        conn.execute(
            "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (seq, index_text(content))
        )

    def _insert_or_bump(
        self, conn: Connection, new: NewMemory, now: str, *, audit: bool = True
    ) -> WriteOutcome:
        return insert_or_bump(conn, new, now, self.ttl, audit=audit)

    def _bump(self, conn: Connection, memory_id: str, new: NewMemory, now: str) -> None:
        bump_row(conn, memory_id, new, now, self.ttl)

    async def forget(self, memory_id: str, agent_id: str, reason: str | None, now: str) -> Memory:
        """Soft forget: out of recall, kept in the archive (never expiring) and the audit log."""

        def txn(conn: Connection) -> Memory:
            require_owned(conn, memory_id, agent_id)
            drop_links_in(conn, [memory_id])
            conn.execute(
                "UPDATE memories SET layer = 'archive', forgotten_at = ?, expires_at = NULL,"
                " updated_at = ? WHERE id = ?",
                (now, now, memory_id),
            )
            add_log_row(conn, "forget", [memory_id], {"reason": reason}, now)
            return read_back(conn, memory_id)

        return await self.db.transact(txn)

    async def correct(
        self, memory_id: str, correction: NewMemory, reason: str | None, now: str
    ) -> WriteOutcome:
        """Store the corrected fact and chain the old one to it (`superseded_by`)."""

        def txn(conn: Connection) -> WriteOutcome:
            require_owned(conn, memory_id, correction.agent_id)
            update = {"supersedes": memory_id, "supersede_rule": "forget_correction"}
            new = correction.model_copy(update=update)
            outcome = self._insert_or_bump(conn, new, now, audit=False)
            conn.execute(
                "UPDATE memories SET layer = 'archive', expires_at = NULL WHERE id = ?",
                (memory_id,),
            )
            details = {
                **supersede_details(new, outcome.memory.id),
                "reason": reason,
                "new_id": outcome.memory.id,
            }
            add_log_row(conn, "correct", [memory_id, outcome.memory.id], details, now)
            return outcome

        return await self.db.transact(txn)

    async def purge(self, memory_id: str, agent_id: str, now: str) -> None:
        """Erase the content everywhere; leave a content-free tombstone in the audit log."""
        vec_loaded = self.db.vec_loaded

        def txn(conn: Connection) -> None:
            row = require_owned(conn, memory_id, agent_id)
            seq, digest = row["seq"], row["content_hash"]
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            conn.execute("DELETE FROM relations WHERE source_memory_id = ?", (memory_id,))
            drop_links_in(conn, [memory_id], erase=True)
            conn.execute(  # content-free, but still the owner's entries
                "UPDATE lifecycle_log SET details = json_object('agent_id', ?)"
                " WHERE memory_ids LIKE ?",
                (agent_id, f'%"{memory_id}"%'),
            )
            erase_row(conn, seq, digest)
            if vec_loaded:
                drop_vec_row(conn, memory_id)
            add_log_row(conn, "purge", [memory_id], {"agent_id": agent_id}, now)
            # merge FTS segments so no index page still holds the erased tokens
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

        await self.db.transact(txn)
        if not await self.db.checkpoint():
            # a reader's snapshot still needs the old pages: finish when it lets go
            log.info("purge: another connection is reading; the checkpoint will follow it")
            self.db.checkpoint_soon()

    async def update(
        self, memory_id: str, agent_id: str, changes: MemoryChanges, now: str
    ) -> Memory:
        """Change an owner's memory in place (category, importance, layer, shared)."""
        sets, params = change_columns(changes, self.ttl, now)

        def txn(conn: Connection) -> Memory:
            require_owned(conn, memory_id, agent_id)
            if sets:
                conn.execute(
                    f"UPDATE memories SET {', '.join(sets)}, updated_at = ? WHERE id = ?",
                    [*params, now, memory_id],
                )
                details = changes.model_dump(mode="json", exclude_none=True)
                add_log_row(conn, "update", [memory_id], details, now)
            return read_back(conn, memory_id)

        return await self.db.transact(txn)

    async def record_accesses(self, recalls: list[Accesses]) -> None:
        """One transaction for many recalls' access counts, last accesses and access log.

        The log keeps a hash of each query, never its text: what the lifecycle needs (how
        many different queries found a memory) works from the hash, and a purged memory
        leaves no query that mentioned it behind."""
        if not recalls or self.db.read_only:
            return
        counts: dict[str, tuple[int, str]] = {}
        log_rows: list[tuple[str, str, int, str, str]] = []
        for recall in recalls:
            key = query_key(recall.query)
            for memory_id, rank in recall.hits:
                seen, last = counts.get(memory_id, (0, recall.at))
                counts[memory_id] = (seen + 1, max(last, recall.at))
                log_rows.append((memory_id, key, rank, recall.at, memory_id))
        if not log_rows:
            return

        def txn(conn: Connection) -> None:
            conn.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed = ?"
                " WHERE id = ?",
                [(n, last, memory_id) for memory_id, (n, last) in counts.items()],
            )
            conn.executemany(
                "INSERT INTO access_log (memory_id, query_hash, rank, accessed_at)"
                " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
                log_rows,
            )

        await self.db.transact(txn, bookkeeping=True)  # caches of names and links stay

    async def record_access(self, hits: list[tuple[str, int]], query: str, now: str) -> None:
        """One recall's access counts, written now in a transaction of their own."""
        await self.record_accesses([Accesses(hits, query, now)])

    # ---- reads --------------------------------------------------------------------------

    async def get(self, memory_id: str) -> Memory | None:
        row = await self.db.fetchone(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
        )
        return row_to_memory(row) if row is not None else None

    async def ids_starting_with(
        self, prefix: str, agent_id: str, include_shared: bool, limit: int
    ) -> list[str]:
        """Ids of the agent's memories (forgotten ones too) that begin with `prefix`, a lower
        case run of hex digits and dashes; a range on the primary key, not a scan."""
        owner = "(agent_id = ? OR shared = 1)" if include_shared else "agent_id = ?"
        rows = await self.db.fetchall(
            f"SELECT id FROM memories WHERE id >= ? AND id < ? AND {owner} ORDER BY id LIMIT ?",
            (prefix, prefix + "~", agent_id, limit),  # "~" sorts after every hex digit and "-"
        )
        return [str(row["id"]) for row in rows]

    async def ids_ending_with(
        self, suffix: str, agent_id: str, include_shared: bool, limit: int
    ) -> list[str]:
        """Ids of the agent's memories (forgotten ones too) that end with `suffix` (hex digits
        and dashes, so no LIKE wildcard): a scan, for a person typing the end of an id."""
        owner = "(agent_id = ? OR shared = 1)" if include_shared else "agent_id = ?"
        rows = await self.db.fetchall(
            f"SELECT id FROM memories WHERE id LIKE ? AND {owner} ORDER BY id LIMIT ?",
            ("%" + suffix, agent_id, limit),
        )
        return [str(row["id"]) for row in rows]

    async def get_many(
        self, ids: list[str], *, agent_id: str | None = None, reuse: bool = False
    ) -> dict[str, Memory]:
        if not ids:
            return {}
        if reuse and agent_id is None:
            return await self._reused_many(ids)
        owner, params = (f" AND {OF_AGENT}", [*ids, agent_id]) if agent_id else ("", ids)
        rows = await self.db.fetch_small(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({placeholders(ids)}){owner}",
            params,
        )
        build = self.reused.memory if reuse else row_to_memory
        return {str(row[0]): build(row) for row in rows}

    async def _reused_many(self, ids: list[str]) -> dict[str, Memory]:
        """`get_many(ids, reuse=True)`: while no connection has committed since a row was
        read, the memory built from it is its row still, and only the others are read (a
        recall's ~60 rows cost ~0.2 ms of SQL, most of them read by the recall before)."""
        version = self.db.inline_version()
        if version is None:
            return await self._read_reused(ids)
        current = self.reused.current.found(version)
        found = {i: memory for i in ids if (memory := current.get(i)) is not None}
        missing = [i for i in ids if i not in found]
        if not missing:
            return found
        read = await self._read_reused(missing)
        if self.db.inline_version() != version:  # a commit meanwhile: all at one moment
            return await self._read_reused(ids)
        self.reused.current.keep(version, read)
        return found | read

    async def _read_reused(self, ids: list[str]) -> dict[str, Memory]:
        rows = await self.db.fetch_small(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({placeholders(ids)})", ids
        )
        build = self.reused.memory
        return {str(row[0]): build(row) for row in rows}

    def reused_read(self, ids: Sequence[str]) -> Read[dict[str, Memory]]:
        build = self.reused.memory
        return Read(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({placeholders(ids)})",
            list(ids),
            lambda rows: {str(row[0]): build(row) for row in rows},
        )

    async def eligible(self, ids: list[str], filters: SearchFilters) -> set[str]:
        """The ids among `ids` that `filters` allow. While no connection has committed, an
        id's answer under the same filter (its SQL and values) stands, and only ids not
        asked about yet are read (the vector channel asks about ~40 per recall)."""
        if not ids:
            return set()
        where, params = filter_sql(filters)
        version = self.db.inline_version()
        if version is None:
            return await self._allowed(ids, where, params)
        answers = self._eligible.get((where, *params))
        if answers is None:
            if len(self._eligible) >= _FILTERS_KEPT:
                self._eligible.clear()
            answers = self._eligible[(where, *params)] = AtVersion()
        known = answers.found(version)
        unknown = [i for i in ids if i not in known]
        if not unknown:
            return {i for i in ids if known[i]}
        allowed = await self._allowed(unknown, where, params)
        if self.db.inline_version() != version:  # a commit meanwhile: all at one moment
            return await self._allowed(ids, where, params)
        answers.keep(version, {i: i in allowed for i in unknown})
        return {i for i in ids if i in allowed or known.get(i)}

    async def _allowed(self, ids: list[str], where: str, params: list[Any]) -> set[str]:
        rows = await self.db.fetch_small(
            f"SELECT m.id FROM memories m WHERE m.id IN ({placeholders(ids)})"
            f" AND {on_primary_key(where)}",
            [*ids, *params],
        )
        return {str(row[0]) for row in rows}

    async def occurred_within(
        self, filters: SearchFilters, start: str, end: str, limit: int
    ) -> list[str]:
        """Ids of the memories `filters` allow whose own time is in [start, end), the most
        recent first (a time window's candidates): a range on (agent_id, occurred_at)."""
        where, params = filter_sql(filters)
        rows = await self.db.fetchall(
            f"SELECT m.id FROM memories m WHERE m.occurred_at >= ? AND m.occurred_at < ?"
            f" AND {where} ORDER BY m.occurred_at DESC, m.seq DESC LIMIT ?",
            [start, end, *params, limit],
        )
        return [str(row[0]) for row in rows]

    async def list_layer(self, agent_id: str, layer: Layer, now: str, limit: int) -> list[Memory]:
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE agent_id = ? AND layer = ?"
            " AND forgotten_at IS NULL AND superseded_by IS NULL"
            " AND (expires_at IS NULL OR expires_at > ?)"
            " ORDER BY importance DESC, access_count DESC, seq DESC LIMIT ?",
            (agent_id, layer.value, now, limit),
        )
        return [row_to_memory(row) for row in rows]

    async def chain(self, memory: Memory) -> list[Memory]:
        """Older memories this one corrected, and newer ones that corrected it: its own
        agent's only, whatever id `superseded_by` holds."""
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE (superseded_by = ? OR id = ?)"
            " AND agent_id = ? ORDER BY seq",
            (memory.id, memory.superseded_by or "", memory.agent_id),
        )
        return [row_to_memory(row) for row in rows]

    async def access_history(self, memory_id: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT query_hash, rank, accessed_at FROM access_log WHERE memory_id = ?"
            " ORDER BY id DESC LIMIT ?",
            (memory_id, limit),
        )
        return [dict(row) for row in rows]

    async def core_fingerprint(self) -> tuple[Any, ...]:
        """Changes whenever core memory (of any agent) gains, loses or changes a row."""
        row = await self.db.fetchone(
            "SELECT COUNT(*), MAX(updated_at), MAX(seq) FROM memories"
            " WHERE layer = 'core' AND forgotten_at IS NULL AND superseded_by IS NULL"
        )
        return tuple(row) if row is not None else ()

    async def _fts_rows(self) -> int:
        return int(await self.db.scalar("SELECT COUNT(*) FROM memories_fts") or 0)

    async def counts(self, agent_id: str | None = None) -> dict[str, Any]:
        scope, params = ("WHERE agent_id = ?", [agent_id]) if agent_id else ("", [])
        rows = await self.db.fetchall(
            f"SELECT layer, forgotten_at IS NOT NULL AS forgotten, superseded_by IS NOT NULL AS"
            f" superseded, COUNT(*) AS n FROM memories {scope} GROUP BY 1, 2, 3",
            params,
        )
        by_layer = {layer.value: 0 for layer in Layer}
        forgotten = superseded = 0
        for row in rows:
            by_layer[row["layer"]] += row["n"]
            forgotten += row["n"] if row["forgotten"] else 0
            superseded += row["n"] if row["superseded"] else 0
        return {
            "total": sum(by_layer.values()),
            "by_layer": by_layer,
            "forgotten": forgotten,
            "superseded": superseded,
            "fts_rows": await self._fts_rows(),
            "access_log_rows": await self.db.scalar("SELECT COUNT(*) FROM access_log"),
            "lifecycle_log_rows": await self.db.scalar("SELECT COUNT(*) FROM lifecycle_log"),
        }

    async def restore(self, memory_id: str, agent_id: str, layer: Layer, now: str) -> Memory:
        """Undo a forget or a supersede: the memory is live again in `layer` (what superseded
        it stays too); the audit log names what was undone. A live memory is left as it is."""

        def txn(conn: Connection) -> Memory:
            row = conn.execute(
                "SELECT forgotten_at, superseded_by FROM memories WHERE id = ? AND agent_id = ?",
                (memory_id, agent_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"id: no memory {memory_id} for agent {agent_id!r}", field="id")
            forgotten_at, superseded_by = row[0], row[1]
            if forgotten_at is not None or superseded_by is not None:
                conn.execute(
                    "UPDATE memories SET forgotten_at = NULL, superseded_by = NULL, layer = ?,"
                    " expires_at = NULL, updated_at = ? WHERE id = ?",
                    (layer.value, now, memory_id),
                )
                details = {
                    "layer": layer.value,
                    "was_forgotten_at": forgotten_at,
                    "was_superseded_by": superseded_by,
                }
                # the entry is this agent's: it names the memory that superseded it only when
                # that memory is this agent's too (the log is read by the ids it names)
                ids = [memory_id, *_owned(conn, [superseded_by] if superseded_by else [], agent_id)]
                add_log_row(conn, "restore", ids, details, now)
            restored = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            return row_to_memory(restored)

        return await self.db.transact(txn)


def _owned(conn: Connection, ids: list[str], agent_id: str) -> list[str]:
    """Those of `ids` that name a memory of `agent_id`, in their order."""
    if not ids:
        return []
    rows = conn.execute(
        f"SELECT id FROM memories WHERE id IN ({placeholders(ids)}) AND {OF_AGENT}",
        [*ids, agent_id],
    ).fetchall()
    found = {str(row[0]) for row in rows}
    return [i for i in ids if i in found]
