"""Probe item 5 of issue 26: a NUL character (U+0000) in text. PostgreSQL cannot store it in a
text column (it answered 500 where SQLite stored it); content is stored exactly as given, so
removing it silently would change what the user wrote. Both stores refuse it the same way,
before anything is written: REST answers 400 naming the field and the rule, an MCP tool
answers a tool error saying the same, and nothing is stored."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from starlette.testclient import TestClient

from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    FlushRequest,
    ImportRequest,
    IngestRequest,
    ListRequest,
    RelationRequest,
    build,
)
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client

pytestmark = pytest.mark.anyio

NUL = "before\x00after"
_NOW = "2026-10-01T09:00:00+00:00"


def _document(**memory: Any) -> dict[str, Any]:
    row = {"layer": "core", "category": "fact", "content": "a plain fact", "importance": 0.5}
    return {"format": "cortex-mcp-export", "memories": [{**row, **memory}]}


def _relation_document(**relation: Any) -> dict[str, Any]:
    row = {"subject": "user", "predicate": "likes", "object": "tea", "created_at": _NOW}
    return {"format": "cortex-mcp-export", "memories": [], "relations": [{**row, **relation}]}


# (method, path, body, the field the error names)
REST_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("POST", "/memories", {"content": NUL}, "content"),
    ("POST", "/memories", {"content": "plain", "source": NUL}, "source"),
    ("POST", "/ingest", {"user_message": NUL}, "user_message"),
    ("POST", "/ingest", {"user_message": "hi", "assistant_message": NUL}, "assistant_message"),
    ("POST", "/ingest", {"messages": [{"role": "user", "content": NUL}]}, "messages.0.content"),
    ("POST", "/ingest", {"user_message": "hi", "session_id": NUL}, "session_id"),
    (
        "POST",
        "/flush",
        {"messages": [{"role": "user", "content": [{"type": "text", "text": NUL}]}]},
        "messages.0.content.0.text",
    ),
    ("POST", "/flush", {"messages": [{"role": "user", "content": "hi"}], "reason": NUL}, "reason"),
    ("POST", "/relations", {"subject": "user", "predicate": "likes", "object": NUL}, "object"),
    ("POST", "/relations", {"subject": NUL, "predicate": "likes", "object": "tea"}, "subject"),
    ("POST", "/import", {"document": _document(content=NUL)}, "content"),
    ("POST", "/import", {"document": _document(source=NUL)}, "source"),
    ("POST", "/import", {"document": _document(metadata={"note": NUL})}, "metadata"),
    ("POST", "/import", {"document": _relation_document(object=NUL)}, "object"),
    ("POST", "/import", {"format": "markdown", "content": f"# Notes\n- {NUL}\n"}, "content"),
    (
        "POST",
        "/import",
        {
            "format": "jsonl",
            "content": json.dumps(
                {"type": "entity", "name": "a", "entityType": "person", "observations": [NUL]}
            ),
        },
        "content",
    ),
    ("PATCH", "/profile", {"summary": NUL}, "summary"),
    ("PATCH", "/profile", {"domains": ["tea", NUL]}, "domains.1"),
]


@pytest.fixture
def rest(backend_settings: Settings, clock: FakeClock, tmp_path: Path) -> Iterator[TestClient]:
    url = backend_settings.database_url
    with authed_rest_client(
        tmp_path, clock, database_url=url.get_secret_value() if url else None
    ) as client:
        yield client


def _stored(rest: TestClient) -> tuple[int, int, Any]:
    memories = rest.get("/api/v1/memories", params={"limit": 500}).json()["memories"]
    relations = rest.get("/api/v1/relations").json()["relations"]
    profile = rest.get("/api/v1/profile").json()
    return len(memories), len(relations), profile.get("summary")


def _assert_refused(response: Any, field: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert field in error["message"] and "NUL" in error["message"], error
    assert "stored exactly as given" in error["message"], error


def test_every_rest_write_refuses_nul_naming_the_field_and_stores_nothing(
    rest: TestClient,
) -> None:
    kept = rest.post("/api/v1/memories", json={"content": "a fact to correct"}).json()["id"]
    before = _stored(rest)
    cases = [
        *REST_CASES,
        ("POST", f"/memories/{kept}/correct", {"content": NUL}, "content"),
        ("POST", f"/memories/{kept}/correct", {"content": "ok", "reason": NUL}, "reason"),
    ]
    for method, path, body, field in cases:
        response = rest.request(method, f"/api/v1{path}", json=body)
        assert response.status_code != 500, (path, body, response.text)
        _assert_refused(response, field)
    assert _stored(rest) == before
    memory = rest.get(f"/api/v1/memories/{kept}").json()["memory"]
    assert memory["content"] == "a fact to correct" and memory.get("superseded_by") is None


@pytest.fixture
async def svc(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as service:
        yield service


async def test_the_service_refuses_nul_on_every_way_in(svc: CortexService) -> None:
    """What the CLI and in-process callers reach: the same rule inside the service."""
    calls: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        (
            "subject",
            lambda: svc.relations.add(
                build(RelationRequest, subject=NUL, predicate="likes", object="tea")
            ),
        ),
        (
            "user_message",
            lambda: svc.conversation.ingest(
                build(IngestRequest, user_message=NUL, assistant_message="ok")
            ),
        ),
        (
            "session_id",
            lambda: svc.conversation.ingest(
                build(IngestRequest, user_message="hi", assistant_message="ok", session_id=NUL)
            ),
        ),
        (
            "messages.0.content",
            lambda: svc.conversation.flush(
                build(FlushRequest, messages=[{"role": "user", "content": NUL}])
            ),
        ),
        ("summary", lambda: svc.conversation.edit_profile({"summary": NUL})),
        ("domains", lambda: svc.conversation.edit_profile({"domains": [NUL]})),
        (
            "content",
            lambda: svc.exchange.import_memories(
                build(ImportRequest, content=json.dumps(_document(content=NUL)))
            ),
        ),
        (
            "metadata.note",
            lambda: svc.exchange.import_memories(
                build(ImportRequest, content=json.dumps(_document(metadata={"note": NUL})))
            ),
        ),
    ]
    for field, call in calls:
        with pytest.raises(InvalidInput) as refused:
            await call()
        assert field in refused.value.message and "NUL" in refused.value.message
    listed = await svc.reading.list_memories(build(ListRequest, limit=100))
    assert listed["memories"] == []
    assert (await svc.relations.list())["relations"] == []


@pytest.fixture
async def mcp(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[Client]:
    server = build_server(lambda: open_cortex(backend_settings, clock=clock))
    async with Client(server) as client:
        yield client


async def test_the_mcp_tools_refuse_nul_with_a_tool_error(mcp: Client) -> None:
    kept = await mcp.call_tool("cortex_remember", {"content": "a fact to correct"})
    kept_id = kept.structured_content["id"]
    for tool, arguments, field in [
        ("cortex_remember", {"content": NUL}, "content"),
        ("cortex_remember", {"content": "plain", "source": NUL}, "source"),
        ("cortex_forget", {"memory_id": kept_id, "correction": NUL}, "correction"),
        ("cortex_forget", {"memory_id": kept_id, "reason": NUL}, "reason"),
    ]:
        result = await mcp.call_tool(tool, arguments)
        assert result.is_error, (tool, arguments)
        said = result.content[0].text  # type: ignore[union-attr]
        assert field in said and "NUL" in said, said
    stats = json.loads((await mcp.read_resource("cortex://stats")).contents[0].text)
    assert stats["memories"]["total"] == 1
    # a query too, as the OpenAPI document says of every text (issue 32, item 12)
    found = await mcp.call_tool("cortex_recall", {"query": "fact\x00to correct"})
    assert found.is_error
    said = found.content[0].text  # type: ignore[union-attr]
    assert "query" in said and "NUL" in said, said
