"""`cortex-mcp doctor`: the health of this installation, one line per part."""

from __future__ import annotations

import argparse
import asyncio

from cortex_mcp.commands import Command
from cortex_mcp.config import Settings


def run_doctor_command(args: argparse.Namespace, settings: Settings) -> int:
    del args
    from cortex_mcp.checkup import run_doctor

    return asyncio.run(run_doctor(settings))


COMMANDS = (
    Command(
        name="doctor",
        help="check SQLite, extensions, the database and the providers",
        run=run_doctor_command,
    ),
)
