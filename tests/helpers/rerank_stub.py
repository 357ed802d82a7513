"""A local server that speaks the /rerank wire format (Cohere, Jina, Voyage, TEI, Infinity), for
tests and benchmarks.

It scores each document by how many of `StubState.favourites` it holds (case-insensitive), so a
test says which memories a "model" prefers. `shape` picks the answer's form: ``results``
(Cohere, Jina, Infinity: `{"results": [{"index", "relevance_score"}]}`), ``data`` (Voyage) or
``tei`` (a bare list of `{"index", "score"}`; with `needs_texts` the request must also carry
`texts`, as TEI's own route wants, else HTTP 422). Fault modes (`mode`): ``nonjson``,
``http500``, ``out_of_range`` (an index past the documents), ``nonnumeric`` (a score that is a
string), ``noresults`` (an object without results), ``hang`` (no answer until released).
Every request's JSON body is recorded. Run as a script it serves until killed and prints
``READY <port>`` (benchmarks run it in its own process).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.loopback import serve

RERANK_FAULTS = ("nonjson", "http500", "out_of_range", "nonnumeric", "noresults", "hang")


@dataclass
class RerankStubState:
    favourites: list[str] = field(default_factory=list)
    shape: str = "results"
    needs_texts: bool = False
    mode: str | None = None
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


def stub_score(document: str, favourites: list[str]) -> float:
    text = document.lower()
    return float(sum(text.count(word.lower()) for word in favourites))


def _handler(state: RerankStubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(body)
            if state.delay_s:
                time.sleep(state.delay_s)
            if state.mode == "hang":
                state.release.wait(30)
            if not self.path.endswith("/rerank"):
                return self._send(404, {"error": "not found"})
            if state.needs_texts and "texts" not in body:
                return self._send(422, {"error": "missing field `texts`"})
            documents = body.get("documents") or body.get("texts") or []
            self._answer(body.get("query", ""), documents)

        def _answer(self, query: str, documents: list[str]) -> None:
            mode = state.mode
            if mode == "nonjson":
                return self._send_raw(200, b"<html>busy</html>")
            if mode == "http500":
                return self._send(500, {"error": "the model crashed"})
            if mode == "noresults":
                return self._send(200, {"detail": "ok"})
            items = [
                {"index": i, "relevance_score": stub_score(d, state.favourites)}
                for i, d in enumerate(documents)
            ]
            items.sort(key=lambda item: -item["relevance_score"])
            if mode == "out_of_range":
                items[0]["index"] = len(documents) + 3
            if mode == "nonnumeric":
                items[0]["relevance_score"] = "high"
            if state.shape == "tei":
                tei = [{"index": it["index"], "score": it["relevance_score"]} for it in items]
                return self._send(200, tei)
            key = "data" if state.shape == "data" else "results"
            self._send(200, {key: items, "model": "stub-rerank"})

        def _send(self, status: int, body: Any) -> None:
            self._send_raw(status, json.dumps(body).encode())

        def _send_raw(self, status: int, raw: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(raw)

    return Handler


@contextmanager
def rerank_stub(state: RerankStubState | None = None) -> Iterator[tuple[str, RerankStubState]]:
    """Serve on 127.0.0.1 (a free port); yields the base URL (ending in /v1) and the state."""
    state = state or RerankStubState()
    with serve(_handler(state), state.release) as url:
        yield url, state


def main() -> None:
    """Serve until killed; print ``READY <port>`` once listening (for benchmarks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--favourite", action="append", default=[])
    args = parser.parse_args()
    with rerank_stub(RerankStubState(favourites=args.favourite)) as (url, _):
        print(f"READY {url.rsplit(':', 1)[1].split('/')[0]}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
