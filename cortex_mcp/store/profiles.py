"""The cached user profile per agent: the generated part, the user's manual edits (kept apart so
a re-synthesis never overwrites them), and the fingerprint of the memories it was built from."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cortex_mcp.store.interfaces import Connection, DatabaseHandle

# The categories whose change makes the profile stale (seed 000 §5.2.7).
PROFILE_SOURCES = ("identity", "preference", "skill")


@dataclass(frozen=True)
class ProfileRow:
    agent_id: str
    generated: dict[str, Any]
    manual: dict[str, Any]
    fingerprint: str | None
    built_by: str | None
    built_at: str | None


class ProfileStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def get(self, agent_id: str) -> ProfileRow | None:
        row = await self.db.fetchone(
            "SELECT agent_id, generated, manual, fingerprint, built_by, built_at FROM profiles"
            " WHERE agent_id = ?",
            (agent_id,),
        )
        if row is None:
            return None
        return ProfileRow(
            agent_id=row["agent_id"],
            generated=json.loads(row["generated"]),
            manual=json.loads(row["manual"]),
            fingerprint=row["fingerprint"],
            built_by=row["built_by"],
            built_at=row["built_at"],
        )

    async def fingerprint(self, agent_id: str, now: str) -> str:
        """Changes whenever a live core identity/preference/skill memory is added, edited,
        superseded, forgotten or removed."""
        row = await self.db.fetchone(
            "SELECT COUNT(*), COALESCE(MAX(updated_at), ''), COALESCE(SUM(seq), 0) FROM memories"
            " WHERE agent_id = ? AND layer = 'core' AND category IN (?, ?, ?)"
            " AND forgotten_at IS NULL AND superseded_by IS NULL"
            " AND (expires_at IS NULL OR expires_at > ?)",
            (agent_id, *PROFILE_SOURCES, now),
        )
        assert row is not None
        return f"{row[0]}:{row[1]}:{row[2]}"

    async def save_generated(
        self, agent_id: str, generated: dict[str, Any], fingerprint: str, built_by: str, now: str
    ) -> None:
        def txn(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO profiles (agent_id, generated, fingerprint, built_by, built_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(agent_id) DO UPDATE SET"
                " generated = excluded.generated, fingerprint = excluded.fingerprint,"
                " built_by = excluded.built_by, built_at = excluded.built_at,"
                " updated_at = excluded.updated_at",
                (
                    agent_id,
                    json.dumps(generated, ensure_ascii=False),
                    fingerprint,
                    built_by,
                    now,
                    now,
                ),
            )

        await self.db.transact(txn)

    async def save_manual(self, agent_id: str, manual: dict[str, Any], now: str) -> None:
        def txn(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO profiles (agent_id, manual, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(agent_id) DO UPDATE SET manual = excluded.manual,"
                " updated_at = excluded.updated_at",
                (agent_id, json.dumps(manual, ensure_ascii=False), now),
            )

        await self.db.transact(txn)
