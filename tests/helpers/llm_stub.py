"""A local LLM server for tests: a small Starlette app on 127.0.0.1 that speaks OpenAI chat
completions (``POST /v1/chat/completions``) and Anthropic Messages (``POST /v1/messages``).

Each test scripts its replies (a queue, then a default, or a function of the request) and reads
back what the server received. An OpenAI request with `"stream": true` gets the reply as
server-sent chunks, the way agent runtimes (OpenClaw) read a model. Reply kinds: text (wrapped in the caller's wire format), an HTTP
error with headers (429 + retry-after, 500), a delay, a reply held until released, and a
dropped connection.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False
    held: bool = False  # sent only once the stub's `release` is set (at the latest, at its end)


def text(value: str, delay_s: float = 0.0) -> Reply:
    return Reply(text=value, delay_s=delay_s)


def extraction(
    memories: list[dict[str, Any]], relations: list[dict[str, Any]] | None = None
) -> Reply:
    body: dict[str, Any] = {"memories": memories}
    if relations is not None:
        body["relations"] = relations
    return Reply(text=json.dumps(body, ensure_ascii=False))


def status(code: int, retry_after: str | None = None) -> Reply:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return Reply(status=code, headers=headers)


def slow(seconds: float, value: str = '{"memories": []}') -> Reply:
    return Reply(text=value, delay_s=seconds)


def dropped() -> Reply:
    return Reply(drop=True)


def held(value: str = '{"memories": []}') -> Reply:
    """A reply that waits for `StubLLM.release`: slower than any timeout, whatever the load."""
    return Reply(text=value, held=True)


@dataclass
class Received:
    wire: str  # "openai" or "anthropic"
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def system(self) -> str:
        if self.wire == "anthropic":
            return str(self.body.get("system", ""))
        return str(self.body["messages"][0]["content"])

    @property
    def user(self) -> str:
        return str(self.body["messages"][-1]["content"])


@dataclass
class StubLLM:
    url: str = ""
    script: deque[Reply] = field(default_factory=deque)
    default: Reply = field(default_factory=lambda: text('{"memories": []}'))
    responder: Callable[[Received], Reply] | None = None
    received: list[Received] = field(default_factory=list)
    raw: bytearray = field(default_factory=bytearray)
    release: threading.Event = field(default_factory=threading.Event)  # held replies go
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def queue(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def next_reply(self, request: Received) -> Reply:
        with self._lock:
            self.received.append(request)
            if self.script:
                return self.script.popleft()
        return self.responder(request) if self.responder else self.default

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    def clear(self) -> None:
        with self._lock:
            self.received.clear()
            self.raw.clear()


def _tokens(body: dict[str, Any]) -> int:
    chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    return (chars + len(str(body.get("system", "")))) // 4 + 1


def _openai_body(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    prompt = _tokens(body)
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "stub"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": len(reply.text) // 4,
            "total_tokens": prompt + len(reply.text) // 4,
        },
    }


def _anthropic_body(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "stub"),
        "content": [{"type": "text", "text": reply.text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": _tokens(body), "output_tokens": len(reply.text) // 4},
    }


def _openai_stream(reply: Reply, body: dict[str, Any]) -> StreamingResponse:
    whole = _openai_body(reply, body)
    head = {k: whole[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps(head | {'choices': [choice]} | extra)}\n\n"

    events = [
        chunk({"role": "assistant", "content": reply.text}, None),
        chunk({}, "stop"),
        f"data: {json.dumps(head | {'choices': [], 'usage': whole['usage']})}\n\n",
        "data: [DONE]\n\n",
    ]
    return StreamingResponse(iter(events), media_type="text/event-stream")


class _DropConnection:
    """Starts a response, sends half of it, then fails: the server closes the socket."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"500")],
            }
        )
        await send({"type": "http.response.body", "body": b'{"id": "x", "cho', "more_body": True})
        raise ConnectionAbortedError("stub drops the connection")


def _app(stub: StubLLM) -> Starlette:
    async def handle(request: Request, wire: str) -> Any:
        raw = await request.body()
        with stub._lock:
            stub.raw.extend(raw)
        received = Received(wire, json.loads(raw), dict(request.headers))
        reply = stub.next_reply(received)
        if reply.delay_s:
            await anyio.sleep(reply.delay_s)
        if reply.held:
            await anyio.to_thread.run_sync(stub.release.wait, abandon_on_cancel=True)
        if reply.drop:
            return _DropConnection()
        if reply.status != 200:
            error = {"error": {"type": "stub_error", "message": f"stub status {reply.status}"}}
            if wire == "anthropic":
                error = {"type": "error", **error}
            return JSONResponse(error, status_code=reply.status, headers=reply.headers)
        if wire == "openai" and received.body.get("stream"):
            return _openai_stream(reply, received.body)
        make = _anthropic_body if wire == "anthropic" else _openai_body
        return JSONResponse(make(reply, received.body))

    async def openai_chat(request: Request) -> Any:
        return await handle(request, "openai")

    async def anthropic_messages(request: Request) -> Any:
        return await handle(request, "anthropic")

    return Starlette(
        routes=[
            Route("/v1/chat/completions", openai_chat, methods=["POST"]),
            Route("/v1/messages", anthropic_messages, methods=["POST"]),
        ]
    )


@contextmanager
def llm_stub() -> Iterator[StubLLM]:
    """Serve a fresh stub on 127.0.0.1 in a thread for the duration of the block."""
    stub = StubLLM()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound here, so no other process can take the port meanwhile
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        _app(stub), host="127.0.0.1", port=port, log_level="critical", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="llm-stub", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 60  # bounds a hang; a loaded machine starts it slowly
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("LLM stub did not start")
        time.sleep(0.01)
    stub.url = f"http://127.0.0.1:{port}"
    try:
        yield stub
    finally:
        stub.release.set()
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
