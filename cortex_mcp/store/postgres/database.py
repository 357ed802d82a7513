"""The PostgreSQL handle: a bounded connection pool, numbered migrations, and the write rule.

It offers the surface of the SQLite `Database` the stores and the service use (`write`,
`fetchall`, `fetchone`, `scalar`, `get_meta`, `schema_version`, `data_version`, `commits`,
`path`, `vec_loaded`, `is_open`, `read_only`), so a store whose SQL is portable runs unchanged:
statements keep SQLite's `?` placeholders and are translated once (`_translate`).

Every write is one SERIALIZABLE transaction, retried when PostgreSQL reports a serialization
failure or a deadlock: several processes then behave as if their writes ran one at a time,
which is what the stores' read-then-write transactions were written for (SQLite's single
writer lock gave them that).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Awaitable, Callable, Generator, Sequence
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from cortex_mcp.errors import CortexError, StorageError
from cortex_mcp.store.postgres.driver import import_driver
from cortex_mcp.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)

T = TypeVar("T")
WriteFn = Callable[["PgConnection"], Awaitable[T]]

_RETRIES = 30
_MIGRATION_LOCK = 0x636F7274  # pg_advisory_xact_lock key: one migrating process at a time


class _QuietRetries(logging.Filter):
    """psycopg warns while it unwinds an executemany whose transaction failed; the failure
    itself is raised (and a serialization failure retried), so the warning says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("error ignored terminating")


logging.getLogger("psycopg").addFilter(_QuietRetries())


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


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], Row]:
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
        "SELECT seq FROM memories WHERE tsv @@ cortex_match(?)",
    ),
]


@lru_cache(maxsize=1024)
def _translate(sql: str) -> str:
    """SQLite's `?` placeholders become psycopg's `%s` (a literal `%` is doubled first), and
    the few SQLite phrases of the shared stores their PostgreSQL equivalent."""
    for pattern, replacement in _DIALECT:
        sql = pattern.sub(replacement, sql)
    if sql.lstrip().startswith("INSERT OR IGNORE INTO"):
        sql = sql.replace("INSERT OR IGNORE INTO", "INSERT INTO", 1) + " ON CONFLICT DO NOTHING"
    return sql.replace("%", "%%").replace("?", "%s")


def redact_url(url: str) -> str:
    """The URL without its password, for messages and `stats`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class _Execution:
    """What `PgConnection.execute` returns: awaitable, or `async with`, like aiosqlite's."""

    def __init__(self, cursor: Any, sql: str, params: Any) -> None:
        self._cursor = cursor
        self._run = cursor.execute(_translate(sql), params)

    def __await__(self) -> Generator[Any, None, Any]:
        return self._run.__await__()

    async def __aenter__(self) -> Any:
        return await self._run

    async def __aexit__(self, *exc: object) -> None:
        await self._cursor.close()


class PgConnection:
    """One pooled connection inside a write transaction, with aiosqlite's calls."""

    in_transaction = True

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Execution:
        return _Execution(self.raw.cursor(), sql, params)

    async def executemany(self, sql: str, rows: Any) -> None:
        rows = list(rows)
        if rows:
            async with self.raw.cursor() as cursor:
                await cursor.executemany(_translate(sql), rows)

    async def execute_fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        async with self.raw.cursor() as cursor:
            await cursor.execute(_translate(sql), params)
            return list(await cursor.fetchall())


class PgDatabase:
    """A pool of at most `pool_max` connections to one PostgreSQL database."""

    vec_loaded = True  # pgvector is required: the first migration creates the extension
    read_only = False

    def __init__(self, url: str, *, pool_max: int = 10) -> None:
        self.url = url
        self.path = redact_url(url)  # what status, health and logs show
        self.pool_max = pool_max
        self.commits = 0
        self._pool: Any = None

    # ---- opening ----------------------------------------------------------------------

    async def open(self) -> None:
        psycopg, pool_module = import_driver()
        try:
            await self._migrate(psycopg)
            self._pool = pool_module.AsyncConnectionPool(
                self.url,
                min_size=1,
                max_size=self.pool_max,
                kwargs={"autocommit": True, "row_factory": _row_factory, "prepare_threshold": None},
                configure=_configure,
                open=False,
            )
            await self._pool.open(wait=True, timeout=30)
        except psycopg.Error as exc:
            await self.close()
            raise StorageError(
                f"PostgreSQL at {self.path} cannot be used: {_first_line(exc)};"
                " check CORTEX_DATABASE_URL and that the server is running"
            ) from exc

    async def _migrate(self, psycopg: Any) -> None:
        conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS cortex_schema (version INTEGER NOT NULL,"
                    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
                cursor = await conn.execute("SELECT COALESCE(MAX(version), 0) FROM cortex_schema")
                row = await cursor.fetchone()
                version = int(row[0]) if row else 0
                for number in range(version, SCHEMA_VERSION):
                    for statement in MIGRATIONS[number]:
                        await conn.execute(statement)
                    await conn.execute(
                        "INSERT INTO cortex_schema (version) VALUES (%s)", (number + 1,)
                    )
                    log.info("applied PostgreSQL migration %d", number + 1)
        finally:
            await conn.close()

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
        self._pool = None

    async def __aenter__(self) -> PgDatabase:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def is_open(self) -> bool:
        return self._pool is not None

    @property
    def pool(self) -> Any:
        if self._pool is None:
            raise RuntimeError("database is not open")
        return self._pool

    # ---- writes -----------------------------------------------------------------------

    async def write(self, fn: WriteFn[T]) -> T:
        """Run `fn` in one SERIALIZABLE transaction; retried on a serialization failure.

        `fn` may therefore run more than once: it must not change anything outside the
        database before it returns (the stores' closures only issue statements)."""
        psycopg, _ = import_driver()
        retryable = (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)
        for attempt in range(_RETRIES):
            try:
                async with self.pool.connection() as raw, raw.transaction():
                    await raw.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                    result = await fn(PgConnection(raw))
                self.commits += 1
                return result
            except retryable:
                if attempt == _RETRIES - 1:
                    raise
                await asyncio.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 7)))
            except (CortexError, psycopg.errors.IntegrityError):
                raise
            except psycopg.OperationalError as exc:
                raise self._fault(exc) from exc
        raise AssertionError("unreachable")

    def _fault(self, exc: Exception) -> StorageError:
        fault = StorageError(
            f"PostgreSQL at {self.path} failed: {_first_line(exc)}; nothing was changed"
        )
        log.warning("%s", fault.message)
        return fault

    # ---- reads ------------------------------------------------------------------------

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        psycopg, _ = import_driver()
        try:
            async with self.pool.connection() as raw, raw.cursor() as cursor:
                await cursor.execute(_translate(sql), params)
                return list(await cursor.fetchall())
        except psycopg.OperationalError as exc:
            raise self._fault(exc) from exc

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return row[0] if row is not None else None

    async def get_meta(self, key: str) -> str | None:
        value = await self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return str(value) if value is not None else None

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


async def _configure(conn: Any) -> None:
    """Every pooled connection: pgvector values as the float32 bytes the stores use."""
    from psycopg.types import TypeInfo

    from cortex_mcp.store.postgres.vectors import register_vector_adapters

    info = await TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StorageError("PostgreSQL: the pgvector extension is missing; install pgvector")
    info.register(conn)
    register_vector_adapters(conn, info.oid)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
