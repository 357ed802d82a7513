"""`cortex-mcp token create|list|revoke` through the installed console script, on a SQLite file
and on PostgreSQL: the token is printed once and stored only as a salted hash; errors are one
line with the usual exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.reader import open_stores
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.usefixtures("on_both_stores")


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    extra = {}
    if settings.database_url is not None:
        extra["CORTEX_DATABASE_URL"] = settings.database_url.get_secret_value()
    return subprocess.run(
        [*server_command(), "token", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=server_env(settings.db_path, **extra),
    )


def _json(settings: Settings, *args: str) -> Any:
    done = _cli(settings, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def _raw_rows(settings: Settings) -> str:
    """Every value of every token row, as text."""
    async with open_stores(settings, allow_vec=False) as stores:
        rows = await stores.db.fetchall("SELECT * FROM agent_tokens")
        return repr([tuple(r) for r in rows])


@pytest.mark.anyio
async def test_a_token_is_printed_once_and_the_database_keeps_only_a_salted_hash(
    backend_settings: Settings,
) -> None:
    first = _json(backend_settings, "create", "--agent", "alice")
    second = _json(backend_settings, "create", "--agent", "alice", "--name", "laptop")
    assert set(first) == {"id", "name", "agent", "token", "read_only", "expires_at"}
    assert first["read_only"] is False and first["expires_at"] is None
    assert first["agent"] == "alice" and first["name"] == "alice"
    assert second["name"] == "laptop" and first["token"] != second["token"]
    assert first["token"].startswith(f"cxt_{first['id']}_")

    listed = _json(backend_settings, "list")
    assert [t["name"] for t in listed] == ["alice", "laptop"]
    assert set(listed[0]) >= {"id", "name", "agent", "created_at", "last_used_at"}
    human = _cli(backend_settings, "list")
    stored = await _raw_rows(backend_settings)
    for token in (first["token"], second["token"]):
        secret = token.split("_", 2)[2]
        assert token not in json.dumps(listed) and secret not in human.stdout
        assert secret not in stored and token not in human.stderr
    if backend_settings.database_url is None:  # the file itself, WAL included
        for path in backend_settings.db_path.parent.glob("brain.db*"):
            assert first["token"].split("_", 2)[2].encode() not in path.read_bytes()


@pytest.mark.anyio
async def test_revoke_by_name_or_id_and_the_errors_are_one_line(
    backend_settings: Settings,
) -> None:
    made = _json(backend_settings, "create", "--agent", "bob", "--name", "ci")
    duplicate = _cli(backend_settings, "create", "--agent", "carol", "--name", "ci")
    assert duplicate.returncode == 1
    assert duplicate.stderr.strip().splitlines() == [
        "cortex-mcp: name: a live token is already named 'ci'; choose another name or revoke"
        " that token first"
    ]
    bad_agent = _cli(backend_settings, "create", "--agent", "a\x01b")
    assert bad_agent.returncode == 2 and "control characters" in bad_agent.stderr
    assert "Traceback" not in bad_agent.stderr + duplicate.stderr

    assert _json(backend_settings, "revoke", "ci")["id"] == made["id"]
    again = _cli(backend_settings, "revoke", made["id"])
    assert again.returncode == 1 and "already revoked" in again.stderr
    unknown = _cli(backend_settings, "revoke", "nobody")
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "cortex-mcp: token: no token with id or name 'nobody'"
    assert _json(backend_settings, "list") == []
    everything = _json(backend_settings, "list", "--all")
    assert [t["revoked_at"] is not None for t in everything] == [True]
    # a revoked token's name may be given again
    assert _json(backend_settings, "create", "--agent", "bob", "--name", "ci")["name"] == "ci"


def test_the_first_token_of_an_agent_is_named_after_it_then_numbered(
    backend_settings: Settings,
) -> None:
    names = [_json(backend_settings, "create", "--agent", "dana")["name"] for _ in range(3)]
    assert names == ["dana", "dana-2", "dana-3"]


def test_without_an_admin_token_create_says_servers_do_not_check_tokens(
    backend_settings: Settings, tmp_path: Path
) -> None:
    done = _cli(backend_settings, "create", "--agent", "erin")
    assert done.returncode == 0
    assert done.stdout.startswith("cxt_")
    assert "CORTEX_API_TOKEN" in done.stderr


def test_revoking_a_revoked_token_by_name_or_id_says_it_was_already_revoked(
    backend_settings: Settings,
) -> None:
    made = _json(backend_settings, "create", "--agent", "bob", "--name", "ci")
    assert _cli(backend_settings, "revoke", "ci").returncode == 0
    for given in ("ci", made["id"]):
        again = _cli(backend_settings, "revoke", given)
        assert again.returncode == 1 and again.stdout == "", again
        (line,) = again.stderr.splitlines()
        assert f"{made['id']} was already revoked at " in line, line
    unknown = _cli(backend_settings, "revoke", "nobody")
    assert unknown.stderr.strip() == "cortex-mcp: token: no token with id or name 'nobody'"


def test_token_list_lines_up_its_columns_under_a_header(backend_settings: Settings) -> None:
    _json(backend_settings, "create", "--agent", "al")
    _json(backend_settings, "create", "--agent", "a-much-longer-agent-name", "--name", "x")
    lines = _cli(backend_settings, "list").stdout.splitlines()
    assert lines[0].split() == ["id", "name", "agent", "created", "last", "used", "notes"]
    for column in ("name", "agent", "created", "last used"):
        at = lines[0].index(column)
        assert all(line[at - 2 : at] == "  " and line[at] != " " for line in lines[1:]), lines
