"""The stdio transport, with every line answered.

The SDK's stdio reader drops what it cannot parse without a word: a malformed line, a batch, a
message without `jsonrpc`, and a request whose JSON carries an unpaired surrogate escape
(`"\\udfff"`) all leave the client waiting for its timeout. Here each line is checked before the
SDK sees it: what is not JSON gets a parse error (-32700), what is JSON but not a JSON-RPC
message an invalid-request error (-32600), and a well-formed request whose text is not valid
Unicode (a lone surrogate, bytes that are not UTF-8) an invalid-params error (-32602) under its
own id. Everything else goes to the SDK's reader and session unchanged.

End of input is held back while requests are in flight: the SDK cancels every running handler
when its input ends, so a client that writes a request and closes stdin (a script, or a host
shutting down) would lose a remember it was promised. Here the reader waits (up to
`DRAIN_TIMEOUT_S`) until every request it passed on has been answered or cancelled.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
)

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 4 * 1024 * 1024  # the SDK's HTTP body limit; a real request is far smaller
DRAIN_TIMEOUT_S = 30.0  # the longest an in-flight request may hold the exit after end of input
_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")
_ID_NEAR_START = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")')


class Refusal(Exception):
    """A line that gets an error reply instead of reaching the session."""

    def __init__(self, code: int, message: str, request_id: int | str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


def check_line(line: bytes) -> dict[str, Any]:
    """The message `line` holds; Refusal unless it is one JSON-RPC message in valid UTF-8
    JSON text."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        message = _loads(line.decode("utf-8", errors="replace"), line)
        raise Refusal(
            INVALID_PARAMS, "the message is not valid UTF-8", _request_id(message)
        ) from None
    message = _loads(text, line)
    if not isinstance(message, dict):
        kind = "a batch (array)" if isinstance(message, list) else "not an object"
        raise Refusal(INVALID_REQUEST, f"a message must be one JSON-RPC object; got {kind}", None)
    request_id = _request_id(message)
    if message.get("jsonrpc") != "2.0":
        raise Refusal(INVALID_REQUEST, 'the message needs "jsonrpc": "2.0"', request_id)
    if "id" in message and request_id is None and message["id"] is not None:
        raise Refusal(INVALID_REQUEST, "id must be a string or an integer", None)
    if "method" in message and not isinstance(message["method"], str):
        raise Refusal(INVALID_REQUEST, "method must be a string", request_id)
    if _SURROGATE_ESCAPE.search(line) and _has_lone_surrogate(message):
        raise Refusal(
            INVALID_PARAMS,
            "the message holds text that is not valid Unicode (an unpaired surrogate escape)",
            request_id,
        )
    return message


def _loads(text: str, line: bytes) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise Refusal(
            PARSE_ERROR, "parse error: the line is not valid JSON", _id_near_start(line)
        ) from None


def _request_id(message: Any) -> int | str | None:
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _id_near_start(line: bytes) -> int | str | None:
    """The id of a request that cannot be parsed, when it is plainly written near the start."""
    found = _ID_NEAR_START.search(line[:512])
    if found is None:
        return None
    raw = found.group(1)
    return raw[1:-1].decode("utf-8", errors="replace") if raw.startswith(b'"') else int(raw)


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


class GuardedLines:
    """The lines of `source` that may reach the SDK's reader; the others are answered here."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self._replies: Any = None
        self._ready = anyio.Event()
        self._in_flight: set[int | str] = set()
        self._all_answered = anyio.Event()
        self._all_answered.set()

    def answer_through(self, write_stream: Any) -> None:
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            line = await self._readline(MAX_LINE_BYTES + 1)
            if not line:
                await self._drain()
                return
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                await self._skip_rest_of_line()
                await self._refuse(
                    Refusal(
                        INVALID_REQUEST,
                        f"message over {MAX_LINE_BYTES // (1024 * 1024)} MiB",
                        _id_near_start(line),
                    )
                )
                continue
            if not line.strip():
                continue
            try:
                message = check_line(line)
            except Refusal as refusal:
                await self._refuse(refusal)
                continue
            self._note_sent(message)
            yield line.decode("utf-8")

    def _note_sent(self, message: dict[str, Any]) -> None:
        request_id = _request_id(message)
        if "method" in message and request_id is not None:
            self._in_flight.add(request_id)
            self._all_answered = anyio.Event()
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            self._settle(_request_id({"id": (params or {}).get("requestId")}))

    def note_answer(self, item: Any) -> None:
        """A message the session sends: a response or error settles its request."""
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._settle(message.id)

    def _settle(self, request_id: int | str | None) -> None:
        if request_id is not None:
            self._in_flight.discard(request_id)
        if not self._in_flight:
            self._all_answered.set()

    async def _drain(self) -> None:
        """At end of input, let the requests already passed on finish (bounded)."""
        if self._in_flight:
            log.info("end of input: waiting for %d request(s) in flight", len(self._in_flight))
        with anyio.move_on_after(DRAIN_TIMEOUT_S) as scope:
            await self._all_answered.wait()
        if scope.cancelled_caught:
            log.warning("end of input: %d request(s) still unanswered", len(self._in_flight))

    async def _readline(self, limit: int) -> bytes:
        return await anyio.to_thread.run_sync(self._source.readline, limit)

    async def _skip_rest_of_line(self) -> None:
        while True:
            chunk = await self._readline(MAX_LINE_BYTES)
            if not chunk or chunk.endswith(b"\n"):
                return

    async def _refuse(self, refusal: Refusal) -> None:
        log.info("refused a message (%d): %s", refusal.code, refusal.message)
        await self._ready.wait()
        error = JSONRPCError(
            jsonrpc="2.0",
            id=refusal.request_id,
            error=ErrorData(code=refusal.code, message=refusal.message),
        )
        try:
            await self._replies.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            log.debug("the session closed before a refusal could be sent")


class _AnswerWatch:
    """The session's write side, telling `lines` of every answer it sends."""

    def __init__(self, inner: Any, lines: GuardedLines) -> None:
        self._inner = inner
        self._lines = lines

    async def send(self, item: SessionMessage) -> None:
        try:
            await self._inner.send(item)
        finally:  # an answer that cannot be sent settles its request all the same
            self._lines.note_answer(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnswerWatch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def serve_stdio(server: MCPServer) -> None:
    """Run `server` on this process's stdin/stdout (the SDK's transport, guarded input)."""
    lines = GuardedLines(sys.stdin.buffer)
    lowlevel = server._lowlevel_server  # the documented v2 replacement for _mcp_server
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_through(write_stream)
        await lowlevel.run(
            read_stream,
            _AnswerWatch(write_stream, lines),
            lowlevel.create_initialization_options(),
        )
