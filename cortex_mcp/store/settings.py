"""The settings changed while running (`PATCH /api/v1/config`, `cortex-mcp config set`): one
JSON document in the `meta` table with a version that every change raises. Every server on the
database reads the version about once a second (as token checks are re-read), so a change made
on one is applied on all of them; the next start reads the document again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cortex_mcp.errors import Conflict
from cortex_mcp.store.interfaces import Connection, DatabaseHandle

KEY = "settings:api"


@dataclass(frozen=True)
class SettingsLayer:
    """The changed settings, by dotted name ("search.fusion"), and their version (0: none)."""

    version: int = 0
    values: dict[str, Any] = field(default_factory=dict)


def _decode(text: str | None) -> SettingsLayer:
    if not text:
        return SettingsLayer()
    data = json.loads(text)
    return SettingsLayer(int(data.get("version", 0)), dict(data.get("values", {})))


class SettingsStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def read(self) -> SettingsLayer:
        text = await self.db.scalar("SELECT value FROM meta WHERE key = ?", (KEY,))
        return _decode(text)

    async def write(self, values: dict[str, Any], expected_version: int) -> SettingsLayer:
        """Replace the document if its version is still `expected_version` (two changes at
        once: the second is refused with Conflict rather than silently undoing the first)."""
        encoded = json.dumps({"version": expected_version + 1, "values": values}, sort_keys=True)

        def txn(conn: Connection) -> SettingsLayer:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
            current = _decode(row[0] if row else None)
            if current.version != expected_version:
                raise Conflict(
                    "settings: changed meanwhile by another server or command; read them again",
                    field="settings",
                )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (KEY, encoded),
            )
            return SettingsLayer(expected_version + 1, values)

        return await self.db.transact(txn)
