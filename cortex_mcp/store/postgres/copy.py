"""Raw rows out of a PostgreSQL memory store, for a copy between stores (`migrate`), and the
connection both directions use (`target.py` writes a PostgreSQL store).

The source is read in one REPEATABLE READ, READ ONLY transaction through server-side cursors:
one snapshot for every table, and memory bounded by a page whatever the table's size."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from cortex_mcp.errors import StorageError
from cortex_mcp.store.postgres.database import PgDatabase, redact_url
from cortex_mcp.store.postgres.driver import import_driver, scalar
from cortex_mcp.store.postgres.vectors import register_vector_adapters
from cortex_mcp.store.tables import DERIVED_META, Row, Table

if TYPE_CHECKING:
    from cortex_mcp.store.postgres.driver import AsyncConnection


def _select(spec: Table) -> tuple[str, list[Any]]:
    where, params = "", []
    if spec.name == "meta":
        where, params = " WHERE NOT (key = ANY(%s))", [sorted(DERIVED_META)]
    columns = ", ".join(spec.names)
    return f"SELECT {columns} FROM {spec.name}{where} ORDER BY {', '.join(spec.key)}", params


async def connect(url: str) -> AsyncConnection:
    """A connection of our own (not the pool's): pgvector values as float32 bytes."""
    psycopg, _ = import_driver()
    from psycopg.types import TypeInfo

    try:
        # autocommit: the copy opens and ends its one transaction itself
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=None)
    except psycopg.Error as exc:
        raise StorageError(
            f"PostgreSQL at {redact_url(url)} cannot be used: {first_line(exc)}"
        ) from exc
    info = await TypeInfo.fetch(conn, "vector")
    if info is None:
        await conn.close()
        raise StorageError("PostgreSQL: the pgvector extension is missing; install pgvector")
    info.register(conn)
    register_vector_adapters(conn, info.oid)
    return conn


async def bring_up_to_date(url: str) -> None:
    """Apply the migrations the database lacks (creating the schema in an empty one)."""
    async with PgDatabase(url, pool_max=1):
        pass


UNFINISHED = "copy_unfinished"  # meta key marking a store a copy is filling (`target.py`)


class PostgresRows:
    """Reads every copied table of one PostgreSQL store in one snapshot."""

    def __init__(self, url: str, *, unfinished: bool = False) -> None:
        self.url = url
        self.label = redact_url(url)
        self.unfinished = unfinished  # may read a store a copy is still filling (verification)
        self._conn: AsyncConnection | None = None

    async def open(self) -> None:
        await bring_up_to_date(self.url)
        self._conn = await connect(self.url)
        await self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor = await self.conn.execute("SELECT 1 FROM meta WHERE key = %s", [UNFINISHED])
        if not self.unfinished and await cursor.fetchone() is not None:
            await self.close()
            raise StorageError(
                f"{self.label} holds an unfinished copy (cortex-mcp migrate was interrupted);"
                " run that copy again to finish it before copying from this store"
            )

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.execute("ROLLBACK")
            await conn.close()

    @property
    def conn(self) -> AsyncConnection:
        if self._conn is None:
            raise RuntimeError(f"{self.label} is not open")
        return self._conn

    async def count(self, spec: Table) -> int:
        sql, params = _select(spec)
        return int(await scalar(self.conn, f"SELECT COUNT(*) FROM ({sql}) AS copied", params))

    async def pages(self, spec: Table, size: int) -> AsyncGenerator[list[Row], None]:
        sql, params = _select(spec)
        flags = spec.kinds("vector")
        async with self.conn.cursor(name=f"copy_{spec.name}", binary=True) as cursor:
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


def first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
