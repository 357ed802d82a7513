"""`cortex-mcp import PATH` and `cortex-mcp export --format json|markdown|sqlite --out PATH`."""

from __future__ import annotations

import argparse
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
    parser.add_argument(
        "--agent",
        help="the agent the memories are written to (default: --agent-id / CORTEX_AGENT_ID);"
        " the agent named inside the file is never used",
    )
    _progress_flag(parser)
    add_json_flag(parser)


def _import_human(d: dict[str, Any]) -> str:
    dropped = d.get("dropped_ids", 0)
    return (
        f"imported {d['memories']} memories, {d['relations']} relations, {d['logs']} log entries"
        f" from {len(d['files'])} file(s); {d['existing']} already known"
        + (f"; {dropped} ids of other agents' memories dropped from id lists" if dropped else "")
    )


def run_import(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        with progress_bar("import", force=args.progress) as bar:
            report = await service.exchange.import_path(
                args.path, agent_id=args.agent, progress=bar.step
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
