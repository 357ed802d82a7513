"""The stdio transport, with every line answered.

The SDK's stdio reader drops what it cannot parse without a word: a malformed line, a batch, a
message without `jsonrpc`, and a request whose JSON carries an unpaired surrogate escape
(`"\\udfff"`) all leave the client waiting for its timeout. Here each line is checked before the
SDK sees it: what is not JSON gets a parse error (-32700), what is JSON but not a JSON-RPC
message an invalid-request error (-32600), and a well-formed request whose text is not valid
Unicode (a lone surrogate, bytes that are not UTF-8) an invalid-params error (-32602) under its
own id. Everything else goes to the SDK's reader and session unchanged.

A pipe or socket is read and written on the event loop (asyncio's pipe transports), not by a
worker thread per line as the SDK does: each of those trips wakes a thread and hands the
interpreter over twice (~75 us of CPU), three of them per request and answer. The input pipe
is one only this process reads (the relay of commands/stdin_relay.py); the output is the
wire itself, set non-blocking while served and blocking again after, and fd 1 points at
stderr meanwhile, as the SDK's own transport does, so stray prints miss the wire. A terminal,
a file, Windows, or another event loop keep the SDK's threads.

End of input is held back while requests are in flight: the SDK cancels every running handler
when its input ends, so a client that writes a request and closes stdin (a script, or a host
shutting down) would lose a remember it was promised. Here the reader waits (up to
`DRAIN_TIMEOUT_S`) until every request it passed on has been answered or cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, BinaryIO

import anyio
import sniffio
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

_READ_CHUNK = 1 << 16
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
    """The lines of `source` that may reach the SDK's reader; the others are answered here.
    `private`: no other process reads `source`, so it may be read on the event loop."""

    def __init__(self, source: BinaryIO, *, private: bool = False) -> None:
        self._source = source
        self._private = private
        self._loop_lines: LoopLines | None = None
        self._reader_chosen = False
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
        if not self._reader_chosen:
            self._reader_chosen = True
            if self._private and _loop_can_serve(self._source):
                self._loop_lines = await LoopLines.open(self._source)
        if self._loop_lines is not None:
            return await self._loop_lines.readline(limit)
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


def _loop_can_serve(stream: Any) -> bool:
    """`stream` is a pipe or socket an asyncio event loop can watch (never a terminal or a
    file, which epoll refuses, and not on Windows, whose loop cannot watch pipes this way)."""
    if sys.platform == "win32":
        return False
    try:
        if sniffio.current_async_library() != "asyncio":
            return False
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError, sniffio.AsyncLibraryNotFoundError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LoopLines:
    """Lines of a pipe read on the event loop, with `BufferedReader.readline(limit)`'s
    contract: up to and including the next newline, at most `limit` bytes, b"" at the end."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()
        self._searched = 0  # the buffer's first bytes already known to hold no newline
        self._ended = False

    @classmethod
    async def open(cls, source: BinaryIO) -> LoopLines:
        reader = asyncio.StreamReader(limit=_READ_CHUNK)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
        return cls(reader)

    async def readline(self, limit: int) -> bytes:
        while True:
            end = self._buffer.find(b"\n", self._searched, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self._buffer) >= limit or self._ended:
                return self._take(min(limit, len(self._buffer)))
            self._searched = len(self._buffer)
            chunk = await self._reader.read(_READ_CHUNK)
            if chunk:
                self._buffer += chunk
            else:
                self._ended = True

    def _take(self, size: int) -> bytes:
        line = bytes(self._buffer[:size])
        del self._buffer[:size]
        self._searched = 0
        return line


class LoopStdout:
    """The wire's write side, written on the event loop; each write returns once its bytes
    are in the pipe, as a blocking write's would (a client that stops reading holds the
    writer, not a thread)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        try:
            self._writer.write(text.encode("utf-8"))
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise anyio.ClosedResourceError from None  # the client went away: stop writing

    async def flush(self) -> None:
        """Nothing to do: `write` returns once its bytes are in the pipe."""


@asynccontextmanager
async def loop_stdout() -> AsyncIterator[LoopStdout | None]:
    """fd 1 claimed for the protocol, written on the event loop: the wire moves to a private
    descriptor and fd 1 points at stderr until the end. None when fd 1 is not a pipe or socket
    the loop can write (the SDK's transport then claims it and writes by thread)."""
    if not _loop_can_serve(sys.stdout) or sys.stdout.fileno() != 1:
        yield None
        return
    sys.stdout.flush()
    wire = os.dup(1)
    os.set_inheritable(wire, False)
    _point_at_stderr(1)
    loop = asyncio.get_running_loop()
    transport: asyncio.WriteTransport | None = None
    try:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
            os.fdopen(wire, "wb", buffering=0, closefd=False),  # a descriptor: no disk wait
        )
        transport.set_write_buffer_limits(high=0)  # drain() waits until every byte is out
        yield LoopStdout(asyncio.StreamWriter(transport, protocol, None, loop))
    finally:
        if transport is not None:
            transport.close()
        os.dup2(wire, 1)
        os.close(wire)
        with suppress(OSError):  # the shared description goes back to how we found it
            os.set_blocking(1, True)


def _point_at_stderr(fd: int) -> None:
    """`fd` writes where stderr does (the null device when there is no stderr)."""
    try:
        diversion = os.dup(2)
    except OSError:
        diversion = os.open(os.devnull, os.O_WRONLY)
    os.dup2(diversion, fd)
    os.close(diversion)


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


async def serve_stdio(server: MCPServer, stdin: BinaryIO | None = None) -> None:
    """Run `server` on this process's stdin/stdout (the SDK's transport, guarded input).
    `stdin`: a pipe only this process reads (the relay's), read on the event loop."""
    lines = GuardedLines(stdin or sys.stdin.buffer, private=stdin is not None)
    lowlevel = server._lowlevel_server  # the documented v2 replacement for _mcp_server
    async with (
        loop_stdout() as stdout,
        stdio_server(stdin=lines, stdout=stdout) as (read_stream, write_stream),  # type: ignore[arg-type]
    ):
        lines.answer_through(write_stream)
        await lowlevel.run(
            read_stream,
            _AnswerWatch(write_stream, lines),
            lowlevel.create_initialization_options(),
        )
