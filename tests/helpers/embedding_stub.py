"""A local server that speaks OpenAI's /v1/embeddings wire format, for tests.

Its vectors are hashed bags of word stems: texts that share words are close, which is enough to
exercise the vector channel deterministically. With `meaning=True` words also count toward a few
meaning classes (a retriever and a pet share the "animal" class), so a paraphrase that shares no
word with a text is still close to it, as with a real model.

Fault modes (`StubState.mode`), each a way real providers have been seen to break:
``nonjson`` (HTTP 200, an HTML body), ``empty`` (HTTP 200, no body), ``http500``, ``hang`` (no
answer until released), ``mixed_dims`` (odd rows shorter), ``nan`` (NaN and inf in every row),
``nonnumeric`` (strings in the rows). `mode = None` serves normally.

Like a real provider it can take time and have limits: `latency_s` per request plus
`per_item_s` per input (requests are served in parallel, so its most is about
``concurrency * batch / (latency_s + per_item_s * batch)`` inputs per second), `max_inputs` per
request (more get HTTP 400 "Too many inputs", as OpenAI answers past 2,048) and
`max_concurrent` requests at once (more get HTTP 429). A request whose inputs `hold` accepts
is held until `release` is set (a busy provider, deterministically). It records each request's batch size
and the most requests it held at once. Run as a script it serves until killed and prints
``READY <port>`` (benchmarks run it in its own process).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from tests.helpers.loopback import serve

_WORD = re.compile(r"\w+")

MEANING_CLASSES: dict[str, frozenset[str]] = {
    "animal": frozenset(
        "pet pets dog dogs puppy retriever labrador cat cats kitten animal animals".split()
    ),
    "food": frozenset("food eat eats meal ramen sushi pizza lunch dinner cook cooking".split()),
    "travel": frozenset("trip travel flight flights vacation holiday abroad journey".split()),
    "money": frozenset("money invest invests investment budget salary savings stocks".split()),
    "computer": frozenset("server vps firewall port cluster kubernetes deploy backup".split()),
}
_CLASS_WEIGHT = 3.0


def stub_vector(text: str, dim: int, *, meaning: bool = False) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    classes = list(MEANING_CLASSES.values()) if meaning else []
    for word in _WORD.findall(text.lower()):
        for slot, members in enumerate(classes):
            if word in members:
                vector[slot] += _CLASS_WEIGHT
        stem = word[:5]
        digest = hashlib.blake2b(stem.encode(), digest_size=8).digest()
        slot = len(classes) + int.from_bytes(digest[:4], "little") % (dim - len(classes))
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


FAULT_MODES = ("nonjson", "empty", "http500", "hang", "mixed_dims", "nan", "nonnumeric")


@dataclass
class StubState:
    default_dim: int = 64
    fail_status: int | None = None
    delay_s: float = 0.0
    mode: str | None = None
    meaning: bool = False
    keep_alive: bool = False  # HTTP/1.1 connection reuse, as real providers do (benchmarks)
    latency_s: float = 0.0  # per request, like a network round trip and queueing
    per_item_s: float = 0.0  # per input, like the model's work
    max_inputs: int | None = None
    max_concurrent: int | None = None
    retry_after_s: float | None = None  # sent with each 429
    # a request whose inputs this accepts waits until `release` is set
    hold: Callable[[list[str]], bool] | None = None
    held: int = 0  # requests waiting for `release` now
    requests: list[dict[str, Any]] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)  # time.monotonic() of each request
    served: list[list[str]] = field(default_factory=list)  # the inputs of each request served
    refused: list[int] = field(default_factory=list)  # HTTP status of each refused request
    in_flight: int = 0
    peak_in_flight: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enter(self) -> bool:
        """Count a request in; False when it is over `max_concurrent` (answer 429)."""
        with self.lock:
            if self.max_concurrent is not None and self.in_flight >= self.max_concurrent:
                return False
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return True

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    @property
    def batch_sizes(self) -> list[int]:
        return [len(inputs) for inputs in self.served]

    def recover(self) -> None:
        """Serve normally again (and let hanging requests go)."""
        self.mode, self.fail_status, self.delay_s = None, None, 0.0
        waiting, self.release = self.release, threading.Event()
        waiting.set()


def _faulty_row(mode: str | None, vector: np.ndarray, index: int) -> list[Any]:
    row: list[Any] = vector.tolist()
    if mode == "mixed_dims" and index % 2:
        return row[: len(row) // 2]
    if mode == "nan":
        row[0], row[-1] = float("nan"), float("inf")
    if mode == "nonnumeric":
        row[1] = "0.5x"
    return row


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if state.keep_alive else "HTTP/1.0"
        disable_nagle_algorithm = True  # headers and body go out in two writes

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.arrived.append(time.monotonic())
            state.requests.append(body)
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if state.max_inputs is not None and len(texts) > state.max_inputs:
                state.refused.append(400)
                message = f"Too many inputs. The max number of inputs is {state.max_inputs}."
                self._send(400, {"error": {"message": message, "type": "invalid_request_error"}})
                return
            if not state.enter():
                state.refused.append(429)
                message = "Rate limit reached for requests"
                wait = {} if state.retry_after_s is None else {"Retry-After": state.retry_after_s}
                error = {"error": {"message": message, "type": "rate_limit_error"}}
                self._send(429, error, headers=wait)
                return
            try:
                self._serve(body, texts)
            finally:
                state.leave()

        def _hold(self) -> None:
            with state.lock:
                state.held += 1
            try:
                state.release.wait(600)
            finally:
                with state.lock:
                    state.held -= 1

        def _serve(self, body: dict[str, Any], texts: list[str]) -> None:
            mode = state.mode
            if state.delay_s or mode == "hang":
                state.release.wait(state.delay_s or 600)
            if state.hold is not None and state.hold(texts):
                self._hold()
            if state.latency_s or state.per_item_s:
                time.sleep(state.latency_s + state.per_item_s * len(texts))
            if state.fail_status or mode == "http500":
                self._send(
                    state.fail_status or 500,
                    {"error": {"message": "stub failure", "type": "server_error"}},
                )
                return
            if mode in ("nonjson", "empty"):
                self._send_raw(200, b"<html>Bad gateway</html>" if mode == "nonjson" else b"")
                return
            dim = int(body.get("dimensions") or state.default_dim)
            data = []
            for index, text in enumerate(texts):
                vector = stub_vector(text, dim, meaning=state.meaning)
                if mode in ("mixed_dims", "nan", "nonnumeric"):
                    embedding: Any = _faulty_row(mode, vector, index)
                elif body.get("encoding_format") == "base64":
                    embedding = base64.b64encode(vector.astype("<f4").tobytes()).decode()
                else:
                    embedding = vector.tolist()
                data.append({"object": "embedding", "index": index, "embedding": embedding})
            tokens = sum(len(t.split()) for t in texts)
            state.served.append(texts)
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

        def _send(
            self, status: int, payload: dict[str, Any], headers: dict[str, Any] | None = None
        ) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers)

        def _send_raw(self, status: int, raw: bytes, headers: dict[str, Any] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, str(value))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
                self.wfile.write(raw)

    return Handler


@contextmanager
def embedding_stub(state: StubState | None = None) -> Iterator[tuple[str, StubState]]:
    """Serve on 127.0.0.1 (a free port); yields the base URL ending in /v1 and the state."""
    state = state or StubState()
    with serve(_handler(state), state.release) as url:
        yield url, state


def main() -> None:
    """Serve until killed; print ``READY <port>`` once listening (for benchmarks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--per-item-ms", type=float, default=0.0)
    parser.add_argument("--max-inputs", type=int, default=None)
    parser.add_argument("--max-concurrent", type=int, default=None)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()
    state = StubState(
        default_dim=args.dim,
        keep_alive=True,
        latency_s=args.latency_ms / 1000,
        per_item_s=args.per_item_ms / 1000,
        max_inputs=args.max_inputs,
        max_concurrent=args.max_concurrent,
    )
    with embedding_stub(state) as (url, _):
        print(f"READY {url.rsplit(':', 1)[1].split('/')[0]}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            sys.stdin.read()  # until the parent closes our stdin (or kills us)


if __name__ == "__main__":
    main()
