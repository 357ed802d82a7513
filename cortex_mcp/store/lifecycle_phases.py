"""One lifecycle phase's writes inside its transaction: every action whose memories are still
as planned, and one audit row per applied action.

Moves (promote, expire, archive) are set-based: one liveness query and one UPDATE per 500 ids,
so a phase of 30,000 archives is a few dozen statements, not 60,000. Merges and compressions
(a few per night, each writing a new memory) go one by one. The actions of one phase never
share a memory, so checking them all before applying any decides exactly what checking each
just before applying it would."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from cortex_mcp.models import LifecycleAction, NewMemory, with_actor
from cortex_mcp.store.database import OF_AGENT, placeholders
from cortex_mcp.store.interfaces import Connection, MemoryStorage
from cortex_mcp.store.memories import drop_vec_row
from cortex_mcp.tokenize import content_hash

LIVE = "forgotten_at IS NULL AND superseded_by IS NULL"
# a memory a move or a compression may still take: live, in the given layer, not compressed
_TAKEABLE = f"+layer = ? AND {LIVE} AND json_extract(metadata, '$.compressed_into') IS NULL"
CHUNK = 500  # ids per statement, well under SQLite's bound on variables
_MOVES = {"promote": ("working", "core"), "expire": ("working", "archive")}
_MOVES["archive"] = ("core", "archive")


@dataclass
class PhaseResult:
    applied: list[LifecycleAction]
    skipped: list[LifecycleAction]
    created: dict[str, str]  # action key -> new memory id


def action_key(action: LifecycleAction) -> str:
    return f"{action.kind}:{action.agent_id}:{action.period or ''}:{action.ids[0]}"


def apply_actions(
    conn: Connection,
    memories: MemoryStorage,
    run_id: int,
    actions: list[LifecycleAction],
    new_memories: dict[str, NewMemory],
    now: str,
    vec_loaded: bool,
) -> PhaseResult:
    """Apply what is still as planned, audit it, and say what was applied and skipped."""
    result = PhaseResult([], [], {})
    live = _live_for_moves(conn, actions)
    moves: dict[str, list[str]] = defaultdict(list)
    audit: list[tuple[str, str, str, str]] = []
    for action in actions:
        if action.kind in _MOVES:
            done = list(action.ids) if all(i in live for i in action.ids) else None
            if done is not None:
                moves[_MOVES[action.kind][1]].extend(action.ids)
        else:
            new = new_memories.get(action_key(action))
            done = _apply_one(conn, memories, action, new, now, result, vec_loaded)
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
        audit.append(_audit_row(action.kind, [*action.ids, *done], details, now))
    for layer, ids in moves.items():
        for chunk in chunks(ids, CHUNK):
            conn.execute(
                "UPDATE memories SET layer = ?, expires_at = NULL, updated_at = ?"
                f" WHERE id IN ({placeholders(chunk)})",
                [layer, now, *chunk],
            )
    conn.executemany(
        "INSERT INTO lifecycle_log (action, memory_ids, details, executed_at) VALUES (?, ?, ?, ?)",
        audit,
    )
    return result


def _audit_row(
    action: str, ids: list[str], details: dict[str, Any], now: str
) -> tuple[str, str, str, str]:
    """The row `memories.add_log_row` writes, for many at once."""
    return (action, json.dumps(ids), json.dumps(with_actor(details), ensure_ascii=False), now)


def _live_for_moves(conn: Connection, actions: list[LifecycleAction]) -> set[str]:
    """Ids of the moves' memories that are still live in the layer each move starts from."""
    by_layer: dict[str, list[str]] = defaultdict(list)
    for action in actions:
        if action.kind in _MOVES:
            by_layer[_MOVES[action.kind][0]].extend(action.ids)
    live: set[str] = set()
    for layer, ids in by_layer.items():
        for chunk in chunks(ids, CHUNK):
            rows = fetch_all(
                conn,
                f"SELECT id FROM memories WHERE id IN ({placeholders(chunk)}) AND {_TAKEABLE}",
                [*chunk, layer],
            )
            live.update(str(row[0]) for row in rows)
    return live


def _apply_one(
    conn: Connection,
    memories: MemoryStorage,
    action: LifecycleAction,
    new: NewMemory | None,
    now: str,
    result: PhaseResult,
    vec_loaded: bool,
) -> list[str] | None:
    """Apply a merge or a compression; its `after` ids, or None when its memories changed."""
    expected = "core" if action.kind == "merge" else "archive"
    if not all_live_in(conn, action.ids, expected):
        return None
    if action.kind == "merge":
        return _merge(conn, memories, action, new, now, result)
    if action.kind == "compress" and new is not None and action.into is not None:
        if not all_live_in(conn, [action.into], "core"):
            return None
        new = with_period_range(conn, new, action.ids, action.into)
        rewrite_memory(conn, memories, action.into, new.content, new.metadata, now, vec_loaded)
        if new.occurred_at is not None:
            conn.execute(
                "UPDATE memories SET occurred_at = ? WHERE id = ?", (new.occurred_at, action.into)
            )
        _mark_compressed(conn, action.ids, action.into)
        result.created[action_key(action)] = action.into
        return [action.into]
    if action.kind == "compress" and new is not None:
        new = with_period_range(conn, new, action.ids, None)
        summary = memories.remember_in(conn, new, now)
        _mark_compressed(conn, action.ids, summary.memory.id)
        result.created[action_key(action)] = summary.memory.id
        return [summary.memory.id]
    return None


def _merge(
    conn: Connection,
    memories: MemoryStorage,
    action: LifecycleAction,
    new: NewMemory | None,
    now: str,
    result: PhaseResult,
) -> list[str]:
    if new is not None:  # the LLM wrote one memory for the whole cluster
        keeper = (memories.remember_in(conn, new, now)).memory.id
        result.created[action_key(action)] = keeper
    else:
        keeper = action.into or action.ids[-1]
    older = [i for i in action.ids if i != keeper]
    stats = fetch_all(
        conn,
        "SELECT MAX(importance), SUM(access_count) FROM memories"
        f" WHERE id IN ({placeholders(older)})",
        older,
    )
    importance, accesses = stats[0][0] or 0.0, stats[0][1] or 0
    # the merged memory is about the earliest moment any of them was
    earliest = fetch_all(
        conn,
        f"SELECT MIN(occurred_at) FROM memories WHERE id IN ({placeholders(action.ids)})",
        list(action.ids),
    )[0][0]
    conn.execute(
        "UPDATE memories SET importance = MAX(importance, ?),"
        " access_count = access_count + ?,"
        " occurred_at = CASE WHEN ? < occurred_at THEN ? ELSE occurred_at END WHERE id = ?",
        (importance, accesses, earliest, earliest, keeper),
    )
    conn.execute(
        "UPDATE memories SET superseded_by = ?, layer = 'archive', expires_at = NULL,"
        f" updated_at = ? WHERE id IN ({placeholders(older)})",
        [keeper, now, *older],
    )
    return [keeper]


def rewrite_memory(
    conn: Connection,
    memories: MemoryStorage,
    summary_id: str,
    content: str,
    metadata: dict[str, Any],
    now: str,
    vec_loaded: bool,
) -> None:
    """New text and metadata for a summary: row, text index (the memory store's own, as
    remember writes it), hash; its vectors are dropped so the indexer embeds the new text."""
    rows = fetch_all(conn, "SELECT seq FROM memories WHERE id = ?", [summary_id])
    if not rows:
        return
    seq = rows[0][0]
    conn.execute(
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
    memories.reindex_in(conn, seq, content)
    conn.execute("DELETE FROM memory_vectors WHERE memory_id = ?", (summary_id,))
    if vec_loaded:
        drop_vec_row(conn, summary_id)


def with_period_range(
    conn: Connection, summary: NewMemory, ids: list[str], previous: str | None
) -> NewMemory:
    """A summary dated by the period it covers: `occurred_at` its earliest memory's own time,
    `metadata.period_range` {start, end} the earliest and the latest. It covers `ids` and
    what is listed in its `covers` (its agent's memories only), and, folding into the
    `previous` summary, that one's range too (its originals may be deleted by now)."""
    covered = list(dict.fromkeys([*summary.metadata.get("covers", []), *ids]))
    starts: list[str] = []
    ends: list[str] = []
    for chunk in chunks(covered, CHUNK):
        row = fetch_all(
            conn,
            f"SELECT MIN(occurred_at), MAX(occurred_at) FROM memories"
            f" WHERE id IN ({placeholders(chunk)}) AND {OF_AGENT}",
            [*chunk, summary.agent_id],
        )[0]
        if row[0] is not None:
            starts.append(str(row[0]))
            ends.append(str(row[1]))
    if previous is not None:
        rows = fetch_all(
            conn,
            "SELECT metadata FROM memories WHERE id = ? AND agent_id = ?",
            [previous, summary.agent_id],
        )
        span = json.loads(rows[0][0] or "{}").get("period_range") if rows else None
        if isinstance(span, dict) and span.get("start") and span.get("end"):
            starts.append(str(span["start"]))
            ends.append(str(span["end"]))
    if not starts:
        return summary
    period_range = {"start": min(starts), "end": max(ends)}
    metadata = {**summary.metadata, "period_range": period_range}
    return summary.model_copy(update={"occurred_at": min(starts), "metadata": metadata})


def delete_originals(conn: Connection, applied: list[LifecycleAction], vec_loaded: bool) -> None:
    """Originals of a summary are removed; their ids stay in the summary and the log."""
    ids = [i for a in applied if a.kind == "compress" for i in a.ids]
    for chunk in chunks(ids, CHUNK):
        rows = fetch_all(
            conn, f"SELECT seq FROM memories WHERE id IN ({placeholders(chunk)})", chunk
        )
        conn.executemany("DELETE FROM memories_fts WHERE rowid = ?", [(row[0],) for row in rows])
        conn.execute(
            f"UPDATE relations SET source_memory_id = NULL WHERE source_memory_id IN"
            f" ({placeholders(chunk)})",
            chunk,
        )
        conn.execute(f"DELETE FROM memories WHERE id IN ({placeholders(chunk)})", chunk)
        if vec_loaded:
            for memory_id in chunk:
                drop_vec_row(conn, memory_id)


def _mark_compressed(conn: Connection, ids: list[str], summary_id: str) -> None:
    for chunk in chunks(ids, CHUNK):
        conn.execute(
            "UPDATE memories SET metadata = json_set(metadata, '$.compressed_into', ?)"
            f" WHERE id IN ({placeholders(chunk)})",
            [summary_id, *chunk],
        )


def all_live_in(conn: Connection, ids: list[str], layer: str) -> bool:
    found = 0
    unique = list(dict.fromkeys(ids))
    for chunk in chunks(unique, CHUNK):
        rows = fetch_all(
            conn,
            f"SELECT COUNT(*) FROM memories WHERE id IN ({placeholders(chunk)}) AND {_TAKEABLE}",
            [*chunk, layer],
        )
        found += int(rows[0][0])
    return found == len(unique)


def fetch_all(conn: Connection, sql: str, params: list[Any]) -> list[Any]:
    return conn.execute(sql, params).fetchall()


def chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
