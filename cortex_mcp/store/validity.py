"""SQL of facts' validity: the single-valued slots each memory states (`memory_slots`), how far
each agent's memories have been read for them (`validity_progress`), and the `valid_to` and
`status` a slot's chain of facts gives each memory. The rule that decides them is the
engine's (engine/beliefs/validity.py), handed in as a function and run inside the one
transaction that reads the chain and writes its outcome. Portable SQL: both backends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cortex_mcp.models import Memory, SlotClaim, ValidityStatus
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.interfaces import Connection, DatabaseHandle, Row
from cortex_mcp.store.memories import MEMORY_COLUMNS, add_log_row, row_to_memory


@dataclass(frozen=True)
class SlotFactRow:
    """One memory's fact of one slot, as a chain reads it."""

    memory_id: str
    seq: int
    holder: str
    slot: str
    value: str
    speaker: str | None
    valid_from: str
    valid_to: str | None
    status: ValidityStatus


@dataclass(frozen=True)
class Validity:
    """What the rule decides for one memory of a chain."""

    memory_id: str
    valid_to: str | None
    status: ValidityStatus
    by: str | None = None  # the memory that closed it, or disputes it


ChainRule = Callable[[Sequence[SlotFactRow]], list[Validity]]

_CHAIN = (
    "SELECT s.memory_id, m.seq, s.holder, s.slot, s.value, s.speaker,"
    " COALESCE(m.valid_from, m.occurred_at) AS valid_from, m.valid_to, m.status"
    " FROM memory_slots s JOIN memories m ON m.id = s.memory_id"
    " WHERE s.agent_id = ? AND s.holder = ? AND s.slot = ?"
    " AND m.agent_id = ? AND m.forgotten_at IS NULL AND m.superseded_by IS NULL"
)


class ValidityStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def unread(self, agent_id: str, limit: int) -> list[tuple[int, Memory]]:
        """The agent's memories past its mark (oldest first), with their seq."""
        rows = await self.db.fetchall(  # the mark read in the same trip (one per recall)
            f"SELECT seq, {MEMORY_COLUMNS} FROM memories WHERE agent_id = ? AND seq >"
            " COALESCE((SELECT seq FROM validity_progress WHERE agent_id = ?), 0)"
            " ORDER BY seq LIMIT ?",
            (agent_id, agent_id, limit),
        )
        return [(int(row["seq"]), row_to_memory(_without_seq(row))) for row in rows]

    async def keepers_behind(self, agent_id: str) -> tuple[bool, bool]:
        """Whether the validity keeper and the belief keeper have memories of the agent past
        their marks, in one trip for both (once a recall has read new memories, neither has
        until the next is written)."""
        rows = await self.db.fetch_small(
            "SELECT (SELECT MAX(seq) FROM memories WHERE agent_id = ?),"
            " (SELECT seq FROM validity_progress WHERE agent_id = ?),"
            " (SELECT seq FROM belief_progress WHERE agent_id = ?)",
            (agent_id, agent_id, agent_id),
        )
        row = rows[0] if rows else None
        if row is None or row[0] is None:  # no memory at all
            return False, False
        newest = int(row[0])
        return newest > int(row[1] or 0), newest > int(row[2] or 0)

    async def agents_behind(self) -> list[str]:
        """Agents with memories past their mark."""
        rows = await self.db.fetchall(
            "SELECT DISTINCT m.agent_id FROM memories m LEFT JOIN validity_progress p"
            " ON p.agent_id = m.agent_id WHERE m.seq > COALESCE(p.seq, 0)"
        )
        return sorted(str(row[0]) for row in rows)

    async def record(
        self,
        agent_id: str,
        claims: dict[str, list[SlotClaim]],
        through_seq: int,
        rule: ChainRule,
        now: str,
    ) -> list[Validity]:
        """Store the memories' claims, move the agent's mark to `through_seq`, and settle
        every chain a claim joined; the changes made (each logged)."""

        def txn(conn: Connection) -> list[Validity]:
            keys: set[tuple[str, str]] = set()
            for memory_id, found in claims.items():
                for claim in found:
                    _insert_claim(conn, agent_id, memory_id, claim)
                    keys.add((claim.holder, claim.slot))
                if found:
                    conn.execute(
                        "UPDATE memories SET slot = ? WHERE id = ? AND agent_id = ?",
                        (f"{found[0].holder}/{found[0].slot}", memory_id, agent_id),
                    )
            _move_mark(conn, agent_id, through_seq)
            return _settle(conn, agent_id, keys, rule, now)

        return await self.db.transact(txn, names=False)  # slots and standings only

    async def keys_of(self, agent_id: str, memory_id: str) -> list[tuple[str, str]]:
        """The (holder, slot) chains `memory_id` is in."""
        rows = await self.db.fetchall(
            "SELECT holder, slot FROM memory_slots WHERE agent_id = ? AND memory_id = ?",
            (agent_id, memory_id),
        )
        return sorted({(str(r["holder"]), str(r["slot"])) for r in rows})

    async def settle_keys(
        self, agent_id: str, keys: Sequence[tuple[str, str]], rule: ChainRule, now: str
    ) -> list[Validity]:
        """Settle these chains again (a fact left or rejoined them): the facts around it take
        the standing they have without it, or with it back."""

        def txn(conn: Connection) -> list[Validity]:
            return _settle(conn, agent_id, set(keys), rule, now)

        return await self.db.transact(txn, names=False)  # slots and standings only

    async def chain(self, agent_id: str, holder: str, slot: str) -> list[SlotFactRow]:
        """A slot's facts, oldest first (live memories only)."""
        rows = await self.db.fetchall(
            f"{_CHAIN} ORDER BY valid_from, m.seq", (agent_id, holder, slot, agent_id)
        )
        return [_fact_row(row) for row in rows]

    async def slot_memories(
        self, agent_id: str, holders: Sequence[str], slots: Sequence[str]
    ) -> list[str]:
        """Ids of the live memories that state one of `slots` of one of `holders`."""
        if not holders or not slots:
            return []
        rows = await self.db.fetchall(
            "SELECT DISTINCT s.memory_id FROM memory_slots s JOIN memories m ON m.id = s.memory_id"
            f" WHERE s.agent_id = ? AND s.holder IN ({placeholders(holders)})"
            f" AND s.slot IN ({placeholders(slots)}) AND m.agent_id = ?"
            " AND m.forgotten_at IS NULL AND m.superseded_by IS NULL",
            (agent_id, *holders, *slots, agent_id),
        )
        return [str(row[0]) for row in rows]

    async def holders_of(self, agent_id: str, slots: Sequence[str]) -> list[str]:
        """Every holder the agent has facts of `slots` about."""
        if not slots:
            return []
        rows = await self.db.fetchall(
            "SELECT DISTINCT holder FROM memory_slots WHERE agent_id = ?"
            f" AND slot IN ({placeholders(slots)})",
            (agent_id, *slots),
        )
        return [str(row[0]) for row in rows]


def _insert_claim(conn: Connection, agent_id: str, memory_id: str, claim: SlotClaim) -> None:
    conn.execute(
        "INSERT INTO memory_slots (agent_id, memory_id, holder, slot, value, speaker)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id, holder, slot) DO NOTHING",
        (agent_id, memory_id, claim.holder, claim.slot, claim.value, claim.speaker),
    )


def _move_mark(conn: Connection, agent_id: str, seq: int) -> None:
    conn.execute(
        "INSERT INTO validity_progress (agent_id, seq) VALUES (?, ?) ON CONFLICT (agent_id)"
        " DO UPDATE SET seq = CASE WHEN excluded.seq > validity_progress.seq"
        " THEN excluded.seq ELSE validity_progress.seq END",
        (agent_id, seq),
    )


def _settle(
    conn: Connection, agent_id: str, keys: set[tuple[str, str]], rule: ChainRule, now: str
) -> list[Validity]:
    changed: list[Validity] = []
    for holder, slot in sorted(keys):
        rows = conn.execute(
            f"{_CHAIN} ORDER BY valid_from, m.seq", (agent_id, holder, slot, agent_id)
        ).fetchall()
        facts = [_fact_row(row) for row in rows]
        before = {f.memory_id: (f.valid_to, f.status) for f in facts}
        for outcome in rule(facts):
            if before.get(outcome.memory_id) == (outcome.valid_to, outcome.status):
                continue
            conn.execute(
                "UPDATE memories SET valid_to = ?, status = ? WHERE id = ? AND agent_id = ?",
                (outcome.valid_to, outcome.status.value, outcome.memory_id, agent_id),
            )
            details = {
                "rule": "slot",
                "holder": holder,
                "slot": slot,
                "status": outcome.status.value,
                "valid_to": outcome.valid_to,
                "by": outcome.by,
            }
            ids = [outcome.memory_id, *([outcome.by] if outcome.by else [])]
            add_log_row(conn, "validity", ids, details, now)
            changed.append(outcome)
    return changed


def _fact_row(row: Row) -> SlotFactRow:
    data = dict(row)
    return SlotFactRow(
        memory_id=str(data["memory_id"]),
        seq=int(data["seq"]),
        holder=str(data["holder"]),
        slot=str(data["slot"]),
        value=str(data["value"]),
        speaker=data["speaker"],
        valid_from=str(data["valid_from"]),
        valid_to=data["valid_to"],
        status=ValidityStatus(data["status"] or "current"),
    )


def _without_seq(row: Row) -> dict[str, object]:
    data = dict(row)
    data.pop("seq", None)
    return data
