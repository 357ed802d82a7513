"""Behind a reverse proxy (issue 35): from an address in CORTEX_TRUSTED_PROXIES, X-Forwarded-For
gives the client's address (so throttling tells clients apart) and CORTEX_PROXY_USER_HEADER
names the agent acting; the same headers from any other address are ignored (the user header
logged) and change nothing."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.reader import open_stores
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.http import create_app
from tests.helpers.http_helpers import TOKEN

PROXY = ("10.0.0.5", 4000)
STRANGER = ("192.0.2.9", 4000)
USER = {"X-Forwarded-User": "ann"}
ORIGIN = "http://127.0.0.1:21100"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        api_token=TOKEN,
        trusted_proxies="10.0.0.0/8",
        proxy_user_header="X-Forwarded-User",
        auth_failures_per_minute=2,
    )


def _client(settings: Settings, client: tuple[str, int]) -> TestClient:
    app = create_app(settings, lambda: open_cortex(settings))
    return TestClient(app, base_url=ORIGIN, client=client, raise_server_exceptions=False)


@pytest.fixture
def via_proxy(settings: Settings) -> Iterator[TestClient]:
    with _client(settings, PROXY) as c:
        yield c


def _memories(settings: Settings) -> list[Any]:
    async def read() -> list[Any]:
        async with open_stores(settings, allow_vec=False) as stores:
            rows = await stores.db.fetchall("SELECT agent_id, content FROM memories")
            return sorted(tuple(r) for r in rows)

    return anyio.run(read)


def test_the_user_a_trusted_proxy_names_acts_as_that_agent(
    via_proxy: TestClient, settings: Settings
) -> None:
    made = via_proxy.post("/api/v1/memories", json={"content": "Ann rows"}, headers=USER)
    assert made.status_code == 201, made.text
    assert _memories(settings) == [("ann", "Ann rows")]
    mine = via_proxy.post("/api/v1/recall", json={"query": "rows"}, headers=USER)
    assert [m["content"] for m in mine.json()["memories"]] == ["Ann rows"]
    theirs = via_proxy.post(
        "/api/v1/recall", json={"query": "rows", "agent_id": "bob"}, headers=USER
    )
    assert theirs.status_code == 403


def test_the_user_header_from_an_untrusted_address_is_ignored_and_logged(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with _client(settings, STRANGER) as c, caplog.at_level(logging.WARNING):
        reply = c.post("/api/v1/memories", json={"content": "Mallory was here"}, headers=USER)
        assert reply.status_code == 401
        assert reply.headers["www-authenticate"] == 'Bearer realm="cortex"'
        mcp = c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=USER)
        assert mcp.status_code == 401
    assert _memories(settings) == []
    assert "ignored x-forwarded-user from 192.0.2.9" in caplog.text


def test_a_proxy_user_header_is_not_read_when_a_bearer_token_is_sent(
    via_proxy: TestClient, settings: Settings
) -> None:
    headers = {**USER, "Authorization": f"Bearer {TOKEN}"}
    made = via_proxy.post(
        "/api/v1/memories", json={"content": "admin note", "agent_id": "zed"}, headers=headers
    )
    assert made.status_code == 201
    assert _memories(settings) == [("zed", "admin note")]


def test_forwarded_for_tells_clients_behind_the_proxy_apart(via_proxy: TestClient) -> None:
    wrong = {"Authorization": "Bearer wrong-token"}
    for _ in range(2):
        refused = via_proxy.get(
            "/api/v1/stats", headers={**wrong, "X-Forwarded-For": "203.0.113.7, 10.0.0.9"}
        )
        assert refused.status_code == 401
    throttled = via_proxy.get("/api/v1/stats", headers={**wrong, "X-Forwarded-For": "203.0.113.7"})
    assert throttled.status_code == 429
    # another client behind the same proxy, same wrong token: its own count
    other = via_proxy.get("/api/v1/stats", headers={**wrong, "X-Forwarded-For": "203.0.113.8"})
    assert other.status_code == 401


def test_forwarded_for_from_an_untrusted_address_does_not_move_the_throttle(
    settings: Settings,
) -> None:
    wrong = {"Authorization": "Bearer wrong-token"}
    with _client(settings, STRANGER) as c:
        for n in range(2):
            spoof = {**wrong, "X-Forwarded-For": f"203.0.113.{n}"}
            assert c.get("/api/v1/stats", headers=spoof).status_code == 401
        spoof = {**wrong, "X-Forwarded-For": "203.0.113.99"}
        assert c.get("/api/v1/stats", headers=spoof).status_code == 429
