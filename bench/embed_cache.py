"""A caching OpenAI-compatible embeddings proxy for benchmarks, so reruns cost no model time.

Vectors are kept in a SQLite file keyed by (model, sha256(text)). Misses are forwarded to an
upstream server (bench/embed_server.py) when one is given; without one, a request with a
miss fails, and the provider under test degrades exactly as it would against a dead server.
Runs in a thread of the benchmark process, on 127.0.0.1 only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    """(model, text) -> float32 vector, in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vector BLOB,"
            " PRIMARY KEY (model, key))"
        )
        self._lock = threading.Lock()

    def get_many(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        keys = {_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in keys:
                row = self._conn.execute(
                    "SELECT vector FROM vectors WHERE model = ? AND key = ?", (model, key)
                ).fetchone()
                if row is not None:
                    found[keys[key]] = np.frombuffer(row[0], dtype=np.float32)
        return found

    def put_many(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(model, _key(t), np.asarray(v, np.float32).tobytes()) for t, v in vectors.items()],
            )
            self._conn.commit()

    def close(self) -> None:
        self._conn.close()


def _fetch_upstream(url: str, model: str, texts: list[str]) -> list[np.ndarray]:
    body = json.dumps({"model": model, "input": texts, "encoding_format": "float"}).encode()
    request = urllib.request.Request(
        url.rstrip("/") + "/embeddings", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        data = json.loads(response.read())["data"]
    return [np.asarray(item["embedding"], np.float32) for item in sorted(data, key=_index)]


def _index(item: dict[str, Any]) -> int:
    return int(item["index"])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _ProxyServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the bench prints figures
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        model = str(body.get("model", ""))
        try:
            vectors = self.server.embed(model, texts)
        except OSError as exc:
            self._reply(HTTPStatus.BAD_GATEWAY, {"error": {"message": str(exc)}})
            return
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode()
                if as_base64
                else v.tolist(),
            }
            for i, v in enumerate(vectors)
        ]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        self._reply(HTTPStatus.OK, {"object": "list", "data": data, "model": model, "usage": usage})

    def _reply(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, cache: VectorCache, upstream: str | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.cache = cache
        self.upstream = upstream
        self.misses = 0

    def embed(self, model: str, texts: list[str]) -> list[np.ndarray]:
        found = self.cache.get_many(model, texts)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            if self.upstream is None:
                raise OSError(f"{len(missing)} texts not in the embedding cache and no upstream")
            fresh = dict(zip(missing, _fetch_upstream(self.upstream, model, missing), strict=True))
            self.cache.put_many(model, fresh)
            self.misses += len(missing)
            found |= fresh
        return [found[t] for t in texts]


@contextmanager
def caching_proxy(cache_path: Path, upstream: str | None) -> Iterator[_ProxyServer]:
    """Serve /v1/embeddings on 127.0.0.1 from the cache; yields the server (its port, misses)."""
    cache = VectorCache(cache_path)
    server = _ProxyServer(cache, upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        cache.close()
