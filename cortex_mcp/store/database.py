"""The database handle: one aiosqlite connection, migrations, and the write-transaction rule."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from cortex_mcp.store.connection import open_connection, operational_error
from cortex_mcp.store.schema import MIGRATION_NOTES, MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)

T = TypeVar("T")
Row = Any  # the driver's Row type (stdlib or pysqlite3)
WriteFn = Callable[[aiosqlite.Connection], Awaitable[T]]

_LOCK_RETRIES = 8


_READERS = 2


class Database:
    """Owns connections to one WAL file: a writer, and readers so that searches never queue
    behind a write (such as the access counts a recall leaves behind) and a recall's text and
    vector channels can read at the same time. Every write goes through `write()`: one BEGIN
    IMMEDIATE transaction, serialised within the process and retried when another process
    holds the lock too long."""

    def __init__(self, path: Path, *, allow_vec: bool = True) -> None:
        self.path = path
        self._allow_vec = allow_vec
        self._conn: aiosqlite.Connection | None = None
        self._readers: list[aiosqlite.Connection] = []
        self._busy: list[int] = []
        self._write_lock = asyncio.Lock()
        self.vec_loaded = False

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn, self.vec_loaded = open_connection(self.path, allow_vec=self._allow_vec)
        self._conn = await conn
        await self._migrate()
        for _ in range(_READERS):
            reader, _ = open_connection(self.path, allow_vec=self._allow_vec)
            self._readers.append(await reader)
            self._busy.append(0)

    async def close(self) -> None:
        for conn in [*self._readers, self._conn]:
            if conn is not None:
                await conn.close()
        self._conn = None
        self._readers, self._busy = [], []

    async def __aenter__(self) -> Database:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def conn(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise RuntimeError("database is not open")
        return self._conn

    async def _migrate(self) -> None:
        async def apply(conn: aiosqlite.Connection) -> int:
            version = await self._user_version(conn)
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    await conn.execute(statement)
                await conn.execute(f"PRAGMA user_version = {number + 1}")
                await _log_migration(conn, number + 1, fresh=version == 0)
            return version

        if await self._user_version(self.conn) < SCHEMA_VERSION:
            await self.write(apply)

    @staticmethod
    async def _user_version(conn: aiosqlite.Connection) -> int:
        async with conn.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def schema_version(self) -> int:
        return await self._user_version(self.conn)

    async def write(self, fn: WriteFn[T]) -> T:
        """Run `fn` inside BEGIN IMMEDIATE ... COMMIT; roll back on any error."""
        locked = operational_error()
        async with self._write_lock:
            for attempt in range(_LOCK_RETRIES):
                try:
                    await self.conn.execute("BEGIN IMMEDIATE")
                except locked as exc:
                    if "locked" not in str(exc) or attempt == _LOCK_RETRIES - 1:
                        raise
                    await asyncio.sleep(0.05 * (attempt + 1))
                    continue
                try:
                    result = await fn(self.conn)
                except BaseException:
                    await self.conn.rollback()
                    raise
                await self.conn.commit()
                return result
        raise AssertionError("unreachable")

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        index = self._busy.index(min(self._busy))  # the least busy reader
        self._busy[index] += 1
        try:
            async with self._readers[index].execute(sql, params) as cursor:
                return list(await cursor.fetchall())
        finally:
            self._busy[index] -= 1

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return row[0] if row is not None else None

    async def get_meta(self, key: str) -> str | None:
        value = await self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return str(value) if value is not None else None

    async def data_version(self) -> int:
        """Changes whenever another process commits: the signal that in-process caches must
        refresh. Read on the writer, so it is comparable call to call (the value is per
        connection); our own writes are signalled by the code that makes them."""
        async with self.conn.execute("PRAGMA data_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def checkpoint(self) -> None:
        """Copy the WAL into the main file and truncate it (best effort: readers may hold it)."""
        async with self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cursor:
            await cursor.fetchone()

    async def integrity_check(self) -> str:
        return str(await self.scalar("PRAGMA integrity_check"))


async def _log_migration(conn: aiosqlite.Connection, number: int, *, fresh: bool) -> None:
    note = MIGRATION_NOTES.get(number)
    if note is None or fresh:
        log.info("applied migration %d", number)
        return
    async with conn.execute("SELECT COUNT(*) FROM memories") as cursor:
        row = await cursor.fetchone()
    log.warning("applied migration %d: " + note, number, int(row[0]) if row else 0)


async def set_meta(conn: aiosqlite.Connection, key: str, value: str) -> None:
    await conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def placeholders(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)
