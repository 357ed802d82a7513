"""Listing by when things happened (issue 37, item 5): `list --since/--until` (and GET
/api/v1/memories) sorts by the memories' own time, `--sort` chooses; the dashboard's table
filters by when they happened as well as when they were stored; a date given as a day is
shown as the day, without a `00:00:00` no one said. On SQLite and PostgreSQL."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from starlette.testclient import TestClient

from cortex_mcp import cli
from cortex_mcp.commands.output import local_time
from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import ListRequest, RememberRequest, build
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client

pytestmark = pytest.mark.anyio

API = "/api/v1"
# stored in this order; each happened at another time
STORED = [
    ("2026-05-01T09:00:00Z", "Ran the spring half marathon"),
    ("2026-03-01T09:00:00Z", "Started training for the half marathon"),
    ("2026-04-01T09:00:00Z", "Bought new running shoes"),
]
BY_OCCURRED = [STORED[0][1], STORED[2][1], STORED[1][1]]
BY_STORED = [STORED[2][1], STORED[1][1], STORED[0][1]]


async def test_a_bounded_listing_runs_by_when_things_happened(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as service:
        for when, content in STORED:
            clock.advance(minutes=1)
            await service.memories.remember(
                build(RememberRequest, content=content, occurred_at=when)
            )

        async def listed(**fields: Any) -> list[str]:
            page = await service.reading.list_memories(build(ListRequest, **fields))
            return [m["content"] for m in page["memories"]]

        assert await listed(since="2026-01-01") == BY_OCCURRED
        assert await listed(until="2026-12-31") == BY_OCCURRED
        assert await listed(since="2026-01-01", sort="stored") == BY_STORED
        assert await listed() == BY_STORED  # unbounded: newest stored first, as before
        assert await listed(sort="occurred") == BY_OCCURRED


def test_the_cli_lists_by_when_things_happened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORTEX_DB_PATH", str(tmp_path / "brain.db"))
    monkeypatch.setenv("CORTEX_EMBEDDING_PROVIDER", "none")
    monkeypatch.setenv("CORTEX_LLM_PROVIDER", "none")

    def run(*args: str) -> str:
        out = io.StringIO()
        with redirect_stdout(out):
            assert cli.main(list(args)) == 0
        return out.getvalue()

    for when, content in STORED:
        run("add", content, "--occurred-at", when[:10])
    rows = run("list", "--since", "2026-01-01").splitlines()
    assert [row.rsplit("  ", 1)[-1] for row in rows] == BY_OCCURRED
    rows = run("list", "--since", "2026-01-01", "--sort", "stored").splitlines()
    assert [row.rsplit("  ", 1)[-1] for row in rows] == BY_STORED
    memory_id = rows[0].split()[0]
    shown = run("show", memory_id)
    assert "occurred_at: 2026-04-01\n" in shown  # given as a day: no 00:00:00


def test_a_day_is_shown_without_a_time_no_one_said() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    assert local_time("2026-03-31T15:00:00.000000Z", tokyo) == "2026-04-01"
    assert local_time("2026-04-01T00:00:00.000000Z", tokyo) == "2026-04-01T09:00:00+09:00"
    assert local_time("2026-04-01T00:00:00.000000Z", ZoneInfo("UTC")) == "2026-04-01"


@pytest.fixture
def client(tmp_path: Path, clock: FakeClock, backend_settings: Settings) -> Iterator[TestClient]:
    secret = backend_settings.database_url
    url = secret.get_secret_value() if secret is not None else None
    with authed_rest_client(tmp_path, clock, database_url=url) as c:
        yield c


def test_the_dashboard_table_filters_by_when_things_happened(
    client: TestClient, clock: FakeClock
) -> None:
    for when, content in STORED:
        clock.advance(minutes=1)
        reply = client.post(
            f"{API}/memories", json={"content": content, "agent_id": "alice", "occurred_at": when}
        )
        assert reply.status_code == 201, reply.text

    def browse(**query: str) -> list[str]:
        reply = client.get(f"{API}/browse", params=query, headers={"X-Cortex-Agent": "alice"})
        assert reply.status_code == 200, reply.text
        return [m["content"] for m in reply.json()["memories"]]

    found = browse(occurred_since="2026-03-15", occurred_until="2026-04-15", sort="occurred_at")
    assert found == ["Bought new running shoes"]
    assert browse(occurred_since="2026-04-15") == ["Ran the spring half marathon"]
    assert len(browse(since="2026-01-01")) == 3  # stored: all of them today
