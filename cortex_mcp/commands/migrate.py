"""`cortex-mcp migrate --to URL|PATH`: copy this store into another backend, verified."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, progress_bar
from cortex_mcp.config import Settings
from cortex_mcp.errors import CortexError


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--to",
        required=True,
        metavar="URL|PATH",
        help="the store to copy into: postgresql://user:password@host/db, or a SQLite file"
        " (a path or sqlite:///path); the copy comes from the configured store"
        " (CORTEX_DATABASE_URL, else --db / CORTEX_DB_PATH)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace everything the target already holds (refused without it)",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show progress on stderr even when it is not a terminal",
    )
    add_json_flag(parser)


def source_location(settings: Settings) -> str:
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    return str(settings.db_path)


def _human(d: dict[str, Any]) -> str:
    lines = [f"copied {d['source']} -> {d['target']} in {d['seconds']:.1f} s, verified:"]
    lines += [
        f"  {t['table']:<16} {t['rows']:>10} rows  sha256-sum {t['checksum'][:16]}"
        for t in d["tables"]
    ]
    if d["replaced"]:
        lines.append(f"replaced {d['replaced']} rows the target held before")
    return "\n".join(lines)


def run_migrate(args: argparse.Namespace, settings: Settings) -> int:
    from cortex_mcp.engine.exchange.migrate import migrate

    with progress_bar("migrate", force=args.progress) as bar:
        try:
            report = asyncio.run(
                migrate(source_location(settings), args.to, replace=args.force, progress=bar.step)
            )
        except CortexError as exc:
            bar.close()
            sys.stderr.write(f"cortex-mcp: {exc.message}\n")
            return 2 if exc.status in (400, 409) else 1
    emit(args, report.as_dict(), _human)
    return 0


COMMANDS = (
    Command(
        "migrate",
        "copy this memory store into another one (SQLite <-> PostgreSQL), verified",
        run_migrate,
        _arguments,
        description="Copy every memory, vector, relation, log entry, turn and profile of the"
        " configured store into an empty store of either backend, with ids and timestamps as"
        " they are; each table's count and checksum are compared before the copy is committed.",
    ),
)
