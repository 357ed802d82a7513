"""Agent tokens on a running `cortex-mcp serve` (SQLite file and PostgreSQL): each acts for its
own agent only over REST, MCP over Streamable HTTP and SSE, and the dashboard's session; every
attempt to name another agent is refused and changes nothing in the store; the admin token
acts for any agent; tokens appear in neither the database nor the server's log; a revoke is
honoured by a second server on the same store within 2 seconds."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.reader import open_stores, open_tokens
from cortex_mcp.service.requests import RevokeRequest, TokenRequest, build
from tests.helpers.http_helpers import TOKEN, ServeProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

API = "/api/v1"
# what each agent's seeded memory holds that no other agent may ever see
SECRET = {"bob": "vault", "alice": "lighthouse"}


def _rule(agent: str) -> str:
    return f"acts only for agent '{agent}'"


DASHBOARD = {"X-Cortex-Dashboard": "1", "Sec-Fetch-Site": "same-origin"}
# the tables a refused request must leave as they were (agent_tokens: last used may change)
WATCHED = ("memories", "relations", "lifecycle_log", "lifecycle_runs", "turns", "profiles")


def _env(settings: Settings) -> dict[str, str]:
    if settings.database_url is None:
        return {}
    return {"CORTEX_DATABASE_URL": settings.database_url.get_secret_value()}


async def _tokens(settings: Settings, *agents: str) -> dict[str, str]:
    async with open_tokens(settings) as tokens:
        return {
            agent: (await tokens.create(build(TokenRequest, agent=agent)))["token"]
            for agent in agents
        }


async def _snapshot(settings: Settings) -> dict[str, list[tuple[Any, ...]]]:
    async with open_stores(settings, allow_vec=False) as stores:
        found = {}
        for table in WATCHED:
            rows = await stores.db.fetchall(f"SELECT * FROM {table}")
            found[table] = sorted((tuple(str(v) for v in r) for r in rows), key=str)
        return found


async def _dump(settings: Settings) -> str:
    """Every value of every table, as text."""
    async with open_stores(settings, allow_vec=False) as stores:
        tables = (*WATCHED, "agent_tokens", "access_log", "meta")
        rows = [await stores.db.fetchall(f"SELECT * FROM {t}") for t in tables]
        return repr([[tuple(r) for r in part] for part in rows])


def _rest(server: ServeProcess, token: str, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
    return httpx2.request(method, server.url + API + path, headers=headers, timeout=30, **kwargs)


def _seed(server: ServeProcess) -> dict[str, str]:
    """As the admin: a memory and a relation for each of bob and alice; `ids[agent]` and
    `ids[agent + "/relation"]`."""
    ids = {}
    for agent, text in (
        ("bob", "Bob keeps the vault code in his desk"),
        ("alice", "Alice hides the lighthouse key"),
    ):
        reply = _rest(server, TOKEN, "POST", "/memories", json={"content": text, "agent_id": agent})
        assert reply.status_code == 201, reply.text
        ids[agent] = reply.json()["id"]
        relation = _rest(
            server,
            TOKEN,
            "POST",
            "/relations",
            json={"subject": agent, "predicate": "owns", "object": "a boat", "agent_id": agent},
        )
        assert relation.status_code == 201, relation.text
        ids[f"{agent}/relation"] = relation.json()["id"]
    return ids


def _requests(
    ids: dict[str, str], victim: str
) -> list[tuple[str, str, dict[str, Any] | None, bool]]:
    """(method, path, JSON body, whether its body or query names an agent) of every route
    that acts for an agent, each valid but for whose agent it names (the victim's ids)."""
    theirs, relation = ids[victim], ids[f"{victim}/relation"]
    messages = [{"role": "user", "content": "I moved to Oslo"}]
    return [
        ("POST", "/recall", {"query": "vault code"}, True),
        ("POST", "/search", {"query": "vault code"}, True),
        ("POST", "/ingest", {"user_message": "I moved to Oslo"}, True),
        ("POST", "/flush", {"messages": messages}, True),
        ("GET", "/memories", None, True),
        ("POST", "/memories", {"content": "Bob owes me money"}, True),
        ("GET", f"/memories/{theirs}", None, True),
        ("PATCH", f"/memories/{theirs}", {"importance": 0.1}, True),
        ("DELETE", f"/memories/{theirs}", None, True),
        ("GET", "/stats", None, True),
        ("POST", "/lifecycle/run", {}, True),
        ("GET", "/lifecycle/preview", None, True),
        ("GET", "/lifecycle/log", None, True),
        ("POST", "/export", {"format": "json"}, True),
        ("POST", "/import", {"format": "markdown", "content": "- Bob likes rum"}, False),
        ("GET", "/relations", None, True),
        ("POST", "/relations", {"subject": "Bob", "predicate": "is", "object": "rich"}, True),
        ("DELETE", f"/relations/{relation}", None, True),
        ("GET", "/agents", None, True),
        ("GET", "/browse", None, True),
        ("GET", "/timeline", None, True),
        ("GET", f"/memories/{theirs}/detail", None, True),
        ("POST", f"/memories/{theirs}/restore", {}, True),
        ("POST", f"/memories/{theirs}/correct", {"content": "Bob has no vault"}, True),
        ("POST", "/search/compare", {"query": "vault", "variants": [{"mode": "text"}]}, True),
        ("GET", "/lifecycle/runs", None, True),
        ("GET", "/turns", None, True),
        ("GET", "/profile", None, True),
        ("PATCH", "/profile", {"summary": "Bob is a pirate"}, True),
        ("GET", "/system", None, True),
    ]


def _cross_agent_attempts(
    send: Callable[..., Any], ids: dict[str, str], attacker: str, victim: str
) -> int:
    """Every route, naming the victim in X-Cortex-Agent and, separately, in its body or
    query: each must be 403 naming the attacker's rule. `send(method, path, **httpx args)`."""
    tried = 0
    for method, path, body, names in _requests(ids, victim):
        plain = {"json": body} if body is not None else {}
        variants: list[dict[str, Any]] = [{**plain, "headers": {"X-Cortex-Agent": victim}}]
        if body is not None:
            variants.append({"json": {**body, "agent_id": victim}})
        elif names:
            variants.append({"params": {"agent_id": victim}})
        for kwargs in variants:
            reply = send(method, path, **kwargs)
            assert reply.status_code == 403, (method, path, kwargs, reply.text)
            assert reply.json()["error"]["code"] == "forbidden"
            assert _rule(attacker) in reply.json()["error"]["message"]
            tried += 1
    return tried


def _bearer(server: ServeProcess, token: str) -> Callable[..., Any]:
    return lambda method, path, **kwargs: _rest(server, token, method, path, **kwargs)


def _own_agent_cannot_reach_the_victims_ids(
    server: ServeProcess, token: str, ids: dict[str, str], victim: str
) -> None:
    """Naming no agent means its own: the victim's memory and relation are not found."""
    theirs = ids[victim]
    for method, path, body in (
        ("GET", f"/memories/{theirs}", None),
        ("PATCH", f"/memories/{theirs}", {"importance": 0.1}),
        ("DELETE", f"/memories/{theirs}", None),
        ("GET", f"/memories/{theirs}/detail", None),
        ("POST", f"/memories/{theirs}/restore", {}),
        ("POST", f"/memories/{theirs}/correct", {"content": "Bob has no vault"}),
        ("DELETE", f"/relations/{ids[f'{victim}/relation']}", None),
    ):
        reply = _rest(server, token, method, path, **({"json": body} if body is not None else {}))
        assert reply.status_code == 404, (method, path, reply.text)


@asynccontextmanager
async def _mcp(
    server: ServeProcess, transport: str, token: str, **headers: str
) -> AsyncIterator[Client]:
    auth = {"Authorization": f"Bearer {token}", **headers}
    if transport == "sse":
        async with Client(sse_client(server.url + "/sse", headers=auth)) as client:
            yield client
        return
    http = httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(30, read=300))
    async with http, Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
        yield c


async def _mcp_attempts(
    server: ServeProcess, transport: str, token: str, attacker: str, victim: str, victims_id: str
) -> None:
    rule, secret = _rule(attacker), SECRET[victim]
    calls = [
        ("cortex_recall", {"query": f"{secret} code", "agent_id": victim}),
        ("cortex_remember", {"content": "Bob owes me money", "agent_id": victim}),
        ("cortex_forget", {"memory_id": victims_id, "agent_id": victim}),
        ("cortex_forget", {"memory_id": victims_id, "agent_id": victim, "purge": True}),
        ("cortex_search_debug", {"query": secret, "agent_id": victim}),
    ]
    async with _mcp(server, transport, token) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert result.is_error and rule in result.content[0].text, (name, result.content)
        own = await client.call_tool("cortex_forget", {"memory_id": victims_id})
        assert own.is_error and "no memory" in own.content[0].text
        # its own recall (the secret word is in no memory of the attacker's: nothing of its
        # own is recalled, so no access count changes either)
        recalled = await client.call_tool("cortex_recall", {"query": secret})
        assert secret not in str(recalled.structured_content)
        stats = await client.read_resource("cortex://stats")
        assert f'"agent_id": "{attacker}"' in stats.contents[0].text
        core = await client.read_resource("cortex://core")
        assert secret not in core.contents[0].text
        with pytest.raises(Exception, match=r"no memory|not found|Unknown"):
            await client.read_resource(f"cortex://memories/{victims_id}")
    async with _mcp(server, transport, token, **{"X-Cortex-Agent": victim}) as client:
        result = await client.call_tool("cortex_recall", {"query": f"{secret} code"})
        assert result.is_error and rule in result.content[0].text
        with pytest.raises(Exception, match=re.escape(rule)):
            await client.read_resource("cortex://core")


def _dashboard(server: ServeProcess, token: str) -> httpx2.Client:
    client = httpx2.Client(base_url=server.url, timeout=30)
    reply = client.post("/ui/session", json={"token": token}, headers={"Origin": server.url})
    assert reply.status_code == 200, reply.text
    client.headers.update({**DASHBOARD, "Origin": server.url})
    return client


async def test_an_agent_token_acts_only_for_its_agent_on_every_transport(
    backend_settings: Settings,
) -> None:
    issued = await _tokens(backend_settings, "alice", "bob")
    alice = issued["alice"]
    db = backend_settings.db_path
    with ServeProcess(db, **_env(backend_settings)) as server:
        ids = _seed(server)
        before = await _snapshot(backend_settings)
        for attacker, victim in (("alice", "bob"), ("bob", "alice")):
            await _every_way_to_the_other_agent_is_refused(
                server, issued[attacker], attacker, victim, ids
            )
        assert await _snapshot(backend_settings) == before  # nothing read was changed

        # its own agent: allowed, without naming it or naming it
        mine = _rest(server, alice, "POST", "/memories", json={"content": "Alice likes tea"})
        assert mine.status_code == 201
        named = _rest(server, alice, "GET", "/memories", params={"agent_id": "alice"})
        assert {m["content"] for m in named.json()["memories"]} == {
            "Alice hides the lighthouse key",
            "Alice likes tea",
        }
        # the admin token acts for any agent; bob's token reads bob's
        for token in (TOKEN, issued["bob"]):
            bobs = _rest(
                server, token, "GET", f"/memories/{ids['bob']}", params={"agent_id": "bob"}
            )
            assert bobs.status_code == 200 and "vault" in bobs.text
        everyone = _rest(server, TOKEN, "GET", "/agents").json()["agents"]
        assert {"alice", "bob"} <= {a["agent_id"] for a in everyone}

        log = server.log.read_text(errors="replace")
    stored = await _dump(backend_settings)
    listed = await _list(backend_settings)
    for token in issued.values():
        secret = token.split("_", 2)[2]
        assert secret not in log and secret not in stored and secret not in listed
    assert TOKEN not in log


async def _every_way_to_the_other_agent_is_refused(
    server: ServeProcess, token: str, attacker: str, victim: str, ids: dict[str, str]
) -> None:
    """REST, MCP over Streamable HTTP and SSE, and the dashboard's session, with the
    attacker's token: every request naming the victim is refused, naming none reaches only
    the attacker's own memories, and what lists agents lists the attacker alone."""
    assert _cross_agent_attempts(_bearer(server, token), ids, attacker, victim) >= 55
    _own_agent_cannot_reach_the_victims_ids(server, token, ids, victim)
    for transport in ("http", "sse"):
        await _mcp_attempts(server, transport, token, attacker, victim, ids[victim])
    page = _dashboard(server, token)
    send = lambda m, p, **kw: page.request(m, API + p, **kw)  # noqa: E731
    assert _cross_agent_attempts(send, ids, attacker, victim) >= 55
    assert page.get(f"{API}/agents").json()["agents"] == [{"agent_id": attacker, "memories": 1}]
    refused = page.get(f"{API}/browse", params={"agent_id": victim})
    assert refused.status_code == 403 and _rule(attacker) in refused.text
    system = page.get(f"{API}/system", params={"health": "false"}).json()
    assert "settings" not in system and "storage" not in system
    assert [a["agent_id"] for a in system["agents"]] == [attacker]
    page.close()


async def _list(settings: Settings) -> str:
    async with open_tokens(settings) as tokens:
        return repr(await tokens.list(include_revoked=True))


def _refused_by(server: ServeProcess, token: str) -> bool:
    return _rest(server, token, "GET", "/stats").status_code == 401


async def test_a_revoke_reaches_a_second_running_server_on_the_same_store_within_2_s(
    backend_settings: Settings,
) -> None:
    issued = await _tokens(backend_settings, "alice")
    db = backend_settings.db_path
    with (
        ServeProcess(db, **_env(backend_settings)) as first,
        ServeProcess(db, **_env(backend_settings)) as second,
    ):
        page = _dashboard(second, issued["alice"])
        assert page.get(f"{API}/stats").status_code == 200
        async with _mcp(second, "http", issued["alice"]) as client:
            for server in (first, second):
                assert not _refused_by(server, issued["alice"])
            async with open_tokens(backend_settings) as tokens:
                await tokens.revoke(build(RevokeRequest, token="alice"))
            revoked_at = time.monotonic()
            for server in (second, first):
                while not _refused_by(server, issued["alice"]):
                    assert time.monotonic() - revoked_at < 2.0, "a server still accepts it"
                    await anyio.sleep(0.05)
            with pytest.raises(Exception):  # noqa: B017 - the SDK's client raises on 401
                await client.call_tool("cortex_recall", {"query": "anything"})
        # the dashboard session opened with it has ended too
        assert page.get(f"{API}/stats").status_code == 401
        page.close()


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path / "brain.db") as server:
        yield server


def test_sign_out_ends_the_session_on_the_server(serving: ServeProcess) -> None:
    page = _dashboard(serving, TOKEN)
    cookie = page.cookies.get("cortex_session")
    assert cookie and page.get(f"{API}/stats").status_code == 200
    assert page.delete("/ui/session", headers={"Origin": serving.url}).status_code == 200
    # the old cookie, kept by someone who copied it before sign-out, opens nothing any more
    replay = httpx2.get(
        serving.url + API + "/stats", headers={**DASHBOARD, "Cookie": f"cortex_session={cookie}"}
    )
    assert replay.status_code == 401
    page.close()


def test_the_dashboard_cookie_does_not_open_mcp_or_sse(serving: ServeProcess) -> None:
    page = _dashboard(serving, TOKEN)
    assert page.get(f"{API}/stats").status_code == 200
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "x"},
        },
    }
    headers = {"Origin": serving.url, "Accept": "application/json, text/event-stream"}
    mcp = page.post("/mcp", json=initialize, headers=headers)
    assert mcp.status_code == 401 and "www-authenticate" in mcp.headers
    with page.stream("GET", "/sse", headers={"Origin": serving.url}) as sse:
        assert sse.status_code == 401
    page.close()


async def test_a_server_without_an_admin_token_says_agent_tokens_are_not_checked(
    tmp_path: Path,
) -> None:
    settings = load_settings(db_path=tmp_path / "brain.db", embedding_provider="none")
    await _tokens(settings, "alice")
    with ServeProcess(settings.db_path, token=None) as server:
        log = server.log.read_text(errors="replace")
    assert "agent tokens exist but CORTEX_API_TOKEN is not set" in log


async def test_a_wrong_bearer_over_mcp_is_told_which_token_is_expected_as_over_rest(
    serving: ServeProcess,
) -> None:
    rest = _rest(serving, "cxt_wrong_token", "GET", "/stats")
    expected = rest.json()["error"]["message"]
    assert rest.status_code == 401 and "CORTEX_API_TOKEN" in expected
    headers = {"Authorization": "Bearer cxt_wrong_token", "Accept": "application/json"}
    for path in ("/mcp", "/sse"):
        reply = httpx2.get(serving.url + path, headers=headers, timeout=30)
        assert reply.status_code == 401, reply.text
        assert reply.json() == {"error": "invalid_token", "error_description": expected}
        challenge = reply.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
        assert "CORTEX_API_TOKEN, or an agent token" in challenge


async def test_another_agent_named_in_the_header_is_refused_naming_the_header(
    serving: ServeProcess, tmp_path: Path
) -> None:
    alice = (await _tokens(load_settings(db_path=tmp_path / "brain.db"), "alice"))["alice"]
    header = {"X-Cortex-Agent": "bob"}
    rest = _rest(serving, alice, "POST", "/recall", json={"query": "vault"}, headers=header)
    assert rest.status_code == 403 and rest.json()["error"]["field"] == "X-Cortex-Agent"
    assert "agent_id" not in rest.json()["error"]["message"], rest.text
    for transport in ("http", "sse"):
        async with _mcp(serving, transport, alice, **header) as client:
            result = await client.call_tool("cortex_recall", {"query": "vault"})
        text = result.content[0].text
        assert result.is_error and _rule("alice") in text, text
        assert "X-Cortex-Agent" in text and "agent_id" not in text, text
