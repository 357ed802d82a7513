"""SQL of reflect: how far each agent's memories were reflected on (`reflect_runs`, each run's
plan kept), what a run reads (the memories since, the entities they touch and those entities'
facts), the one transaction a run applies (entity summaries, proposals, its run row, each change
logged), and the proposals to core a person accepts or rejects (`core_proposals`). The plan
itself is the engine's (engine/beliefs/reflect.py). Portable SQL: both backends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cortex_mcp.store.database import placeholders
from cortex_mcp.store.interfaces import Connection, DatabaseHandle
from cortex_mcp.store.memories import add_log_row

_LIVE = "m.forgotten_at IS NULL AND m.superseded_by IS NULL"


@dataclass(frozen=True)
class EntityFact:
    entity_id: str
    memory_id: str
    content: str
    source: str | None
    importance: float
    occurred_at: str
    status: str


@dataclass(frozen=True)
class EntityText:
    id: str
    name: str
    summary: str


@dataclass(frozen=True)
class Proposal:
    id: str
    agent_id: str
    memory_id: str
    action: str  # promote | archive
    reason: str
    status: str  # pending | accepted | rejected
    created_at: str
    decided_at: str | None = None


class ReflectStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def mark(self, agent_id: str) -> int:
        """The highest seq of the agent's memories a finished run reflected on (0: none)."""
        value = await self.db.scalar(
            "SELECT MAX(through_seq) FROM reflect_runs WHERE agent_id = ? AND finished_at <> ''",
            (agent_id,),
        )
        return int(value or 0)

    async def stored_plan(self, agent_id: str) -> tuple[str, dict[str, Any]] | None:
        """(run id, plan) of the agent's run that stored its plan and did not finish."""
        row = await self.db.fetchone(
            "SELECT id, plan FROM reflect_runs WHERE agent_id = ? AND finished_at = ''"
            " ORDER BY started_at, id LIMIT 1",
            (agent_id,),
        )
        return None if row is None else (str(row[0]), json.loads(row[1]))

    async def store_plan(
        self, agent_id: str, run_id: str, through_seq: int, plan: dict[str, Any], started_at: str
    ) -> None:
        """A run's plan, stored before it does anything (unfinished: `finished_at` empty), so
        that a run interrupted on the way is resumed from it rather than planned again."""
        row = (run_id, agent_id, through_seq, json.dumps(plan, ensure_ascii=False), started_at)

        def txn(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO reflect_runs (id, agent_id, through_seq, plan, started_at,"
                " finished_at) VALUES (?, ?, ?, ?, ?, '')",
                row,
            )

        await self.db.transact(txn)

    async def save_plan(self, run_id: str, plan: dict[str, Any]) -> None:
        """The stored plan with what the run did so far (an entity's LLM summary)."""
        text = json.dumps(plan, ensure_ascii=False)

        def txn(conn: Connection) -> None:
            conn.execute(
                "UPDATE reflect_runs SET plan = ? WHERE id = ? AND finished_at = ''",
                (text, run_id),
            )

        await self.db.transact(txn)

    async def newest_seq(self, agent_id: str) -> int:
        value = await self.db.scalar(
            "SELECT MAX(seq) FROM memories WHERE agent_id = ?", (agent_id,)
        )
        return int(value or 0)

    async def new_memory_ids(self, agent_id: str, after: int, since: str | None) -> list[str]:
        """The agent's live memories stored past `after` (and said since `since`)."""
        sql = f"SELECT m.id FROM memories m WHERE m.agent_id = ? AND m.seq > ? AND {_LIVE}"
        params: list[Any] = [agent_id, after]
        if since is not None:
            sql += " AND m.occurred_at >= ?"
            params.append(since)
        rows = await self.db.fetchall(sql + " ORDER BY m.seq", params)
        return [str(row[0]) for row in rows]

    async def touched_entities(self, agent_id: str, after: int, since: str | None) -> list[str]:
        """The entities the agent's live memories past `after` are linked to."""
        sql = (
            "SELECT DISTINCT l.entity_id FROM memory_entities l JOIN memories m"
            f" ON m.id = l.memory_id WHERE l.agent_id = ? AND m.seq > ? AND {_LIVE}"
        )
        params: list[Any] = [agent_id, after]
        if since is not None:
            sql += " AND m.occurred_at >= ?"
            params.append(since)
        rows = await self.db.fetchall(sql, params)
        return sorted(str(row[0]) for row in rows)

    async def entities_linked(self, agent_id: str, memory_id: str) -> list[str]:
        rows = await self.db.fetchall(
            "SELECT entity_id FROM memory_entities WHERE agent_id = ? AND memory_id = ?",
            (agent_id, memory_id),
        )
        return sorted(str(row[0]) for row in rows)

    async def set_summaries(self, agent_id: str, summaries: dict[str, str], now: str) -> None:
        """Entity summaries written again (a memory they were written from left)."""

        def txn(conn: Connection) -> None:
            for entity_id, summary in sorted(summaries.items()):
                conn.execute(
                    "UPDATE entities SET summary = ?, updated_at = ? WHERE id = ? AND agent_id = ?",
                    (summary, now, entity_id, agent_id),
                )

        await self.db.transact(txn)

    async def entities(self, agent_id: str, entity_ids: Sequence[str]) -> list[EntityText]:
        if not entity_ids:
            return []
        rows = await self.db.fetchall(
            "SELECT id, name, summary FROM entities WHERE agent_id = ?"
            f" AND id IN ({placeholders(entity_ids)}) ORDER BY id",
            (agent_id, *entity_ids),
        )
        return [EntityText(str(r[0]), str(r[1]), str(r[2] or "")) for r in rows]

    async def facts(self, agent_id: str, entity_ids: Sequence[str]) -> list[EntityFact]:
        """The live, not superseded memories linked to these entities."""
        if not entity_ids:
            return []
        rows = await self.db.fetchall(
            "SELECT l.entity_id, m.id, m.content, m.source, m.importance, m.occurred_at,"
            " m.status FROM memory_entities l JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.agent_id = ? AND l.entity_id IN ({placeholders(entity_ids)})"
            f" AND m.agent_id = ? AND {_LIVE} AND COALESCE(m.status, 'current') <> 'superseded'",
            (agent_id, *entity_ids, agent_id),
        )
        return [
            EntityFact(
                entity_id=str(r[0]),
                memory_id=str(r[1]),
                content=str(r[2]),
                source=r[3],
                importance=float(r[4]),
                occurred_at=str(r[5]),
                status=str(r[6] or "current"),
            )
            for r in rows
        ]

    async def agents(self) -> list[str]:
        rows = await self.db.fetchall("SELECT DISTINCT agent_id FROM memories ORDER BY agent_id")
        return [str(row[0]) for row in rows]

    async def superseded_core(self, agent_id: str) -> list[tuple[str, str]]:
        """(id, valid_to) of the agent's live core memories whose fact was superseded."""
        rows = await self.db.fetchall(
            "SELECT m.id, m.valid_to FROM memories m WHERE m.agent_id = ? AND m.layer = 'core'"
            f" AND m.status = 'superseded' AND {_LIVE} ORDER BY m.valid_to, m.id",
            (agent_id,),
        )
        return [(str(r[0]), str(r[1] or "")) for r in rows]

    async def pending_keys(self, agent_id: str) -> set[tuple[str, str]]:
        """(memory id, action) of every proposal already made (decided or not): never twice."""
        rows = await self.db.fetchall(
            "SELECT memory_id, action FROM core_proposals WHERE agent_id = ?", (agent_id,)
        )
        return {(str(r[0]), str(r[1])) for r in rows}

    async def apply(
        self,
        agent_id: str,
        run_id: str,
        through_seq: int,
        plan: dict[str, Any],
        summaries: dict[str, tuple[str, list[str]]],
        proposals: Sequence[Proposal],
        started_at: str,
        now: str,
    ) -> None:
        """A run's changes in one transaction: each entity's summary, each proposal, and its
        stored run finished, which moves the agent's mark (so a crash leaves all of it or none),
        each logged."""

        def txn(conn: Connection) -> None:
            for entity_id, (summary, sources) in sorted(summaries.items()):
                conn.execute(
                    "UPDATE entities SET summary = ?, updated_at = ? WHERE id = ? AND agent_id = ?",
                    (summary, now, entity_id, agent_id),
                )
                details = {"rule": "summary", "entity": entity_id}
                add_log_row(conn, "reflect", sources, details, now)
            for proposal in proposals:
                _insert_proposal(conn, proposal)
                details = {
                    "rule": "proposal",
                    "action": proposal.action,
                    "proposal": proposal.id,
                    "reason": proposal.reason,
                }
                add_log_row(conn, "reflect", [proposal.memory_id], details, now)
            conn.execute(
                "UPDATE reflect_runs SET through_seq = ?, plan = ?, started_at = ?,"
                " finished_at = ? WHERE id = ? AND agent_id = ?",
                (
                    through_seq,
                    json.dumps(plan, ensure_ascii=False),
                    started_at,
                    now,
                    run_id,
                    agent_id,
                ),
            )

        await self.db.transact(txn)

    async def proposals(self, agent_id: str, status: str | None) -> list[Proposal]:
        sql = f"SELECT {_PROPOSAL_COLUMNS} FROM core_proposals WHERE agent_id = ?"
        params: list[Any] = [agent_id]
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        rows = await self.db.fetchall(sql + " ORDER BY created_at, id", params)
        return [Proposal(*row) for row in rows]

    async def proposal(self, agent_id: str, proposal_id: str) -> Proposal | None:
        row = await self.db.fetchone(
            f"SELECT {_PROPOSAL_COLUMNS} FROM core_proposals WHERE agent_id = ? AND id = ?",
            (agent_id, proposal_id),
        )
        return Proposal(*row) if row is not None else None

    async def decide(self, agent_id: str, proposal: Proposal, status: str, now: str) -> bool:
        """Mark a pending proposal accepted or rejected (logged); False if it was not pending."""

        def txn(conn: Connection) -> bool:
            cursor = conn.execute(
                "UPDATE core_proposals SET status = ?, decided_at = ?"
                " WHERE id = ? AND agent_id = ? AND status = 'pending'",
                (status, now, proposal.id, agent_id),
            )
            if cursor.rowcount != 1:
                return False
            details = {"rule": status, "proposal": proposal.id, "action": proposal.action}
            add_log_row(conn, "reflect", [proposal.memory_id], details, now)
            return True

        return await self.db.transact(txn)


_PROPOSAL_COLUMNS = "id, agent_id, memory_id, action, reason, status, created_at, decided_at"


def _insert_proposal(conn: Connection, proposal: Proposal) -> None:
    conn.execute(
        f"INSERT INTO core_proposals ({_PROPOSAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            proposal.id,
            proposal.agent_id,
            proposal.memory_id,
            proposal.action,
            proposal.reason,
            proposal.status,
            proposal.created_at,
            proposal.decided_at,
        ),
    )
