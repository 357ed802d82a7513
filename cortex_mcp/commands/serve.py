"""`cortex-mcp serve` (and `cortex-mcp` with no command): the MCP server on stdio."""

from __future__ import annotations

import argparse
import logging

from cortex_mcp import __version__
from cortex_mcp.commands import Command
from cortex_mcp.config import Settings

log = logging.getLogger("cortex_mcp")


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    del args
    return serve_stdio(settings)


def serve_stdio(settings: Settings) -> int:
    from cortex_mcp.logs import configure_logging
    from cortex_mcp.runtime import open_cortex
    from cortex_mcp.transports.mcp import build_server

    # Checks that must refuse to start (exit 2, one line) belong here, before stdout belongs
    # to the protocol: the database, then the transport.
    server = build_server(lambda: open_cortex(settings), settings)
    configure_logging(settings)  # MCPServer() installs its own root handler; keep ours
    log.info("cortex-mcp %s serving stdio, db %s", __version__, settings.db_path)
    server.run("stdio")
    return 0


COMMANDS = (
    Command(
        name="serve",
        help="run the MCP server on stdin/stdout (the default when no command is given)",
        run=run_serve,
    ),
)
