"""A remember that cut secrets says so (kind and count, never the value) over every transport:
the MCP tool's text and structured content, REST, and the CLI's `add`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client
from tests.helpers.stdio_helpers import server_command, server_env

KEY = "ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4"
TEXT = f"Deploy token is {KEY} and the wifi password is sunflower42"
EXPECTED = {"github_token": 1, "password": 1}


@pytest.mark.anyio
async def test_the_remember_tool_says_what_it_redacted_in_text_and_structure(
    settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server) as client:
        result = await client.call_tool("cortex_remember", {"content": TEXT})
        plain = await client.call_tool("cortex_remember", {"content": "Likes green tea"})
    assert not result.is_error
    assert result.structured_content["redacted"] == EXPECTED
    text = result.content[0].text
    assert "1 github_token" in text and "1 password" in text
    assert "(stored as [REDACTED:github_token], [REDACTED:password])" in text
    assert KEY not in text and "sunflower42" not in text
    assert plain.structured_content["redacted"] == {}
    assert "redacted" not in plain.content[0].text.lower()


def test_rest_remember_answers_with_what_it_redacted(tmp_path: Path, clock: FakeClock) -> None:
    settings = load_settings(
        db_path=tmp_path / "brain.db", embedding_provider="none", api_token=TOKEN
    )
    with rest_client(settings, clock) as client:
        client.headers.update(AUTH)
        reply = client.post("/api/v1/memories", json={"content": TEXT, "source": f"from {KEY}"})
    assert reply.status_code == 201, reply.text
    assert reply.json()["redacted"] == {"github_token": 2, "password": 1}
    assert KEY not in reply.text


def _add(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), "add", TEXT, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(db),
    )


def test_cli_add_says_what_it_redacted(tmp_path: Path) -> None:
    human = _add(tmp_path / "brain.db")
    assert human.returncode == 0, human.stderr
    assert "Secrets redacted before storing: 1 github_token, 1 password" in human.stdout
    as_json: dict[str, Any] = json.loads(_add(tmp_path / "other.db", "--json").stdout)
    assert as_json["redacted"] == EXPECTED
    assert KEY not in human.stdout + human.stderr
