"""Raw conversation turns, kept (already redacted) from the moment an ingest is accepted until
its extraction is written, so that no accepted turn is lost to a crash.

A turn is claimed by the process that extracts it; a claim whose owner died (or that is older
than the lease) is taken over by the next process that starts. Completion writes the turn's
memories, relations, counters and its `done` status in one transaction, and clears the raw
text (what is worth keeping is in the memories by then)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cortex_mcp.models import Memory, NewMemory, new_id
from cortex_mcp.store import counters, relations
from cortex_mcp.store.database import Row
from cortex_mcp.store.interfaces import Connection, DatabaseHandle
from cortex_mcp.store.memories import MemoryStore

_COLUMNS = (
    "id, agent_id, session_id, turn_hash, user_message, assistant_message, status, outcome,"
    " result, claimed_by, claimed_at, attempts, created_at, said_at"
)


@dataclass(frozen=True)
class Turn:
    id: str
    agent_id: str
    session_id: str | None
    turn_hash: str
    user_message: str
    assistant_message: str
    status: str
    outcome: str | None
    result: dict[str, list[str]]
    claimed_by: str | None
    claimed_at: str | None
    attempts: int
    created_at: str
    said_at: str | None = None  # when it was said, if the client said so

    @property
    def occurred_at(self) -> str:
        """The own time of the memories written from this turn."""
        return self.said_at or self.created_at


@dataclass
class Completion:
    """What a finished extraction writes with the turn's `done` status."""

    outcome: str  # extracted | fallback | rules | skipped
    high_signal_ids: list[str]
    memories: list[NewMemory]
    triples: list[tuple[relations.Triple, int | None]] = field(default_factory=list)
    counts: Mapping[str, int] = field(default_factory=dict)


def _turn(row: Row) -> Turn:
    data = dict(row)
    data["result"] = json.loads(data["result"] or "{}")
    return Turn(**data)


class TurnStore:
    def __init__(self, db: DatabaseHandle, memories: MemoryStore) -> None:
        self.db = db
        self.memories = memories

    async def accept(
        self,
        *,
        agent_id: str,
        session_id: str | None,
        turn_hash: str,
        user_message: str,
        assistant_message: str,
        now: str,
        said_at: str | None = None,
    ) -> tuple[Turn, bool]:
        """Store the raw turn durably; (the turn, False) when the same turn is already known."""

        def txn(conn: Connection) -> tuple[Turn, bool]:
            cursor = conn.execute(
                "INSERT INTO turns (id, agent_id, session_id, turn_hash, user_message,"
                " assistant_message, status, created_at, updated_at, said_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)"
                " ON CONFLICT(agent_id, turn_hash) DO NOTHING",
                (
                    new_id(),
                    agent_id,
                    session_id,
                    turn_hash,
                    user_message,
                    assistant_message,
                    now,
                    now,
                    said_at,
                ),
            )
            created = cursor.rowcount == 1
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM turns WHERE agent_id = ? AND turn_hash = ?",
                (agent_id, turn_hash),
            ).fetchone()
            assert row is not None
            if created:
                counters.add_rows(conn, {"ingest.turns": 1})
            return _turn(row), created

        return await self.db.transact(txn)

    async def get(self, turn_id: str) -> Turn | None:
        row = await self.db.fetchone(f"SELECT {_COLUMNS} FROM turns WHERE id = ?", (turn_id,))
        return _turn(row) if row is not None else None

    async def claim(self, turn: Turn, owner: str, now: str) -> bool:
        """Take `turn` for `owner` if nobody else took it since it was read."""

        def txn(conn: Connection) -> bool:
            cursor = conn.execute(
                "UPDATE turns SET claimed_by = ?, claimed_at = ?, attempts = attempts + 1,"
                " updated_at = ? WHERE id = ? AND status = 'pending' AND claimed_by IS ?",
                (owner, now, now, turn.id, turn.claimed_by),
            )
            return cursor.rowcount == 1

        return await self.db.transact(txn)

    async def pending(self, limit: int = 1000) -> list[Turn]:
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM turns WHERE status = 'pending' ORDER BY seq LIMIT ?", (limit,)
        )
        return [_turn(row) for row in rows]

    async def complete(self, turn: Turn, done: Completion, now: str) -> list[Memory]:
        """Write the extracted memories, their relations and the turn's result at once."""

        def txn(conn: Connection) -> list[Memory]:
            row = conn.execute("SELECT status FROM turns WHERE id = ?", (turn.id,)).fetchone()
            if row is None or row[0] == "done":  # another process finished it first
                return []
            written = [self.memories.remember_in(conn, new, now) for new in done.memories]
            triples = [
                relations.Triple(
                    t.subject,
                    t.predicate,
                    t.object,
                    written[i].memory.id if i is not None and i < len(written) else None,
                )
                for t, i in done.triples
            ]
            if triples:
                relations.add_rows(conn, turn.agent_id, triples, now)
            result = {
                "high_signals": done.high_signal_ids,
                "extracted": [w.memory.id for w in written],
            }
            conn.execute(
                "UPDATE turns SET status = 'done', outcome = ?, result = ?, user_message = '',"
                " assistant_message = '', updated_at = ? WHERE id = ?",
                (done.outcome, json.dumps(result), now, turn.id),
            )
            counters.add_rows(conn, {f"ingest.{done.outcome}": 1, **done.counts})
            return [w.memory for w in written]

        return await self.db.transact(txn)

    async def counts(self, agent_id: str | None = None) -> dict[str, Any]:
        """Turns by status and outcome: one agent's, or every agent's with None."""
        scope, params = (" WHERE agent_id = ?", (agent_id,)) if agent_id else ("", ())
        rows = await self.db.fetchall(
            "SELECT status, COALESCE(outcome, '') AS outcome, COUNT(*) AS n FROM turns"
            f"{scope} GROUP BY 1, 2",
            params,
        )
        out: dict[str, Any] = {"pending": 0, "done": {}}
        for row in rows:
            if row["status"] == "pending":
                out["pending"] += row["n"]
            else:
                out["done"][row["outcome"]] = row["n"]
        return out
