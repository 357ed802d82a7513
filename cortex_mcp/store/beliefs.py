"""SQL of beliefs: each belief of a holder (`beliefs`), the memories that are evidence for or
against it (`belief_evidence`), and how far each agent's memories have been read for them
(`belief_progress`). Which memory is a belief and which speaks to it is the engine's
(engine/beliefs/evidence.py); how the evidence sets a belief's confidence is the engine's
rule too (engine/beliefs/keeper.py), handed in and run inside the transaction that stores the
evidence. Portable SQL: both backends."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cortex_mcp.models import Memory
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.interfaces import Connection, DatabaseHandle, Read, Row
from cortex_mcp.store.memories import MEMORY_COLUMNS, add_log_row, row_to_memory


@dataclass(frozen=True)
class BeliefRow:
    id: str
    agent_id: str
    holder: str
    holder_name: str
    memory_id: str  # the memory that states the belief as now held
    statement: str
    stated: float | None  # the confidence its author gave (O(c=…)), else None: the prior
    confidence: float
    for_count: int
    against_count: int
    last_evidence_at: str | None
    trend: str
    revisions: int
    history: list[dict[str, Any]]  # the statements it held before, each with when it changed
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class EvidenceRow:
    """One live memory's say on a belief, with its words (a revision takes them)."""

    belief_id: str
    memory_id: str
    supports: bool
    weight: float
    at: str
    content: str


@dataclass(frozen=True)
class NewBelief:
    id: str
    holder: str
    holder_name: str
    memory_id: str
    statement: str
    stated: float | None


@dataclass(frozen=True)
class NewEvidence:
    belief_id: str
    memory_id: str
    supports: bool
    weight: float
    at: str


@dataclass(frozen=True)
class Standing:
    """What the rule makes of a belief's evidence."""

    memory_id: str
    statement: str
    confidence: float
    for_count: int
    against_count: int
    last_evidence_at: str | None
    trend: str
    revisions: int


BeliefRule = Callable[[BeliefRow, Sequence[EvidenceRow]], Standing]

_BELIEF_COLUMNS = (
    "id, agent_id, holder, holder_name, memory_id, statement, stated, confidence, for_count,"
    " against_count, last_evidence_at, trend, revisions, history, created_at, updated_at"
)
_EVIDENCE = (
    "SELECT e.belief_id, e.memory_id, e.supports, e.weight, e.at, m.content"
    " FROM belief_evidence e JOIN memories m ON m.id = e.memory_id"
    " WHERE m.forgotten_at IS NULL AND m.superseded_by IS NULL"
)


class BeliefStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def unread(self, agent_id: str, limit: int) -> list[tuple[int, Memory]]:
        """The agent's memories past its mark (oldest first), with their seq."""
        rows = await self.db.fetchall(  # the mark read in the same trip (one per recall)
            f"SELECT seq, {MEMORY_COLUMNS} FROM memories WHERE agent_id = ? AND seq >"
            " COALESCE((SELECT seq FROM belief_progress WHERE agent_id = ?), 0)"
            " ORDER BY seq LIMIT ?",
            (agent_id, agent_id, limit),
        )
        out = []
        for row in rows:
            data = dict(row)
            seq = int(data.pop("seq"))
            out.append((seq, row_to_memory(data)))
        return out

    async def beliefs(self, agent_id: str, holders: Sequence[str] | None = None) -> list[BeliefRow]:
        """The agent's beliefs (of these holders), oldest first."""
        sql = f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE agent_id = ?"
        params: list[Any] = [agent_id]
        if holders is not None:
            if not holders:
                return []
            sql += f" AND holder IN ({placeholders(holders)})"
            params += list(holders)
        rows = await self.db.fetchall(sql + " ORDER BY created_at, id", params)
        return [_belief_row(row) for row in rows]

    async def beliefs_stating(self, agent_id: str, memory_ids: Sequence[str]) -> list[BeliefRow]:
        """The beliefs these memories state (as now held)."""
        if not memory_ids:
            return []
        read = self.stating_read(agent_id, memory_ids)
        return read.decode(await self.db.fetchall(read.sql, read.params))

    def stating_read(self, agent_id: str, memory_ids: Sequence[str]) -> Read[list[BeliefRow]]:
        """`beliefs_stating` as a read to run beside another (memory_ids not empty)."""
        return Read(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE agent_id = ?"
            f" AND memory_id IN ({placeholders(memory_ids)})",
            (agent_id, *memory_ids),
            lambda rows: [_belief_row(row) for row in rows],
        )

    async def beliefs_citing(self, agent_id: str, memory_id: str) -> list[str]:
        """Ids of the beliefs `memory_id` is evidence of."""
        rows = await self.db.fetchall(
            "SELECT belief_id FROM belief_evidence WHERE agent_id = ? AND memory_id = ?",
            (agent_id, memory_id),
        )
        return sorted(str(row[0]) for row in rows)

    async def touched_since(self, agent_id: str, after_seq: int) -> list[BeliefRow]:
        """The beliefs with evidence from a memory stored past `after_seq`."""
        rows = await self.db.fetchall(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE agent_id = ? AND id IN"
            " (SELECT e.belief_id FROM belief_evidence e JOIN memories m ON m.id = e.memory_id"
            " WHERE e.agent_id = ? AND m.seq > ?) ORDER BY created_at, id",
            (agent_id, agent_id, after_seq),
        )
        return [_belief_row(row) for row in rows]

    async def evidence(self, agent_id: str, belief_ids: Sequence[str]) -> list[EvidenceRow]:
        """The live evidence of these beliefs, in time order."""
        if not belief_ids:
            return []
        rows = await self.db.fetchall(
            f"{_EVIDENCE} AND e.agent_id = ? AND e.belief_id IN ({placeholders(belief_ids)})"
            " ORDER BY e.at, e.memory_id",
            (agent_id, *belief_ids),
        )
        return [_evidence_row(row) for row in rows]

    async def record(
        self,
        agent_id: str,
        born: Sequence[NewBelief],
        evidence: Sequence[NewEvidence],
        through_seq: int,
        rule: BeliefRule,
        now: str,
    ) -> list[str]:
        """Store new beliefs and evidence, move the agent's mark to `through_seq`, and settle
        every belief that gained evidence; the ids of the beliefs whose standing changed."""

        def txn(conn: Connection) -> list[str]:
            for belief in born:
                _insert_belief(conn, agent_id, belief, now)
            for piece in evidence:
                conn.execute(
                    "INSERT INTO belief_evidence (belief_id, memory_id, agent_id, supports,"
                    " weight, at) VALUES (?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (belief_id, memory_id) DO NOTHING",
                    (
                        piece.belief_id,
                        piece.memory_id,
                        agent_id,
                        int(piece.supports),
                        piece.weight,
                        piece.at,
                    ),
                )
            conn.execute(
                "INSERT INTO belief_progress (agent_id, seq) VALUES (?, ?) ON CONFLICT (agent_id)"
                " DO UPDATE SET seq = CASE WHEN excluded.seq > belief_progress.seq"
                " THEN excluded.seq ELSE belief_progress.seq END",
                (agent_id, through_seq),
            )
            touched = sorted({piece.belief_id for piece in evidence})
            return _settle(conn, agent_id, touched, rule, now)

        return await self.db.transact(txn, names=False)  # beliefs only

    async def settle(
        self, agent_id: str, belief_ids: Sequence[str], rule: BeliefRule, now: str
    ) -> list[str]:
        """Settle these beliefs again from their live evidence (reflect, a forget)."""

        def txn(conn: Connection) -> list[str]:
            return _settle(conn, agent_id, sorted(belief_ids), rule, now)

        return await self.db.transact(txn, names=False)  # beliefs only


def _insert_belief(conn: Connection, agent_id: str, belief: NewBelief, now: str) -> None:
    conn.execute(
        f"INSERT INTO beliefs ({_BELIEF_COLUMNS}) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, NULL, 'new', 0, '[]', ?, ?)",
        (
            belief.id,
            agent_id,
            belief.holder,
            belief.holder_name,
            belief.memory_id,
            belief.statement,
            belief.stated,
            belief.stated if belief.stated is not None else 0.5,
            now,
            now,
        ),
    )
    add_log_row(
        conn,
        "belief",
        [belief.memory_id],
        {"rule": "born", "belief": belief.id, "holder": belief.holder},
        now,
    )


def _settle(
    conn: Connection, agent_id: str, belief_ids: Sequence[str], rule: BeliefRule, now: str
) -> list[str]:
    changed = []
    for belief_id in belief_ids:
        row = conn.execute(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE id = ? AND agent_id = ?",
            (belief_id, agent_id),
        ).fetchone()
        if row is None:
            continue
        belief = _belief_row(row)
        pieces = [
            _evidence_row(r)
            for r in conn.execute(
                f"{_EVIDENCE} AND e.agent_id = ? AND e.belief_id = ? ORDER BY e.at, e.memory_id",
                (agent_id, belief_id),
            ).fetchall()
        ]
        standing = rule(belief, pieces)
        if _same(belief, standing):
            continue
        history = list(belief.history)
        if standing.statement != belief.statement:
            history.append({"statement": belief.statement, "until": standing.last_evidence_at})
        conn.execute(
            "UPDATE beliefs SET memory_id = ?, statement = ?, confidence = ?, for_count = ?,"
            " against_count = ?, last_evidence_at = ?, trend = ?, revisions = ?, history = ?,"
            " updated_at = ? WHERE id = ? AND agent_id = ?",
            (
                standing.memory_id,
                standing.statement,
                standing.confidence,
                standing.for_count,
                standing.against_count,
                standing.last_evidence_at,
                standing.trend,
                standing.revisions,
                json.dumps(history, ensure_ascii=False),
                now,
                belief_id,
                agent_id,
            ),
        )
        details = {
            "rule": "evidence",
            "belief": belief_id,
            "confidence": round(standing.confidence, 4),
            "before": round(belief.confidence, 4),
            "for": standing.for_count,
            "against": standing.against_count,
            "trend": standing.trend,
            "revised": standing.statement != belief.statement,
        }
        add_log_row(conn, "belief", [standing.memory_id], details, now)
        changed.append(belief_id)
    return changed


def _same(belief: BeliefRow, standing: Standing) -> bool:
    return (
        belief.memory_id == standing.memory_id
        and belief.statement == standing.statement
        and abs(belief.confidence - standing.confidence) < 1e-9
        and belief.for_count == standing.for_count
        and belief.against_count == standing.against_count
        and belief.last_evidence_at == standing.last_evidence_at
        and belief.trend == standing.trend
        and belief.revisions == standing.revisions
    )


def _belief_row(row: Row) -> BeliefRow:
    data = dict(row)
    history = data["history"]
    return BeliefRow(
        id=str(data["id"]),
        agent_id=str(data["agent_id"]),
        holder=str(data["holder"]),
        holder_name=str(data["holder_name"]),
        memory_id=str(data["memory_id"]),
        statement=str(data["statement"]),
        stated=None if data["stated"] is None else float(data["stated"]),
        confidence=float(data["confidence"]),
        for_count=int(data["for_count"]),
        against_count=int(data["against_count"]),
        last_evidence_at=data["last_evidence_at"],
        trend=str(data["trend"]),
        revisions=int(data["revisions"]),
        history=json.loads(history) if isinstance(history, str) else list(history or []),
        created_at=str(data["created_at"]),
        updated_at=str(data["updated_at"]),
    )


def _evidence_row(row: Row) -> EvidenceRow:
    data = dict(row)
    return EvidenceRow(
        belief_id=str(data["belief_id"]),
        memory_id=str(data["memory_id"]),
        supports=bool(data["supports"]),
        weight=float(data["weight"]),
        at=str(data["at"]),
        content=str(data["content"]),
    )
