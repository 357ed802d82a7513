"""Every REST route answers what the OpenAPI document says it answers: each response body of a
real app over a real SQLite file is validated against the schema the document publishes for
that route and status, and no route's success response is left untyped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.transports.dashboard_api import DASHBOARD_ENDPOINTS
from cortex_mcp.transports.rest import ENDPOINTS
from tests.conftest import FakeClock
from tests.helpers.embedding_stub import embedding_stub
from tests.helpers.http_helpers import AUTH, TOKEN, authed_rest_client, rest_client

API = "/api/v1"


@pytest.fixture
def client(tmp_path: Any, clock: FakeClock) -> Iterator[TestClient]:
    with authed_rest_client(tmp_path, clock) as c:
        yield c


class DocumentedReplies:
    """Calls routes and checks each reply against the document's schema for its status."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.doc = client.get(f"{API}/openapi.json").json()
        self.checked: set[tuple[str, str]] = set()

    def call(self, method: str, path: str, status: int, **kwargs: Any) -> Any:
        template = path.split("?")[0]
        for concrete, placeholder in kwargs.pop("ids", {}).items():
            template = template.replace(concrete, placeholder)
        reply = self.client.request(method, f"{API}{path}", **kwargs)
        assert reply.status_code == status, reply.text
        operation = self.doc["paths"][f"{API}{template}"][method.lower()]
        schema = operation["responses"][str(status)]["content"]["application/json"]["schema"]
        validator = Draft202012Validator({**schema, "components": self.doc["components"]})
        problems = [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(reply.json())
        ]
        assert problems == [], f"{method} {template}: {problems[:5]}"
        self.checked.add((method, template))
        return reply.json()


def test_each_reply_matches_the_schema_the_document_publishes(
    client: TestClient, clock: FakeClock
) -> None:
    replies = DocumentedReplies(client)
    first = replies.call("POST", "/memories", 201, json={"content": "I live in Lisbon"})["id"]
    later = replies.call(
        "POST", "/memories", 201, json={"content": "I live in Porto now", "supersedes": first}
    )["id"]
    brief = replies.call(
        "POST", "/memories", 201, json={"content": "Deploy is on Friday", "layer": "working"}
    )["id"]
    replies.call("POST", "/recall", 200, json={"query": "where do I live"})
    ids = {later: "{id}", brief: "{id}"}
    detail = replies.call("GET", f"/memories/{later}", 200, ids=ids)
    assert first in [m["id"] for m in detail["correction_chain"]]
    assert detail["access_history"], "the recall above is in the access history"
    patched = replies.call("PATCH", f"/memories/{later}", 200, json={"importance": 0.9}, ids=ids)
    assert patched["importance"] == 0.9

    relation = replies.call(
        "POST",
        "/relations",
        201,
        json={"subject": "user", "predicate": "lives in", "object": "Porto"},
    )
    listed = replies.call("GET", "/relations", 200)
    assert [r["id"] for r in listed["relations"]] == [relation["id"]]
    stats = replies.call("GET", "/stats", 200)
    assert stats["memories"]["total"] == 3

    clock.advance(days=90)  # the working memory has expired: the lifecycle has work to do
    preview = replies.call("GET", "/lifecycle/preview", 200)
    assert preview["status"] == "preview" and preview["actions"], preview
    run = replies.call("POST", "/lifecycle/run", 200, json={})
    assert run["status"] == "done", run
    log = replies.call("GET", "/lifecycle/log", 200)
    assert {"supersede", "update"} <= {entry["action"] for entry in log["entries"]}

    replies.call("DELETE", f"/memories/{later}?reason=moved+again", 200, ids=ids)
    replies.call("DELETE", f"/relations/{relation['id']}", 200, ids={relation["id"]: "{id}"})
    replies.call("GET", f"/memories/{brief}", 200, ids=ids)
    replies.call("GET", "/stats?agent_id=someone-else", 200)

    asked_for = {
        ("GET", "/stats"),
        ("POST", "/lifecycle/run"),
        ("GET", "/lifecycle/preview"),
        ("GET", "/lifecycle/log"),
        ("GET", "/memories/{id}"),
        ("PATCH", "/memories/{id}"),
        ("DELETE", "/memories/{id}"),
        ("GET", "/relations"),
        ("POST", "/relations"),
        ("DELETE", "/relations/{id}"),
    }
    assert asked_for <= replies.checked


def test_stats_with_an_embedding_provider_match_the_schema(tmp_path: Any, clock: FakeClock) -> None:
    """With a provider the stats carry its health and the indexer's state (null without)."""
    with embedding_stub() as (url, _state):
        settings = load_settings(
            db_path=tmp_path / "brain.db",
            api_token=TOKEN,
            embedding_provider="openai",
            embedding_base_url=url,
            embedding_model="stub-embed",
            embedding_timeout_s=10.0,
        )
        with rest_client(settings, clock) as client:
            client.headers.update(AUTH)
            replies = DocumentedReplies(client)
            replies.call("POST", "/memories", 201, json={"content": "I live in Porto"})
            replies.call("POST", "/recall", 200, json={"query": "where do I live"})
            stats = replies.call("GET", "/stats", 200)
    assert stats["embeddings"]["indexer"] is not None
    assert stats["embeddings"]["health"], stats["embeddings"]


def _success_schema(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    responses = doc["paths"][path][method.lower()]["responses"]
    success = next(body for status, body in responses.items() if status.startswith("2"))
    schema = success.get("content", {}).get("application/json", {}).get("schema", {})
    name = schema.get("$ref", "").rsplit("/", 1)[-1]
    return {"name": name, **doc["components"]["schemas"].get(name, schema)}


def test_no_rest_route_answers_an_untyped_object(client: TestClient) -> None:
    doc = client.get(f"{API}/openapi.json").json()
    # the document itself is an OpenAPI 3.1 document; the dashboard's routes are its own
    rest = [ep for ep in ENDPOINTS if ep not in DASHBOARD_ENDPOINTS and ep.summary != "openapi"]
    untyped = [
        f"{ep.method} {ep.path}"
        for ep in rest
        if (schema := _success_schema(doc, ep.method, ep.full_path))["name"] == "Anything"
        or not schema.get("properties")
    ]
    assert untyped == []
