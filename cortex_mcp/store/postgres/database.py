"""The PostgreSQL handle: a bounded connection pool, numbered migrations, and the write rule.

It implements `interfaces.DatabaseHandle` as the SQLite `Database` does, so a store whose SQL
is portable runs unchanged: statements keep SQLite's `?` placeholders and are translated once
(`connection.translate`).

Every write is one SERIALIZABLE transaction, retried when PostgreSQL reports a serialization
failure or a deadlock: several processes then behave as if their writes ran one at a time,
which is what the stores' read-then-write transactions were written for (SQLite's single
writer lock gave them that).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from cortex_mcp.errors import CortexError, StorageError
from cortex_mcp.store.handle import BaseHandle
from cortex_mcp.store.interfaces import Names, WriteFn, changed_names, in_callers_context
from cortex_mcp.store.postgres.connection import (
    CancellableWork,
    Row,
    SyncPgConnection,
    row_factory,
    translate,
)
from cortex_mcp.store.postgres.driver import import_driver
from cortex_mcp.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)

T = TypeVar("T")

_RETRIES = 30
_MIGRATION_LOCK = 0x636F7274  # pg_advisory_xact_lock key: one migrating process at a time


def redact_url(url: str) -> str:
    """The URL without its password, for messages and `stats`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class PgDatabase(BaseHandle):
    """At most `pool_max` connections to one PostgreSQL database (psycopg's pool), used from
    worker threads: the stores' write transactions are synchronous functions (one trip each,
    as on SQLite), and a connection is only taken when a thread is there to use it."""

    vec_loaded = True  # pgvector is required: the first migration creates the extension
    read_only = False

    def __init__(self, url: str, *, pool_max: int = 10) -> None:
        self.url = url
        self.path = redact_url(url)  # what status, health and logs show
        self.pool_max = pool_max
        self.commits = 0
        self.changes = 0  # commits but the bookkeeping ones (access counts)
        self.names_changes = 0  # changes but those that changed no entity's name or alias
        self._pool: Any = None
        self._slots = asyncio.Semaphore(pool_max)
        self._threads = ThreadPoolExecutor(pool_max + 1, thread_name_prefix="cortex-pg")

    # ---- opening ----------------------------------------------------------------------

    async def open(self) -> None:
        psycopg, pool_module = import_driver()
        try:
            await self.on_thread(self._migrate)
            self._pool = pool_module.ConnectionPool(
                self.url,
                min_size=1,
                max_size=self.pool_max,
                kwargs={"autocommit": True, "row_factory": row_factory, "prepare_threshold": None},
                configure=_configure,
                open=False,
            )
            await self.on_thread(lambda: self._pool.open(wait=True, timeout=30))
        except psycopg.Error as exc:
            await self.close()
            raise StorageError(
                f"PostgreSQL at {self.path} cannot be used: {_first_line(exc)};"
                " check CORTEX_DATABASE_URL and that the server is running"
            ) from exc

    def _migrate(self) -> None:
        psycopg, _ = import_driver()
        with psycopg.connect(self.url, autocommit=True) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS cortex_schema (version INTEGER NOT NULL,"
                " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM cortex_schema").fetchone()
            version = int(row[0]) if row else 0
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
                conn.execute("INSERT INTO cortex_schema (version) VALUES (%s)", (number + 1,))
            # one line for the whole change, not one per migration
            if version == 0:
                log.info("created the PostgreSQL schema (version %d)", SCHEMA_VERSION)
            elif version < SCHEMA_VERSION:
                log.info(
                    "upgraded the PostgreSQL schema from version %d to %d", version, SCHEMA_VERSION
                )

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await self.on_thread(pool.close)
        self._threads.shutdown(wait=False)

    @property
    def is_open(self) -> bool:
        return self._pool is not None

    @property
    def pool(self) -> Any:
        if self._pool is None:
            raise RuntimeError("database is not open")
        return self._pool

    async def on_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, fn, *args)

    async def run(self, fn: Callable[[Any], T]) -> T:
        """`fn(psycopg connection)` on a pooled connection in autocommit mode, on a thread:
        for what is not a store transaction (COPY, CREATE INDEX CONCURRENTLY, SET LOCAL).
        A cancelled caller cancels the statement under way in the server too, and waits
        for the connection to be back in the pool (a shutdown never waits for a build)."""
        psycopg, _ = import_driver()
        async with self._slots:
            work = CancellableWork(self.pool, fn)
            done = asyncio.wrap_future(self._threads.submit(work))
            try:
                return await asyncio.shield(done)
            except asyncio.CancelledError:
                await asyncio.to_thread(work.cancel)
                await asyncio.gather(done, return_exceptions=True)
                raise
            except psycopg.OperationalError as exc:
                raise self._fault(exc) from exc

    # ---- writes -----------------------------------------------------------------------

    async def transact(
        self, fn: WriteFn[T], *, bookkeeping: bool = False, names: Names[T] = True
    ) -> T:
        """Run the synchronous `fn(connection)` as one SERIALIZABLE transaction on a worker
        thread, retried on a serialization failure or a deadlock (so `fn` may run more than
        once: it must do nothing but SQL on the connection it is given)."""
        in_context = in_callers_context(fn)
        result = await self._guard(lambda: self.run(partial(_transact_sync, in_context)))
        self.commits += 1
        self.changes += 0 if bookkeeping else 1
        self.names_changes += 0 if bookkeeping or not changed_names(names, result) else 1
        return result

    async def _guard(self, work: Callable[[], Awaitable[T]]) -> T:
        psycopg, _ = import_driver()
        try:
            return await work()
        except (CortexError, psycopg.errors.IntegrityError):
            raise
        except psycopg.OperationalError as exc:
            raise self._fault(exc) from exc

    def _fault(self, exc: Exception) -> StorageError:
        fault = StorageError(
            f"PostgreSQL at {self.path} failed: {_first_line(exc)}; nothing was changed"
        )
        log.warning("%s", fault.message)
        return fault

    # ---- reads ------------------------------------------------------------------------

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        query = translate(sql)
        return await self.run(lambda raw: list(raw.execute(query, params).fetchall()))

    async def fetch_each(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Row]]:
        """The rows of each statement, read on one pooled connection in one trip."""
        queries = [(translate(sql), params) for sql, params in statements]
        return await self.run(
            lambda raw: [list(raw.execute(query, params).fetchall()) for query, params in queries]
        )

    async def schema_version(self) -> int:
        return int(await self.scalar("SELECT COALESCE(MAX(version), 0) FROM cortex_schema"))

    async def data_version(self) -> int:
        """Changes whenever a transaction that writes has started anywhere on the server
        since the last call: the next transaction id (in-process caches refresh on it)."""
        return int(await self.scalar("SELECT pg_snapshot_xmax(pg_current_snapshot())::text"))

    # ---- what SQLite needs and PostgreSQL does by itself -------------------------------

    async def checkpoint(self) -> bool:
        return True  # no WAL file of ours: PostgreSQL vacuums erased rows itself

    def checkpoint_soon(self) -> None:
        return None

    async def integrity_check(self) -> str:
        """'ok' when the server answers and the schema is the one this version writes."""
        version = await self.schema_version()
        if version > SCHEMA_VERSION:
            return f"schema {version} is newer than this cortex-mcp ({SCHEMA_VERSION})"
        return "ok"


def _transact_sync(fn: WriteFn[T], raw: Any) -> T:
    """`fn` as one SERIALIZABLE transaction, retried on serialization failures (on a thread)."""
    psycopg, _ = import_driver()
    retryable = (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)
    for attempt in range(_RETRIES):
        try:
            with raw.transaction():
                raw.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                return fn(SyncPgConnection(raw))
        except retryable:
            if attempt == _RETRIES - 1:
                raise
            time.sleep(_backoff(attempt))
    raise AssertionError("unreachable")


def _backoff(attempt: int) -> float:
    return random.uniform(0, 0.005 * 2 ** min(attempt, 7))


def _configure(conn: Any) -> None:
    """Every pooled connection: pgvector values as the float32 bytes the stores use."""
    from psycopg.types import TypeInfo

    from cortex_mcp.store.postgres.vectors import HNSW_EF_SEARCH, register_vector_adapters

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StorageError("PostgreSQL: the pgvector extension is missing; install pgvector")
    info.register(conn)
    register_vector_adapters(conn, info.oid)
    conn.execute(f"SET hnsw.ef_search = {int(HNSW_EF_SEARCH)}")


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
