"""The people's commands over memories: list, search, show, add, forget, stats."""

from __future__ import annotations

import argparse
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import (
    add_json_flag,
    aligned,
    emit,
    local_day,
    local_time,
    run_with_reader,
    run_with_service,
    short,
)
from cortex_mcp.config import Settings
from cortex_mcp.models import Layer
from cortex_mcp.service.requests import (
    MAX_LIST_PAGE,
    ForgetRequest,
    ListRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from cortex_mcp.zones import zone

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService
    from cortex_mcp.service.reading import MemoryReading

LAYERS = tuple(layer.value for layer in Layer)


def _cells(m: dict[str, Any], where: tzinfo) -> list[str]:
    day = local_day(m.get("occurred_at") or m["created_at"], where)  # the memory's own date
    return [m["id"], m["layer"], m["category"], day, short(m["content"])]


def _table(rows: list[dict[str, Any]], where: tzinfo) -> str:
    return "\n".join(aligned([_cells(m, where) for m in rows])) if rows else "no memories"


# ---- list --------------------------------------------------------------------------------


def _list_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--layer", choices=LAYERS, help="only this layer")
    parser.add_argument("--category", help="only this category (fact, preference, ...)")
    limit = ListRequest.default("limit")
    parser.add_argument(
        "--limit", type=int, default=limit, help=f"at most this many (default {limit})"
    )
    parser.add_argument(
        "--forgotten",
        action="store_true",
        help="the forgotten memories instead, most recently forgotten first",
    )
    parser.add_argument("--since", help="only memories that happened on or after this date")
    parser.add_argument("--until", help="only memories that happened up to this date's end")
    parser.add_argument(
        "--sort",
        choices=("stored", "occurred"),
        help="newest first by when stored or when it happened"
        " (default: happened with --since/--until, else stored)",
    )
    add_json_flag(parser)


def _forgotten(rows: list[dict[str, Any]], where: tzinfo) -> str:
    lines = aligned([_cells(m, where) for m in rows])
    days = [local_day(m["forgotten_at"], where) for m in rows]
    return "\n".join(f"{line}  (forgotten {day})" for line, day in zip(lines, days, strict=True))


def run_list(args: argparse.Namespace, settings: Settings) -> int:
    where = zone(settings.timezone)

    async def work(reader: MemoryReading) -> int:
        rows = await _listed(reader, args)
        if args.forgotten:
            emit(args, rows, lambda d: _forgotten(d, where) or "no forgotten memories")
        else:
            emit(args, rows, lambda d: _table(d, where))
        return 0

    return run_with_reader(settings, work)


async def _listed(reader: MemoryReading, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Up to --limit memories, read a page (at most MAX_LIST_PAGE) at a time."""
    rows: list[dict[str, Any]] = []
    while True:
        size = min(args.limit - len(rows), MAX_LIST_PAGE) if args.limit > 0 else args.limit
        request = build(
            ListRequest,
            layer=args.layer,
            category=args.category,
            limit=size,  # 0 or less: refused, naming the rule
            offset=len(rows),
            since=args.since,
            until=args.until,
            sort=args.sort,
        )
        page = (await reader.list_memories(request, forgotten=args.forgotten))["memories"]
        rows += page
        if len(page) < size or len(rows) >= args.limit:
            return rows


# ---- search ------------------------------------------------------------------------------


# A person who types `search thanks` means it: the recall gate (small talk answers nothing)
# is for an agent's automatic recall before each answer, so search here goes around it, and
# it is not an access either (no access count, ranking or lifecycle change), as a person
# browsing is not the agent using a memory.


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="what to look for (any words: no small-talk filter)")
    limit = SearchRequest.model_fields["limit"].default
    parser.add_argument(
        "--limit", type=int, default=limit, help=f"at most this many (default {limit})"
    )
    parser.add_argument(
        "--since", help="only memories that happened on or after this date (2026-05-06) or time"
    )
    parser.add_argument(
        "--until", help="only memories that happened before this time, or up to this date's end"
    )
    add_json_flag(parser)


def run_search(args: argparse.Namespace, settings: Settings) -> int:
    where = zone(settings.timezone)

    async def work(service: CortexService) -> int:
        answer = await service.memories.search_answer(
            build(
                SearchRequest,
                query=args.query,
                limit=args.limit,
                since=args.since,
                until=args.until,
            )
        )
        data = answer.model_dump(mode="json")

        def human(d: dict[str, Any]) -> str:
            said = _time_said(d["meta"])
            window = d["meta"].get("time") or {}
            rows = [[f"{m['score']:.3f}", *_cells(m, where)] for m in d["memories"]]
            for row, m in zip(rows, d["memories"], strict=True):
                row[-1] += _outside(m, window)
            lines = aligned(rows)
            return "\n".join([*([said] if said else []), *(lines or ["no match"])])

        emit(args, data, human)
        return 0

    return run_with_service(settings, work)


def _outside(m: dict[str, Any], window: dict[str, Any]) -> str:
    """ "  (outside March 2026)" for a hit from another period than the query named."""
    if not window.get("boosted"):
        return ""
    moment = m.get("occurred_at") or m["created_at"]
    inside = window["start"] <= moment < window["end"]
    return "" if inside else f"  (outside {window['read_as']})"


def _time_said(meta: dict[str, Any]) -> str:
    """The line that says which period the query's time words were read as."""
    window = meta.get("time")
    if window:
        line = f'read as: {window["read_as"]} ("{window["expression"]}", {meta["timezone"]})'
        return line if window.get("boosted") else line + "; no memories are from then"
    if meta.get("time_unread"):
        return f'time words not understood: "{meta["time_unread"]}" (ranked without a period)'
    return ""


# ---- show --------------------------------------------------------------------------------


# UUIDv7 ids begin with their time: memories made the same day share their first 8 or more
# characters, so a person types the end of one more often than its start.
ID_HELP = (
    "memory id, or its first or last characters (at least 4; ids made close together share"
    " their first 8 to 12, so the last 4-6 are usually the shortest unique part)"
)


def _show_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help=ID_HELP)
    add_json_flag(parser)


_MOMENTS = {"occurred_at", "created_at", "updated_at", "last_accessed", "forgotten_at"}


def _detail(d: dict[str, Any], where: tzinfo) -> str:
    m = d["memory"]
    lines = [m["content"], ""]
    for key in (
        "id",
        "layer",
        "category",
        "importance",
        "confidence",
        "decay_score",
        "access_count",
        "occurred_at",
        "created_at",
        "updated_at",
        "last_accessed",
        "superseded_by",
        "forgotten_at",
        "source",
    ):
        if m.get(key) is not None:
            value = local_time(m[key], where) if key in _MOMENTS else m[key]
            lines.append(f"{key:>13}: {value}")
        if key == "occurred_at" and (period := _period(m.get("metadata") or {})):
            lines.append(f"{'period':>13}: {period}")
    chain = [c for c in d.get("correction_chain", []) if c["id"] != m["id"]]
    if chain:
        rows = aligned([_cells(c, where) for c in chain])
        lines += ["", "correction chain:", *(f"  {line}" for line in rows)]
    history = d.get("history") or []
    if history:
        rows = aligned(
            [
                [local_time(e["executed_at"], where), e["action"], _actor(e["details"])]
                for e in history
            ]
        )
        lines += ["", "history (who acted):", *(f"  {line}" for line in rows)]
    return "\n".join(lines)


def _actor(details: Any) -> str:
    """Who acted, as a log entry records it (entries from before issue 35 say nothing)."""
    actor = details.get("actor") if isinstance(details, dict) else None
    if not isinstance(actor, dict):
        return "-"
    if actor.get("subject"):
        return f"{actor['subject']} ({actor.get('issuer', '')})"
    if actor.get("token_id"):
        return f"token {actor['token_id']}"
    return str(actor.get("kind", "-"))


def _period(metadata: dict[str, Any]) -> str | None:
    """The period a summary covers: `period_range` {start, end}, else its month (`period`)."""
    span = metadata.get("period_range")
    if isinstance(span, dict) and span.get("start") and span.get("end"):
        return f"{span['start']} to {span['end']}"
    period = metadata.get("period")
    return period if isinstance(period, str) and period else None


def run_show(args: argparse.Namespace, settings: Settings) -> int:
    where = zone(settings.timezone)

    async def work(reader: MemoryReading) -> int:
        memory_id = await reader.resolve_memory_id(args.id)
        emit(args, await reader.memory_detail(memory_id), lambda d: _detail(d, where))
        return 0

    return run_with_reader(settings, work)


# ---- add ---------------------------------------------------------------------------------


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the fact to remember")
    defaults = {name: f.default for name, f in RememberRequest.model_fields.items()}
    category, importance = defaults["category"].value, defaults["importance"]
    parser.add_argument("--category", default=category, help="fact, preference, decision, ...")
    parser.add_argument(
        "--importance", type=float, default=importance, help=f"0..1 (default {importance})"
    )
    parser.add_argument("--layer", choices=LAYERS, default=defaults["layer"].value)
    parser.add_argument(
        "--occurred-at",
        help="when it happened (2026-05-06 or 2026-05-06T14:30Z; default: now)",
    )
    parser.add_argument(
        "--supersedes",
        metavar="ID",
        help="the memory this one replaces (it is kept as history, no longer recalled as"
        " current); its id, or its first or last characters",
    )
    add_json_flag(parser)


def run_add(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        resolve = service.reading.resolve_memory_id
        old = await resolve(args.supersedes) if args.supersedes else None
        request = build(
            RememberRequest,
            content=args.text,
            category=args.category,
            importance=args.importance,
            layer=args.layer,
            source="cli",
            occurred_at=args.occurred_at,
            supersedes=old,
        )
        result = await service.memories.remember(request)

        def human(d: dict[str, Any]) -> str:
            verb = "already known, reinforced" if d["deduplicated"] else "remembered"
            lines = [f"{verb}: {d['id']} ({d['layer']})"]
            lines += [f"superseded: {superseded}" for superseded in d["superseded"]]
            if d["redacted"]:
                from cortex_mcp.engine.redaction import describe_redactions

                lines.append(describe_redactions(d["redacted"]))
            return "\n".join(lines)

        emit(args, result.model_dump(), human)
        return 0

    return run_with_service(settings, work)


# ---- forget ------------------------------------------------------------------------------


def _forget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help=ID_HELP)
    parser.add_argument("--reason", help="why (kept in the audit log)")
    parser.add_argument(
        "--correction",
        metavar="TEXT",
        help="the corrected fact: stored as a new memory that supersedes this one",
    )
    parser.add_argument("--purge", action="store_true", help="erase the content everywhere")
    add_json_flag(parser)


def run_forget(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        memory_id = await service.reading.resolve_memory_id(args.id)
        request = build(
            ForgetRequest,
            memory_id=memory_id,
            reason=args.reason,
            correction=args.correction,
            purge=args.purge,
        )
        result = await service.memories.forget(request)
        emit(args, result.model_dump(mode="json"), _forgot)
        return 0

    return run_with_service(settings, work)


def _forgot(d: dict[str, Any]) -> str:
    if d["status"] == "already_forgotten":
        return f"already forgotten (nothing changed): {d['id']}"
    if d["status"] == "corrected":
        return f"corrected: {d['id']} is superseded by {d['new_id']}"
    return f"{d['status']}: {d['id']}"


# ---- restore -----------------------------------------------------------------------------


def _restore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help=ID_HELP + " (a superseded or forgotten memory)")
    parser.add_argument("--layer", choices=LAYERS, default="core", help="where it comes back")
    add_json_flag(parser)


def run_restore(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        memory_id = await service.reading.resolve_memory_id(args.id)
        restored = await service.memories.restore(memory_id, args.layer)
        emit(args, restored, lambda d: f"restored: {d['id']} ({d['layer']})")
        return 0

    return run_with_service(settings, work)


# ---- stats -------------------------------------------------------------------------------


def _stats_human(d: dict[str, Any]) -> str:
    memories = d.get("memories", {})
    layers = memories.get("by_layer", {})
    lines = [
        f"database: {d.get('db_path')} (schema {d.get('schema_version')})",
        "memories: "
        + ", ".join(f"{k} {v}" for k, v in layers.items())
        + f" (total {memories.get('total', 0)})",
    ]
    lifecycle = d.get("lifecycle") or {}
    if lifecycle:
        lines.append(f"lifecycle: last success {lifecycle.get('last_success') or 'never'}")
    for note in d.get("degraded", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _stats_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_flag(parser)


def run_stats(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        data = await service.status.stats(all_agents=True)
        data["lifecycle"] = {"last_success": await service.engines.lifecycle.last_success()}
        emit(args, data, _stats_human)
        return 0

    return run_with_service(settings, work)


COMMANDS = (
    Command("list", "list memories (newest first)", run_list, _list_arguments),
    Command(
        "search",
        "search memories (yours to browse: no small-talk filter, not counted as a recall)",
        run_search,
        _search_arguments,
    ),
    Command(
        "show", "one memory with its correction chain and access history", run_show, _show_arguments
    ),
    Command("add", "remember a fact", run_add, _add_arguments),
    Command(
        "forget",
        "forget a memory (soft), --correction it, or --purge it",
        run_forget,
        _forget_arguments,
    ),
    Command(
        "restore", "bring back a superseded or forgotten memory", run_restore, _restore_arguments
    ),
    Command("stats", "counts per layer, the database and providers", run_stats, _stats_arguments),
)
