"""A local server that speaks OpenAI's /v1/embeddings wire format, for tests.

Its vectors are hashed bags of word stems: texts that share words are close, which is enough to
exercise the vector channel deterministically. With `meaning=True` words also count toward a few
meaning classes (a retriever and a pet share the "animal" class), so a paraphrase that shares no
word with a text is still close to it, as with a real model.

Fault modes (`StubState.mode`), each a way real providers have been seen to break:
``nonjson`` (HTTP 200, an HTML body), ``empty`` (HTTP 200, no body), ``http500``, ``hang`` (no
answer until released), ``mixed_dims`` (odd rows shorter), ``nan`` (NaN and inf in every row),
``nonnumeric`` (strings in the rows). `mode = None` serves normally.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

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
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

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
            state.requests.append(body)
            mode = state.mode
            if state.delay_s or mode == "hang":
                state.release.wait(state.delay_s or 600)
            if state.fail_status or mode == "http500":
                self._send(
                    state.fail_status or 500,
                    {"error": {"message": "stub failure", "type": "server_error"}},
                )
                return
            if mode in ("nonjson", "empty"):
                self._send_raw(200, b"<html>Bad gateway</html>" if mode == "nonjson" else b"")
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
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
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            self._send_raw(status, json.dumps(payload).encode())

        def _send_raw(self, status: int, raw: bytes) -> None:
            self.send_response(status)
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
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
