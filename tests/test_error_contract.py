"""The REST API keeps the OpenAPI document's promises about its errors (issue 32, item 12): an
error never carries NUL, even when it names a parameter a caller made up; a query holding NUL
is refused as the document says; every route documents 403 and every route that takes a body
415, as they can answer them; a 405 lists the methods the path serves in `Allow`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from starlette.testclient import TestClient

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client

API = "/api/v1"


@pytest.fixture
def client(tmp_path: Path, clock: FakeClock) -> Iterator[TestClient]:
    with authed_rest_client(tmp_path, clock) as c:
        yield c


def _error_schema_check(client: TestClient, reply: Any, path: str, method: str) -> None:
    """The reply's body is what the document publishes for its route and status."""
    document = client.get(f"{API}/openapi.json").json()
    responses = document["paths"][f"{API}{path}"][method]["responses"]
    assert str(reply.status_code) in responses, (path, method, reply.status_code)
    schema = responses[str(reply.status_code)]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    assert [e.message for e in validator.iter_errors(reply.json())] == []


def test_an_unknown_parameter_named_with_nul_is_named_in_the_error_without_nul(
    client: TestClient,
) -> None:
    by_query = client.get(f"{API}/memories", params={"li\x00mit": "1"})
    by_body = client.post(f"{API}/recall", json={"query": "tea", "x\x00y": 1})
    for reply, path, method, name in (
        (by_query, "/memories", "get", "li\\u0000mit"),
        (by_body, "/recall", "post", "x\\u0000y"),
    ):
        assert reply.status_code == 422, reply.text
        error = reply.json()["error"]
        assert error["field"] == name and error["message"].startswith(f"{name}: ")
        assert "\x00" not in error["field"] + error["message"]
        _error_schema_check(client, reply, path, method)


def test_a_query_holding_nul_is_refused_naming_it_as_the_document_says(
    client: TestClient,
) -> None:
    client.post(f"{API}/memories", json={"content": "Drinks green tea"})
    for path in ("/recall", "/search"):
        reply = client.post(f"{API}{path}", json={"query": "green\x00tea"})
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["field"] == "query"
        _error_schema_check(client, reply, path, "post")
    body = client.get(f"{API}/openapi.json").json()["components"]["schemas"]["RecallBody"]
    assert "\\u0000" in body["properties"]["query"]["pattern"]  # what the document forbids


@pytest.mark.anyio
async def test_a_tool_query_holding_nul_is_a_tool_error_naming_it(
    settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode="legacy") as session:
        for tool in ("cortex_recall", "cortex_search_debug"):
            result = await session.call_tool(tool, {"query": "green\x00tea"})
            said = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and "query" in said and "NUL" in said, said


def test_every_route_documents_403_and_every_route_with_a_body_415(client: TestClient) -> None:
    document = client.get(f"{API}/openapi.json").json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert "403" in codes, (method, path)
            if method in ("post", "put", "patch"):
                assert "415" in codes, (method, path)
    foreign = client.post(
        f"{API}/recall", json={"query": "tea"}, headers={"Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403
    _error_schema_check(client, foreign, "/recall", "post")
    not_json = client.post(
        f"{API}/memories", content=b'{"content": "x"}', headers={"Content-Type": "text/plain"}
    )
    assert not_json.status_code == 415
    _error_schema_check(client, not_json, "/memories", "post")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/memories", "GET, HEAD, POST"),
        ("DELETE", "/recall", "POST"),
        ("POST", "/memories/01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51", "DELETE, GET, HEAD, PATCH"),
        ("PUT", "/health", "GET, HEAD"),
    ],
)
def test_a_405_says_in_allow_which_methods_the_path_serves(
    client: TestClient, method: str, path: str, allowed: str
) -> None:
    reply = client.request(method, f"{API}{path}", json={})
    assert reply.status_code == 405, reply.text
    assert reply.headers["Allow"] == allowed
    assert reply.json()["error"]["code"] == "method_not_allowed"
