"""A PostgreSQL store filled by a copy (`migrate`), in batches that each commit.

Each batch is one transaction of COPY statements (`bulk`), so a copy that fails or is stopped
keeps every batch before it. The store is marked meanwhile (meta `copy_unfinished`, naming the
source): running the same copy again goes on after the last row each table holds; a copy from
another source is refused until `--force` starts it over.

Into an empty store the load is cheaper: the secondary indexes are dropped first (their
definitions kept in the mark) and built once at the end; if the user owns the tables, the row
triggers that keep other tables (text statistics, the embedding queue) are switched off inside
each batch's own transaction, and what they keep is computed once from the copied rows
instead. The last transaction builds the indexes and removes the mark: a marked store is
unfinished, a store without the mark is whole; a VACUUM (ANALYZE) then gives the planner its
statistics. HNSW indexes are not rebuilt here; a server builds one again when the vectors
need it.
"""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, Any

from cortex_mcp.errors import Conflict, StorageError
from cortex_mcp.store.postgres import bulk
from cortex_mcp.store.postgres.copy import (
    UNFINISHED,
    PostgresRows,
    bring_up_to_date,
    connect,
    first_line,
)
from cortex_mcp.store.postgres.database import redact_url
from cortex_mcp.store.postgres.driver import import_driver, scalar
from cortex_mcp.store.postgres.text_counts import TEXT_PAIRS_FROM_ROWS, TEXT_TERMS_FROM_ROWS
from cortex_mcp.store.tables import DERIVED_META, TABLES, Row, Table

if TYPE_CHECKING:
    from cortex_mcp.store.postgres.driver import AsyncConnection

MARK = UNFINISHED  # meta key of a store a copy is filling (one of DERIVED_META)
_COPY_LOCK = zlib.crc32(b"cortex-mcp copy")  # session advisory lock: one copy at a time
_HNSW_PREFIX = "idx_memory_vectors_hnsw"
# What a copy clears with --force besides the copied tables: claims name the old memories,
# the queue is derived from the memories and vectors.
_CLEARED_TOO = ("embedding_claims", "embedding_queue", "text_terms", "text_pairs")
# Row triggers a load may skip, because `_DERIVED` computes what they keep from all the rows
# at the end; any other trigger (one keeping a column of the row itself) still runs.
_SKIPPED_TRIGGERS = {
    "memories": (
        "memories_text_stats",
        "memories_text_terms",
        "memories_text_pairs",
        "memories_embedding_queue",
    ),
    "memory_vectors": ("memory_vectors_embedding_queue",),
}


class PostgresTarget:
    """Fills a PostgreSQL store batch by batch; `commit` makes it whole."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.label = redact_url(url)
        self._conn: AsyncConnection | None = None
        self._stems = bulk.Stems()
        self._triggers_off: bool | None = None

    @property
    def conn(self) -> AsyncConnection:
        if self._conn is None:
            raise RuntimeError(f"{self.label} is not open")
        return self._conn

    async def open(self) -> None:
        await bring_up_to_date(self.url)
        self._conn = await connect(self.url)
        if not await scalar(self.conn, "SELECT pg_try_advisory_lock(%s)", [_COPY_LOCK]):
            await self._close()
            raise Conflict(f"another migrate is copying into {self.label}; wait for it to end")

    async def unfinished(self) -> str | None:
        """The source of a copy into this store that has not finished, if there is one."""
        mark = await self._mark()
        return None if mark is None else str(mark["source"])

    async def existing_rows(self) -> int:
        total = 0
        for spec in TABLES:
            sql, params = _count(spec)
            total += int(await scalar(self.conn, sql, params))
        return total

    async def clear(self) -> None:
        copied = [spec.name for spec in TABLES if spec.name != "meta"]
        async with self.conn.transaction():
            await self.conn.execute(f"TRUNCATE {', '.join([*copied, *_CLEARED_TOO])}")
            await self.conn.execute(  # the mark stays: it lists the indexes dropped
                "DELETE FROM meta WHERE NOT (key = ANY(%s))", [sorted(DERIVED_META)]
            )
            await self.conn.execute("UPDATE text_stats SET docs = 0, tokens = 0")

    async def start(self, source: str) -> None:
        """Mark the (empty) store as filled from `source`, and drop its secondary indexes:
        `commit` builds them once over all the rows."""
        mark = await self._mark() or {}
        kept = [list(pair) for pair in mark.get("indexes", [])]
        async with self.conn.transaction():
            for name, definition in await self._secondary_indexes():
                await self.conn.execute(f'DROP INDEX "{name}"')
                if not name.startswith(_HNSW_PREFIX):
                    kept.append([name, definition])
            await self.conn.execute("DELETE FROM meta WHERE key = 'vec_index_hnsw'")
            await self._set_mark({"source": source, "indexes": kept})

    async def resume_after(self, spec: Table) -> Row | None:
        """The key of the last row of the table this store holds (None when it has none)."""
        sql, params = _select_keys(spec)
        row = await (await self.conn.execute(sql, params)).fetchone()
        return None if row is None else tuple(row)

    async def write(self, spec: Table, rows: list[Row]) -> None:
        """The rows in one transaction; on failure the batches before it stay."""
        psycopg, _ = import_driver()
        try:
            if spec.name == "memories":
                rows = await bulk.memory_rows(self.conn, self._stems, spec, rows)
            async with self.conn.transaction():
                await self._switch_triggers(spec, on=False)
                await bulk.copy_rows(self.conn, spec, rows)
                await self._switch_triggers(spec, on=True)
        except (psycopg.Error, ValueError) as exc:  # psycopg refuses NUL in text itself
            raise StorageError(
                f"PostgreSQL refused a row of {spec.name} ({first_line(exc)}); the rows copied"
                " before its batch are kept: fix that row in the source and run migrate again"
                " to go on from there"
            ) from exc

    async def finish(self) -> None:
        """Derive what the copied rows imply: identity counters past the copied keys, BM25's
        totals and document counts, and the embedding queue (which row triggers keep when they run)."""
        async with self.conn.transaction():
            for spec in TABLES:
                if spec.serial is not None:
                    await self.conn.execute(
                        f"SELECT setval(pg_get_serial_sequence('{spec.name}', '{spec.serial}'),"
                        f" COALESCE((SELECT MAX({spec.serial}) FROM {spec.name}), 0) + 1, false)"
                    )
            for statement in _DERIVED:
                await self.conn.execute(statement)

    def reader(self) -> PostgresRows:
        """The committed rows, read back in a snapshot of their own (verification)."""
        return PostgresRows(self.url, unfinished=True)

    async def commit(self) -> None:
        """Build the dropped indexes and remove the mark, in one transaction; then gather
        the planner's statistics (a fresh copy has none: its first recalls would scan)."""
        mark = await self._mark() or {}
        async with self.conn.transaction():
            await self.conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
            for _, definition in mark.get("indexes", []):
                await self.conn.execute(definition)
            await self.conn.execute("DELETE FROM meta WHERE key = %s", [MARK])
        tables = ", ".join(spec.name for spec in TABLES)
        await self.conn.execute(f"VACUUM (ANALYZE) {tables}")  # tables of others: skipped
        await self._close()

    async def abort(self) -> None:
        """Close; committed batches stay and the mark says the copy is unfinished."""
        await self._close()

    # ---- helpers ----------------------------------------------------------------------

    async def _mark(self) -> dict[str, Any] | None:
        cursor = await self.conn.execute("SELECT value FROM meta WHERE key = %s", [MARK])
        row = await cursor.fetchone()
        return None if row is None else dict(json.loads(row[0]))

    async def _set_mark(self, mark: dict[str, Any]) -> None:
        await self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [MARK, json.dumps(mark)],
        )

    async def _secondary_indexes(self) -> list[tuple[str, str]]:
        """(name, definition) of the indexes no constraint needs, on the copied tables."""
        tables = [*(spec.name for spec in TABLES), "embedding_queue"]
        cursor = await self.conn.execute(
            "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid"
            " WHERE t.relname = ANY(%s) AND t.relnamespace = current_schema()::regnamespace"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)"
            " ORDER BY c.relname",
            [tables],
        )
        return [(str(name), str(definition)) for name, definition in await cursor.fetchall()]

    async def _switch_triggers(self, spec: Table, *, on: bool) -> None:
        """The derived-table triggers off for this transaction only (a failed batch rolls
        that back too)."""
        names = _SKIPPED_TRIGGERS.get(spec.name, ())
        if names and await self._may_switch_triggers():
            switch = "ENABLE" if on else "DISABLE"
            await self.conn.execute(
                f"ALTER TABLE {spec.name} " + ", ".join(f"{switch} TRIGGER {n}" for n in names)
            )

    async def _may_switch_triggers(self) -> bool:
        """Whether this user owns the tables (else the triggers run, and cost more)."""
        if self._triggers_off is None:
            owned = await scalar(
                self.conn,
                "SELECT bool_and(pg_has_role(t.tableowner, 'USAGE')) FROM pg_tables t"
                " WHERE t.tablename = ANY(%s) AND t.schemaname = current_schema()",
                [list(_SKIPPED_TRIGGERS)],
            )
            self._triggers_off = bool(owned)
        return self._triggers_off

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()  # the session's advisory lock goes with it


# What the row triggers of memories and memory_vectors keep, computed from all the rows.
_DERIVED = (
    "UPDATE text_stats s SET docs = COALESCE(d.docs, 0), tokens = COALESCE(d.tokens, 0)"
    " FROM text_stats t LEFT JOIN (SELECT seq % 64 AS slot, COUNT(*) AS docs,"
    " SUM(doc_len) AS tokens FROM memories GROUP BY 1) d ON d.slot = t.slot"
    " WHERE s.slot = t.slot",
    "DELETE FROM text_terms",
    TEXT_TERMS_FROM_ROWS,
    "DELETE FROM text_pairs",
    TEXT_PAIRS_FROM_ROWS,
    "DELETE FROM embedding_queue",
    "INSERT INTO embedding_queue (seq, priority) SELECT m.seq, m.access_count FROM memories m"
    " WHERE m.forgotten_at IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id)",
)


def _count(spec: Table) -> tuple[str, list[Any]]:
    if spec.name == "meta":
        return "SELECT COUNT(*) FROM meta WHERE NOT (key = ANY(%s))", [sorted(DERIVED_META)]
    return f"SELECT COUNT(*) FROM {spec.name}", []


def _select_keys(spec: Table) -> tuple[str, list[Any]]:
    keys = ", ".join(spec.key)
    descending = ", ".join(f"{key} DESC" for key in spec.key)
    where, params = "", []
    if spec.name == "meta":
        where, params = " WHERE NOT (key = ANY(%s))", [sorted(DERIVED_META)]
    return f"SELECT {keys} FROM {spec.name}{where} ORDER BY {descending} LIMIT 1", params
