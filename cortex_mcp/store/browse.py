"""Reads (and the one write, restore) behind the dashboard: the memory table paged by keyset,
agents, per-day counts, a memory's provenance, the extraction log and storage figures.

Keyset paging: rows are ordered by (sort column, seq) and a page starts after the last row of
the previous one, so page 2000 costs what page 1 costs (OFFSET would walk every skipped row).
Every query here is scoped to one agent."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex_mcp.models import Layer, Memory
from cortex_mcp.store.database import OF_AGENT, placeholders
from cortex_mcp.store.interfaces import DatabaseHandle
from cortex_mcp.store.memories import MEMORY_COLUMNS, log_entry, row_to_memory

COUNT_CAP = 10_000
SORTS = ("created_at", "occurred_at", "updated_at", "importance", "access_count")
STATUSES = ("live", "forgotten", "superseded", "all")

LAYER_VALUES = [layer.value for layer in Layer]

_STATUS_SQL = {
    "live": "forgotten_at IS NULL AND superseded_by IS NULL",
    "forgotten": "forgotten_at IS NOT NULL",
    "superseded": "superseded_by IS NOT NULL",
    "all": "TRUE",  # a boolean on both stores (PostgreSQL refuses WHERE 1)
}


@dataclass(frozen=True)
class TableQuery:
    """One page of an agent's memory table. `after` is the (sort value, seq) of the last row
    already shown; `match` an FTS5 expression built by the caller (never raw user text)."""

    agent_id: str
    sort: str = "created_at"
    descending: bool = True
    limit: int = 50
    after: tuple[Any, int] | None = None
    layer: str | None = None
    category: str | None = None
    status: str = "live"
    since: str | None = None  # created_at >= since
    until: str | None = None  # created_at < until
    occurred_since: str | None = None  # occurred_at >= occurred_since
    occurred_until: str | None = None  # occurred_at < occurred_until
    match: str | None = None
    ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TablePage:
    memories: list[Memory]
    next_after: tuple[Any, int] | None  # None on the last page
    total: int | None
    total_capped: bool = False  # more than `total` match (COUNT_CAP reached)


class BrowseStore:
    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    # ---- the memory table ---------------------------------------------------------------

    async def page(self, q: TableQuery, *, count: bool) -> TablePage:
        if q.sort not in SORTS or q.status not in STATUSES:
            raise ValueError(f"unknown sort {q.sort!r} or status {q.status!r}")
        where, params = _table_filter(q)
        keyset, key_params = "", []
        if q.after is not None:
            op = "<" if q.descending else ">"
            keyset = f" AND ({q.sort}, seq) {op} (?, ?)"
            key_params = [q.after[0], q.after[1]]
        direction = "DESC" if q.descending else "ASC"
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS}, seq FROM memories WHERE {where}{keyset}"
            f" ORDER BY {q.sort} {direction}, seq {direction} LIMIT ?",
            [*params, *key_params, q.limit + 1],
        )
        more = len(rows) > q.limit
        rows = rows[: q.limit]
        last = rows[-1] if rows else None
        next_after = (last[q.sort], int(last["seq"])) if more and last is not None else None
        total, capped = (await self._count(q)) if count else (None, False)
        return TablePage([row_to_memory(_without_seq(r)) for r in rows], next_after, total, capped)

    async def _count(self, q: TableQuery) -> tuple[int, bool]:
        """The number of rows `q` matches: exact when an index answers alone (agent, status,
        layer, category), else counted up to COUNT_CAP (text and date filters read rows)."""
        where, params = _table_filter(q, for_count=True)
        dated = (q.since, q.until, q.occurred_since, q.occurred_until)
        if q.match is None and all(d is None for d in dated) and not q.ids:
            return int(
                await self.db.scalar(f"SELECT COUNT(*) FROM memories WHERE {where}", params)
            ), False
        found = int(
            await self.db.scalar(
                f"SELECT COUNT(*) FROM (SELECT 1 FROM memories WHERE {where} LIMIT ?)",
                [*params, COUNT_CAP + 1],
            )
        )
        return min(found, COUNT_CAP), found > COUNT_CAP

    async def agents(self) -> list[dict[str, Any]]:
        """Every agent that has memories, with its count (names and numbers only)."""
        rows = await self.db.fetchall(
            "SELECT agent_id, COUNT(*) AS memories FROM memories GROUP BY agent_id ORDER BY agent_id"
        )
        return [{"agent_id": str(r[0]), "memories": int(r[1])} for r in rows]

    async def per_day(self, agent_id: str, since: str | None = None) -> list[dict[str, Any]]:
        """Live memories per day (UTC) and layer of when they happened (`occurred_at`), from
        `since` (a day, YYYY-MM-DD) on, every day when None. Read from idx_memories_live_day
        (the expressions as the index names them)."""
        day_of = "substr(occurred_at, 1, 10)"
        bound, params = (f" AND {day_of} >= ?", [agent_id, since]) if since else ("", [agent_id])
        rows = await self.db.fetchall(
            f"SELECT {day_of} AS day, layer, COUNT(*) AS n FROM memories"
            f" WHERE agent_id = ?{bound} AND forgotten_at IS NULL"
            " AND superseded_by IS NULL GROUP BY 1, 2 ORDER BY 1",
            params,
        )
        days: dict[str, dict[str, Any]] = {}
        for row in rows:
            day = days.setdefault(row["day"], {"day": row["day"], "total": 0})
            day[row["layer"]] = int(row["n"])
            day["total"] += int(row["n"])
        return list(days.values())

    # ---- one memory ---------------------------------------------------------------------

    async def summaries_covering(self, memory: Memory) -> list[Memory]:
        """The summary a compress wrote over this memory (`compressed_into`), or any summary
        of the same agent that lists it among its covers."""
        into = memory.metadata.get("compressed_into")
        if isinstance(into, str):
            rows = await self.db.fetchall(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ? AND agent_id = ?",
                (into, memory.agent_id),
            )
        else:
            rows = await self.db.fetchall(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE agent_id = ? AND category = 'summary'"
                " AND EXISTS (SELECT 1 FROM json_each(memories.metadata, '$.covers')"
                " WHERE value = ?) LIMIT 5",
                (memory.agent_id, memory.id),
            )
        return [row_to_memory(r) for r in rows]

    async def history(self, memory_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """The audit-log entries that name this memory (forget, update, merge, archive...)."""
        rows = await self.db.fetchall(
            "SELECT id, action, memory_ids, details, executed_at FROM lifecycle_log"
            " WHERE memory_ids LIKE ? ORDER BY id DESC LIMIT ?",
            (f'%"{memory_id}"%', limit),
        )
        return [log_entry(r) for r in rows]

    async def turn_of(self, agent_id: str, turn_id: str) -> dict[str, Any] | None:
        rows = await self.db.fetchall(
            f"SELECT {_TURN_COLUMNS} FROM turns WHERE id = ? AND agent_id = ?", (turn_id, agent_id)
        )
        return _turn(rows[0]) if rows else None

    # ---- lifecycle runs -----------------------------------------------------------------

    async def runs(self, agent_id: str, limit: int) -> list[dict[str, Any]]:
        """Runs that covered `agent_id` (its own or every agent's), newest first, each with
        the steps of its plan that acted on this agent."""
        rows = await self.db.fetchall(
            "SELECT id, scope, run_at, started_at, finished_at, status, next_phase, plan, report"
            " FROM lifecycle_runs WHERE scope IN ('*', ?) ORDER BY id DESC LIMIT ?",
            (agent_id, limit),
        )
        runs = []
        for row in rows:
            run = {k: row[k] for k in row.keys() if k != "plan"}  # noqa: SIM118 (sqlite Row)
            run["report"] = json.loads(row["report"] or "{}")
            plan = json.loads(row["plan"] or "[]")
            run["actions"] = [a for a in plan if a.get("agent_id") == agent_id]
            runs.append(run)
        return runs

    # ---- extraction log -----------------------------------------------------------------

    async def turns(
        self, agent_id: str, limit: int, before_seq: int | None
    ) -> tuple[list[dict[str, Any]], int | None]:
        """Ingested turns, newest first, and the seq to page on from (None on the last page)."""
        keyset = " AND seq < ?" if before_seq is not None else ""
        params: list[Any] = [agent_id]
        if before_seq is not None:
            params.append(before_seq)
        rows = await self.db.fetchall(
            f"SELECT {_TURN_COLUMNS}, seq FROM turns WHERE agent_id = ?{keyset}"
            " ORDER BY seq DESC LIMIT ?",
            [*params, limit + 1],
        )
        more = len(rows) > limit
        rows = rows[:limit]
        next_seq = int(rows[-1]["seq"]) if more and rows else None
        return [_turn(r) for r in rows], next_seq

    async def memories_of(self, agent_id: str, ids: list[str]) -> dict[str, Memory]:
        if not ids:
            return {}
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({placeholders(ids)}) AND {OF_AGENT}",
            [*ids, agent_id],
        )
        return {str(r["id"]): row_to_memory(r) for r in rows}

    # ---- storage ------------------------------------------------------------------------

    async def storage(self) -> dict[str, Any]:
        """Sizes of the database, its WAL and shared-memory files, and the page counts."""
        sizes = await asyncio.to_thread(_file_sizes, Path(self.db.path))
        page_size = int(await self.db.scalar("PRAGMA page_size") or 0)
        pages = int(await self.db.scalar("PRAGMA page_count") or 0)
        free = int(await self.db.scalar("PRAGMA freelist_count") or 0)
        return {
            "bytes": sizes,
            "page_size": page_size,
            "pages": pages,
            "free_pages": free,
            "total_bytes": sum(sizes.values()),
        }


_TURN_COLUMNS = (
    "id, session_id, status, outcome, result, attempts, user_message, assistant_message,"
    " created_at, updated_at"
)


def _turn(row: Any) -> dict[str, Any]:
    data = {k: row[k] for k in row.keys() if k != "seq"}  # noqa: SIM118 (sqlite Row)
    data["result"] = json.loads(data["result"] or "{}")
    return data


def _file_sizes(path: Path) -> dict[str, int]:
    sizes = {}
    for suffix in ("", "-wal", "-shm"):
        part = Path(str(path) + suffix)
        sizes["db" + suffix.replace("-", "_")] = part.stat().st_size if part.exists() else 0
    return sizes


def _without_seq(row: Any) -> dict[str, Any]:
    return {k: row[k] for k in row.keys() if k != "seq"}  # noqa: SIM118 (sqlite Row)


def _table_filter(q: TableQuery, *, for_count: bool = False) -> tuple[str, list[Any]]:
    """WHERE for a page (unary + keeps the planner walking the sort index) or for a count
    (layer and category seek idx_memories_live, which holds exactly the live rows)."""
    clauses = ["agent_id = ?", _STATUS_SQL[q.status]]
    params: list[Any] = [q.agent_id]
    plus = "" if for_count else "+"
    if q.layer is not None:
        clauses.append(f"{plus}layer = ?")
        params.append(q.layer)
    elif for_count and q.status == "live":
        clauses.append(f"layer IN ({placeholders(LAYER_VALUES)})")
        params.extend(LAYER_VALUES)
    if q.category is not None:
        clauses.append(f"{plus}category = ?")
        params.append(q.category)
    if q.since is not None:
        clauses.append("created_at >= ?")
        params.append(q.since)
    if q.until is not None:
        clauses.append("created_at < ?")
        params.append(q.until)
    if q.occurred_since is not None:
        clauses.append("occurred_at >= ?")
        params.append(q.occurred_since)
    if q.occurred_until is not None:
        clauses.append("occurred_at < ?")
        params.append(q.occurred_until)
    if q.match is not None:
        clauses.append("seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)")
        params.append(q.match)
    if q.ids:
        clauses.append(f"id IN ({placeholders(q.ids)})")
        params.extend(q.ids)
    return " AND ".join(clauses), params
