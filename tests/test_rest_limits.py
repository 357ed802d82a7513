"""The OpenAPI document states exactly what the server enforces: for every limit it publishes
(string lengths, array sizes, number ranges, on bodies and query strings), a value at the limit
is accepted and one past it refused with a 4xx that changes nothing; types are exactly the
documented JSON types ("5" is not an integer, "true" not a boolean); the limits the REST API
shares with the MCP tools are the same numbers."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.transports.tools import tool_specs
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client

API = "/api/v1"
CONTENT_LIMIT = 300  # a small CORTEX_MAX_CONTENT_CHARS, to see that the document follows it

# A minimal valid request per operation; each limit is tried on top of it.
BASE_BODIES: dict[str, dict[str, Any]] = {
    "recall": {"query": "tulips"},
    "search": {"query": "tulips"},
    "ingest": {"user_message": "I grow tulips", "assistant_message": "Nice."},
    "flush": {"messages": [{"role": "user", "content": "I grow tulips"}]},
    "remember": {"content": "The user grows tulips"},
    "update_memory": {},
    "lifecycle_run": {},
    "export": {},
    "import": {"format": "markdown", "content": "- The user grows tulips"},
    "add_relation": {"subject": "user", "predicate": "grows", "object": "tulips"},
    "restore_memory": {},
    "correct_memory": {"content": "The user grows red tulips"},
    "search_compare": {"query": "tulips", "variants": [{"mode": "text"}]},
    "edit_profile": {},
    "create_token": {"agent": "alice"},
    "revoke_token": {"token": "no-such-token"},
    "change_config": {},
    "reflect": {"preview": True},
    "decide_proposal": {"accept": False},
    "merge_entities": {"source": "Anna", "into": "Ann", "dry_run": True},
    "undo_entity_change": {"log_id": 1},
    "add_alias": {"alias": "my sister"},
    "rename_entity": {"name": "Anna Smith"},
}
# Values that must be well-formed as well as within limits: only "one past" is tried.
FORMED = {"supersedes", "id", "cursor", "timezone"}


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[TestClient, Settings, dict[str, Any]]]:
    settings = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        api_token=TOKEN,
        max_content_chars=CONTENT_LIMIT,
    )
    with rest_client(settings) as client:
        client.headers.update(AUTH)
        document = client.get(f"{API}/openapi.json").json()
        yield client, settings, document


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return dict(document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]])
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
    if len(branches) == 1:  # Optional[X] -> X
        return _resolve(document, branches[0])
    return schema


def _kind(schema: dict[str, Any]) -> Any:
    """The JSON type of a schema; of ["number", "string"] (a number also read from decimal
    text) the first."""
    kind = schema.get("type")
    return kind[0] if isinstance(kind, list) else kind


def _sample(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """One small valid value of `schema`."""
    schema = _resolve(document, schema)
    if "enum" in schema:
        return schema["enum"][0]
    kind = _kind(schema)
    if kind == "object":
        return {
            name: _sample(document, prop)
            for name, prop in schema.get("properties", {}).items()
            if name in schema.get("required", [])
        }
    if kind == "array":
        return _sample(document, schema["items"])
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return "x"


def _edges(document: dict[str, Any], schema: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """(description, value, accepted?) at and just past each published limit."""
    schema = _resolve(document, schema)
    edges: list[tuple[str, Any, bool]] = []
    if _kind(schema) == "string" and "enum" not in schema:
        if "maxLength" in schema:
            n = schema["maxLength"]
            if re.search(schema.get("pattern", ""), "y" * n):  # else a formed value: past only
                edges.append((f"maxLength {n}", "y" * n, True))
            edges.append((f"maxLength {n} + 1", "y" * (n + 1), False))
        if schema.get("minLength", 0) > 0:
            edges.append(("below minLength", "", False))
    if _kind(schema) == "array":
        item = _resolve(document, schema["items"])
        if "maxItems" in schema:
            n = schema["maxItems"]
            values = item.get("enum") or [_sample(document, item)]
            at = [values[i % len(values)] for i in range(n)]
            edges += [(f"maxItems {n}", at, True), (f"maxItems {n} + 1", [*at, at[0]], False)]
        if schema.get("minItems", 0) > 0:
            edges.append(("below minItems", [], False))
    if _kind(schema) in ("integer", "number"):
        step = 1 if _kind(schema) == "integer" else 1e-6
        if "maximum" in schema:
            top = schema["maximum"]
            edges += [(f"maximum {top}", top, True), (f"maximum {top} + step", top + step, False)]
        if "minimum" in schema:
            low = schema["minimum"]
            edges += [(f"minimum {low}", low, True), (f"minimum {low} - step", low - step, False)]
    return edges


def _passed_validation(status: int, path: str) -> bool:
    """Accepted, or (on a route by id, as another agent; a revoke of an unknown token; an
    entity or entity-log entry the body names that this store has not) not found: past every
    limit check."""
    named = "{id}" in path or path.endswith("/revoke") or "/entities/" in path
    return status < 300 or (status == 404 and named)


def _settled_rows(client: TestClient, settings: Settings) -> tuple[int, ...]:
    """Row counts once the background work of earlier requests is done: access counts
    (drain) and the extraction of accepted ingest turns (no turn pending)."""
    deadline = time.monotonic() + 60
    while True:
        client.portal.call(client.app.state.service.drain)  # type: ignore[attr-defined,union-attr]
        turns = client.get(f"{API}/stats").json()["ingest"]["turns"]
        if turns["pending"] == 0 or time.monotonic() > deadline:
            return _count_rows(settings)
        time.sleep(0.05)


def _count_rows(settings: Settings) -> tuple[int, ...]:
    with contextlib.closing(sqlite_module().connect(settings.db_path)) as conn:
        return tuple(
            conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("memories", "relations", "turns", "lifecycle_log")
        )


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield method.upper(), path, operation


def test_every_published_body_limit_is_exactly_the_enforced_one(setup: Any) -> None:
    client, settings, document = setup
    memory = client.post(f"{API}/memories", json={"content": "Seed memory"}).json()["id"]
    checked: list[str] = []
    for method, path, operation in _operations(document):
        if "requestBody" not in operation:
            continue
        base = BASE_BODIES[operation["operationId"]]
        schema = _resolve(
            document, operation["requestBody"]["content"]["application/json"]["schema"]
        )
        url = path.replace("{id}", memory)
        for name, prop in schema["properties"].items():
            for label, value, accepted in _edges(document, prop):
                if accepted and name in FORMED:
                    continue
                before = _settled_rows(client, settings)
                reply = client.request(method, url, json={**base, name: value})
                where = f"{method} {path} {name}: {label}"
                if accepted:
                    assert _passed_validation(reply.status_code, path), (
                        f"{where} refused: {reply.text[:300]}"
                    )
                    if path.endswith("/config"):  # back, so later routes keep their limits
                        client.request(method, url, json={name: None})
                else:
                    assert 400 <= reply.status_code < 500, f"{where} accepted: {reply.text[:200]}"
                    after = _settled_rows(client, settings)
                    assert after == before, f"{where} changed the database"
                checked.append(where)
    assert f"POST {API}/memories content: maxLength {CONTENT_LIMIT} + 1" in checked
    for field in ("source", "session_id", "reason", "agent_id", "query", "messages"):
        assert any(f" {field}: max" in where for where in checked), field
    assert len(checked) > 60


def test_every_published_query_limit_is_exactly_the_enforced_one(setup: Any) -> None:
    client, settings, document = setup
    memory = client.post(f"{API}/memories", json={"content": "Seed memory"}).json()["id"]
    checked: list[str] = []
    for method, path, operation in _operations(document):
        for parameter in operation.get("parameters", []):
            if parameter["in"] != "query":
                continue
            url = path.replace("{id}", memory)
            for label, value, accepted in _edges(document, parameter["schema"]):
                if isinstance(value, list):
                    continue
                if accepted and (method == "DELETE" or parameter["name"] in FORMED):
                    continue  # a delete at the limit would remove the seed for the next case
                before = _count_rows(settings)
                reply = client.request(method, url, params={parameter["name"]: value})
                where = f"{method} {path} ?{parameter['name']}: {label}"
                if accepted:
                    assert _passed_validation(reply.status_code, path), (
                        f"{where} refused: {reply.text[:300]}"
                    )
                else:
                    assert 400 <= reply.status_code < 500, f"{where} accepted: {reply.text[:200]}"
                    assert _count_rows(settings) == before, f"{where} changed the database"
                checked.append(where)
    assert any("?reason: maxLength 1000 + 1" in where for where in checked)
    assert len(checked) > 20


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/recall", {"query": "x", "max_results": "5.5"}),
        ("/recall", {"query": "x", "max_results": True}),
        ("/recall", {"query": "x", "max_results": "0x10"}),
        ("/recall", {"query": "x", "max_results": "1e999"}),
        ("/recall", {"query": "x", "max_tokens": "5_000"}),
        ("/recall", {"query": "x", "include_shared": "true"}),
        ("/recall", {"query": "x", "include_shared": 1}),
        ("/memories", {"content": "x", "importance": "nan"}),
        ("/memories", {"content": "x", "importance": "1.5"}),
        ("/memories", {"content": "x", "shared": "yes"}),
        ("/memories", {"content": 7}),
        ("/search", {"query": ["x"]}),
        ("/relations", {"subject": "a", "predicate": "b", "object": 3}),
    ],
)
def test_types_are_exactly_the_documented_ones(setup: Any, path: str, body: dict[str, Any]) -> None:
    client, settings, _ = setup
    before = _count_rows(settings)
    reply = client.post(API + path, json=body)
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["field"] in body
    assert _count_rows(settings) == before


def test_numbers_are_read_as_the_tools_read_them(setup: Any) -> None:
    """A number may come as plain decimal text ("0.9", " 5 "), as the MCP tools take it, and
    the document says so (type [number, string] with the decimal pattern)."""
    client, _, document = setup
    stored = client.post(f"{API}/memories", json={"content": "Decimal", "importance": "0.9"})
    assert stored.status_code == 201, stored.text
    for max_results in ("2", " 2 ", 2.0, 2):
        reply = client.post(f"{API}/recall", json={"query": "Decimal", "max_results": max_results})
        assert reply.status_code == 200, (max_results, reply.text)
    published = document["components"]["schemas"]["RecallBody"]["properties"]["max_results"]
    assert published["type"] == ["integer", "string"] and "pattern" in published
    assert (published["minimum"], published["maximum"]) == (1, 50)


def test_limits_shared_with_the_tools_are_the_same_numbers(setup: Any) -> None:
    _, settings, document = setup
    tools = {
        spec.name: {p.name: p for p in spec.params}
        for spec in tool_specs(settings.max_content_chars)
    }
    schemas = document["components"]["schemas"]

    def rest(model: str, field: str) -> dict[str, Any]:
        return _resolve(document, schemas[model]["properties"][field])

    pairs = [
        (rest("RememberBody", "content"), tools["cortex_remember"]["content"]),
        (rest("RememberBody", "source"), tools["cortex_remember"]["source"]),
        (rest("RememberBody", "agent_id"), tools["cortex_remember"]["agent_id"]),
        (rest("RememberBody", "supersedes"), tools["cortex_remember"]["supersedes"]),
        (rest("RememberBody", "importance"), tools["cortex_remember"]["importance"]),
        (rest("RecallBody", "query"), tools["cortex_recall"]["query"]),
        (rest("RecallBody", "max_results"), tools["cortex_recall"]["max_results"]),
        (rest("RecallBody", "max_tokens"), tools["cortex_recall"]["max_tokens"]),
    ]
    for published, tool in pairs:
        if tool.kind == "string":
            assert published.get("maxLength") == tool.max_length, tool.name
        assert published.get("maximum") == tool.maximum, tool.name
        assert published.get("minimum") == tool.minimum, tool.name
    assert rest("RememberBody", "content")["maxLength"] == CONTENT_LIMIT
    forget = {
        p["name"]: _resolve(document, p["schema"])
        for p in document["paths"][f"{API}/memories/{{id}}"]["delete"]["parameters"]
    }
    assert forget["reason"]["maxLength"] == tools["cortex_forget"]["reason"].max_length


@pytest.mark.parametrize("agent", ["\u0000", "a\u0000b", "agent\u001f", "\u0085x", " "])
def test_an_agent_id_with_a_control_character_is_refused_on_every_route(
    setup: Any, agent: str
) -> None:
    client, settings, document = setup
    memory = client.post(f"{API}/memories", json={"content": "Seed memory"}).json()["id"]
    relation = client.post(
        f"{API}/relations", json={"subject": "a", "predicate": "b", "object": "c"}
    ).json()["id"]
    before = _count_rows(settings)
    tried = 0
    for method, path, operation in _operations(document):
        url = path.replace("{id}", relation if "relations" in path else memory)
        names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        if "agent_id" in names:
            reply = client.request(method, url, params={"agent_id": agent})
        elif "requestBody" in operation:
            body = {**BASE_BODIES[operation["operationId"]], "agent_id": agent}
            reply = client.request(method, url, json=body)
        else:
            continue
        assert reply.status_code == 422, (method, path, reply.text)
        assert reply.json()["error"]["field"] == "agent_id"
        tried += 1
    assert tried >= 17
    assert _count_rows(settings) == before
