"""A named lease in the database: one holder at a time across every process sharing the file.

Lease times are wall-clock (not the injected clock): they coordinate real processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import aiosqlite

from cortex_mcp.models import from_iso, to_iso
from cortex_mcp.store.database import Database


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str
    acquired_at: str
    expires_at: str


class LeaseStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def acquire(
        self, name: str, holder: str, ttl_s: float, *, is_stale: Callable[[Lease], bool]
    ) -> Lease | None:
        """Take the lease; None when we hold it now, else the lease someone else holds.

        A lease past its expiry, or one `is_stale` declares dead (its process is gone), is
        taken over."""

        async def txn(conn: aiosqlite.Connection) -> Lease | None:
            now = datetime.now(UTC)
            current = await _current(conn, name)
            if current is not None and current.holder != holder:
                expired = from_iso(current.expires_at) <= now
                if not expired and not is_stale(current):
                    return current
            await conn.execute(
                "INSERT INTO leases(name, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET holder = excluded.holder,"
                " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
                (name, holder, to_iso(now), to_iso(now + timedelta(seconds=ttl_s))),
            )
            return None

        return await self.db.write(txn)

    async def renew(self, name: str, holder: str, ttl_s: float) -> bool:
        async def txn(conn: aiosqlite.Connection) -> bool:
            expires = to_iso(datetime.now(UTC) + timedelta(seconds=ttl_s))
            cursor = await conn.execute(
                "UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?",
                (expires, name, holder),
            )
            return cursor.rowcount == 1

        return await self.db.write(txn)

    async def release(self, name: str, holder: str) -> None:
        async def txn(conn: aiosqlite.Connection) -> None:
            await conn.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

        await self.db.write(txn)

    async def holder(self, name: str) -> Lease | None:
        row = await self.db.fetchone(
            "SELECT name, holder, acquired_at, expires_at FROM leases WHERE name = ?", (name,)
        )
        return Lease(*row) if row is not None else None


async def _current(conn: aiosqlite.Connection, name: str) -> Lease | None:
    async with conn.execute(
        "SELECT name, holder, acquired_at, expires_at FROM leases WHERE name = ?", (name,)
    ) as cursor:
        row = await cursor.fetchone()
    return Lease(*row) if row is not None else None
