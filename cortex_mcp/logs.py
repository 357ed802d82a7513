"""Logging for the entry point: stderr (stdout belongs to the protocol) and optionally a file.

Memory contents and queries never reach the logs unless `CORTEX_LOG_CONTENT=true`: the
libraries below log SQL parameters (aiosqlite, at DEBUG), request bodies (the provider SDKs and
their HTTP clients), protocol messages (mcp) or URLs with query strings (uvicorn's access log),
so they stay at WARNING whatever the log level, as does our own SQL trace (`cortex_mcp.sql`).
Our other modules log ids and counts only.
"""

from __future__ import annotations

import logging
import sys

from cortex_mcp.config import Settings

CONTENT_LOGGERS = (
    "aiosqlite",
    "cortex_mcp.sql",  # every statement with its values (the store's trace)
    "httpx",
    "httpx2",
    "httpcore",
    "openai",
    "anthropic",
    "mcp",
    "uvicorn.access",
)


def configure_logging(settings: Settings) -> None:
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
    for name in CONTENT_LOGGERS:
        floor = logging.NOTSET if settings.log_content else logging.WARNING
        logging.getLogger(name).setLevel(max(floor, logging.getLogger().level))
