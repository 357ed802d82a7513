"""The people's commands as a person types them, through the installed console script: what
they accept (id prefixes, future dates), what they say, and what they leave untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.stdio_helpers import server_command, server_env


def _cli(*args: str, db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=server_env(db, **env),
    )


def _json(*args: str, db: Path) -> Any:
    done = _cli(*args, "--json", db=db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


SERVER_STACK = ("mcp", "starlette", "uvicorn", "sse_starlette", "httpx2", "openai", "anthropic")


@pytest.mark.parametrize("command", ["list", "show", "stats", "search"])
def test_commands_that_do_not_serve_mcp_do_not_import_the_mcp_sdk_or_the_http_stack(
    tmp_path: Path, command: str
) -> None:
    db = tmp_path / "brain.db"
    added = _json("add", "the user drinks green tea", db=db)
    argv = {"list": ["list"], "show": ["show", added["id"]], "stats": ["stats"]}.get(
        command, ["search", "green tea"]
    )
    probe = (
        "import sys\n"
        "from cortex_mcp.cli import main\n"
        f"code = main({argv!r})\n"
        f"loaded = sorted(m for m in {SERVER_STACK!r} if m in sys.modules)\n"
        "sys.stderr.write('LOADED ' + ','.join(loaded) + '\\n')\n"
        "raise SystemExit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=90,
        env=server_env(db),
    )
    assert done.returncode == 0, done.stderr
    assert "LOADED \n" in done.stderr, done.stderr
