"""`cortex-mcp import PATH` and `cortex-mcp export --format json|markdown|sqlite --out PATH`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, progress_bar, run_with_service
from cortex_mcp.config import Settings


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        help="a MEMORY.md, an OpenClaw workspace or memory/ folder, a memory.jsonl of the MCP"
        " memory server, or a cortex-mcp JSON export",
    )
    add_json_flag(parser)


def _import_human(d: dict[str, Any]) -> str:
    lines = [
        f"imported {d['memories']} memories, {d['relations']} relations, {d['logs']} log entries"
        f" from {len(d['files'])} file(s); {d['existing']} already known"
    ]
    lines += [f"not imported: {p}" for p in d["problems"]]
    return "\n".join(lines)


def run_import(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        with progress_bar("import") as bar:
            report = await service.import_path(args.path, progress=bar)
        emit(args, report.as_dict(), _import_human)
        for problem in report.problems:
            sys.stderr.write(f"cortex-mcp: not imported: {problem}\n")
        return 1 if report.problems else 0

    return run_with_service(settings, work)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("json", "markdown", "sqlite"), default="json")
    parser.add_argument("--out", required=True, help="file (json, sqlite) or folder (markdown)")
    parser.add_argument(
        "--agent",
        help="json/markdown: only this agent (default: json all, markdown this process's agent)",
    )
    add_json_flag(parser)


def run_export(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: Any) -> int:
        if args.format == "json":
            result = await service.export_json(args.out, agent_id=args.agent)
        elif args.format == "markdown":
            result = await service.export_markdown(args.out, agent_id=args.agent)
        else:
            result = await service.export_sqlite(args.out)
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
