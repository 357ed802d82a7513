"""Streams end with their token (issue 32, item 13): an SSE stream (`GET /sse`) and a
Streamable HTTP GET stream (`GET /mcp`) opened with an agent token on a running
`cortex-mcp serve` end within seconds of the token's revoke, while a stream of a token that
was not revoked stays open."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.service.requests import RevokeRequest, TokenRequest, build
from tests.helpers.http_helpers import ServeProcess

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ENDS_WITHIN_S = 6.0  # revocation is seen within ~2 s; the margin is for a loaded machine
PROTOCOL = "2025-11-25"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path / "brain.db") as served:
        yield served


async def _token(db: Path, agent: str) -> str:
    async with open_tokens(load_settings(db_path=db, embedding_provider="none")) as tokens:
        return str((await tokens.create(build(TokenRequest, agent=agent)))["token"])


async def _revoke(db: Path, name: str) -> None:
    async with open_tokens(load_settings(db_path=db, embedding_provider="none")) as tokens:
        await tokens.revoke(build(RevokeRequest, token=name))  # a token is named after its agent


@asynccontextmanager
async def _sse(url: str, token: str) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    http = httpx2.AsyncClient(timeout=httpx2.Timeout(10, read=60))
    async with http, http.stream("GET", url + "/sse", headers=headers) as reply:
        assert reply.status_code == 200
        yield reply


@asynccontextmanager
async def _mcp_get_stream(url: str, token: str) -> AsyncIterator[Any]:
    """A Streamable HTTP session (initialize, initialized) and its standalone GET stream."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
    }
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "stream-test", "version": "1"},
        },
    }
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(10, read=60)) as http:
        started = await http.post(url + "/mcp", json=hello, headers=headers)
        assert started.status_code == 200, started.text
        session = {**headers, "Mcp-Session-Id": started.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(url + "/mcp", json=done, headers=session)).status_code == 202
        listen = {**session, "Accept": "text/event-stream"}
        async with http.stream("GET", url + "/mcp", headers=listen) as reply:
            assert reply.status_code == 200
            yield reply


async def _read_to_end(reply: Any, ended: anyio.Event) -> None:
    """Read the stream until the server ends it, then set `ended`."""
    try:
        async for _ in reply.aiter_raw():
            pass
    except httpx2.HTTPError:  # closed mid-chunk: ended too
        pass
    ended.set()


async def _ends_within(ended: anyio.Event, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await ended.wait()
    return ended.is_set()


@pytest.mark.parametrize("opened", [_sse, _mcp_get_stream], ids=["sse", "streamable-http"])
async def test_a_stream_ends_within_seconds_of_its_tokens_revoke(
    server: ServeProcess, tmp_path: Path, opened: Any
) -> None:
    db = tmp_path / "brain.db"
    alice, bob = await _token(db, "alice"), await _token(db, "bob")
    revoked, kept = anyio.Event(), anyio.Event()
    async with (
        opened(server.url, alice) as alices,
        opened(server.url, bob) as bobs,
        anyio.create_task_group() as group,
    ):
        group.start_soon(_read_to_end, alices, revoked)
        group.start_soon(_read_to_end, bobs, kept)
        assert not await _ends_within(revoked, 1.5)  # open, as long as the token is good
        began = time.monotonic()
        await _revoke(db, "alice")
        assert await _ends_within(revoked, ENDS_WITHIN_S), "the revoked token's stream is open"
        took = time.monotonic() - began
        assert not await _ends_within(kept, 2.5), "a good token's stream was ended"
        group.cancel_scope.cancel()
    print(f"stream ended {took:.2f} s after the revoke")
