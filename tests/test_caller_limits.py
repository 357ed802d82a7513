"""One caller cannot take a served `cortex-mcp serve` from the others: a client that keeps
sending a wrong token is throttled alone, while every other client on the same address (the
admin, agent tokens, `/health`, MCP `initialize`, the dashboard's sign-in) is served at the
same moment; guessing many tokens is throttled without stopping credentials the server
accepts."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cortex_mcp.config import load_settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.service.requests import TokenRequest, build
from tests.helpers.http_helpers import AUTH, TOKEN, ServeProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

API = "/api/v1"
FAILURES = 3  # CORTEX_AUTH_FAILURES_PER_MINUTE of the served process
STALE = "cxt_stale0000_an-old-token-of-a-revoked-client"


async def _agent_token(db_path: Path, agent: str) -> str:
    settings = load_settings(db_path=db_path, embedding_provider="none")
    async with open_tokens(settings) as tokens:
        return str((await tokens.create(build(TokenRequest, agent=agent)))["token"])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServeProcess, str]]:
    alice = anyio.run(_agent_token, tmp_path / "brain.db", "alice")
    server = ServeProcess(tmp_path / "brain.db", CORTEX_AUTH_FAILURES_PER_MINUTE=str(FAILURES))
    with server:
        yield server, alice


@asynccontextmanager
async def _mcp(server: ServeProcess, token: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300)
    )
    url = server.url + "/mcp"
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
        yield c


def _hammer(server: ServeProcess, token: str, times: int, statuses: list[int]) -> None:
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        for _ in range(times):
            reply = client.get(f"{API}/stats", headers={"Authorization": f"Bearer {token}"})
            statuses.append(reply.status_code)


def _others(server: ServeProcess, alice: str) -> dict[str, int]:
    """One request of each kind the stale client must not lock out (same address)."""
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        signin = client.post("/ui/session", json={"token": TOKEN}, headers={"Origin": server.url})
        return {
            "admin": client.get(f"{API}/stats", headers=AUTH).status_code,
            "agent": client.get(
                f"{API}/stats", headers={"Authorization": f"Bearer {alice}"}
            ).status_code,
            "health": client.get(f"{API}/health").status_code,
            "health with the stale token": client.get(
                f"{API}/health", headers={"Authorization": f"Bearer {STALE}"}
            ).status_code,
            "sign-in": signin.status_code,
        }


async def test_a_client_with_a_stale_token_is_throttled_alone_while_others_on_its_address_are_served(
    served: tuple[ServeProcess, str],
) -> None:
    server, alice = served
    stale: list[int] = []
    hammering = threading.Thread(target=_hammer, args=(server, STALE, 4 * FAILURES, stale))
    hammering.start()
    seen: list[dict[str, int]] = []
    tool_errors = 0
    with anyio.fail_after(120):
        while hammering.is_alive() or not seen:
            seen.append(await anyio.to_thread.run_sync(_others, server, alice))
            async with _mcp(server, alice) as client:  # MCP initialize with an agent token
                tool_errors += (await client.call_tool("cortex_recall", {"query": "x"})).is_error
    hammering.join()
    assert stale[:FAILURES] == [401] * FAILURES and set(stale[FAILURES:]) == {429}
    # after the stale client was throttled, and all along: everyone else is served
    seen.append(_others(server, alice))
    assert all(set(each.values()) == {200} for each in seen), seen
    assert tool_errors == 0
    async with _mcp(server, TOKEN) as client:  # the admin's MCP session too
        assert not (await client.call_tool("cortex_recall", {"query": "x"})).is_error
    # the log names the failing client (its address and a fingerprint), never its token
    log = server.log.read_text(errors="replace")
    throttled = [line for line in log.splitlines() if "refused 3 times" in line]
    assert len(throttled) == 1 and "127.0.0.1" in throttled[0], log[-2000:]
    assert STALE not in log and "an-old-token" not in log


def test_guessing_many_tokens_is_throttled_but_credentials_accepted_lately_are_served(
    served: tuple[ServeProcess, str],
) -> None:
    server, alice = served
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        assert client.get(f"{API}/stats", headers=AUTH).status_code == 200
        assert client.get(f"{API}/stats", headers={"Authorization": f"Bearer {alice}"}).is_success
        guesses = [
            client.get(f"{API}/stats", headers={"Authorization": f"Bearer guess-{n}"})
            for n in range(10 * FAILURES + 2)
        ]
        statuses = [reply.status_code for reply in guesses]
        assert statuses[: 10 * FAILURES] == [401] * (10 * FAILURES)
        assert statuses[10 * FAILURES :] == [429, 429]
        assert "different credentials" in guesses[-1].json()["error"]["message"]
        assert int(guesses[-1].headers["retry-after"]) >= 1
        # the admin's and alice's tokens, accepted before, are still served from there
        assert client.get(f"{API}/stats", headers=AUTH).status_code == 200
        assert client.get(f"{API}/stats", headers={"Authorization": f"Bearer {alice}"}).is_success
        assert client.get(f"{API}/health").status_code == 200
    # another address is not affected at all
    other = httpx2.Client(
        base_url=server.url, timeout=10, transport=httpx2.HTTPTransport(local_address="127.0.0.2")
    )
    with other:
        assert other.get(f"{API}/stats", headers={"Authorization": "Bearer guess-x"}).is_error
        assert (
            other.get(f"{API}/stats", headers={"Authorization": "Bearer guess-x"}).status_code
            == 401
        )


def test_a_wrong_token_at_the_dashboards_sign_in_is_throttled_alone(
    served: tuple[ServeProcess, str],
) -> None:
    server, alice = served
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        origin = {"Origin": server.url}
        wrong = [
            client.post("/ui/session", json={"token": STALE}, headers=origin).status_code
            for _ in range(FAILURES + 1)
        ]
        assert wrong == [401] * FAILURES + [429]
        right = client.post("/ui/session", json={"token": alice}, headers=origin)
        assert right.status_code == 200, right.text
        assert client.get(f"{API}/stats", headers=AUTH).status_code == 200


# ---- MCP sessions: a cap per caller, a bounded total, a short idle timeout ------------------

PER_CALLER, TOTAL, IDLE_S = 3, 5, 3.0
LEGACY = "2025-11-25"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[tuple[ServeProcess, dict[str, str]]]:
    db = tmp_path / "brain.db"
    tokens = {agent: anyio.run(_agent_token, db, agent) for agent in ("alice", "bob", "carol")}
    limits = {
        "CORTEX_MCP_SESSIONS_PER_CALLER": str(PER_CALLER),
        "CORTEX_MCP_SESSIONS_TOTAL": str(TOTAL),
        "CORTEX_MCP_SESSION_IDLE_S": str(IDLE_S),
    }
    with ServeProcess(db, **limits) as server:
        yield server, tokens


def _initialize(server: ServeProcess, token: str) -> httpx2.Response:
    """A raw `initialize`, as 2025 hosts send it."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t"}},
    }
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
    return httpx2.post(server.url + "/mcp", json=initialize, headers=headers, timeout=30)


def _open_session(server: ServeProcess, token: str) -> str:
    """The id of a new session."""
    reply = _initialize(server, token)
    assert reply.status_code == 200, reply.text
    return str(reply.headers["mcp-session-id"])


def _alive(server: ServeProcess, token: str, session: str) -> bool:
    headers = {
        **MCP_HEADERS,
        "Authorization": f"Bearer {token}",
        "Mcp-Session-Id": session,
        "Mcp-Protocol-Version": LEGACY,
    }
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    reply = httpx2.post(server.url + "/mcp", json=ping, headers=headers, timeout=30)
    assert reply.status_code in (200, 404), reply.text
    return reply.status_code == 200


async def test_one_token_opening_many_sessions_keeps_its_cap_and_locks_no_one_out(
    capped: tuple[ServeProcess, dict[str, str]],
) -> None:
    server, tokens = capped
    first = _open_session(server, tokens["alice"])
    async with _mcp(server, tokens["bob"]) as bob:  # bob's session, open before the flood
        flood: list[int] = []

        def initialize() -> None:
            flood.append(_initialize(server, tokens["alice"]).status_code)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:  # alice opens 20 at once
                for _ in range(20):
                    group.start_soon(anyio.to_thread.run_sync, initialize)
            # each was opened, or refused while all of hers had a request in flight
            assert set(flood) <= {200, 429} and 200 in flood
            alices = [_open_session(server, tokens["alice"]) for _ in range(PER_CALLER)]
        # alice holds her cap (her newest sessions), bob's session and a new one of his work
        assert [_alive(server, tokens["alice"], s) for s in alices] == [True] * PER_CALLER
        assert not _alive(server, tokens["alice"], first)  # her least recently used went
        assert not (await bob.call_tool("cortex_recall", {"query": "x"})).is_error
        async with _mcp(server, tokens["carol"]) as carol:
            assert not (await carol.call_tool("cortex_recall", {"query": "x"})).is_error
        assert _alive(server, tokens["bob"], _open_session(server, tokens["bob"]))
    log = server.log.read_text(errors="replace")
    assert "closed MCP session" in log and "at its cap of 3" in log


def test_at_the_servers_bound_the_heaviest_callers_idle_session_goes_never_a_refusal(
    capped: tuple[ServeProcess, dict[str, str]],
) -> None:
    server, tokens = capped
    alices = [_open_session(server, tokens["alice"]) for _ in range(PER_CALLER)]
    carols = [_open_session(server, tokens["carol"]) for _ in range(TOTAL - PER_CALLER)]
    bobs = _open_session(server, tokens["bob"])  # the sixth: bob is under his own cap
    assert _alive(server, tokens["bob"], bobs)
    assert [_alive(server, tokens["carol"], s) for s in carols] == [True, True]
    assert [_alive(server, tokens["alice"], s) for s in alices].count(False) == 1
    # a session's id works with its own token only (the SDK's rule, kept)
    assert not _alive(server, tokens["bob"], carols[0])


def test_an_idle_session_is_closed_after_the_idle_timeout(
    capped: tuple[ServeProcess, dict[str, str]],
) -> None:
    server, tokens = capped
    idle, used = _open_session(server, tokens["alice"]), _open_session(server, tokens["alice"])
    until = time.monotonic() + 2 * IDLE_S
    while time.monotonic() < until:
        assert _alive(server, tokens["alice"], used)  # used this often: it stays
        time.sleep(IDLE_S / 4)
    assert not _alive(server, tokens["alice"], idle)


async def test_stateless_requests_of_protocol_2026_hold_no_session(
    capped: tuple[ServeProcess, dict[str, str]],
) -> None:
    server, tokens = capped
    alices = [_open_session(server, tokens["alice"]) for _ in range(PER_CALLER)]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['alice']}"}, timeout=30)
    for _ in range(2 * TOTAL):  # more clients than the server holds sessions
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
            assert not (await c.call_tool("cortex_recall", {"query": "x"})).is_error
    await http.aclose()
    assert [_alive(server, tokens["alice"], s) for s in alices] == [True] * PER_CALLER


def _sse_open(stack: ExitStack, server: ServeProcess, token: str) -> str:
    """An open `GET /sse` stream (kept open by `stack`): its session's message endpoint."""
    auth = {"Authorization": f"Bearer {token}"}
    client = stack.enter_context(httpx2.Client(base_url=server.url, headers=auth, timeout=30))
    response = stack.enter_context(client.stream("GET", "/sse"))
    assert response.status_code == 200
    lines = response.iter_lines()
    stack.callback(lambda: lines)  # kept: a dropped line iterator would close the stream
    for line in lines:
        if line.startswith("data:"):
            return line.removeprefix("data:").strip()
    raise AssertionError("the stream ended before naming its endpoint")


def _sse_alive(server: ServeProcess, token: str, endpoint: str) -> bool:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Authorization": f"Bearer {token}"}
    reply = httpx2.post(server.url + endpoint, json=ping, headers=headers, timeout=30)
    assert reply.status_code in (202, 404), reply.text
    return reply.status_code == 202


def test_sse_streams_keep_the_same_cap_per_caller_and_bound(
    capped: tuple[ServeProcess, dict[str, str]],
) -> None:
    server, tokens = capped
    with ExitStack() as streams:
        alices = [_sse_open(streams, server, tokens["alice"]) for _ in range(PER_CALLER + 2)]
        alive = [_sse_alive(server, tokens["alice"], e) for e in alices]
        assert alive == [False, False] + [True] * PER_CALLER  # her oldest gave way
        carols = [_sse_open(streams, server, tokens["carol"]) for _ in range(TOTAL - PER_CALLER)]
        bobs = _sse_open(streams, server, tokens["bob"])  # over the bound: alice holds most
        assert _sse_alive(server, tokens["bob"], bobs)
        assert all(_sse_alive(server, tokens["carol"], e) for e in carols)
        assert [_sse_alive(server, tokens["alice"], e) for e in alices[2:]] == [False, True, True]
