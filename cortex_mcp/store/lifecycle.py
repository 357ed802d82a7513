"""The lifecycle's SQL: the snapshot a plan is made from, runs (resumable plans), and one
transaction per phase that applies the phase's actions, logs them and advances the run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cortex_mcp.models import LifecycleAction, Memory, NewMemory
from cortex_mcp.store.database import OF_AGENT, placeholders, set_meta
from cortex_mcp.store.interfaces import Connection, DatabaseHandle
from cortex_mcp.store.lifecycle_phases import (
    CHUNK,
    LIVE,
    PhaseResult,
    action_key,
    apply_actions,
    chunks,
    delete_originals,
    rewrite_memory,
)
from cortex_mcp.store.memories import MEMORY_COLUMNS, MemoryStore, log_entry, row_to_memory

LAST_SUCCESS_KEY = "lifecycle.last_success"
__all__ = ["LifecycleStore", "PhaseResult", "RunRecord", "action_key"]


@dataclass(frozen=True)
class RunRecord:
    id: int
    scope: str
    run_at: str
    next_phase: int
    plan: list[LifecycleAction]
    report: dict[str, Any]


class LifecycleStore:
    def __init__(self, db: DatabaseHandle, memories: MemoryStore) -> None:
        self.db = db
        self.memories = memories

    # ---- reads --------------------------------------------------------------------------

    async def snapshot(
        self, agent_id: str | None, *, archive_before: str | None = None
    ) -> list[Memory]:
        """Every memory the lifecycle may act on: live, not yet compressed into a summary;
        with `archive_before`, archive memories only when last changed before it (the rest
        of the archive waits for its time to be compressed: no phase reads it)."""
        scope, params = ("agent_id = ? AND ", [agent_id]) if agent_id else ("", [])
        if archive_before is not None:
            scope += "(layer != 'archive' OR updated_at <= ?) AND "
            params.append(archive_before)
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {scope}{LIVE}"
            " AND json_extract(metadata, '$.compressed_into') IS NULL ORDER BY seq",
            params,
        )
        return [row_to_memory(row) for row in rows]

    async def vectors(self, ids: list[str], model: str) -> dict[str, bytes]:
        """The stored vectors of one embedding model for these memories (those that have one)."""
        found: dict[str, bytes] = {}
        for chunk in chunks(ids, CHUNK):
            rows = await self.db.fetchall(
                "SELECT memory_id, vector FROM memory_vectors WHERE model = ?"
                f" AND memory_id IN ({placeholders(chunk)})",
                [model, *chunk],
            )
            found.update((str(r[0]), bytes(r[1])) for r in rows)
        return found

    async def ranked_members(
        self, agent_id: str, ids: list[str], limit: int
    ) -> tuple[int, list[Memory]]:
        """(how many of `ids` are memories of `agent_id` that still exist, the first `limit`
        of them by summary rank: importance, then accesses, then age, then their order in
        `ids`). A summary's `covers` may name anything; only its agent's memories are read."""
        position = {memory_id: n for n, memory_id in enumerate(ids)}
        ranks = []
        for chunk in chunks(list(position), CHUNK):
            rows = await self.db.fetchall(
                "SELECT id, importance, access_count, created_at FROM memories"
                f" WHERE id IN ({placeholders(chunk)}) AND {OF_AGENT}",
                [*chunk, agent_id],
            )
            ranks += [(-r[1], -r[2], r[3], position[r[0]], str(r[0])) for r in rows]
        top = [rank[-1] for rank in sorted(ranks)[:limit]]
        found = await self.memories.get_many(top, agent_id=agent_id)
        return len(ranks), [found[i] for i in top if i in found]

    async def agents(self) -> list[str]:
        """Every agent a run over every agent takes in turn: those with memories, and those
        with an interrupted run of their own."""
        rows = await self.db.fetchall(
            "SELECT agent_id FROM memories UNION SELECT scope FROM lifecycle_runs"
            " WHERE status = 'running' AND scope != '*' ORDER BY 1"
        )
        return [str(row[0]) for row in rows]

    async def unfinished_run(self, scope: str) -> RunRecord | None:
        row = await self.db.fetchone(
            "SELECT id, scope, run_at, next_phase, plan, report FROM lifecycle_runs"
            " WHERE status = 'running' AND scope = ? ORDER BY id DESC LIMIT 1",
            (scope,),
        )
        return _run_record(row) if row is not None else None

    async def last_success(self) -> str | None:
        return await self.db.get_meta(LAST_SUCCESS_KEY)

    async def recent_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT id, scope, run_at, started_at, finished_at, status, next_phase, report"
            " FROM lifecycle_runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [{**dict(row), "report": json.loads(row["report"])} for row in rows]

    async def log(self, limit: int = 100, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The newest entries: every agent's, or with `agent_id` those naming one of that
        agent's memories (a purge entry, whose memory is gone, names its agent in details)."""
        if agent_id is None:
            rows = await self.db.fetchall(
                "SELECT id, action, memory_ids, details, executed_at FROM lifecycle_log"
                " ORDER BY id DESC LIMIT ?",
                (limit,),
            )
        else:
            rows = await self.db.fetchall(
                "SELECT l.id, l.action, l.memory_ids, l.details, l.executed_at"
                " FROM lifecycle_log AS l"
                " WHERE json_extract(l.details, '$.agent_id') = ?"
                " OR EXISTS (SELECT 1 FROM json_each(l.memory_ids) AS j"
                " JOIN memories AS m ON m.id = j.value WHERE m.agent_id = ?)"
                " ORDER BY l.id DESC LIMIT ?",
                (agent_id, agent_id, limit),
            )
        return [log_entry(row) for row in rows]

    # ---- writes -------------------------------------------------------------------------

    async def start_run(
        self, scope: str, run_at: str, plan: list[LifecycleAction], started_at: str
    ) -> int:
        def txn(conn: Connection) -> int:
            cursor = conn.execute(
                "INSERT INTO lifecycle_runs (scope, run_at, started_at, status, plan)"
                " VALUES (?, ?, ?, 'running', ?)",
                (scope, run_at, started_at, json.dumps([a.model_dump() for a in plan])),
            )
            return int(cursor.lastrowid or 0)

        return await self.db.transact(txn)

    async def finish_run(self, run_id: int, report: dict[str, Any], finished_at: str) -> None:
        def txn(conn: Connection) -> None:
            conn.execute(
                "UPDATE lifecycle_runs SET status = 'done', finished_at = ?, report = ?"
                " WHERE id = ?",
                (finished_at, json.dumps(report, ensure_ascii=False), run_id),
            )
            set_meta(conn, LAST_SUCCESS_KEY, finished_at)

        await self.db.transact(txn)

    async def apply_phase(
        self,
        run_id: int,
        phase_index: int,
        actions: list[LifecycleAction],
        now: str,
        *,
        new_memories: dict[str, NewMemory] | None = None,
        decay_scores: dict[str, float] | None = None,
        delete_compressed: bool = False,
    ) -> PhaseResult:
        """One transaction: every action whose memories are still as planned, the audit log,
        refreshed decay scores, and the run's progress marker (so a crash resumes after it)."""
        new_memories = new_memories or {}

        def txn(conn: Connection) -> PhaseResult:
            result = apply_actions(
                conn, self.memories, run_id, actions, new_memories, now, self.db.vec_loaded
            )
            if decay_scores:
                conn.executemany(
                    "UPDATE memories SET decay_score = ? WHERE id = ?",
                    [(round(score, 6), memory_id) for memory_id, score in decay_scores.items()],
                )
            if delete_compressed:
                delete_originals(conn, result.applied, self.db.vec_loaded)
            conn.execute(
                "UPDATE lifecycle_runs SET next_phase = ? WHERE id = ?", (phase_index + 1, run_id)
            )
            return result

        return await self.db.transact(txn)

    async def mark_phase_done(self, run_id: int, phase_index: int) -> None:
        def txn(conn: Connection) -> None:
            conn.execute(
                "UPDATE lifecycle_runs SET next_phase = ? WHERE id = ?", (phase_index + 1, run_id)
            )

        await self.db.transact(txn)

    async def summaries_citing(self, memory_id: str, agent_id: str) -> list[Memory]:
        """The summaries of `agent_id` whose covers name `memory_id` (another agent's summary
        may list it too, but never holds its text, and is not this agent's to change)."""
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE agent_id = ? AND category = 'summary'"
            " AND EXISTS (SELECT 1 FROM json_each(memories.metadata, '$.covers') WHERE value = ?)",
            (agent_id, memory_id),
        )
        return [row_to_memory(row) for row in rows]

    async def rewrite_summary(
        self, summary_id: str, content: str, metadata: dict[str, Any], now: str
    ) -> None:
        """New text for a summary (after a purge of something it quoted): row, FTS, hash;
        its vectors go, to be embedded again from the new text."""

        def txn(conn: Connection) -> None:
            rewrite_memory(
                conn, self.memories, summary_id, content, metadata, now, self.db.vec_loaded
            )
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

        await self.db.transact(txn)

    async def optimize_text_index(self) -> None:
        def txn(conn: Connection) -> None:
            conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

        await self.db.transact(txn)


def _run_record(row: Any) -> RunRecord:
    plan = [LifecycleAction.model_validate(a) for a in json.loads(row["plan"])]
    return RunRecord(
        id=int(row["id"]),
        scope=str(row["scope"]),
        run_at=str(row["run_at"]),
        next_phase=int(row["next_phase"]),
        plan=plan,
        report=json.loads(row["report"]),
    )
