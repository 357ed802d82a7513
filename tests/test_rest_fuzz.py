"""Property-based fuzz of the REST API from its own OpenAPI document (schemathesis on
hypothesis), against a real uvicorn server on loopback over a real SQLite file: valid and
invalid requests for every operation, bounded, never a 5xx (503 only where a capability is
honestly "not available yet"), and no request the server accepted (2xx) breaks a limit or type
the document states: each accepted request is checked against the document with jsonschema, as
the server received it (query values as the strings they were sent as).

FUZZ_EXAMPLES raises the examples per operation and mode for a longer run."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
import jsonschema
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable

from cortex_mcp import __version__
from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.http import create_app
from tests.helpers.http_helpers import AUTH, TOKEN

pytestmark = pytest.mark.slow

EXAMPLES_PER_MODE = int(os.environ.get("FUZZ_EXAMPLES", "12"))  # per operation and mode
# bounds a hang, not speed: a loaded 2-core machine answers some requests in seconds, and the
# whole fuzz (about 700 requests) takes minutes there
_HANG_S = 60.0


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("fuzz") / "brain.db"
    settings = load_settings(db_path=db, embedding_provider="none", api_token=TOKEN)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound here, so no other process can take the port meanwhile
    port = int(sock.getsockname()[1])
    app = create_app(settings, lambda: open_cortex(settings))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", log_config=None)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + _HANG_S
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(_HANG_S)
    sock.close()


def _acceptable(status: int, text: str) -> bool:
    return status < 500


def _typed(text: str, schema: dict[str, Any]) -> Any:
    """The query text as the JSON value the document describes, or the text itself when it
    is not one (so that validating it fails)."""
    kinds: set[Any] = set()
    for branch in schema.get("anyOf", [schema]):
        kind = branch.get("type")
        kinds.update(kind if isinstance(kind, list) else [kind])
    if "integer" in kinds and re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    return text


def _query_as_received(url: str) -> dict[str, str]:
    """The query string as the server reads it: the last value of each name wins."""
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def _violations(
    case: schemathesis.Case, query: dict[str, str], document: dict[str, Any]
) -> list[str]:
    """What of the request, as sent, breaks the document's schema for its operation."""
    operation = document["paths"][case.operation.path][case.method.lower()]
    components = {"components": document["components"]}
    problems = []
    body = operation.get("requestBody")
    if body is not None:
        schema = {**body["content"]["application/json"]["schema"], **components}
        problems += [
            e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(case.body)
        ]
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "query" or parameter["name"] not in query:
            continue
        value = _typed(query[parameter["name"]], parameter["schema"])
        schema = {**parameter["schema"], **components}
        problems += [
            f"{parameter['name']}: {e.message}"
            for e in jsonschema.Draft202012Validator(schema).iter_errors(value)
        ]
    known = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
    problems += [f"unknown query parameter {name!r}" for name in query if name not in known]
    return problems


@pytest.mark.timeout(1200)
def test_fuzzing_every_operation_from_the_openapi_document_never_gives_a_5xx(
    base_url: str,
) -> None:
    document = httpx2.get(base_url + "/api/v1/openapi.json", headers=AUTH, timeout=_HANG_S).json()
    assert document["info"]["version"] == __version__
    schema = schemathesis.openapi.from_dict(document)
    statuses: Counter[tuple[str, str, int]] = Counter()
    failures: list[str] = []
    accepted_invalid: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):

            @hypothesis_settings(
                max_examples=EXAMPLES_PER_MODE,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def exercise(case: schemathesis.Case) -> None:
                response = case.call(base_url=base_url, headers=AUTH, timeout=_HANG_S)
                statuses[(case.method, case.operation.path, response.status_code)] += 1
                if not _acceptable(response.status_code, response.text):
                    failures.append(
                        f"{case.method} {case.formatted_path} {case.query} {case.body!r}"
                        f" -> {response.status_code} {response.text[:200]}"
                    )
                if response.status_code < 300:
                    query = _query_as_received(str(response.request.url))
                    broken = _violations(case, query, document)
                    if broken:
                        accepted_invalid.append(
                            f"{case.method} {str(response.request.url)[:300]} {query!r:.200}"
                            f" {case.body!r:.200} -> {response.status_code}: {broken[:3]}"
                        )
                # every answer is JSON; errors in the one documented shape
                body = response.json()
                if response.status_code >= 400:
                    assert set(body["error"]) <= {"code", "message", "field"}

            try:
                exercise()
            except Unsatisfiable:  # no inputs to get wrong (GET /health, /openapi.json)
                assert mode is schemathesis.GenerationMode.NEGATIVE
    total = sum(statuses.values())
    server_errors = sum(n for (_, _, status), n in statuses.items() if status >= 500)
    print(
        f"\nREST fuzz: {total} requests over {len(operations)} operations, {server_errors} 5xx,"
        f" {len(accepted_invalid)} accepted requests outside the document"
    )
    for (method, path, status), count in sorted(statuses.items()):
        print(f"  {method:6} {path:28} {status}: {count}")
    assert failures == []
    assert accepted_invalid == []
    assert total >= len(operations) * 2
    assert any(status == 200 for (_, path, status) in statuses if path == "/api/v1/recall")


def test_the_fuzzed_server_still_answers_and_its_file_is_intact(base_url: str) -> None:
    stats = httpx2.get(base_url + "/api/v1/stats", headers=AUTH, timeout=_HANG_S)
    assert stats.status_code == 200
    assert Path(stats.json()["db_path"]).exists()
