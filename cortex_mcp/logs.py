"""Logging for the entry point: stderr (stdout belongs to the protocol) and optionally a file."""

from __future__ import annotations

import logging
import sys

from cortex_mcp.config import Settings

_QUIET_UNLESS_WARNING = ("httpx", "httpx2", "httpcore", "openai", "anthropic", "mcp")


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
    for noisy in _QUIET_UNLESS_WARNING:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
