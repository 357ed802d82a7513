"""What the people's commands share: opening the service, printing for a person or a script,
a progress bar on a terminal, and turning a CortexError into one line and an exit code."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import datetime, time, tzinfo
from typing import TYPE_CHECKING, Any

from cortex_mcp.config import Settings
from cortex_mcp.errors import CortexError

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService
    from cortex_mcp.service.config import ConfigService
    from cortex_mcp.service.reading import MemoryReading
    from cortex_mcp.service.tokens import TokenService


def local_time(moment: str, where: tzinfo) -> str:
    """A stored UTC time as the user's wall clock with its offset (2026-05-06T22:30:00+09:00);
    the user's midnight as the day alone (2026-05-06): a date given as a day, whose time no
    one said."""
    try:
        shown = datetime.fromisoformat(moment).astimezone(where)
    except (ValueError, OverflowError):
        return moment
    if shown.time() == time():
        return shown.date().isoformat()
    return shown.isoformat(timespec="seconds")


def local_day(moment: str, where: tzinfo) -> str:
    """The user's day a stored UTC time falls on (2026-05-06)."""
    try:
        return datetime.fromisoformat(moment).astimezone(where).date().isoformat()
    except (ValueError, OverflowError):
        return moment[:10]


PROGRESS_MIN_ITEMS = 200  # smaller jobs finish before a bar would help


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")


def emit(args: argparse.Namespace, data: Any, human: Callable[[Any], str]) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        text = human(data)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def run_with_service(
    settings: Settings,
    work: Callable[[CortexService], Awaitable[int]],
    *,
    scheduler: bool = False,
    reports_degradation: bool = False,
) -> int:
    """Open the service (no background indexer: a command ends when its work does), run
    `work`, and report a CortexError as one line on stderr. A command whose output says what
    was degraded (`reports_degradation`) does not also get the log's WARNING line for it."""
    from cortex_mcp.runtime import open_cortex

    _quiet_progress_logs(settings, logging.ERROR if reports_degradation else logging.WARNING)

    async def main() -> int:
        async with open_cortex(settings, background=False, scheduler=scheduler) as service:
            return await work(service)

    return _run_reporting_errors(main())


def run_with_reader(settings: Settings, work: Callable[[MemoryReading], Awaitable[int]]) -> int:
    """`run_with_service` for commands that only read stored memories (`list`, `show`): they
    get a `MemoryReading` over the database alone, which starts in a fraction of the time."""
    from cortex_mcp.reader import open_reader

    _quiet_progress_logs(settings, logging.WARNING)

    async def main() -> int:
        async with open_reader(settings) as reader:
            return await work(reader)

    return _run_reporting_errors(main())


def run_with_tokens(settings: Settings, work: Callable[[TokenService], Awaitable[int]]) -> int:
    """For the token commands: the token service over the database alone."""
    from cortex_mcp.reader import open_tokens

    _quiet_progress_logs(settings, logging.WARNING)

    async def main() -> int:
        async with open_tokens(settings) as tokens:
            return await work(tokens)

    return _run_reporting_errors(main())


def run_with_config(settings: Settings, work: Callable[[ConfigService], Awaitable[int]]) -> int:
    """For the config command: the settings service over the database alone."""
    from cortex_mcp.reader import open_config

    _quiet_progress_logs(settings, logging.WARNING)

    async def main() -> int:
        async with open_config(settings) as config:
            return await work(config)

    return _run_reporting_errors(main())


def _quiet_progress_logs(settings: Settings, level: int) -> None:
    if settings.log_level == "INFO":  # a person reads the output: progress lines are noise
        logging.getLogger().setLevel(level)


def _run_reporting_errors(main: Coroutine[Any, Any, int]) -> int:
    try:
        return asyncio.run(main)
    except CortexError as exc:
        sys.stderr.write(f"cortex-mcp: {exc.message}\n")
        return 2 if exc.status == 400 else 1


class ProgressBar:
    """A tqdm bar on stderr, drawn only on a terminal (or when `force`d) and only for a job
    of a few hundred items or more; the total may first be known at the first update, and
    a job may go through phases (checking, then importing), each drawn as its own bar."""

    def __init__(self, label: str, *, force: bool = False) -> None:
        self.label = label
        self.force = force
        self._bar: Any = None
        self._phase = ""
        self._terminal: bool | None = None  # asked once: a step may come per item

    def __call__(self, done: int, total: int) -> None:
        self.step(self.label, done, total)

    def step(self, phase: str, done: int, total: int | None) -> None:
        """Progress of `phase`: `done` items of `total` (None while it is not known)."""
        if phase != self._phase:
            self.close()
            self._phase = phase
        if self._bar is None:
            size = done if total is None else total
            if size < PROGRESS_MIN_ITEMS or not (self.force or self._on_terminal()):
                return
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=phase,
                unit="item",
                file=sys.stderr,
                leave=False,
                mininterval=0.25,
            )
        self._bar.total = total
        self._bar.n = done
        self._bar.update(0)  # redraws at most every mininterval

    def _on_terminal(self) -> bool:
        if self._terminal is None:
            self._terminal = sys.stderr.isatty()
        return self._terminal

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextmanager
def progress_bar(label: str, *, force: bool = False) -> Iterator[ProgressBar]:
    bar = ProgressBar(label, force=force)
    try:
        yield bar
    finally:
        bar.close()


def aligned(rows: list[list[str]], gap: str = "  ") -> list[str]:
    """Rows of cells as lines whose columns line up: each column but the last as wide as its
    widest cell (the last, free text, is never padded)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        gap.join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


def short(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
