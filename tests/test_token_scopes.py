"""What an agent token may do (issue 35): `token create --read-only` makes one that reads its
agent's memories and is refused, with 403 insufficient_scope and nothing changed, on every
route and tool that writes (the REST table and the MCP tools, whichever they are); `--expires`
makes one that stops working at its time. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.models import WRITE_SCOPE
from cortex_mcp.reader import open_stores, open_tokens
from cortex_mcp.service.requests import TokenRequest, build
from cortex_mcp.service.tokens import CACHE_SECONDS
from cortex_mcp.transports.rest import ENDPOINTS
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client
from tests.helpers.stdio_helpers import server_command, server_env

WRITES = [ep for ep in ENDPOINTS if ep.needs == WRITE_SCOPE]
DASHBOARD = {"X-Cortex-Dashboard": "1", "Sec-Fetch-Site": "same-origin"}


@pytest.fixture
def token_settings(backend_settings: Settings) -> Settings:
    """`backend_settings` with the admin token set: servers check tokens."""
    url = backend_settings.database_url
    return load_settings(
        db_path=backend_settings.db_path,
        embedding_provider="none",
        api_token=TOKEN,
        database_url=url.get_secret_value() if url is not None else None,
    )


def _token(settings: Settings, **options: Any) -> str:
    async def create() -> str:
        async with open_tokens(settings) as tokens:
            made = await tokens.create(build(TokenRequest, agent="ann", **options))
            return str(made["token"])

    return anyio.run(create)


def _snapshot(settings: Settings) -> list[Any]:
    async def read() -> list[Any]:
        async with open_stores(settings, allow_vec=False) as stores:
            found = []
            for table in ("memories", "lifecycle_log", "relations", "profiles", "entities"):
                rows = await stores.db.fetchall(f"SELECT * FROM {table}")
                found.append(sorted(tuple(str(v) for v in r) for r in rows))
            return found

    return anyio.run(read)


@pytest.fixture
def client(token_settings: Settings) -> Iterator[TestClient]:
    with rest_client(token_settings) as c:
        yield c


def _seed(client: TestClient) -> str:
    made = client.post(
        "/api/v1/memories", json={"content": "Ann grows tomatoes", "agent_id": "ann"}, headers=AUTH
    )
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _concrete(path: str, memory_id: str) -> str:
    return re.sub(r"\{[a-z_]+\}", memory_id, path)


def test_a_read_only_token_is_refused_on_every_write_route_and_changes_nothing(
    client: TestClient, token_settings: Settings
) -> None:
    memory_id = _seed(client)
    reader = {"Authorization": f"Bearer {_token(token_settings, read_only=True)}"}
    before = _snapshot(token_settings)
    assert len(WRITES) >= 20  # remember, forget, ingest, import, relations, entities, ...
    for ep in WRITES:
        path = _concrete(ep.full_path, memory_id)
        reply = client.request(ep.method, path, json={}, headers=reader)
        assert reply.status_code == 403, (ep.method, path, reply.text)
        assert reply.json()["error"]["code"] == "insufficient_scope", path
        assert reply.headers["www-authenticate"] == (
            'Bearer error="insufficient_scope", scope="memories:write"'
        ), path
    assert _snapshot(token_settings) == before
    # and it reads: its agent's memories, not another's
    recalled = client.post("/api/v1/recall", json={"query": "tomatoes"}, headers=reader)
    assert [m["content"] for m in recalled.json()["memories"]] == ["Ann grows tomatoes"]
    assert client.get(f"/api/v1/memories/{memory_id}", headers=reader).status_code == 200
    other = client.post("/api/v1/recall", json={"query": "x", "agent_id": "bob"}, headers=reader)
    assert other.status_code == 403


def test_a_dashboard_session_of_a_read_only_token_may_not_write_either(
    client: TestClient, token_settings: Settings
) -> None:
    memory_id = _seed(client)
    token = _token(token_settings, read_only=True)
    origin = {"Origin": "http://127.0.0.1:21100"}
    signed = client.post("/ui/session", json={"token": token}, headers=origin)
    assert signed.status_code == 200, signed.text
    before = _snapshot(token_settings)
    edit = client.patch("/api/v1/profile", json={"summary": "a pirate"}, headers=DASHBOARD)
    assert edit.status_code == 403, edit.text
    restore = client.post(
        f"/api/v1/memories/{memory_id}/correct", json={"content": "no"}, headers=DASHBOARD
    )
    assert restore.status_code == 403
    assert client.get("/api/v1/browse", headers=DASHBOARD).status_code == 200
    assert _snapshot(token_settings) == before


@pytest.mark.anyio
async def test_a_read_only_token_gets_a_tool_error_naming_the_scope_over_mcp(
    token_settings: Settings,
) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.helpers.http_helpers import ServeProcess

    token = await anyio.to_thread.run_sync(lambda: _token(token_settings, read_only=True))
    env = server_env(token_settings.db_path)
    extra = {}
    if token_settings.database_url is not None:
        extra["CORTEX_DATABASE_URL"] = token_settings.database_url.get_secret_value()
    with ServeProcess(token_settings.db_path, **extra) as server:
        assert env  # the server runs as users start it
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
            for tool, arguments in (
                ("cortex_remember", {"content": "Ann sails"}),
                ("cortex_forget", {"memory_id": "0190a1b2-0000-7000-8000-000000000000"}),
            ):
                done = await c.call_tool(tool, arguments)
                assert done.is_error and "memories:write" in done.content[0].text, tool
            assert not (await c.call_tool("cortex_recall", {"query": "Ann"})).is_error
    assert await anyio.to_thread.run_sync(lambda: _snapshot(token_settings)) == [[]] * 5


def test_a_token_made_to_expire_stops_working_at_its_time(token_settings: Settings) -> None:
    clock = FakeClock()

    async def create() -> str:
        async with open_tokens(token_settings) as tokens:
            tokens.clock = clock
            made = await tokens.create(build(TokenRequest, agent="ann", expires="2h"))
            return str(made["token"])

    token = anyio.run(create)
    with rest_client(token_settings, clock) as c:
        headers = {"Authorization": f"Bearer {token}"}
        assert c.post("/api/v1/recall", json={"query": "x"}, headers=headers).status_code == 200
        clock.advance(hours=2, seconds=2)
        time.sleep(CACHE_SECONDS)  # a check is trusted for a second, as a revoke is
        assert c.post("/api/v1/recall", json={"query": "x"}, headers=headers).status_code == 401


def test_an_expiry_in_another_shape_is_refused_naming_the_field(client: TestClient) -> None:
    for bad in ("30", "30 days", "0d", "-1d", "1y"):
        reply = client.post("/api/v1/tokens", json={"agent": "ann", "expires": bad}, headers=AUTH)
        assert reply.status_code == 422, bad
        assert reply.json()["error"]["field"] == "expires"


def test_the_command_line_makes_read_only_and_expiring_tokens(token_settings: Settings) -> None:
    env = server_env(token_settings.db_path)
    if token_settings.database_url is not None:
        env["CORTEX_DATABASE_URL"] = token_settings.database_url.get_secret_value()
    command = [*server_command(), "token"]
    made = subprocess.run(
        [*command, "create", "--agent", "ann", "--read-only", "--expires", "30d"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    assert "read-only" in made.stdout and "until" in made.stdout
    listed = subprocess.run([*command, "list"], env=env, capture_output=True, text=True, timeout=60)
    assert "read-only" in listed.stdout and "expires" in listed.stdout


def test_expiry_is_counted_from_creation() -> None:
    from cortex_mcp.service.tokens import lifetime

    assert lifetime("30d") == timedelta(days=30)
    assert lifetime("12h") == timedelta(hours=12)
    assert lifetime("2w") == timedelta(weeks=2)
