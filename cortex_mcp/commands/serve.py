"""`cortex-mcp serve` (and `cortex-mcp` with no command): the MCP server on stdio."""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

import anyio

from cortex_mcp import __version__
from cortex_mcp.commands import Command
from cortex_mcp.config import Settings
from cortex_mcp.errors import StorageError

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService

log = logging.getLogger("cortex_mcp")

TERMINAL_NOTICE = (
    "cortex-mcp: this is an MCP server speaking JSON-RPC on stdin/stdout, started by an MCP"
    " client (Claude Desktop, Cursor...); Ctrl-C stops it, `cortex-mcp --help` lists commands\n"
)


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transport",
        choices=["stdio", "sse", "http", "all"],
        default="stdio",
        help="stdio (default) for a desktop client; sse, http (Streamable HTTP) or all: an HTTP"
        " server at /sse and/or /mcp that also serves the REST API under /api/v1",
    )
    parser.add_argument("--host", help="address to listen on (CORTEX_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port to listen on (CORTEX_PORT, default 21100)")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 1 and 65535, got {value}")
    return value


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    transport = getattr(args, "transport", "stdio")
    if transport == "stdio":
        return serve_stdio(settings)
    return serve_http(settings, transport, getattr(args, "host", None), getattr(args, "port", None))


def serve_http(settings: Settings, transport: str, host: str | None, port: int | None) -> int:
    """The HTTP server: refuses to start (exit 2, one line) on a public address without a
    token or on a port in use, before it creates or opens the database or says it serves;
    SIGTERM drains in-flight requests."""
    from cortex_mcp.errors import ConfigError
    from cortex_mcp.preflight import check_storage, resolve_embedding_providers
    from cortex_mcp.runtime import open_cortex
    from cortex_mcp.transports.http import check_bind, run_http

    try:
        check_bind(settings, host or settings.host)
        _check_port_free(host or settings.host, port or settings.port)
        check_storage(settings)
        run_http(
            settings,
            lambda: open_cortex(settings, scheduler=True),  # the nightly lifecycle runs here too
            transport=transport,  # type: ignore[arg-type]
            host=host,
            port=port,
            setup_notes=resolve_embedding_providers(settings)[1],
        )
    except (ConfigError, StorageError) as exc:
        sys.stderr.write(f"cortex-mcp: {exc.message}\n")
        return 2
    return 0


def _check_port_free(host: str, port: int) -> None:
    """ConfigError when nothing can listen on host:port (in use, or not an address here).
    Bound the way uvicorn binds (SO_REUSEADDR), then released for it."""
    from cortex_mcp.errors import ConfigError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            hint = " (another server? choose --port or CORTEX_PORT)" if port else ""
            raise ConfigError(f"cannot listen on {host}:{port}: {reason}{hint}") from None


def serve_stdio(settings: Settings) -> int:
    from cortex_mcp.commands.stdin_relay import InterruptibleStdin
    from cortex_mcp.logs import configure_logging
    from cortex_mcp.preflight import check_storage, resolve_embedding_providers
    from cortex_mcp.transports.mcp import build_server
    from cortex_mcp.transports.stdio import serve_stdio as serve_guarded_stdio

    # Checks that must refuse to start (exit 2, one line) belong here, before stdout belongs
    # to the protocol: the database, then the transport.
    try:
        check_storage(settings)
    except StorageError as exc:
        sys.stderr.write(f"cortex-mcp: {exc.message}\n")
        return 2

    def open_service() -> AbstractAsyncContextManager[CortexService]:
        # the engines are imported once `initialize` is answered, not before (see build_server)
        from cortex_mcp.runtime import open_cortex

        return open_cortex(settings, scheduler=True)

    server = build_server(
        open_service,
        settings,
        setup_notes=resolve_embedding_providers(settings)[1],
        open_after_initialize=True,
    )
    configure_logging(settings)  # MCPServer() installs its own root handler; keep ours
    if os.isatty(0):
        sys.stderr.write(TERMINAL_NOTICE)
    with InterruptibleStdin() as stdin:
        log.info("cortex-mcp %s serving stdio, db %s", __version__, settings.db_path)
        anyio.run(serve_guarded_stdio, server, stdin.pipe)
    if stdin.signal_received is not None:
        log.info("stopped by signal %d", stdin.signal_received)
        return 128 + stdin.signal_received
    return 0


COMMANDS = (
    Command(
        name="serve",
        help="run the MCP server: on stdin/stdout (the default when no command is given), or"
        " over HTTP with --transport sse|http|all",
        run=run_serve,
        add_arguments=add_serve_arguments,
    ),
)
