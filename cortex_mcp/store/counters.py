"""Named counters in the `meta` table (``count:<name>``): totals that survive restarts and are
shared by every process on the file, such as redactions by kind. Counts only, never values."""

from __future__ import annotations

from collections.abc import Mapping

from cortex_mcp.store.interfaces import Connection, DatabaseHandle

_PREFIX = "count:"


def add_rows(conn: Connection, counts: Mapping[str, int]) -> None:
    """Add to counters inside the caller's one-trip transaction (`transact`)."""
    items = [(f"{_PREFIX}{name}", int(n)) for name, n in counts.items() if n]
    if items:
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(meta.value AS INTEGER) + CAST(excluded.value AS INTEGER)",
            items,
        )


class Counters:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def add(self, counts: Mapping[str, int]) -> None:
        if not any(counts.values()):
            return

        await self.db.transact(lambda conn: add_rows(conn, counts))

    async def read(self, group: str) -> dict[str, int]:
        """Counters named ``<group>.<name>``, as {name: total}."""
        prefix = f"{_PREFIX}{group}."
        rows = await self.db.fetchall(
            "SELECT key, value FROM meta WHERE key >= ? AND key < ? ORDER BY key",
            (prefix, prefix + "\uffff"),
        )
        return {str(row[0])[len(prefix) :]: int(row[1]) for row in rows}
