"""The lifecycle's SQL: the snapshot a plan is made from, runs (resumable plans), and one
transaction per phase that applies the phase's actions, logs them and advances the run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import aiosqlite

from cortex_mcp.models import LifecycleAction, Memory, NewMemory
from cortex_mcp.store.database import Database, placeholders, set_meta
from cortex_mcp.store.memories import (
    _COLUMNS,
    MemoryStore,
    _delete_from_vec_index,
    log_lifecycle,
    row_to_memory,
)
from cortex_mcp.tokenize import content_hash, index_text

LAST_SUCCESS_KEY = "lifecycle.last_success"
_LIVE = "forgotten_at IS NULL AND superseded_by IS NULL"


@dataclass(frozen=True)
class RunRecord:
    id: int
    scope: str
    run_at: str
    next_phase: int
    plan: list[LifecycleAction]
    report: dict[str, Any]


@dataclass
class PhaseResult:
    applied: list[LifecycleAction]
    skipped: list[LifecycleAction]
    created: dict[str, str]  # action key -> new memory id


class LifecycleStore:
    def __init__(self, db: Database, memories: MemoryStore) -> None:
        self.db = db
        self.memories = memories

    # ---- reads --------------------------------------------------------------------------

    async def snapshot(self, agent_id: str | None) -> list[Memory]:
        """Every memory the lifecycle may act on: live, not yet compressed into a summary."""
        scope, params = ("agent_id = ? AND ", [agent_id]) if agent_id else ("", [])
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM memories WHERE {scope}{_LIVE}"
            " AND json_extract(metadata, '$.compressed_into') IS NULL ORDER BY seq",
            params,
        )
        return [row_to_memory(row) for row in rows]

    async def vectors(self, ids: list[str], model: str) -> dict[str, bytes]:
        """The stored vectors of one embedding model for these memories (those that have one)."""
        found: dict[str, bytes] = {}
        for chunk in _chunks(ids, 500):
            rows = await self.db.fetchall(
                "SELECT memory_id, vector FROM memory_vectors WHERE model = ?"
                f" AND memory_id IN ({placeholders(chunk)})",
                [model, *chunk],
            )
            found.update((str(r[0]), bytes(r[1])) for r in rows)
        return found

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
        return [
            {
                **dict(row),
                "memory_ids": json.loads(row["memory_ids"]),
                "details": json.loads(row["details"]),
            }
            for row in rows
        ]

    # ---- writes -------------------------------------------------------------------------

    async def start_run(
        self, scope: str, run_at: str, plan: list[LifecycleAction], started_at: str
    ) -> int:
        async def txn(conn: aiosqlite.Connection) -> int:
            cursor = await conn.execute(
                "INSERT INTO lifecycle_runs (scope, run_at, started_at, status, plan)"
                " VALUES (?, ?, ?, 'running', ?)",
                (scope, run_at, started_at, json.dumps([a.model_dump() for a in plan])),
            )
            return int(cursor.lastrowid or 0)

        return await self.db.write(txn)

    async def finish_run(self, run_id: int, report: dict[str, Any], finished_at: str) -> None:
        async def txn(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE lifecycle_runs SET status = 'done', finished_at = ?, report = ?"
                " WHERE id = ?",
                (finished_at, json.dumps(report, ensure_ascii=False), run_id),
            )
            await set_meta(conn, LAST_SUCCESS_KEY, finished_at)

        await self.db.write(txn)

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

        async def txn(conn: aiosqlite.Connection) -> PhaseResult:
            result = PhaseResult([], [], {})
            for action in actions:
                key = action_key(action)
                done = await self._apply(conn, action, new_memories.get(key), now, result)
                if done is None:
                    result.skipped.append(action)
                    continue
                result.applied.append(action)
                details = {
                    "run_id": run_id,
                    "before": action.ids,
                    "after": done,
                    "reason": action.reason,
                    "score": action.score,
                }
                await log_lifecycle(conn, action.kind, [*action.ids, *done], details, now)
            if decay_scores:
                await conn.executemany(
                    "UPDATE memories SET decay_score = ? WHERE id = ?",
                    [(round(score, 6), memory_id) for memory_id, score in decay_scores.items()],
                )
            if delete_compressed:
                await self._delete_compressed(conn, result.applied)
            await conn.execute(
                "UPDATE lifecycle_runs SET next_phase = ? WHERE id = ?", (phase_index + 1, run_id)
            )
            return result

        return await self.db.write(txn)

    async def mark_phase_done(self, run_id: int, phase_index: int) -> None:
        async def txn(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE lifecycle_runs SET next_phase = ? WHERE id = ?", (phase_index + 1, run_id)
            )

        await self.db.write(txn)

    async def summaries_citing(self, memory_id: str) -> list[Memory]:
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM memories WHERE category = 'summary' AND EXISTS"
            " (SELECT 1 FROM json_each(memories.metadata, '$.covers') WHERE value = ?)",
            (memory_id,),
        )
        return [row_to_memory(row) for row in rows]

    async def rewrite_summary(
        self, summary_id: str, content: str, metadata: dict[str, Any], now: str
    ) -> None:
        """New text for a summary (after a purge of something it quoted): row, FTS, hash;
        its vectors go, to be embedded again from the new text."""

        async def txn(conn: aiosqlite.Connection) -> None:
            await _rewrite(conn, summary_id, content, metadata, now, self.db.vec_loaded)
            await conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

        await self.db.write(txn)

    async def optimize_text_index(self) -> None:
        async def txn(conn: aiosqlite.Connection) -> None:
            await conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

        await self.db.write(txn)

    # ---- one action ---------------------------------------------------------------------

    async def _apply(
        self,
        conn: aiosqlite.Connection,
        action: LifecycleAction,
        new: NewMemory | None,
        now: str,
        result: PhaseResult,
    ) -> list[str] | None:
        """Apply one action; its `after` ids, or None when its memories changed meanwhile."""
        expected = {"promote": "working", "expire": "working", "merge": "core"}.get(
            action.kind, "core" if action.kind == "archive" else "archive"
        )
        if not await _all_live_in(conn, action.ids, expected):
            return None
        if action.kind in ("promote", "expire", "archive"):
            to = "core" if action.kind == "promote" else "archive"
            await _move(conn, action.ids, to, now)
            return list(action.ids)
        if action.kind == "merge":
            return await self._merge(conn, action, new, now, result)
        if action.kind == "compress" and new is not None and action.into is not None:
            if not await _all_live_in(conn, [action.into], "core"):
                return None
            await _rewrite(conn, action.into, new.content, new.metadata, now, self.db.vec_loaded)
            await _mark_compressed(conn, action.ids, action.into)
            result.created[action_key(action)] = action.into
            return [action.into]
        if action.kind == "compress" and new is not None:
            summary = await self.memories.write_in(conn, new, now)
            await conn.execute(
                "UPDATE memories SET metadata = json_set(metadata, '$.compressed_into', ?)"
                f" WHERE id IN ({placeholders(action.ids)})",
                [summary.memory.id, *action.ids],
            )
            result.created[action_key(action)] = summary.memory.id
            return [summary.memory.id]
        return None

    async def _merge(
        self,
        conn: aiosqlite.Connection,
        action: LifecycleAction,
        new: NewMemory | None,
        now: str,
        result: PhaseResult,
    ) -> list[str]:
        if new is not None:  # the LLM wrote one memory for the whole cluster
            keeper = (await self.memories.write_in(conn, new, now)).memory.id
            result.created[action_key(action)] = keeper
            older = [i for i in action.ids if i != keeper]
        else:
            keeper = action.into or action.ids[-1]
            older = [i for i in action.ids if i != keeper]
        stats = await _fetch_all(
            conn,
            "SELECT MAX(importance), SUM(access_count) FROM memories"
            f" WHERE id IN ({placeholders(older)})",
            older,
        )
        importance, accesses = stats[0][0] or 0.0, stats[0][1] or 0
        await conn.execute(
            "UPDATE memories SET importance = MAX(importance, ?),"
            " access_count = access_count + ? WHERE id = ?",
            (importance, accesses, keeper),
        )
        await conn.execute(
            "UPDATE memories SET superseded_by = ?, layer = 'archive', expires_at = NULL,"
            f" updated_at = ? WHERE id IN ({placeholders(older)})",
            [keeper, now, *older],
        )
        return [keeper]

    async def _delete_compressed(
        self, conn: aiosqlite.Connection, applied: list[LifecycleAction]
    ) -> None:
        """Originals of a summary are removed; their ids stay in the summary and the log."""
        ids = [i for a in applied if a.kind == "compress" for i in a.ids]
        for chunk in _chunks(ids, 500):
            rows = await _fetch_all(
                conn, f"SELECT seq FROM memories WHERE id IN ({placeholders(chunk)})", chunk
            )
            await conn.executemany(
                "DELETE FROM memories_fts WHERE rowid = ?", [(row[0],) for row in rows]
            )
            await conn.execute(
                f"UPDATE relations SET source_memory_id = NULL WHERE source_memory_id IN"
                f" ({placeholders(chunk)})",
                chunk,
            )
            await conn.execute(f"DELETE FROM memories WHERE id IN ({placeholders(chunk)})", chunk)
            if self.db.vec_loaded:
                for memory_id in chunk:
                    await _delete_from_vec_index(conn, memory_id)


async def _rewrite(
    conn: aiosqlite.Connection,
    summary_id: str,
    content: str,
    metadata: dict[str, Any],
    now: str,
    vec_loaded: bool,
) -> None:
    """New text and metadata for a summary: row, FTS, hash; its vectors are dropped so the
    indexer embeds the new text."""
    rows = await _fetch_all(conn, "SELECT seq FROM memories WHERE id = ?", [summary_id])
    if not rows:
        return
    seq = rows[0][0]
    await conn.execute(
        "UPDATE memories SET content = ?, content_hash = ?, metadata = ?, updated_at = ?"
        " WHERE seq = ?",
        (
            content,
            f"summary:{summary_id}:{content_hash(content)}",
            json.dumps(metadata, ensure_ascii=False),
            now,
            seq,
        ),
    )
    await conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
    await conn.execute(
        "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (seq, index_text(content))
    )
    await conn.execute("DELETE FROM memory_vectors WHERE memory_id = ?", (summary_id,))
    if vec_loaded:
        await _delete_from_vec_index(conn, summary_id)


async def _mark_compressed(conn: aiosqlite.Connection, ids: list[str], summary_id: str) -> None:
    await conn.execute(
        "UPDATE memories SET metadata = json_set(metadata, '$.compressed_into', ?)"
        f" WHERE id IN ({placeholders(ids)})",
        [summary_id, *ids],
    )


def action_key(action: LifecycleAction) -> str:
    return f"{action.kind}:{action.agent_id}:{action.period or ''}:{action.ids[0]}"


async def _all_live_in(conn: aiosqlite.Connection, ids: list[str], layer: str) -> bool:
    rows = await _fetch_all(
        conn,
        f"SELECT COUNT(*) FROM memories WHERE id IN ({placeholders(ids)}) AND layer = ?"
        f" AND {_LIVE} AND json_extract(metadata, '$.compressed_into') IS NULL",
        [*ids, layer],
    )
    return int(rows[0][0]) == len(set(ids))


async def _move(conn: aiosqlite.Connection, ids: list[str], layer: str, now: str) -> None:
    await conn.execute(
        f"UPDATE memories SET layer = ?, expires_at = NULL, updated_at = ?"
        f" WHERE id IN ({placeholders(ids)})",
        [layer, now, *ids],
    )


async def _fetch_all(conn: aiosqlite.Connection, sql: str, params: list[Any]) -> list[Any]:
    async with conn.execute(sql, params) as cursor:
        return list(await cursor.fetchall())


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


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
