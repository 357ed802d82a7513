"""`cortex-mcp import PATH` and `cortex-mcp export --format json|markdown|sqlite --out PATH`."""

from __future__ import annotations

import argparse
import gc
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, progress_bar, run_with_service
from cortex_mcp.config import Settings

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService


def _progress_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr even when it is not a terminal",
    )


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        help="a MEMORY.md, an OpenClaw workspace or memory/ folder, a folder written by"
        " `export --format markdown`, a memory.jsonl of the MCP memory server, or a cortex-mcp"
        " JSON export",
    )
    agents = parser.add_mutually_exclusive_group()
    agents.add_argument(
        "--agent",
        help="write a file of one agent into this agent instead (default: each memory back to"
        " the agent the file names; a file naming none: --agent-id / CORTEX_AGENT_ID)",
    )
    agents.add_argument(
        "--merge-agents-into",
        metavar="AGENT",
        help="write the memories of every agent the file names into this one agent",
    )
    _progress_flag(parser)
    add_json_flag(parser)


def _import_human(d: dict[str, Any]) -> str:
    dropped = d.get("dropped_ids", 0)
    return (
        f"imported {d['memories']} memories, {d['relations']} relations, {d['logs']} log entries"
        f" from {len(d['files'])} file(s); {d['existing']} already known; {_agents_done(d)}"
        + (f"; {dropped} ids of other agents' memories dropped from id lists" if dropped else "")
    )


def _agents_done(d: dict[str, Any]) -> str:
    """What the import did with the agents the file names, in words."""
    named, written = d["from_agents"], sorted(d["agents"])
    if d["merged_into"] is not None:
        return f"merged the agents {', '.join(named) or '(none named)'} into {d['merged_into']}"
    if named and written and set(written) <= set(named):
        return "each agent's memories back to it: " + ", ".join(written)
    into = ", ".join(written) or "nothing new"
    return f"into {into}" + (f" (the file names {', '.join(named)})" if named else "")


def run_import(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        # What is loaded by now lives until the command ends, and a batch's thousands of rows
        # are freed by reference counting: the collector walked both every 700 new objects
        # (about 5% of an import's CPU). It still runs, after 20,000 objects not freed.
        gc.freeze()
        gc.set_threshold(20_000, 10, 10)
        with progress_bar("import", force=args.progress) as bar:
            report = await service.exchange.import_path(
                args.path,
                agent_id=args.agent,
                progress=bar.step,
                merge_agents_into=args.merge_agents_into,
            )
        emit(args, report.as_dict(), _import_human)
        return 0

    return run_with_service(settings, work)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("json", "markdown", "sqlite"), default="json")
    parser.add_argument(
        "--out",
        required=True,
        help="a new file (json, sqlite) or folder (markdown) in an existing folder",
    )
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    parser.add_argument(
        "--agent",
        help="json/markdown: only this agent (default: json all, markdown this process's agent)",
    )
    _progress_flag(parser)
    add_json_flag(parser)


def run_export(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        if args.format == "json":
            with progress_bar("export", force=args.progress) as bar:
                result = await service.exchange.export_json(
                    args.out, agent_id=args.agent, force=args.force, progress=bar.step
                )
        elif args.format == "markdown":
            result = await service.exchange.export_markdown(
                args.out, agent_id=args.agent, force=args.force
            )
        else:
            result = await service.exchange.export_sqlite(args.out, force=args.force)
        emit(args, result, lambda d: "exported: " + ", ".join(f"{k} {v}" for k, v in d.items()))
        return 0

    return run_with_service(settings, work)


COMMANDS = (
    Command("import", "import memories from files (idempotent)", run_import, _import_arguments),
    Command(
        "export",
        "export memories as JSON, Markdown or a SQLite copy",
        run_export,
        _export_arguments,
    ),
)
