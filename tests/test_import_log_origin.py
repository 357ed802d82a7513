"""Probe item 8 of issue 26: an import wrote any lifecycle-log entry a document held (any
action, any date) as if this server had done it. Imported entries are now kept, marked: their
action must be one the server writes, their time must not be in the future, and they are shown
with `origin: "import"` (the server's own with `origin: "server"`) by `GET /lifecycle/log` and
`cortex-mcp lifecycle log`, whatever the document claims; an export does not carry the mark,
and importing it again marks it again."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings
from cortex_mcp.models import to_iso
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client
from tests.helpers.stdio_helpers import server_command, server_env

API = "/api/v1"
MEMORY_ID = "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a52"


def _document(logs: list[dict[str, Any]]) -> dict[str, Any]:
    memory = {
        "id": MEMORY_ID,
        "layer": "core",
        "category": "fact",
        "content": "The user likes green tea",
        "importance": 0.7,
        "created_at": "2026-03-01T10:00:00.000000Z",
    }
    return {"format": "cortex-mcp-export", "memories": [memory], "lifecycle_log": logs}


def _entry(action: str, when: str, **details: Any) -> dict[str, Any]:
    return {"action": action, "memory_ids": [MEMORY_ID], "executed_at": when, "details": details}


@pytest.fixture
def rest(backend_settings: Settings, clock: FakeClock, tmp_path: Path) -> Iterator[TestClient]:
    url = backend_settings.database_url
    with authed_rest_client(
        tmp_path, clock, database_url=url.get_secret_value() if url else None
    ) as client:
        yield client


def _log(rest: TestClient) -> list[dict[str, Any]]:
    reply = rest.get(f"{API}/lifecycle/log", params={"limit": 100})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["entries"])


def test_a_forged_log_entry_is_never_shown_as_the_servers_own(
    rest: TestClient, clock: FakeClock
) -> None:
    yesterday = to_iso(clock.now() - timedelta(days=1))
    forged = [
        _entry("purge", yesterday, agent_id="default", reason="admin purge"),
        _entry("promote", yesterday, origin="server", reason="trust me"),
    ]
    reply = rest.post(f"{API}/import", json={"document": _document(forged)})
    assert reply.status_code == 200, reply.text
    assert reply.json()["logs"] == 2
    genuine = rest.delete(f"{API}/memories/{MEMORY_ID}", params={"reason": "moved"})
    assert genuine.status_code == 200, genuine.text

    entries = _log(rest)
    assert [(e["action"], e["origin"]) for e in entries] == [
        ("forget", "server"),
        ("promote", "import"),
        ("purge", "import"),
    ]
    assert all("origin" not in e["details"] for e in entries)  # the mark is not the document's
    # importing the same document again adds nothing (the mark is not part of the comparison)
    again = rest.post(f"{API}/import", json={"document": _document(forged)})
    assert again.status_code == 200 and again.json()["logs"] == 0


@pytest.mark.parametrize(
    ("entry", "field", "rule"),
    [
        (_entry("grant_admin", "2026-10-01T09:00:00Z"), "action", "forget"),
        (_entry("", "2026-10-01T09:00:00Z"), "action", "one of"),
        (_entry("purge", "2026-11-01T12:30:00Z"), "executed_at", "future"),
        (_entry("purge", "2027-01-01T00:00:00Z"), "executed_at", "future"),
    ],
)
def test_an_unknown_action_or_a_future_time_refuses_the_import(
    rest: TestClient, entry: dict[str, Any], field: str, rule: str
) -> None:
    reply = rest.post(f"{API}/import", json={"document": _document([entry])})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert field in error["field"] and rule in error["message"], error
    assert _log(rest) == []
    assert rest.get(f"{API}/memories").json()["memories"] == []


def test_the_cli_lifecycle_log_marks_imported_entries(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    export = tmp_path / "forged.json"
    export.write_text(json.dumps(_document([_entry("purge", "2026-01-01T00:00:00Z")])))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*server_command(), *args], capture_output=True, text=True, timeout=90,
            env=server_env(db),
        )  # fmt: skip

    assert cli("import", str(export)).returncode == 0
    listed = cli("lifecycle", "log", "--json")
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)["entries"]
    assert (entry["action"], entry["origin"]) == ("purge", "import")
    human = cli("lifecycle", "log")
    assert human.returncode == 0 and "purge" in human.stdout and "imported" in human.stdout
