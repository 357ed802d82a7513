"""A pooled PostgreSQL connection as the stores see it: sqlite3's calls for synchronous
transactions (`SyncPgConnection`), aiosqlite's for async ones (`PgConnection`), rows readable
by name and position, and SQLite's SQL read in PostgreSQL's words (`translate`)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Generator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from cortex_mcp.store.postgres.database import PgDatabase

T = TypeVar("T")


class _QuietRetries(logging.Filter):
    """psycopg warns while it unwinds an executemany whose transaction failed; the failure
    itself is raised (and a serialization failure retried), so the warning says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("error ignored terminating")


logging.getLogger("psycopg").addFilter(_QuietRetries())


class Cancelled(Exception):
    """The work was cancelled before it took a connection."""


class CancellableWork:
    """`fn(connection)` on a pooled connection, run by a worker thread; `cancel()`, from any
    other thread, stops the statement it is running in the server (PostgreSQL's cancel
    request), so a caller that gives up does not leave the server working for nobody: a
    shutdown does not wait minutes for a CREATE INDEX. Only while `fn` holds the connection:
    a connection back in the pool is never cancelled."""

    def __init__(self, pool: Any, fn: Callable[[Any], T]) -> None:
        self._pool, self._fn = pool, fn
        self._lock = threading.Lock()
        self._conn: Any = None
        self._cancelled = False

    def __call__(self) -> Any:
        with self._pool.connection() as raw:
            with self._lock:
                if self._cancelled:
                    raise Cancelled
                self._conn = raw
            try:
                return self._fn(raw)
            finally:
                with self._lock:
                    self._conn = None

    def cancel(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            self._cancelled = True
            if self._conn is not None:
                self._conn.cancel_safe(timeout=timeout_s)


class Row(tuple[Any, ...]):
    """A result row readable by position and by column name, like sqlite3.Row."""

    _names: tuple[str, ...]

    def __new__(cls, values: Sequence[Any], names: tuple[str, ...]) -> Row:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            return super().__getitem__(self._names.index(key))
        return super().__getitem__(key)

    def keys(self) -> tuple[str, ...]:
        return self._names


def row_factory(cursor: Any) -> Callable[[Sequence[Any]], Row]:
    names = tuple(column.name for column in cursor.description or ())
    return lambda values: Row(values, names)


# SQLite phrases the shared stores use, in PostgreSQL's words
_DIALECT = [
    # SQLite's planner hint "+column" (unary plus, skip that index) means nothing here
    (re.compile(r"(?<=[\s(])\+(?=[A-Za-z_])"), ""),
    (re.compile(r"\bIS NOT \?"), "IS DISTINCT FROM ?"),
    (re.compile(r"\bIS \?"), "IS NOT DISTINCT FROM ?"),
    (
        re.compile(r"SELECT rowid FROM memories_fts WHERE memories_fts MATCH \?"),
        "SELECT seq FROM memories WHERE tsv @@ ?::tsquery",  # `memories.match_query`
    ),
]


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """SQLite's `?` placeholders become psycopg's `%s` (a literal `%` is doubled first), and
    the few SQLite phrases of the shared stores their PostgreSQL equivalent."""
    for pattern, replacement in _DIALECT:
        sql = pattern.sub(replacement, sql)
    if sql.lstrip().startswith("INSERT OR IGNORE INTO"):
        sql = sql.replace("INSERT OR IGNORE INTO", "INSERT INTO", 1) + " ON CONFLICT DO NOTHING"
    return sql.replace("%", "%%").replace("?", "%s")


class SyncPgConnection:
    """A pooled connection inside a write transaction, with sqlite3's calls, for the stores'
    synchronous transactions (`transact`); it runs on a worker thread."""

    in_transaction = True

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(translate(sql), params)

    def executemany(self, sql: str, rows: Any) -> Any:
        cursor = self.raw.cursor()
        rows = list(rows)
        if rows:
            cursor.executemany(translate(sql), rows)
        return cursor


class _AsyncCursor:
    """aiosqlite's cursor calls over a psycopg cursor whose rows are already fetched."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        self.rowcount = cursor.rowcount

    async def fetchone(self) -> Row | None:
        return self._cursor.fetchone() if self._cursor.description else None  # type: ignore[no-any-return]

    async def fetchall(self) -> list[Row]:
        return list(self._cursor.fetchall()) if self._cursor.description else []


class _Execution:
    """What `PgConnection.execute` returns: awaitable, or `async with`, like aiosqlite's."""

    def __init__(self, conn: PgConnection, sql: str, params: Any) -> None:
        query = translate(sql)
        self._run = conn.call(lambda raw: _AsyncCursor(raw.execute(query, params)))

    def __await__(self) -> Generator[Any, None, Any]:
        return self._run.__await__()

    async def __aenter__(self) -> Any:
        return await self._run

    async def __aexit__(self, *exc: object) -> None:
        return None


class PgConnection:
    """A pooled connection inside a write transaction, with aiosqlite's calls, for the stores'
    async transactions (`write`): each statement runs on a worker thread."""

    in_transaction = True

    def __init__(self, raw: Any, db: PgDatabase) -> None:
        self.raw = raw
        self._db = db
        self._conn = SyncPgConnection(raw)  # what store.writer.on_thread hands its function

    async def call(self, fn: Callable[[Any], T]) -> T:
        return await self._db.on_thread(fn, self.raw)

    async def _execute(self, fn: Callable[..., T], *args: Any) -> T:
        """store.writer.on_thread's way in (aiosqlite's name): `fn(*args)` on a thread."""
        return await self._db.on_thread(fn, *args)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Execution:
        return _Execution(self, sql, params)

    async def executemany(self, sql: str, rows: Any) -> Any:
        return await self.call(lambda raw: SyncPgConnection(raw).executemany(sql, rows))

    async def execute_fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self.call(lambda raw: list(raw.execute(translate(sql), params).fetchall()))
