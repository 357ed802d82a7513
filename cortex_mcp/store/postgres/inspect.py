"""A look at a PostgreSQL store that changes nothing, for `cortex-mcp doctor`.

One connection in a READ ONLY transaction: nothing is created or migrated (an empty database
is fine: the server creates the schema at start). Each check gives one line; a fault's line
says what to do about it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cortex_mcp.errors import ConfigError
from cortex_mcp.store.postgres.database import redact_url
from cortex_mcp.store.postgres.driver import import_driver
from cortex_mcp.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:
    from cortex_mcp.store.postgres.driver import AsyncConnection

Status = Literal["ok", "degraded", "failed"]

CONNECT_TIMEOUT_S = 5
_INDEX = re.compile(r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF NOT EXISTS\s+)?(\w+)", re.I)


@dataclass(frozen=True)
class Check:
    part: str
    status: Status
    detail: str


def expected_indexes() -> list[str]:
    """The indexes the migrations create (HNSW indexes come later, by size)."""
    return sorted({m for step in MIGRATIONS for sql in step for m in _INDEX.findall(sql)})


async def inspect_postgres(url: str, pool_max: int) -> list[Check]:
    where = redact_url(url)
    try:
        psycopg, _ = import_driver()
    except ConfigError as exc:  # no `postgres` extra: the line `add` gives, as a failed part
        return [Check("postgres", "failed", exc.message)]
    try:
        conn = await psycopg.AsyncConnection.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        )
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [
            Check(
                "postgres",
                "failed",
                f"cannot connect to {where}: {first}; check CORTEX_DATABASE_URL (user, password,"
                " host, port, database) and that the server is running",
            )
        ]
    try:
        await conn.execute("BEGIN READ ONLY")
        return [
            await _server(conn, where),
            await _pgvector(conn),
            *await _store(conn, where),
            await _pool(conn, pool_max),
        ]
    finally:
        await conn.execute("ROLLBACK")
        await conn.close()


async def _one(conn: AsyncConnection, sql: str, params: Any = ()) -> Any:
    cursor = await conn.execute(sql, params)
    return await cursor.fetchone()


async def _server(conn: AsyncConnection, where: str) -> Check:
    (version,) = await _one(conn, "SHOW server_version")
    return Check("postgres", "ok", f"PostgreSQL {version} at {where}")


async def _pgvector(conn: AsyncConnection) -> Check:
    row = await _one(conn, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    if row is not None:
        return Check("pgvector", "ok", f"{row[0]}: vector search inside PostgreSQL")
    row = await _one(
        conn, "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
    )
    if row is not None:
        return Check(
            "pgvector",
            "ok",
            f"{row[0]} available; the server creates the extension at its first start (the"
            " database user needs the CREATE privilege on the database, or run `CREATE"
            " EXTENSION vector` once as its owner)",
        )
    return Check(
        "pgvector",
        "failed",
        "the pgvector extension is not installed on this PostgreSQL server: install it (Debian:"
        " apt install postgresql-NN-pgvector; managed services: enable the `vector` extension)",
    )


async def _store(conn: AsyncConnection, where: str) -> list[Check]:
    row = await _one(conn, "SELECT to_regclass('cortex_schema') IS NOT NULL")
    if not row[0]:
        return [
            Check("database", "ok", f"{where} holds no memory store yet: the server creates it")
        ]
    (version,) = await _one(conn, "SELECT COALESCE(MAX(version), 0) FROM cortex_schema")
    if version > SCHEMA_VERSION:
        return [
            Check(
                "database",
                "failed",
                f"{where} has schema {version}, newer than this cortex-mcp understands"
                f" ({SCHEMA_VERSION}): upgrade cortex-mcp",
            )
        ]
    memories, forgotten = await _one(conn, "SELECT COUNT(*), COUNT(forgotten_at) FROM memories")
    (vectors,) = await _one(conn, "SELECT COUNT(*) FROM memory_vectors")
    (pending,) = await _one(conn, "SELECT COUNT(*) FROM turns WHERE status = 'pending'")
    summary = (
        f"schema {version}, {memories} memories ({forgotten} forgotten), {vectors}"
        f" vectors, {pending} turns waiting for extraction"
    )
    if version < SCHEMA_VERSION:
        summary += f"; upgraded to schema {SCHEMA_VERSION} at the next start"
    (writable,) = await _one(conn, "SELECT has_table_privilege('memories', 'INSERT, UPDATE')")
    database = (
        Check("database", "ok", summary)
        if writable
        else Check(
            "database",
            "degraded",
            f"{summary}; this user may not write: recall works, writes are refused (GRANT"
            " INSERT, UPDATE, DELETE on the tables to it)",
        )
    )
    unfinished = await _one(conn, "SELECT value FROM meta WHERE key = 'copy_unfinished'")
    if unfinished is not None:
        source = json.loads(unfinished[0]).get("source", "another store")
        return [
            database,
            Check(
                "copy",
                "failed",
                f"an unfinished copy of {source} (`cortex-mcp migrate` was stopped): run the same"
                " migrate again to finish it (its indexes are built at the end); until then the"
                " store is incomplete",
            ),
        ]
    return [database, await _indexes(conn, version)]


async def _indexes(conn: AsyncConnection, version: int) -> Check:
    cursor = await conn.execute(
        "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
    )
    found = {str(name): bool(valid) for name, valid in await cursor.fetchall()}
    invalid = sorted(name for name, valid in found.items() if not valid)
    if invalid:
        return Check(
            "indexes",
            "degraded",
            f"invalid (an interrupted build): {', '.join(invalid)}; searches skip them and get"
            f" slower: DROP INDEX {', '.join(invalid)}; the server builds them again at start",
        )
    missing = [name for name in expected_indexes() if name not in found]
    if missing and version == SCHEMA_VERSION:
        return Check(
            "indexes",
            "degraded",
            f"missing: {', '.join(missing)}; recall and the lifecycle get slow: restore them"
            " from the schema (or copy the store into a fresh database with `cortex-mcp migrate`)",
        )
    hnsw = sorted(name for name in found if name.startswith("idx_memory_vectors_hnsw"))
    extra = f" and HNSW {', '.join(hnsw)}" if hnsw else " (vectors searched exactly: no HNSW yet)"
    return Check("indexes", "ok", f"{len(expected_indexes())} of the schema present{extra}")


async def _pool(conn: AsyncConnection, pool_max: int) -> Check:
    (limit,) = await _one(conn, "SHOW max_connections")
    (reserved,) = await _one(conn, "SHOW superuser_reserved_connections")
    (in_use,) = await _one(
        conn, "SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
    )
    room = int(limit) - int(reserved) - int(in_use)
    detail = (
        f"each server opens at most {pool_max} connections (CORTEX_POOL_MAX); PostgreSQL allows"
        f" {limit}, {in_use} in use"
    )
    if pool_max > room:
        return Check(
            "pool",
            "degraded",
            f"{detail}: one more server could exhaust it; lower CORTEX_POOL_MAX or raise"
            " max_connections (or put PgBouncer in transaction mode in front)",
        )
    return Check("pool", "ok", f"{detail}: room for {room // pool_max} more servers")
