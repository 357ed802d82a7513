"""The database handle: one aiosqlite connection, migrations, and the write-transaction rule."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from cortex_mcp.errors import CortexError
from cortex_mcp.store.connection import (
    BUSY_TIMEOUT_MS,
    integrity_error,
    is_busy,
    open_connection,
    operational_error,
)
from cortex_mcp.store.files import (
    FileAccess,
    check_database,
    connect_uri,
    read_only_error,
    storage_fault,
    warn_if_exposed,
)
from cortex_mcp.store.handle import BaseHandle
from cortex_mcp.store.interfaces import Connection, Names, Read, WriteFn, in_callers_context
from cortex_mcp.store.schema import MIGRATION_NOTES, MIGRATIONS, SCHEMA_VERSION
from cortex_mcp.store.writer import WriteQueue, on_thread

log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")
Row = Any  # the driver's Row type (stdlib or pysqlite3)

_READERS = 2
_CHECKPOINT_WAIT_MS = 100  # a checkpoint never holds the writer long; it retries instead
_CHECKPOINT_RETRY_MAX_S = 1.0


class Database(BaseHandle):
    """Owns connections to one WAL file: a writer, and readers so that searches never queue
    behind a write (such as the access counts a recall leaves behind) and a recall's text and
    vector channels can read at the same time. Every write is one BEGIN IMMEDIATE transaction,
    serialised within the process, waiting (with short polls) while another process holds the
    lock: `transact()` runs a synchronous function as the whole transaction in one trip to the
    writer's thread. `readers=0` (a command that reads one thing at a time, writing nothing
    after the migrations): reads go to the writer's connection, the one opened.

    With readers, one more connection is the event loop's own: small reads (`fetch_small`: a
    few ids, a small LIMIT) run on it where they are asked, with no trip to a thread. A trip is
    two thread hand-overs, each waking a thread and handing over the interpreter lock, which on
    a busy machine costs a small read more than its SQL. That connection never waits for a lock
    (busy_timeout 0: the loop must not stall); a read it cannot start at once goes to a
    reader, which waits as readers do."""

    def __init__(self, path: Path, *, allow_vec: bool = True, readers: int = _READERS) -> None:
        self.path = path
        self._allow_vec = allow_vec
        self._reader_count = readers
        self._conn: aiosqlite.Connection | None = None
        self._readers: list[aiosqlite.Connection] = []
        self._busy: list[int] = []
        self._on_loop: aiosqlite.Connection | None = None  # its raw connection is used inline
        self._write_lock = asyncio.Lock()
        self._queue = WriteQueue(lambda: self.conn, self._write_lock)
        self._checkpointing: asyncio.Task[None] | None = None
        self.vec_loaded = False
        self.access = FileAccess("rw", 0)

    @property
    def commits(self) -> int:
        """This process's committed write transactions, for cheap change polling."""
        return self._queue.committed

    @property
    def changes(self) -> int:
        """`commits` but the bookkeeping ones (recalls' access counts): what a cache of names,
        links or text follows."""
        return self._queue.changed

    @property
    def names_changes(self) -> int:
        """`changes` but those that changed no entity's name or alias: what the entity
        stage's names map follows."""
        return self._queue.names_changed

    @property
    def _writer_busy_ms(self) -> int:
        """How long the writer's connection waits for a lock itself: not at all (BEGIN
        IMMEDIATE polls), unless it also serves the reads, which wait as a reader's would."""
        return 0 if self._reader_count else BUSY_TIMEOUT_MS

    @property
    def read_only(self) -> bool:
        return not self.access.writable

    async def open(self) -> None:
        """Check the file (StorageError with one line if it cannot be used), then connect."""
        self.access = await asyncio.to_thread(check_database, self.path)
        warn_if_exposed(self.path, self.access)
        try:
            self._conn = await self._connect()
            # The version check reads while another process may be creating the same file:
            # it keeps the connection's busy timeout; afterwards BEGIN IMMEDIATE waits itself.
            migrated = not self.read_only and await self._migrate()
            if not self.read_only:
                await self._conn.execute(f"PRAGMA busy_timeout = {self._writer_busy_ms}")
            if migrated:
                await self.checkpoint()  # a migration may have blanked text: no old copy
            for _ in range(self._reader_count):
                self._readers.append(await self._connect())
                self._busy.append(0)
            if self._reader_count:
                self._on_loop = await self._connect()
                await self._on_loop.execute("PRAGMA busy_timeout = 0")
        except Exception as exc:
            await self.close()
            fault = storage_fault(exc, self.path)
            if fault is None:
                raise
            raise fault from exc

    async def _connect(self) -> aiosqlite.Connection:
        target, is_uri = connect_uri(self.path, self.access.mode)
        conn, self.vec_loaded = open_connection(
            self.path,
            allow_vec=self._allow_vec,
            read_only=self.read_only,
            uri=target if is_uri else None,
        )
        return await conn

    async def close(self) -> None:
        if self._checkpointing is not None:
            pending = not self._checkpointing.done()
            self._checkpointing.cancel()
            await asyncio.gather(self._checkpointing, return_exceptions=True)
            self._checkpointing = None
            if pending and not await self._try_checkpoint():
                log.warning(
                    "a purged memory may remain in %s-wal until the next checkpoint", self.path
                )
        await self._queue.wait_idle()
        for conn in [*self._readers, self._on_loop, self._conn]:
            if conn is not None:
                await conn.close()
        self._conn = self._on_loop = None
        self._readers, self._busy = [], []

    @property
    def is_open(self) -> bool:
        return self._conn is not None

    @property
    def conn(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise RuntimeError("database is not open")
        return self._conn

    async def _migrate(self) -> bool:
        """Apply the migrations this file lacks; True when any ran."""

        def apply(conn: Connection) -> int:
            row = conn.execute("PRAGMA user_version").fetchone()
            version = int(row[0]) if row else 0
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")
                if version > 0:
                    _log_migration_note(conn, number + 1)
            _log_schema(self.path, version)
            return version

        if await self._user_version(self.conn) < SCHEMA_VERSION:
            return await self.transact(apply) < SCHEMA_VERSION
        return False

    @staticmethod
    async def _user_version(conn: aiosqlite.Connection) -> int:
        async with conn.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def schema_version(self) -> int:
        return await self._user_version(self.conn)

    async def transact(
        self, fn: WriteFn[T], *, bookkeeping: bool = False, names: Names[T] = True
    ) -> T:
        """Run `fn(connection)` as one transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on
        any error) in one trip to the writer's thread. `fn` is synchronous: it runs on that
        thread and must do nothing but SQL on the connection it is given.

        A storage failure (disk full, read-only, corrupt, locked too long) becomes a
        StorageError whose message says what happened and that nothing was changed.
        `bookkeeping`: it writes only access counts (`changes` does not count it). `names`:
        whether it may change an entity's name or alias, or a function of its result that
        says (`names_changes` counts those that did)."""
        return await self._guarded(
            lambda: self._queue.submit(in_callers_context(fn), bookkeeping=bookkeeping, names=names)
        )

    async def _guarded(self, work: Callable[[], Awaitable[T]]) -> T:
        if self.read_only:
            raise read_only_error(self.path, self.access.read_only_reason)
        try:
            return await work()
        except (CortexError, integrity_error()):
            raise
        except Exception as exc:
            fault = storage_fault(exc, self.path)
            if fault is None:
                raise
            log.warning("%s", fault.message)
            raise fault from exc

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # One trip to the connection's thread (execute, fetch and close as a cursor
        # context would each take their own, and each trip costs a loop wake-up).
        return list(await self._on_reader(lambda conn: conn.execute_fetchall(sql, params)))

    async def fetch_each(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Row]]:
        """The rows of each statement, all read in one trip to one reader's thread (a trip
        is two thread hand-overs, each waking a thread: much of a small read's CPU)."""

        def each(raw: Any) -> list[list[Row]]:
            return [raw.execute(sql, params).fetchall() for sql, params in statements]

        return await self._on_reader(lambda conn: on_thread(conn, each))

    async def fetch_small(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows of a small read (a few ids, a small LIMIT: tenths of a millisecond of
        SQL at most), read on the event loop's own connection, or by a reader when that one
        would have to wait for a lock."""
        if self._on_loop is None:
            return await self.fetchall(sql, params)
        try:
            return list(self._on_loop._conn.execute(sql, params).fetchall())
        except operational_error() as exc:
            if is_busy(exc):  # a lock held elsewhere: a reader waits for it, the loop not
                return await self.fetchall(sql, params)
            fault = storage_fault(exc, self.path)
            if fault is None:
                raise
            raise fault from exc

    def inline_version(self) -> int | None:
        """The event loop's own connection's `PRAGMA data_version`, read there and then (~5
        us): it changes whenever any other connection commits (this process's writer, another
        process), and that connection writes nothing, so what small reads found while it
        stood still is what they would find again. None without that connection, or when it
        cannot read at once (a lock held elsewhere)."""
        if self._on_loop is None:
            return None
        try:
            rows = self._on_loop._conn.execute("PRAGMA data_version").fetchall()
        except operational_error():
            return None
        return int(rows[0][0])

    async def read_both(self, first: Read[T], second: Read[U]) -> tuple[T, U]:
        """Two small reads, each on the event loop's connection (`fetch_small`)."""
        if self._on_loop is None:
            return await super().read_both(first, second)
        one = await self.fetch_small(first.sql, first.params)
        two = await self.fetch_small(second.sql, second.params)
        return first.decode(one), second.decode(two)

    async def _on_reader(self, work: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """`work` on the least busy reader (the writer's connection when there are none), a
        storage failure turned into its one-line fault."""
        if not self._readers:
            return await self._faults_named(work(self.conn))
        index = self._busy.index(min(self._busy))
        self._busy[index] += 1
        try:
            return await self._faults_named(work(self._readers[index]))
        finally:
            self._busy[index] -= 1

    async def _faults_named(self, work: Awaitable[T]) -> T:
        try:
            return await work
        except Exception as exc:
            fault = storage_fault(exc, self.path)
            if fault is None:
                raise
            raise fault from exc

    async def data_version(self) -> int:
        """Changes whenever another process commits: the signal that in-process caches must
        refresh. Read on the writer, so it is comparable call to call (the value is per
        connection); our own writes are signalled by the code that makes them."""
        rows = list(await self.conn.execute_fetchall("PRAGMA data_version"))
        return int(rows[0][0]) if rows else 0

    async def checkpoint(self) -> bool:
        """Copy the WAL into the main file and truncate it; True when it is empty now.

        Another connection's open read transaction keeps frames the checkpoint cannot copy:
        then this returns False at once (waiting at most 100 ms) instead of holding up
        writes, and `checkpoint_soon()` finishes the job when the reader lets go."""
        if self.read_only or self._conn is None:
            return True
        async with self._write_lock:
            await self.conn.execute(f"PRAGMA busy_timeout = {_CHECKPOINT_WAIT_MS}")
            try:
                async with self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cursor:
                    row = await cursor.fetchone()
            except operational_error() as exc:  # busy or locked: retried later
                log.debug("checkpoint deferred: %s", exc)
                return False
            finally:
                await self.conn.execute(f"PRAGMA busy_timeout = {self._writer_busy_ms}")
        return row is not None and int(row[0]) == 0

    def checkpoint_soon(self) -> None:
        """Retry the TRUNCATE checkpoint in the background until it completes (or close)."""
        if self._checkpointing is None or self._checkpointing.done():
            self._checkpointing = asyncio.create_task(self._checkpoint_until_done())

    async def _try_checkpoint(self) -> bool:
        try:
            return await self.checkpoint()
        except Exception as exc:  # closing must go on
            log.warning("checkpoint failed: %s", exc)
            return False

    async def _checkpoint_until_done(self) -> None:
        delay = 0.02
        while self._conn is not None:
            if await self._try_checkpoint():
                log.info("deferred checkpoint done: the WAL holds no erased content")
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, _CHECKPOINT_RETRY_MAX_S)

    async def integrity_check(self) -> str:
        return str(await self.scalar("PRAGMA integrity_check"))


def _log_schema(path: Path, version: int) -> None:
    """One line for the whole schema change: a person starting a server reads one line
    under its banner, not one per migration."""
    if version == 0:
        log.info("created the database %s (schema version %d)", path, SCHEMA_VERSION)
    else:
        log.info("upgraded %s from schema version %d to %d", path, version, SCHEMA_VERSION)


def _log_migration_note(conn: Connection, number: int) -> None:
    """What a migration changed in data already stored, said at WARNING (a new database
    has none to change)."""
    note = MIGRATION_NOTES.get(number)
    if note is None:
        return
    row = conn.execute("SELECT COUNT(*) FROM memories").fetchone()
    log.warning("applied migration %d: " + note, number, int(row[0]) if row else 0)


def set_meta(conn: Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def placeholders(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)


# The agent a statement given ids checks on each row it finds by id. The unary plus keeps
# SQLite's planner (without statistics) from reading along an (agent_id, ...) index instead:
# every memory of the agent for a few ids.
OF_AGENT = "+agent_id = ?"
