"""`cortex-mcp client-config`: the `mcpServers` block that starts this very installation.

GUI clients (Claude Desktop, Cursor) do not inherit the shell's PATH, and the PyPI name
`cortex-mcp` belongs to another project, so the block names this executable by absolute path.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cortex_mcp.commands import Command
from cortex_mcp.config import Settings


def launch_command(argv0: str, executable: str) -> tuple[str, list[str]]:
    """How to start this installation again: its console script, else `python -m`."""
    script = Path(argv0)
    if script.name == "cortex-mcp" and script.exists():
        return str(script.absolute()), []
    return str(Path(executable).absolute()), ["-m", "cortex_mcp"]


def client_block(settings: Settings, argv0: str, executable: str) -> dict[str, Any]:
    command, args = launch_command(argv0, executable)
    server: dict[str, Any] = {
        "command": command,
        "args": args,
        "env": {"CORTEX_DB_PATH": str(settings.db_path.absolute())},
    }
    return {"mcpServers": {"cortex": server}}


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--entry",
        action="store_true",
        help="only the server object, on one line: for"
        ' `claude mcp add-json cortex "$(cortex-mcp client-config --entry)"` (Claude Code)',
    )


def run_client_config(args: argparse.Namespace, settings: Settings) -> int:
    block = client_block(settings, sys.argv[0], sys.executable)
    if args.entry:
        sys.stdout.write(json.dumps(block["mcpServers"]["cortex"]) + "\n")
    else:
        sys.stdout.write(json.dumps(block, indent=2) + "\n")
    command = block["mcpServers"]["cortex"]["command"]
    if "/uv/" in command or "/archive-v0/" in command:
        sys.stderr.write(
            "cortex-mcp: this runs from uv's cache (uvx), which may be cleaned;"
            " `uv tool install` gives a lasting path\n"
        )
    return 0


COMMANDS = (
    Command(
        name="client-config",
        help="print the mcpServers block (absolute paths) that starts this installation",
        description=(
            "Print the mcpServers JSON block for Claude Desktop, Cursor or Windsurf that starts"
            " this installation by absolute path (GUI clients do not inherit PATH), with the"
            " memory file this command would use."
        ),
        run=run_client_config,
        add_arguments=_arguments,
    ),
)
