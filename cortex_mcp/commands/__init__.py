"""Subcommands of `cortex-mcp`: one module per command or family of commands.

A command module exposes ``COMMANDS: tuple[Command, ...]`` and is listed, with the names of its
commands, in ``cortex_mcp.cli.COMMAND_MODULES``. Commands are thin like every transport: they
parse their own arguments and call the services (through ``cortex_mcp.runtime.open_cortex``).
Import heavy modules inside ``run``, not at the top: a start imports the module of the command
it runs (all of them for `--help`), and building its parser must stay cheap.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_mcp.config import Settings


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    del parser


@dataclass(frozen=True)
class Command:
    """One subcommand. `run` returns the process exit code."""

    name: str
    help: str
    run: Callable[[argparse.Namespace, Settings], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    description: str | None = None
