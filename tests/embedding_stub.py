"""A local server that speaks OpenAI's /v1/embeddings wire format, for tests.

Its vectors are hashed bags of word stems: texts that share words are close, which is enough to
exercise the vector channel deterministically. It can be told to fail (HTTP status) or stall.
"""

from __future__ import annotations

import base64
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


def stub_vector(text: str, dim: int) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        stem = word[:5]
        digest = hashlib.blake2b(stem.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


@dataclass
class StubState:
    default_dim: int = 64
    fail_status: int | None = None
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            if state.delay_s:
                state.release.wait(state.delay_s)
            if state.fail_status:
                self._send(
                    state.fail_status,
                    {"error": {"message": "stub failure", "type": "server_error"}},
                )
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            dim = int(body.get("dimensions") or state.default_dim)
            data = []
            for index, text in enumerate(texts):
                vector = stub_vector(text, dim)
                if body.get("encoding_format") == "base64":
                    embedding: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode()
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
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
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
