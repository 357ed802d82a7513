"""A provider stub's HTTP server on 127.0.0.1 (a free port), in a thread, for as long as a
`with` block lasts: the part the embedding and rerank stubs share."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serve(handler: type[BaseHTTPRequestHandler], release: threading.Event) -> Iterator[str]:
    """Yield the base URL (ending in /v1); on leaving, `release` frees held requests first so
    the server can stop."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
