"""One caller cannot take a served `cortex-mcp serve` from the others: a client that keeps
sending a wrong token is throttled alone, while every other client on the same address (the
admin, agent tokens, `/health`, MCP `initialize`, the dashboard's sign-in) is served at the
same moment; guessing many tokens is throttled without stopping credentials the server
accepts."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
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
