"""Deadlines for clients that send part of a request and stall (slowloris): without them a
connection that never finishes its request stays open for good, and enough of them exhaust the
server's file descriptors.

- The head (request line and headers) must arrive within HEAD_TIMEOUT_S of the connection, or
  of the previous answer on a kept-alive connection: else the connection is answered 408 and
  closed. uvicorn's own keep-alive timeout stops at the first byte, so a client that sends one
  byte and stalls is never cut by it; this is uvicorn's h11 protocol with that deadline added.
- The body must arrive whole within BODY_TIMEOUT_S of its headers (however it drips): else 408,
  naming the body, and the connection is closed. A response that streams for long (SSE) is not
  bounded: the deadline ends with the body.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
_HEAD_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 39\r\n\r\nthe request's headers did not arrive\r\n"
)


def bounded_h11(head_timeout_s: float = HEAD_TIMEOUT_S) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request head is late (imported
    here: only a server over HTTP needs uvicorn)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head_timer()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the head has arrived
                self._cancel_head_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._arm_head_timer()  # the next request's head, on a kept-alive connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_head_timer()
            super().connection_lost(exc)

        def _arm_head_timer(self) -> None:
            self._cancel_head_timer()
            self._head_timer = self.loop.call_later(head_timeout_s, self._head_late)

        def _cancel_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                if self.conn.our_state is h11.IDLE:  # nothing of an answer is on the wire
                    self.transport.write(_HEAD_TIMED_OUT)
                self.transport.close()

    return BoundedH11Protocol


class _BodyLate(BaseException):
    """The body's deadline passed (answered 408 already); ends the request's handling. Not an
    Exception: no handler's `except Exception` takes it for a crash to log."""


class BodyDeadline:
    """ASGI middleware: a request's body must arrive whole within `seconds` (see the module)."""

    def __init__(self, app: ASGIApp, seconds: float = BODY_TIMEOUT_S) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = {"body_done": False, "late": False, "started": False}
        deadline = asyncio.get_running_loop().time() + self.seconds

        async def receive_in_time() -> Message:
            if state["body_done"]:
                return await receive()  # after the body: only a disconnect, whenever it comes
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(left, 0))
            except TimeoutError:
                state["late"] = True
                if not state["started"]:
                    await _answer_late(send, self.seconds)
                raise _BodyLate from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                state["body_done"] = True
            return message

        async def send_unless_late(message: Message) -> None:
            if state["late"]:
                return  # the 408 was the answer
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, receive_in_time, send_unless_late)
        except _BodyLate:
            pass
        except BaseExceptionGroup as group:  # raised inside a task group (the MCP transports)
            rest = group.split(_BodyLate)[1]
            if rest is not None:
                raise rest from None


async def _answer_late(send: Send, seconds: float) -> None:
    error = {
        "code": "request_timeout",
        "message": f"the request body did not arrive within {seconds:g} s",
        "field": "body",
    }
    body = json.dumps({"error": error}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 408, "headers": headers})
    await send({"type": "http.response.body", "body": body})
