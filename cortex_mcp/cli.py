"""Entry point: argv -> Settings -> logging (stderr) -> transport. Nothing here writes to stdout
before the stdio server owns it, except the explicit commands (--version, doctor)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cortex_mcp import __version__
from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import ConfigError

log = logging.getLogger("cortex_mcp")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cortex-mcp", description="Long-term memory MCP server")
    parser.add_argument("--version", action="version", version=f"cortex-mcp {__version__}")
    parser.add_argument("--db", type=Path, help="SQLite file (default ~/.cortex/brain.db)")
    parser.add_argument("--agent-id", help="default agent id for this process")
    parser.add_argument("--log-level", help="DEBUG, INFO, WARNING, ERROR")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("serve", help="run the stdio MCP server (the default)")
    sub.add_parser("doctor", help="check SQLite, extensions, schema and providers")
    return parser


def configure_logging(settings: Settings) -> None:
    """Logs go to stderr (stdout belongs to the protocol) and, where set, to a file."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if settings.log_file is not None:
        settings.log_file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(settings.log_file, encoding="utf-8"))
    logging.basicConfig(
        level=settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    for noisy in ("httpx", "httpx2", "httpcore", "openai", "anthropic", "mcp"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    overrides: dict[str, Any] = {}
    if args.db is not None:
        overrides["db_path"] = args.db
    if args.agent_id:
        overrides["agent_id"] = args.agent_id
    if args.log_level:
        overrides["log_level"] = args.log_level
    try:
        settings = load_settings(**overrides)
    except ConfigError as exc:
        sys.stderr.write(f"cortex-mcp: {exc.message}\n")
        return 2
    configure_logging(settings)
    if args.command == "doctor":
        from cortex_mcp.doctor import run_doctor

        return asyncio.run(run_doctor(settings))
    return serve_stdio(settings)


def serve_stdio(settings: Settings) -> int:
    from cortex_mcp.runtime import open_cortex
    from cortex_mcp.transports.mcp import build_server

    server = build_server(lambda: open_cortex(settings))
    configure_logging(settings)  # MCPServer() installs its own root handler; keep ours
    log.info("cortex-mcp %s serving stdio, db %s", __version__, settings.db_path)
    server.run("stdio")
    return 0
