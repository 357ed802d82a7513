"""What the OpenAPI document allows, the server accepts: schemathesis draws valid requests
(its positive phase) for every operation from the document the server serves, against a real
uvicorn server on loopback, and no request is refused, except where the document cannot say
the rule (EXCEPTIONS, each with its reason), an id names nothing (404) or a name is taken (409).

tests/test_rest_fuzz.py checks the other direction (nothing accepted breaks the document) and
tests/test_rest_limits.py each published limit at its edge."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.http import create_app
from tests.helpers.http_helpers import AUTH, TOKEN

pytestmark = pytest.mark.slow

EXAMPLES = 25  # per operation
_HANG_S = 60.0
# (method, path, field) -> why the document cannot state the rule the refusal names
EXCEPTIONS = {
    ("POST", "/api/v1/recall", "until"): "until must be later than since (two fields)",
    ("POST", "/api/v1/search", "until"): "until must be later than since (two fields)",
    ("GET", "/api/v1/timeline", "until"): "until must be later than since (two fields)",
    ("GET", "/api/v1/memories", "until"): "until must be later than since (two fields)",
    ("GET", "/api/v1/browse", "cursor"): "a cursor is one the listing returned (opaque)",
    ("POST", "/api/v1/import", "content"): "content must be a text in its format (parsed)",
    ("POST", "/api/v1/import", "document"): "document must be a cortex-mcp export (parsed)",
    ("POST", "/api/v1/import", "files"): "each file must be one an import reads (parsed)",
    ("POST", "/api/v1/ingest", "user_message"): "messages must hold a user message with text",
    ("POST", "/api/v1/flush", "messages"): "messages must hold text",
    # a message's other keys may hold any JSON value, and the limits of JSON itself (integers
    # of at most 20 digits, nesting at most 32 deep: docs/http.md) hold for every value
    ("POST", "/api/v1/flush", "body"): "JSON limits on any value",
    ("POST", "/api/v1/ingest", "body"): "JSON limits on any value",
    ("POST", "/api/v1/import", "body"): "JSON limits on any value (a document's)",
    ("PATCH", "/api/v1/config", "lifecycle"): "a cron's fields must be in range (parsed)",
    (
        "PATCH",
        "/api/v1/config",
        "timezone",
    ): "an IANA zone the time zone database knows (looked up)",
    ("PATCH", "/api/v1/config", "body"): "JSON limits on any value (a setting with no most)",
    **{
        (method, path, "timezone"): "a time zone must be one the IANA database names (looked up)"
        for method, path in (
            ("POST", "/api/v1/recall"),
            ("POST", "/api/v1/search"),
            ("POST", "/api/v1/memories"),
            ("POST", "/api/v1/ingest"),
            ("POST", "/api/v1/flush"),
            ("PATCH", "/api/v1/config"),  # CORTEX_TIMEZONE, changed while running
        )
    },
}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("positive") / "brain.db"
    settings = load_settings(db_path=db, embedding_provider="none", api_token=TOKEN)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    app = create_app(settings, lambda: open_cortex(settings))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", log_config=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + _HANG_S
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    assert server.started
    logging.disable(logging.INFO)  # a lifecycle run per request would flood the output
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        logging.disable(logging.NOTSET)
        server.should_exit = True
        thread.join(_HANG_S)
        sock.close()


def _fields(response: Any) -> list[str]:
    try:
        error = json.loads(response.text)["error"]
    except (ValueError, KeyError, TypeError):
        return []
    return [str(error.get("field"))]


def _excused(method: str, path: str, status: int, fields: list[str]) -> bool:
    if status in (404, 409):
        # a drawn id (in the path, or supersedes) names nothing stored, or a drawn name is
        # one taken by an earlier draw (a token's): what is stored decides, not the document
        return True
    return bool(fields) and all(
        (method, path, field.split(".")[0]) in EXCEPTIONS for field in fields
    )


@pytest.mark.timeout(1200)
def test_every_request_the_document_allows_is_accepted(base_url: str) -> None:
    document = httpx2.get(base_url + "/api/v1/openapi.json", headers=AUTH, timeout=_HANG_S).json()
    schema = schemathesis.openapi.from_dict(document)
    refused: list[str] = []
    for operation in [result.ok() for result in schema.get_all_operations()]:

        @hypothesis_settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=schemathesis.GenerationMode.POSITIVE))
        def exercise(case: schemathesis.Case) -> None:
            response = case.call(base_url=base_url, headers=AUTH, timeout=_HANG_S)
            status = response.status_code
            path = case.operation.path
            if 400 <= status < 500 and not _excused(case.method, path, status, _fields(response)):
                refused.append(
                    f"{case.method} {path} {case.query} {case.body!r}"[:400]
                    + f" -> {status} {response.text[:300]}"
                )

        exercise()
    assert refused == [], "\n".join(refused[:20])
