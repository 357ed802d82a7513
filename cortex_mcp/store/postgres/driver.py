"""The PostgreSQL driver, imported only when CORTEX_DATABASE_URL asks for it.

psycopg 3 rather than asyncpg: its pool (psycopg_pool) is bounded and maintained with the
driver, statements are not prepared on the server unless asked (so PgBouncer in transaction
mode works), its `%s` placeholders map one to one onto the stores' SQLite `?`, and COPY is
available for bulk moves. asyncpg measured about 1.6x faster per trivial query here (326 vs
520 µs over a Unix socket), a fraction of a millisecond against a recall's total.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

from cortex_mcp.errors import ConfigError

if TYPE_CHECKING:
    import psycopg

    # an async psycopg connection of the copy and inspect paths (rows as tuples)
    AsyncConnection: TypeAlias = psycopg.AsyncConnection[Any]

MISSING = (
    "CORTEX_DATABASE_URL: PostgreSQL needs cortex-mcp's `postgres` extra"
    " (psycopg, psycopg-pool); install cortex-mcp with that extra, or unset"
    " CORTEX_DATABASE_URL to use the SQLite file"
)


@cache
def import_driver() -> tuple[ModuleType, ModuleType]:
    """(psycopg, psycopg_pool), or a ConfigError with the one line to act on."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise ConfigError(MISSING, field="CORTEX_DATABASE_URL") from exc
    return psycopg, psycopg_pool


async def scalar(conn: AsyncConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first value of the one row an aggregate or a function call returns."""
    cursor = await conn.execute(sql, params)
    row = await cursor.fetchone()
    assert row is not None, "an aggregate returns its row"
    return row[0]
