"""The store's declared interfaces: what the SQLite store (`store/`) and the PostgreSQL store
(`store/postgres/`) both implement, and all that the layers above may rely on.

- `DatabaseHandle`: one open database (`Database` on a SQLite file, `PgDatabase` on a
  PostgreSQL pool): reads that return rows, and `transact`, the one way to write.
- `Connection` and `Cursor`: what a write transaction's function is given (sqlite3's own
  connection, or `SyncPgConnection` on PostgreSQL). Statements are written in SQLite's SQL
  with `?` placeholders; the PostgreSQL connection translates the few phrases that differ.
- `MemoryStorage`, `TextStorage`, `VectorStorage`, `LifecycleStorage`, `ExportStorage`,
  `TokenStorage`, `EntityStorage`: the stores the engine and the service use (`MemoryStore`, `VectorStore` ... on SQLite; the
  `Pg...` subclasses override what PostgreSQL does its own way).

mypy holds every class to its interface: `store/conformance.py` assigns each backend's classes
to these protocols, so a method that drifts on one backend fails `mypy cortex_mcp`. The tests
that take `backend_settings` run the same behaviour on both databases.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar

if TYPE_CHECKING:
    import numpy as np

    from cortex_mcp.models import (
        AliasOrigin,
        Entity,
        EntityKind,
        EntityLinks,
        EntityMatch,
        Layer,
        LifecycleAction,
        LinkPlan,
        LinkReport,
        LinkRole,
        Memory,
        MemoryChanges,
        NewMemory,
        SearchFilters,
    )
    from cortex_mcp.store.imports import ImportCounts, InsertFresh
    from cortex_mcp.store.lifecycle import RunRecord
    from cortex_mcp.store.lifecycle_phases import PhaseResult
    from cortex_mcp.store.memories import Accesses, LayerTtl, WriteOutcome
    from cortex_mcp.store.tokens import TokenRow
    from cortex_mcp.store.vectors import PendingEmbedding

T = TypeVar("T")
U = TypeVar("U")
Row = Any  # a result row, readable by position and by column name (sqlite3.Row or postgres.Row)


@dataclass(frozen=True)
class Read(Generic[T]):
    """One statement and what its rows mean, so that reads which do not depend on each other
    can go to a reader in one trip (`DatabaseHandle.read_both`)."""

    sql: str
    params: Sequence[Any]
    decode: Callable[[list[Row]], T]


# whether a write changed any entity's name or alias: known before it runs, or from its result
Names = bool | Callable[[T], bool]


def changed_names(names: Names[T], result: T) -> bool:
    """What `names` says of a committed transaction's `result`."""
    return names(result) if callable(names) else names


class Cursor(Protocol):
    """The result of one statement inside a write transaction."""

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> int | None:
        """SQLite's rowid of the row an INSERT made (PostgreSQL's stores say RETURNING)."""
        ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """A connection inside one write transaction: statements run synchronously, on the
    thread the database gives the transaction, and nothing else may happen there."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Cursor: ...


WriteFn = Callable[[Connection], T]


def in_callers_context(fn: WriteFn[T]) -> WriteFn[T]:
    """`fn` to run on a writer's thread in the calling task's context: what it reads of the
    request (models.ACTING: who acts) is the request's, whichever batch it joins."""
    context = contextvars.copy_context()
    return lambda conn: context.run(fn, conn)


class DatabaseHandle(Protocol):
    """One database, opened with `async with`. Reads go to a reader connection; every write
    is one function run as one transaction (`transact`), committed when it returns and
    rolled back when it raises."""

    @property
    def path(self) -> Path | str:
        """What status, health and logs show (a PostgreSQL URL without its password)."""
        ...

    @property
    def vec_loaded(self) -> bool: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def is_open(self) -> bool: ...

    @property
    def commits(self) -> int:
        """This process's committed write transactions, for cheap change polling."""
        ...

    @property
    def changes(self) -> int:
        """`commits` but the bookkeeping ones (recalls' access counts)."""
        ...

    @property
    def names_changes(self) -> int:
        """`changes` but those that said they changed no entity's name or alias (`transact`'s
        `names`)."""
        ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...

    async def fetch_small(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A read of a few rows (a few ids, a small LIMIT), read the cheapest way the handle
        has (SQLite: on the event loop's own connection, no trip to a thread)."""
        ...

    def inline_version(self) -> int | None:
        """A value that stays the same while no connection commits, read at once without a
        trip (SQLite: the event loop's connection's data_version); None when there is none,
        or it cannot be read now. Small reads a store keeps while it stands still are current."""
        ...

    async def read_both(self, first: Read[T], second: Read[U]) -> tuple[T, U]:
        """Two small independent reads (each its own statement) in one trip to one reader,
        or none (SQLite: both on the event loop's own connection)."""
        ...

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    async def get_meta(self, key: str) -> str | None: ...

    async def transact(
        self, fn: WriteFn[T], *, bookkeeping: bool = False, names: Names[T] = True
    ) -> T:
        """Run `fn(connection)` as one transaction. `fn` must do nothing but SQL on the
        connection it is given: PostgreSQL may run it again after a serialization failure.
        `bookkeeping`: it writes only access counts (not counted in `changes`). `names`:
        whether it may change an entity's name or alias (counted in `names_changes`), or a
        function of its result that says (a transaction that says nothing may)."""
        ...

    async def schema_version(self) -> int: ...

    async def data_version(self) -> int:
        """Changes when another process commits: in-process caches refresh on it."""
        ...

    async def checkpoint(self) -> bool: ...

    def checkpoint_soon(self) -> None: ...

    async def integrity_check(self) -> str: ...


class TextStorage(Protocol):
    """Full-text search over the memories (FTS5 on SQLite, a tsvector column on PostgreSQL)."""

    async def term_counts(self, phrases: list[str], cap: int) -> tuple[int, dict[str, int]]: ...

    async def own_rows(self, filters: SearchFilters, cap: int) -> int: ...

    async def own_text_search(
        self, match: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]: ...

    async def text_search(
        self,
        match: str,
        filters: SearchFilters,
        limit: int,
        *,
        newest: int | None = None,
        rest: str = "",
    ) -> list[tuple[str, float]]: ...

    async def like_search(
        self, patterns: list[str], filters: SearchFilters, limit: int, *, newest: int | None = None
    ) -> list[str]: ...


class MemoryStorage(TextStorage, Protocol):
    """The memories: each write one transaction, each read a model (never a cursor)."""

    @property
    def db(self) -> DatabaseHandle: ...

    @property
    def ttl(self) -> LayerTtl: ...

    async def remember(self, new: NewMemory, now: str) -> WriteOutcome: ...

    def remember_in(self, conn: Connection, new: NewMemory, now: str) -> WriteOutcome:
        """`remember` inside a transaction another store method holds."""
        ...

    def reindex_in(self, conn: Connection, seq: int, content: str) -> None:
        """A memory's text index for its new content, inside the caller's transaction."""
        ...

    async def forget(
        self, memory_id: str, agent_id: str, reason: str | None, now: str
    ) -> Memory: ...

    async def correct(
        self, memory_id: str, correction: NewMemory, reason: str | None, now: str
    ) -> WriteOutcome: ...

    async def purge(self, memory_id: str, agent_id: str, now: str) -> None: ...

    async def restore(self, memory_id: str, agent_id: str, layer: Layer, now: str) -> Memory:
        """Undo a forget or a supersede (audited); a live memory is left as it is."""
        ...

    async def update(
        self, memory_id: str, agent_id: str, changes: MemoryChanges, now: str
    ) -> Memory: ...

    async def record_accesses(self, recalls: list[Accesses]) -> None: ...

    async def record_access(self, hits: list[tuple[str, int]], query: str, now: str) -> None: ...

    async def get(self, memory_id: str) -> Memory | None: ...

    async def ids_starting_with(
        self, prefix: str, agent_id: str, include_shared: bool, limit: int
    ) -> list[str]: ...

    async def ids_ending_with(
        self, suffix: str, agent_id: str, include_shared: bool, limit: int
    ) -> list[str]: ...

    async def get_many(
        self, ids: list[str], *, agent_id: str | None = None, reuse: bool = False
    ) -> dict[str, Memory]:
        """The memories of `ids` that exist; with `agent_id`, only that agent's (ids read from
        a memory's metadata or the log are read this way: they may name anyone's). `reuse`
        (searches): a row read before with the same values gives the memory built then, shared
        with every other reader of it, which must not change it."""
        ...

    def reused_read(self, ids: Sequence[str]) -> Read[dict[str, Memory]]:
        """`get_many(ids, reuse=True)` as a read to run beside another (ids not empty)."""
        ...

    async def eligible(self, ids: list[str], filters: SearchFilters) -> set[str]: ...

    async def occurred_within(
        self, filters: SearchFilters, start: str, end: str, limit: int
    ) -> list[str]:
        """Ids of live memories `filters` allow with `start <= occurred_at < end`, the most
        recent `occurred_at` first, at most `limit`."""
        ...

    async def list_layer(
        self, agent_id: str, layer: Layer, now: str, limit: int
    ) -> list[Memory]: ...

    async def chain(self, memory: Memory) -> list[Memory]: ...

    async def access_history(self, memory_id: str, limit: int = 20) -> list[dict[str, Any]]: ...

    async def core_fingerprint(self) -> tuple[Any, ...]: ...

    async def counts(self, agent_id: str | None = None) -> dict[str, Any]: ...


class VectorStorage(Protocol):
    """Embeddings per memory and model (the source of truth for every vector index), the
    embedding cache and queue, and the database's own nearest-neighbour search."""

    @property
    def db(self) -> DatabaseHandle: ...

    async def cached(self, hashes: list[str], model: str) -> dict[str, bytes]: ...

    async def save(
        self, items: list[tuple[PendingEmbedding, bytes]], model: str, dim: int, now: str
    ) -> int: ...

    async def ensure_vec_index(self, model: str, dim: int) -> bool: ...

    async def pending(
        self, model: str, limit: int, skip: Collection[str] = ()
    ) -> list[PendingEmbedding]: ...

    async def pending_by_ids(self, model: str, memory_ids: list[str]) -> list[PendingEmbedding]: ...

    async def requeue_other_models(self, model: str) -> int: ...

    async def queued(self) -> int: ...

    async def shape(self, model: str, dim: int) -> tuple[int, int]: ...

    async def watermark(self) -> tuple[int, int]: ...

    async def added_since(
        self, model: str, dim: int, after_rowid: int
    ) -> list[tuple[int, str, str, bytes]]: ...

    def agent_vectors(
        self, agent_id: str, model: str, dim: int, *, versioned: bool = False, window: int = ...
    ) -> AsyncIterator[tuple[list[str], list[int], np.ndarray]]: ...

    async def agent_size(self, agent_id: str) -> int: ...

    async def agent_versions(self, agent_id: str, model: str, dim: int) -> dict[str, int]: ...

    async def agent_vector_ids(self, agent_id: str, model: str, dim: int) -> set[str]: ...

    async def vectors_of(self, ids: list[str], model: str, dim: int) -> dict[str, bytes]: ...

    async def shared_vectors(self, agent_id: str, model: str, dim: int) -> dict[str, bytes]: ...

    async def knn(self, query: bytes, k: int) -> list[tuple[str, float]]: ...

    async def counts(self) -> dict[str, int]: ...

    async def cache_size(self) -> int: ...


class LifecycleStorage(Protocol):
    """The lifecycle's reads, its runs (a stored plan, resumed after a crash) and each
    phase's writes as one transaction."""

    @property
    def db(self) -> DatabaseHandle: ...

    @property
    def memories(self) -> MemoryStorage: ...

    async def snapshot(
        self, agent_id: str | None, *, archive_before: str | None = None
    ) -> list[Memory]: ...

    async def vectors(self, ids: list[str], model: str) -> dict[str, bytes]: ...

    async def ranked_members(
        self, agent_id: str, ids: list[str], limit: int
    ) -> tuple[int, list[Memory]]: ...

    async def agents(self) -> list[str]: ...

    async def unfinished_run(self, scope: str) -> RunRecord | None: ...

    async def last_success(self) -> str | None: ...

    async def recent_runs(self, limit: int = 20) -> list[dict[str, Any]]: ...

    async def log(self, limit: int = 100, agent_id: str | None = None) -> list[dict[str, Any]]: ...

    async def start_run(
        self, scope: str, run_at: str, plan: list[LifecycleAction], started_at: str
    ) -> int: ...

    async def finish_run(self, run_id: int, report: dict[str, Any], finished_at: str) -> None: ...

    async def apply_phase(
        self,
        run_id: int,
        phase_index: int,
        actions: list[LifecycleAction],
        now: str,
        *,
        new_memories: dict[str, NewMemory] | None = None,
        decay_scores: dict[str, float] | None = None,
        delete_compressed: bool = False,
    ) -> PhaseResult: ...

    async def mark_phase_done(self, run_id: int, phase_index: int) -> None: ...

    async def summaries_citing(self, memory_id: str, agent_id: str) -> list[Memory]: ...

    async def rewrite_summary(
        self, summary_id: str, content: str, metadata: dict[str, Any], now: str
    ) -> None: ...

    async def optimize_text_index(self) -> None: ...


class ExportStorage(Protocol):
    """Whole-store reads for export (in pages), imports as one transaction per batch, and
    the SQLite file copy (`backup`, refused on PostgreSQL)."""

    @property
    def db(self) -> DatabaseHandle: ...

    async def memories(self, agent_id: str | None, *, live_only: bool = False) -> list[Memory]: ...

    async def count_memories(self, agent_id: str | None) -> int: ...

    def memory_pages(
        self, agent_id: str | None, size: int
    ) -> AsyncIterator[list[dict[str, Any]]]: ...

    def relation_pages(
        self, agent_id: str | None, size: int
    ) -> AsyncIterator[list[dict[str, Any]]]: ...

    def log_pages(self, agent_id: str | None, size: int) -> AsyncIterator[list[dict[str, Any]]]: ...

    def entity_pages(
        self, agent_id: str | None, size: int
    ) -> AsyncIterator[list[dict[str, Any]]]: ...

    async def import_entities(
        self, agent_id: str, entities: list[dict[str, Any]], now: str
    ) -> int: ...

    async def list_memories(
        self,
        agent_id: str,
        layer: str | None,
        category: str | None,
        limit: int,
        offset: int = 0,
        include_shared: bool = False,
        forgotten: bool = False,
        *,
        since: str | None = None,
        until: str | None = None,
        by_occurred: bool = False,
    ) -> list[Memory]: ...

    async def relations(self, agent_id: str | None) -> list[dict[str, Any]]: ...

    async def owners(self, ids: list[str]) -> dict[str, str]: ...

    async def import_batch(
        self,
        agent_id: str,
        memories: list[dict[str, Any]],
        relations: list[dict[str, Any]],
        logs: list[dict[str, Any]],
        *,
        log_agents: Collection[str] | None = None,
    ) -> ImportCounts: ...

    def fresh_memories_insert(self) -> InsertFresh | None: ...

    def roomy_cache(self) -> AbstractAsyncContextManager[None]: ...

    async def backup(self, target: Path) -> None: ...

    async def check_copy(self, path: Path) -> tuple[str, int]:
        """integrity_check of a copy `backup` wrote, and how many memories it holds."""
        ...


class TokenStorage(Protocol):
    """Agent tokens and dashboard sessions: salts and keyed hashes, never a token."""

    async def add(self, token: TokenRow) -> TokenRow: ...

    async def get(self, token_id: str) -> TokenRow | None: ...

    async def agent_tokens(self, *, include_revoked: bool = False) -> list[TokenRow]: ...

    async def names(self, prefix: str) -> set[str]: ...

    async def revoke(self, id_or_name: str, now: str) -> TokenRow: ...

    async def end_session(self, session_id: str, now: str) -> bool: ...

    async def touch(self, token_ids: list[str], now: str) -> None: ...

    async def forget_ended_sessions(self, before: str) -> int: ...


class EntityStorage(Protocol):
    """Entities per agent, their aliases, the links from memories to them and the verbs that
    mend them (each logged, each undone by `undo`). Keys are `tokenize.normalize_name`'d."""

    @property
    def db(self) -> DatabaseHandle: ...

    async def find_entities(self, agent_id: str, keys: Sequence[str]) -> list[EntityMatch]:
        """The entities each key names, by name or by alias (one match per entity and key)."""
        ...

    async def entity_keys(self, agent_id: str, limit: int) -> list[EntityMatch] | None:
        """Every key the agent's entities are found by (`find_entities`' matches for all of
        them: names, then aliases), or None when there are more than `limit`."""
        ...

    async def linked_memories(
        self, agent_id: str, entity_ids: Sequence[str], limit: int
    ) -> list[tuple[str, str, LinkRole]]:
        """(memory id, entity id, role) of the agent's live memories linked to the entities,
        speakers and subjects first, then the most recent `occurred_at`."""
        ...

    async def linked_moments(
        self, agent_id: str, entity_ids: Sequence[str], limit: int
    ) -> list[tuple[str, str, LinkRole, str]]:
        """`linked_memories` with each memory's `occurred_at`."""
        ...

    async def timeline_around(
        self, agent_id: str, anchors: Sequence[tuple[str, str]], span: int
    ) -> dict[str, tuple[list[str], list[str]]]:
        """`turns_around` in order: memory id -> (those before it, those after it), each side
        the nearest first."""
        ...

    def timeline_read(
        self, agent_id: str, anchors: Sequence[tuple[str, str]], span: int
    ) -> Read[dict[str, tuple[list[str], list[str]]]]:
        """`timeline_around` as a read to run beside another (anchors not empty, span > 0)."""
        ...

    async def links_and_kinds(
        self, agent_id: str, entity_ids: Sequence[str], limit: int
    ) -> dict[str, EntityLinks]:
        """Per entity: `linked_moments` of it alone and `kinds_beside` it, in one read."""
        ...

    async def turns_around(
        self, agent_id: str, anchors: Sequence[tuple[str, str]], span: int
    ) -> dict[str, set[str]]:
        """Memory id -> the `span` live memories of the agent right before and right after it
        in time (`occurred_at`, then id), for each (memory id, its `occurred_at`)."""
        ...

    async def kinds_beside(
        self, agent_id: str, entity_id: str, limit: int
    ) -> dict[str, set[EntityKind]]:
        """Memory id -> the kinds of the other entities linked to each live memory linked to
        this one."""
        ...

    async def entities_of(self, agent_id: str, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """Memory id -> the names of the entities it is linked to, the strongest role first."""
        ...

    def names_read(self, agent_id: str, memory_ids: Sequence[str]) -> Read[dict[str, list[str]]]:
        """`entities_of` as a read to run beside another (memory_ids not empty)."""
        ...

    async def get_entity(self, agent_id: str, entity_id: str) -> Entity | None: ...

    async def entity_named(self, agent_id: str, name: str) -> list[Entity]: ...

    async def list_entities(
        self, agent_id: str, prefix: str, limit: int, offset: int
    ) -> tuple[list[Entity], int]: ...

    async def memory_ids_of(self, agent_id: str, entity_id: str, limit: int) -> list[str]: ...

    async def unresolved(self, agent_id: str, limit: int) -> list[dict[str, Any]]: ...

    async def log(self, agent_id: str, limit: int) -> list[dict[str, Any]]: ...

    async def count(self, agent_id: str | None = None) -> int: ...

    async def link(
        self, agent_id: str, plans: Sequence[LinkPlan], now: str
    ) -> list[LinkReport]: ...

    def link_in(
        self, conn: Connection, agent_id: str, plans: Sequence[LinkPlan], now: str
    ) -> list[LinkReport]: ...

    async def add_alias(
        self, agent_id: str, entity_id: str, alias: str, origin: AliasOrigin, now: str
    ) -> dict[str, Any]: ...

    async def remove_alias(
        self, agent_id: str, entity_id: str, alias: str, now: str
    ) -> dict[str, Any]: ...

    async def rename(
        self, agent_id: str, entity_id: str, name: str, now: str
    ) -> dict[str, Any]: ...

    async def merge(
        self, agent_id: str, source_id: str, into_id: str, now: str, *, dry_run: bool
    ) -> dict[str, Any]: ...

    async def undo(self, agent_id: str, log_id: int, now: str) -> dict[str, Any]: ...
