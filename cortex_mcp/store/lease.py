"""A named lease in the database: one holder at a time across every process sharing the file.

Lease times are wall-clock (not the injected clock): they coordinate real processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cortex_mcp.models import from_iso, to_iso
from cortex_mcp.store.interfaces import Connection, DatabaseHandle


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str
    acquired_at: str
    expires_at: str


class LeaseStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def acquire(
        self, name: str, holder: str, ttl_s: float, *, is_stale: Callable[[Lease], bool]
    ) -> Lease | None:
        """Take the lease; None when we hold it now, else the lease someone else holds.

        A lease past its expiry, or one `is_stale` declares dead (its process is gone), is
        taken over."""

        def txn(conn: Connection) -> Lease | None:
            now = datetime.now(UTC)
            current = _current(conn, name)
            if current is not None and current.holder != holder:
                expired = from_iso(current.expires_at) <= now
                if not expired and not is_stale(current):
                    return current
            conn.execute(
                "INSERT INTO leases(name, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET holder = excluded.holder,"
                " acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
                (name, holder, to_iso(now), to_iso(now + timedelta(seconds=ttl_s))),
            )
            return None

        return await self.db.transact(txn)

    async def renew(self, name: str, holder: str, ttl_s: float) -> bool:
        def txn(conn: Connection) -> bool:
            expires = to_iso(datetime.now(UTC) + timedelta(seconds=ttl_s))
            cursor = conn.execute(
                "UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?",
                (expires, name, holder),
            )
            return cursor.rowcount == 1

        return await self.db.transact(txn)

    async def release(self, name: str, holder: str) -> None:
        def txn(conn: Connection) -> None:
            conn.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))

        await self.db.transact(txn)

    async def holder(self, name: str) -> Lease | None:
        row = await self.db.fetchone(
            "SELECT name, holder, acquired_at, expires_at FROM leases WHERE name = ?", (name,)
        )
        return Lease(*row) if row is not None else None


def _current(conn: Connection, name: str) -> Lease | None:
    row = conn.execute(
        "SELECT name, holder, acquired_at, expires_at FROM leases WHERE name = ?", (name,)
    ).fetchone()
    return Lease(*row) if row is not None else None
