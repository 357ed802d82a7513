"""A pooled PostgreSQL connection as the stores see it: `interfaces.Connection` inside a write
transaction (`SyncPgConnection`), rows readable by name and position, and SQLite's SQL read in
PostgreSQL's words (`translate`)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

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
    """A pooled connection inside a write transaction (`interfaces.Connection`), for the
    stores' transactions (`transact`); it runs on a worker thread."""

    in_transaction = True

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(translate(sql), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        cursor = self.raw.cursor()
        rows = list(rows)
        if rows:
            cursor.executemany(translate(sql), rows)
        return cursor
