"""Raw rows in and out of a PostgreSQL memory store, for a copy between stores (`migrate`).

The source is read in one REPEATABLE READ, READ ONLY transaction through server-side cursors:
one snapshot for every table, and memory bounded by a page whatever the table's size. The
target is written in one transaction that first locks every copied table against writers,
so the whole copy (and its verification, read back in the same transaction) becomes visible
at once or not at all. A memory's text index (`tsv`, `doc_len`) is computed as the remember
path computes it; the identity counters are moved past the copied keys at the end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cortex_mcp.errors import StorageError
from cortex_mcp.store.postgres.database import PgDatabase, redact_url
from cortex_mcp.store.postgres.driver import import_driver
from cortex_mcp.store.postgres.memories import index_columns
from cortex_mcp.store.postgres.vectors import VectorValue, register_vector_adapters
from cortex_mcp.store.tables import DERIVED_META, TABLES, Row, Table

# What a copy clears with --force besides the copied tables: claims name the old memories.
_CLEARED_TOO = ("embedding_claims",)


def _select(spec: Table) -> tuple[str, list[Any]]:
    where, params = "", []
    if spec.name == "meta":
        where, params = " WHERE NOT (key = ANY(%s))", [sorted(DERIVED_META)]
    columns = ", ".join(spec.names)
    return f"SELECT {columns} FROM {spec.name}{where} ORDER BY {', '.join(spec.key)}", params


async def _connect(url: str) -> Any:
    """A connection of our own (not the pool's): pgvector values as float32 bytes."""
    psycopg, _ = import_driver()
    from psycopg.types import TypeInfo

    try:
        # autocommit: the copy opens and ends its one transaction itself
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=None)
    except psycopg.Error as exc:
        raise StorageError(
            f"PostgreSQL at {redact_url(url)} cannot be used: {_first_line(exc)}"
        ) from exc
    info = await TypeInfo.fetch(conn, "vector")
    if info is None:
        await conn.close()
        raise StorageError("PostgreSQL: the pgvector extension is missing; install pgvector")
    info.register(conn)
    register_vector_adapters(conn, info.oid)
    return conn


async def _bring_up_to_date(url: str) -> None:
    """Apply the migrations the database lacks (creating the schema in an empty one)."""
    async with PgDatabase(url, pool_max=1):
        pass


class PostgresRows:
    """Reads every copied table of one PostgreSQL store in one snapshot."""

    def __init__(self, url: str, *, conn: Any = None) -> None:
        self.url = url
        self.label = redact_url(url)
        self._conn = conn
        self._owned = conn is None

    async def open(self) -> None:
        if not self._owned:
            return  # reading inside a writer's transaction (verification)
        await _bring_up_to_date(self.url)
        self._conn = await _connect(self.url)
        await self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")

    async def close(self) -> None:
        if self._owned and self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.execute("ROLLBACK")
            await conn.close()

    async def count(self, spec: Table) -> int:
        sql, params = _select(spec)
        cursor = await self._conn.execute(f"SELECT COUNT(*) FROM ({sql}) AS copied", params)
        row = await cursor.fetchone()
        return int(row[0])

    async def pages(self, spec: Table, size: int) -> AsyncIterator[list[Row]]:
        sql, params = _select(spec)
        flags = spec.kinds("vector")
        async with self._conn.cursor(name=f"copy_{spec.name}") as cursor:
            cursor.itersize = size
            await cursor.execute(sql, params)
            while rows := await cursor.fetchmany(size):
                if flags:
                    rows = [_bytes_at(row, flags) for row in rows]
                yield [tuple(row) for row in rows]


def _bytes_at(row: Any, positions: list[int]) -> tuple[Any, ...]:
    values = list(row)
    for i in positions:
        if values[i] is not None:
            values[i] = bytes(values[i])
    return tuple(values)


class PostgresTarget:
    """One transaction that fills an empty PostgreSQL store; committed by `commit`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.label = redact_url(url)
        self._conn: Any = None

    async def open(self) -> None:
        await _bring_up_to_date(self.url)
        self._conn = await _connect(self.url)
        await self._conn.execute("BEGIN")
        names = ", ".join(spec.name for spec in TABLES)
        # writers wait until the copy commits; readers go on seeing the old rows
        await self._conn.execute(f"LOCK TABLE {names} IN EXCLUSIVE MODE")

    async def existing_rows(self) -> int:
        total = 0
        for spec in TABLES:
            sql, params = _select(spec)
            cursor = await self._conn.execute(f"SELECT COUNT(*) FROM ({sql}) AS rows", params)
            total += int((await cursor.fetchone())[0])
        return total

    async def clear(self) -> None:
        copied = [spec.name for spec in TABLES if spec.name != "meta"]
        await self._conn.execute(f"TRUNCATE {', '.join([*copied, *_CLEARED_TOO])}")
        await self._conn.execute(
            "DELETE FROM meta WHERE NOT (key = ANY(%s))", [sorted(DERIVED_META)]
        )
        await self._conn.execute("UPDATE text_stats SET docs = 0, tokens = 0")

    async def write(self, spec: Table, rows: list[Row]) -> None:
        names = spec.names
        values = ["%s"] * len(names)
        if spec.name == "memory_vectors":  # a pgvector column (the cache keeps bytea)
            i = names.index("vector")
            rows = [(*row[:i], VectorValue(row[i]), *row[i + 1 :]) for row in rows]
        if spec.name == "memories":
            names = [*names, "tsv", "doc_len"]
            values += ["cortex_tsvector(%s::text[])", "%s"]
            content = spec.names.index("content")
            rows = [(*row, *index_columns(row[content])) for row in rows]
        sql = f"INSERT INTO {spec.name} ({', '.join(names)}) VALUES ({', '.join(values)})"
        psycopg, _ = import_driver()
        try:
            async with self._conn.cursor() as cursor:
                await cursor.executemany(sql, rows)
        except (psycopg.Error, ValueError) as exc:  # psycopg refuses NUL in text itself
            raise StorageError(
                f"PostgreSQL refused a row of {spec.name} ({_first_line(exc)}); nothing was"
                " committed: fix that row in the source and run migrate again"
            ) from exc

    async def finish(self) -> None:
        """Move each identity counter past the largest copied key."""
        for spec in TABLES:
            if spec.serial is None:
                continue
            await self._conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{spec.name}', '{spec.serial}'),"
                f" COALESCE((SELECT MAX({spec.serial}) FROM {spec.name}), 0) + 1, false)"
            )

    def reader(self) -> PostgresRows:
        """The rows written so far, read back inside this transaction."""
        return PostgresRows(self.url, conn=self._conn)

    async def commit(self) -> None:
        await self._conn.execute("COMMIT")
        await self._close()

    async def abort(self) -> None:
        if self._conn is not None:
            try:
                await self._conn.execute("ROLLBACK")
            finally:
                await self._close()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
