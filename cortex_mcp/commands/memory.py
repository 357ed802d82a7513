"""The people's commands over memories: list, search, show, add, forget, stats."""

from __future__ import annotations

import argparse
from typing import Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, run_with_service, short
from cortex_mcp.config import Settings

LAYERS = ("working", "core", "archive")


def _row(m: dict[str, Any]) -> str:
    return f"{m['id']}  {m['layer']:<7} {m['category']:<12} {m['created_at'][:10]}  {short(m['content'])}"


def _table(rows: list[dict[str, Any]]) -> str:
    return "\n".join(_row(m) for m in rows) if rows else "no memories"


# ---- list --------------------------------------------------------------------------------


def _list_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--layer", choices=LAYERS, help="only this layer")
    parser.add_argument("--category", help="only this category (fact, preference, ...)")
    parser.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    add_json_flag(parser)


def run_list(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        page = await service.list_memories(args.layer, args.category, args.limit)
        emit(args, page["memories"], lambda data: _table(data))
        return 0

    return run_with_service(settings, work)


# ---- search ------------------------------------------------------------------------------


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="what to look for")
    parser.add_argument("--limit", type=int, default=10, help="at most this many (default 10)")
    add_json_flag(parser)


def run_search(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        result = await service.recall(args.query, max_results=args.limit)
        data = result.model_dump()

        def human(d: dict[str, Any]) -> str:
            if d["meta"].get("skipped_reason"):
                return f"nothing searched: {d['meta']['skipped_reason']}"
            lines = [f"{m['score']:.3f}  {_row(m)}" for m in d["memories"]]
            return "\n".join(lines) if lines else "no match"

        emit(args, data, human)
        return 0

    return run_with_service(settings, work)


# ---- show --------------------------------------------------------------------------------


def _show_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="memory id")
    add_json_flag(parser)


def _detail(d: dict[str, Any]) -> str:
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
        "created_at",
        "updated_at",
        "last_accessed",
        "superseded_by",
        "forgotten_at",
        "source",
    ):
        if m.get(key) is not None:
            lines.append(f"{key:>13}: {m[key]}")
    chain = [c for c in d.get("correction_chain", []) if c["id"] != m["id"]]
    if chain:
        lines += ["", "correction chain:", *(f"  {_row(c)}" for c in chain)]
    return "\n".join(lines)


def run_show(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        emit(args, await service.memory_detail(args.id), _detail)
        return 0

    return run_with_service(settings, work)


# ---- add ---------------------------------------------------------------------------------


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="the fact to remember")
    parser.add_argument("--category", default="fact", help="fact, preference, decision, ...")
    parser.add_argument("--importance", type=float, default=0.7, help="0..1 (default 0.7)")
    parser.add_argument("--layer", choices=LAYERS, default="core")
    add_json_flag(parser)


def run_add(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        result = await service.remember(
            args.text,
            category=args.category,
            importance=args.importance,
            layer=args.layer,
            source="cli",
        )

        def human(d: dict[str, Any]) -> str:
            verb = "already known, reinforced" if d["deduplicated"] else "remembered"
            return f"{verb}: {d['id']} ({d['layer']})"

        emit(args, result.model_dump(), human)
        return 0

    return run_with_service(settings, work)


# ---- forget ------------------------------------------------------------------------------


def _forget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="memory id")
    parser.add_argument("--reason", help="why (kept in the audit log)")
    parser.add_argument("--purge", action="store_true", help="erase the content everywhere")
    add_json_flag(parser)


def run_forget(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        result = await service.forget(args.id, reason=args.reason, purge=args.purge)
        emit(args, result.model_dump(), lambda d: f"{d['status']}: {d['id']}")
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
    async def work(service: Any) -> int:
        data = await service.stats()
        data["lifecycle"] = {"last_success": await service.lifecycle.last_success()}
        emit(args, data, _stats_human)
        return 0

    return run_with_service(settings, work)


COMMANDS = (
    Command("list", "list memories (newest first)", run_list, _list_arguments),
    Command("search", "search memories as an agent's recall would", run_search, _search_arguments),
    Command(
        "show", "one memory with its correction chain and access history", run_show, _show_arguments
    ),
    Command("add", "remember a fact", run_add, _add_arguments),
    Command("forget", "forget a memory (soft), or --purge it", run_forget, _forget_arguments),
    Command("stats", "counts per layer, the database and providers", run_stats, _stats_arguments),
)
