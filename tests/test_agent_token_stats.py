"""Where the database is (a SQLite file's path, a PostgreSQL URL even with its password masked)
is the operator's to know (issue 32, item 3): an agent token's `/stats`, `/system` and
`cortex://stats` over an MCP session name it nowhere, while the admin token still sees it.
A served process on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cortex_mcp.config import Settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.service.requests import TokenRequest, build
from cortex_mcp.store.postgres.database import redact_url
from tests.helpers.http_helpers import TOKEN, ServeProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

API = "/api/v1"


def _where(settings: Settings) -> list[str]:
    """What would say where the database is: the path, or the masked URL and its host."""
    if settings.database_url is None:
        assert settings.db_path is not None
        return [str(settings.db_path), settings.db_path.name]
    url = settings.database_url.get_secret_value()
    parts = urlsplit(url)
    return [redact_url(url), f"{parts.hostname}:{parts.port}", parts.path.lstrip("/")]


def _named(text: str, where: list[str]) -> list[str]:
    return [w for w in where if w and w in text]


async def _mcp_stats(server: ServeProcess, token: str) -> str:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300)
    )
    async with http, Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
        return str((await c.read_resource("cortex://stats")).contents[0].text)


async def test_an_agent_token_is_not_told_where_the_database_is_but_the_admin_is(
    backend_settings: Settings,
) -> None:
    async with open_tokens(backend_settings) as tokens:
        alice = (await tokens.create(build(TokenRequest, agent="alice")))["token"]
    env = {}
    if backend_settings.database_url is not None:
        env["CORTEX_DATABASE_URL"] = backend_settings.database_url.get_secret_value()
    assert backend_settings.db_path is not None
    where = _where(backend_settings)
    with ServeProcess(backend_settings.db_path, **env) as server:

        def get(token: str, path: str) -> str:
            reply = httpx2.get(
                server.url + API + path, headers={"Authorization": f"Bearer {token}"}, timeout=60
            )
            assert reply.status_code == 200, reply.text
            return reply.text

        agents_view = {
            "/stats": get(alice, "/stats"),
            "/system": get(alice, "/system"),
            "cortex://stats": await _mcp_stats(server, alice),
        }
        admins_view = {
            "/stats": get(TOKEN, "/stats"),
            "/system": get(TOKEN, "/system"),
            "cortex://stats": await _mcp_stats(server, TOKEN),
        }
    for name, text in agents_view.items():
        assert _named(text, where) == [], name
        assert json.loads(text)["agent_id"] == "alice", name
    # the health of the database is still reported to the agent, without where it is
    health = json.loads(agents_view["/stats"])["health"]["parts"]
    [database] = [p for p in health if p["part"] == "database"]
    assert database["status"] == "ok" and database["detail"].startswith("the database: schema")
    for name, text in admins_view.items():
        assert _named(text, where[:1]) == where[:1], name
