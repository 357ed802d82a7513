"""End of input on stdio while requests are in flight: they finish, and are answered, before
the server exits (a script that writes its requests and closes stdin loses nothing)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.stdio_helpers import LEGACY_PROTOCOL, server_command, server_env

pytestmark = pytest.mark.slow


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _remember(request_id: int, content: str) -> dict[str, Any]:
    arguments = {"content": content}
    return _request(request_id, "tools/call", {"name": "cortex_remember", "arguments": arguments})


def _session(contents: list[str]) -> str:
    initialize = _request(
        1,
        "initialize",
        {
            "protocolVersion": LEGACY_PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "eof-test", "version": "1"},
        },
    )
    messages = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [_remember(10 + i, text) for i, text in enumerate(contents)]
    return "".join(json.dumps(m) + "\n" for m in messages)


def test_requests_written_before_stdin_closes_are_answered_and_kept(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    contents = [f"The user's locker number {i} is {100 + i}" for i in range(5)]
    # everything at once, then end of input: the remembers are in flight when stdin closes
    done = subprocess.run(
        server_command(),
        input=_session(contents),
        capture_output=True,
        text=True,
        timeout=120,
        env=server_env(db),
    )
    assert done.returncode == 0, done.stderr
    replies = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert set(replies) == {1, *(10 + i for i in range(len(contents)))}, done.stdout
    for i in range(len(contents)):
        reply = replies[10 + i]
        assert "error" not in reply and not reply["result"].get("isError"), reply
        assert reply["result"]["structuredContent"]["id"]
    with sqlite3.connect(db) as conn:
        stored = {row[0] for row in conn.execute("SELECT content FROM memories")}
    assert stored == set(contents)
