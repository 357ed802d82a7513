"""`cortex-mcp doctor`: the health of this installation, one line per part, for a person.

It changes nothing: the database is opened read-only (a missing one is not created), and each
configured embedding provider gets one real call within its timeout. Exit status 1 when a part
the user configured does not work."""

from __future__ import annotations

import sys

from cortex_mcp import __version__
from cortex_mcp.config import Settings
from cortex_mcp.engine.health import (
    PartHealth,
    database_health,
    embedding_endpoint,
    embedding_health,
    llm_endpoints,
    llm_health,
    sqlite_health,
    worst,
)
from cortex_mcp.runtime import build_embedding_cascade, build_llm
from cortex_mcp.store import connector_info
from cortex_mcp.store.inspect import inspect_database


async def check_health(settings: Settings) -> list[PartHealth]:
    if settings.database_url is not None:
        parts = await postgres_health(settings.database_url.get_secret_value(), settings.pool_max)
    else:
        parts = sqlite_health(connector_info())
        parts.append(database_health(inspect_database(settings.db_path)))
    cascade, notes = build_embedding_cascade(settings, download=False)  # writes nothing
    try:
        parts += await embedding_health(cascade, notes, embedding_endpoint(settings))
    finally:
        await cascade.close()
    llm, llm_notes = build_llm(settings)
    try:
        parts += await llm_health(llm, llm_notes, llm_endpoints(settings))
    finally:
        await llm.close()
    return parts


async def postgres_health(url: str, pool_max: int) -> list[PartHealth]:
    """The PostgreSQL store (CORTEX_DATABASE_URL): reachable, pgvector, schema, indexes, pool."""
    try:
        from cortex_mcp.store.postgres.inspect import inspect_postgres
    except ModuleNotFoundError as exc:
        if exc.name not in ("psycopg", "psycopg_pool", "pgvector"):
            raise
        return [
            PartHealth(
                "postgres",
                "failed",
                f"CORTEX_DATABASE_URL is set but the postgres extra is not installed ({exc.name}"
                " is missing): pip install '/path/to/cortex-mcp[postgres]' from your checkout",
            )
        ]
    return [PartHealth(c.part, c.status, c.detail) for c in await inspect_postgres(url, pool_max)]


async def run_doctor(settings: Settings) -> int:
    out = sys.stdout
    out.write(f"cortex-mcp {__version__} (Python {sys.version.split()[0]})\n")
    parts = await check_health(settings)
    for part in parts:
        out.write(part.line() + "\n")
    overall = worst(parts)
    failed = [part.part for part in parts if part.status == "failed"]
    if failed:
        out.write(f"failed: {', '.join(dict.fromkeys(failed))} (see above)\n")
    else:
        out.write(f"{overall}: cortex-mcp can serve\n")
    return 1 if failed else 0
