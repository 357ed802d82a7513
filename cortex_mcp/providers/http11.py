"""Keep-alive HTTP/1.1 posts to an embedding server on plain HTTP (Ollama, vLLM, TEI, LM Studio,
on this machine or the LAN): h11, the HTTP/1.1 state machine httpx itself stands on, over
asyncio's streams.

Every recall posts its query to the embedding server. Through httpx's client that post cost
~0.6 ms of the server's CPU (request building, URL merging, auth and redirect hooks, the
connection pool's locks and timeouts, the response wrapper); here ~0.2 ms, the same bytes on
the wire. What this does not do is left to httpx: HTTPS, a proxy from the environment, and a
redirect (the post is sent again through an httpx client, which follows it, as before)."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.parse
from dataclasses import dataclass
from typing import Any

import h11

# a proxy for plain HTTP the environment names (httpx honours these): httpx's client then
_PROXY_VARIABLES = ("http_proxy", "all_proxy")
_READ_CHUNK = 1 << 16


def serves(base_url: str) -> bool:
    """Whether `PlainHttpClient` can post to `base_url`: plain HTTP without a proxy."""
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme != "http" or parts.username or parts.password or parts.query:
        return False  # credentials in the URL (basic auth) and a query: httpx's
    return not any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARIABLES)


class ConnectionLost(ConnectionError):
    """The server closed the connection or broke the protocol before its answer was whole."""


@dataclass
class Answer:
    """An HTTP answer as the embedder reads it (the attributes it reads of httpx's)."""

    status_code: int
    reason_phrase: str
    headers: dict[str, str]  # lower-case names
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.protocol = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        self.writer.close()

    @property
    def reusable(self) -> bool:
        return self.protocol.our_state is h11.DONE and self.protocol.their_state is h11.DONE


class PlainHttpClient:
    """`post(path, json=...)` to `base_url` within `timeout_s`, on kept-alive connections (one
    per request in flight, kept for the next)."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout_s: float) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.base_url = base_url
        self.host = parts.hostname or "localhost"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/") + "/"
        self.timeout_s = timeout_s
        self.headers = headers
        self._fixed = [
            ("Host", parts.netloc),
            *headers.items(),
            ("Content-Type", "application/json"),
        ]
        self._idle: list[_Connection] = []
        self._redirected: Any = None  # httpx's client, once the server redirected a post

    async def post(self, path: str, *, json: Any) -> Any:
        """An `Answer`, or httpx's response once the server redirected a post."""
        body = _dumps(json)
        if self._redirected is not None:
            return await self._redirected.post(path, content=body, headers=_JSON)
        async with asyncio.timeout(self.timeout_s):
            answer = await self._exchange(path, body)
        if 300 <= answer.status_code < 400:
            self._redirected = await asyncio.to_thread(self._httpx_client)
            return await self._redirected.post(path, content=body, headers=_JSON)
        return answer

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        if self._redirected is not None:
            await self._redirected.aclose()

    async def _exchange(self, path: str, body: bytes) -> Answer:
        """One post: on an idle connection, else (or when the server had closed that one
        meanwhile, before answering anything) on a new one."""
        while self._idle:
            connection = self._idle.pop()
            try:
                return await self._on(connection, path, body, reused=True)
            except _ClosedWhileIdle:
                continue
        reader, writer = await asyncio.open_connection(self.host, self.port)
        return await self._on(_Connection(reader, writer), path, body, reused=False)

    async def _on(self, connection: _Connection, path: str, body: bytes, *, reused: bool) -> Answer:
        kept = False
        try:
            answer = await _request(connection, self._request(path, body), body, reused)
            if connection.reusable:
                connection.protocol.start_next_cycle()
                self._idle.append(connection)
                kept = True
            return answer
        finally:
            if not kept:  # failed, cancelled, or the server ends the connection
                connection.close()

    def _request(self, path: str, body: bytes) -> h11.Request:
        return h11.Request(
            method="POST",
            target=self.prefix + path,
            headers=[*self._fixed, ("Content-Length", str(len(body)))],
        )

    def _httpx_client(self) -> Any:
        import httpx2

        return httpx2.AsyncClient(
            base_url=self.base_url,
            headers=self.headers,
            timeout=self.timeout_s,
            follow_redirects=True,
        )


_JSON = {"Content-Type": "application/json"}


class _ClosedWhileIdle(Exception):
    """A kept connection the server had closed before this request: try another."""


async def _request(
    connection: _Connection, request: h11.Request, body: bytes, reused: bool
) -> Answer:
    protocol = connection.protocol
    try:
        connection.writer.write(
            protocol.send(request)
            + protocol.send(h11.Data(data=body))
            + protocol.send(h11.EndOfMessage())
        )
        await connection.writer.drain()
        return await _answer(connection)
    except (ConnectionError, h11.ProtocolError) as exc:
        if reused and protocol.their_state is h11.SEND_RESPONSE:
            raise _ClosedWhileIdle from exc  # nothing of an answer came
        if isinstance(exc, ConnectionLost):
            raise
        raise ConnectionLost(str(exc) or type(exc).__name__) from exc


async def _answer(connection: _Connection) -> Answer:
    protocol = connection.protocol
    response: h11.Response | None = None
    chunks: list[bytes] = []
    while True:
        event = protocol.next_event()
        if event is h11.NEED_DATA:
            data = await connection.reader.read(_READ_CHUNK)
            if not data and protocol.their_state is h11.SEND_RESPONSE:
                raise ConnectionLost("the server closed the connection without answering")
            protocol.receive_data(data)
        elif isinstance(event, h11.Response):
            response = event
        elif isinstance(event, h11.Data):
            chunks.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            assert response is not None
            return Answer(
                response.status_code,
                response.reason.decode("latin-1"),
                {
                    name.decode("latin-1"): value.decode("latin-1")
                    for name, value in response.headers
                },
                b"".join(chunks),
            )
        elif isinstance(event, h11.ConnectionClosed):
            raise ConnectionLost("the server closed the connection mid-answer")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
