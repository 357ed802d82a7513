"""The query's embedding is posted to a plain-HTTP server on kept-alive connections
(providers/http11.py): against a real server on a loopback socket that counts its connections,
closes idle ones, redirects, or stalls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import h11
import pytest

from cortex_mcp.errors import ProviderError
from cortex_mcp.providers import http11
from cortex_mcp.providers.embeddings import OpenAIEmbedder

pytestmark = pytest.mark.anyio

Reply = Callable[[h11.Request, bytes], Awaitable[tuple[int, list[tuple[str, str]], bytes]]]


@dataclass
class Served:
    url: str
    connections: int = 0
    requests: list[tuple[str, bytes]] = field(default_factory=list)  # (target, body)


def _embedding(body: bytes) -> bytes:
    texts = json.loads(body)["input"]
    data = [{"index": i, "embedding": [float(len(t)), 1.0]} for i, t in enumerate(texts)]
    return json.dumps({"data": data}).encode()


async def _embeddings(
    request: h11.Request, body: bytes
) -> tuple[int, list[tuple[str, str]], bytes]:
    return 200, [], _embedding(body)


@asynccontextmanager
async def _server(
    reply: Reply = _embeddings, *, close_after_answer: bool = False
) -> AsyncIterator[Served]:
    """An HTTP/1.1 server on 127.0.0.1; `close_after_answer`: it closes each connection a
    moment after answering, without saying so (as a server whose keep-alive timeout ran out)."""
    served = Served("")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.connections += 1
        protocol = h11.Connection(h11.SERVER)
        request, chunks = None, []
        try:
            while True:
                event = protocol.next_event()
                if event is h11.NEED_DATA:
                    data = await reader.read(65536)
                    if not data:
                        return
                    protocol.receive_data(data)
                elif isinstance(event, h11.Request):
                    request, chunks = event, []
                elif isinstance(event, h11.Data):
                    chunks.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    assert request is not None
                    body = b"".join(chunks)
                    served.requests.append((request.target.decode(), body))
                    status, headers, content = await reply(request, body)
                    length = [("Content-Length", str(len(content)))]
                    writer.write(
                        protocol.send(h11.Response(status_code=status, headers=headers + length))
                        + protocol.send(h11.Data(data=content))
                        + protocol.send(h11.EndOfMessage())
                    )
                    await writer.drain()
                    if close_after_answer:
                        await asyncio.sleep(0.05)
                        return
                    protocol.start_next_cycle()
                else:
                    return
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    served.url = f"http://127.0.0.1:{port}/v1/"
    try:
        yield served
    finally:
        server.close()


def _embedder(url: str, timeout_s: float = 5.0) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        model="stub", api_key="k", base_url=url, dimensions=None, timeout_s=timeout_s
    )


async def test_posts_one_after_another_share_one_connection() -> None:
    async with _server() as served:
        embedder = _embedder(served.url)
        for text in ("a", "bb", "ccc", "dddd", "eeeee"):
            rows = await embedder.embed([text])
            assert list(rows[0]) == [float(len(text)), 1.0]
        await embedder.close()
    assert served.connections == 1
    assert [target for target, _ in served.requests] == ["/v1/embeddings"] * 5


async def test_a_connection_the_server_closed_while_idle_is_replaced_without_an_error() -> None:
    async with _server(close_after_answer=True) as served:
        embedder = _embedder(served.url)
        await embedder.embed(["first"])
        await asyncio.sleep(0.2)  # the server has closed the kept connection by now
        rows = await embedder.embed(["second"])
        assert list(rows[0]) == [6.0, 1.0]
        await embedder.close()
    assert served.connections == 2


async def test_a_redirect_is_followed_as_before() -> None:
    async def moved(request: h11.Request, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        if request.target == b"/v1/embeddings":
            return 307, [("Location", "/v2/embeddings")], b""
        return 200, [], _embedding(body)

    async with _server(moved) as served:
        embedder = _embedder(served.url)
        rows = await embedder.embed(["moved"])
        assert list(rows[0]) == [5.0, 1.0]
        await embedder.close()
    # the redirected post is sent again through httpx, which follows the redirect
    assert [target for target, _ in served.requests] == [
        "/v1/embeddings",
        "/v1/embeddings",
        "/v2/embeddings",
    ]


async def test_a_post_given_up_leaves_no_half_answered_connection_behind() -> None:
    stalled = asyncio.Event()

    async def stall_once(
        request: h11.Request, body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        if not stalled.is_set():
            stalled.set()
            await asyncio.sleep(3600)
        return 200, [], _embedding(body)

    async with _server(stall_once) as served:
        embedder = _embedder(served.url, timeout_s=0.3)
        with pytest.raises(ProviderError, match=r"timed out after 0\.3 s"):
            await embedder.embed(["slow"])
        rows = await embedder.embed(["after"])  # not read from the stalled connection
        assert list(rows[0]) == [5.0, 1.0]
        await embedder.close()
    assert served.connections == 2


async def test_an_error_status_is_told_with_the_servers_own_message() -> None:
    async def refuse(request: h11.Request, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        error = {"error": {"message": "model not loaded"}}
        return 503, [("Retry-After", "2")], json.dumps(error).encode()

    async with _server(refuse) as served:
        embedder = _embedder(served.url)
        with pytest.raises(ProviderError, match="HTTP 503: model not loaded") as refused:
            await embedder.embed(["x"])
        assert getattr(refused.value, "retry_after_s", None) == 2.0
        await embedder.close()


async def test_a_server_that_is_not_there_cannot_be_connected_to() -> None:
    async with _server() as served:
        url = served.url
    embedder = _embedder(url)
    with pytest.raises(ProviderError, match=r"cannot connect \("):
        await embedder.embed(["x"])
    await embedder.close()


def test_https_a_proxy_from_the_environment_and_credentials_in_the_url_stay_with_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert http11.serves("http://127.0.0.1:11434/v1/")
    assert not http11.serves("https://api.openai.com/v1/")
    assert not http11.serves("http://user:secret@127.0.0.1:11434/v1/")
    assert not http11.serves("http://127.0.0.1:11434/v1/?api-version=1")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert not http11.serves("http://127.0.0.1:11434/v1/")
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.setenv("all_proxy", "socks5://proxy.example:1080")
    assert not http11.serves("http://127.0.0.1:11434/v1/")
