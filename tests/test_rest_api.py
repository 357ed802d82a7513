"""The REST API in-process (a real Starlette app over a real SQLite file): bodies, errors,
guards, agent isolation and the OpenAPI document."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import ConfigError
from cortex_mcp.runtime import open_cortex
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.transports.http import create_app
from cortex_mcp.transports.rest import ENDPOINTS
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client, rest_client

API = "/api/v1"


@pytest.fixture
def client(tmp_path: Any, clock: FakeClock) -> Iterator[TestClient]:
    # every route is tried with a wrong token: more than the 10 a minute before 429
    with authed_rest_client(tmp_path, clock, auth_failures_per_minute=1000) as c:
        yield c


def remember(client: TestClient, content: str, agent: str | None = None, **extra: Any) -> str:
    body = {"content": content, **({"agent_id": agent} if agent else {}), **extra}
    reply = client.post(f"{API}/memories", json=body)
    assert reply.status_code == 201, reply.text
    return str(reply.json()["id"])


def recall_ids(client: TestClient, query: str, **body: Any) -> list[str]:
    reply = client.post(f"{API}/recall", json={"query": query, **body})
    assert reply.status_code == 200, reply.text
    return [m["id"] for m in reply.json()["memories"]]


def total(client: TestClient) -> int:
    """Memories of every agent, read from the database file itself (no route shows it)."""
    db_path = client.app.state.service.settings.db_path  # type: ignore[attr-defined]
    with contextlib.closing(sqlite_module().connect(db_path)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])


def test_recall_finds_what_was_remembered_over_rest(client: TestClient) -> None:
    memory_id = remember(client, "User's VPS runs on Oracle Cloud ARM")
    reply = client.post(f"{API}/recall", json={"query": "which cloud is the VPS on?"})
    body = reply.json()
    assert [m["id"] for m in body["memories"]] == [memory_id]
    assert "Oracle Cloud ARM" in body["context"]
    assert body["meta"]["took_ms"] >= 0


def test_health_is_public_and_everything_else_needs_the_token(client: TestClient) -> None:
    anonymous = {"Authorization": ""}
    assert client.get(f"{API}/health", headers=anonymous).status_code == 200
    wrong = {"Authorization": "Bearer not-the-token"}
    for route in ENDPOINTS:
        if route.public:
            continue
        path = route.full_path.replace("{id}", "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51")
        for headers in (anonymous, wrong):
            reply = client.request(route.method, path, headers=headers, json={})
            assert reply.status_code == 401, (route.method, path)
            assert reply.json()["error"]["code"] == "unauthorized"
    for path, method in (("/mcp", "POST"), ("/sse", "GET"), ("/messages/", "POST")):
        assert client.request(method, path, headers=anonymous).status_code == 401


def test_the_openapi_document_describes_exactly_the_served_routes(client: TestClient) -> None:
    doc = client.get(f"{API}/openapi.json").json()
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    served = {
        (method, route.path)
        for route in client.app.routes  # type: ignore[attr-defined]
        if isinstance(route, Route) and route.path.startswith(API)
        for method in (route.methods or set()) - {"HEAD"}
    }
    assert documented == served
    assert doc["paths"][f"{API}/health"]["get"].get("security") is None
    assert doc["paths"][f"{API}/recall"]["post"]["security"] == [{"bearer": []}]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": 42}, "content"),
        ({}, "content"),
        ({"content": "fact", "importance": "high"}, "importance"),
        ({"content": "fact", "importance": 2}, "importance"),
        ({"content": "fact", "category": "gossip"}, "category"),
        ({"content": "fact", "agent_id": ""}, "agent_id"),
        ({"content": "fact", "agent_id": "x" * 129}, "agent_id"),
        ({"content": "fact", "agent_id": "a\nb"}, "agent_id"),
        ({"content": "fact", "agent_id": 7}, "agent_id"),
        ({"content": "fact", "agentId": "b"}, "agentId"),
        ({"content": "   "}, "content"),
        ({"content": "fact", "supersedes": "not-an-id"}, "supersedes"),
        (["content"], "body"),
    ],
)
def test_bad_remember_bodies_get_4xx_json_and_change_nothing(
    client: TestClient, body: Any, field: str
) -> None:
    before = total(client)
    reply = client.post(f"{API}/memories", json=body)
    assert 400 <= reply.status_code < 500, reply.text
    error = reply.json()["error"]
    assert field in error["message"]
    assert error.get("field", "").startswith(field) or field == "body"
    assert total(client) == before


@pytest.mark.parametrize(
    ("raw", "status"),
    [(b"{not json", 400), (b"", 400), (b"\xff\xfe", 400), (b"null", 422), (b'"text"', 422)],
)
def test_invalid_json_is_refused_with_a_json_error(
    client: TestClient, raw: bytes, status: int
) -> None:
    reply = client.post(f"{API}/recall", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == status
    assert reply.json()["error"]["code"] in {"invalid_json", "invalid_input"}


def test_a_10_mb_body_gets_413_and_changes_nothing(client: TestClient) -> None:
    before = total(client)
    huge = b'{"content": "' + b"x" * 10_000_000 + b'"}'
    reply = client.post(f"{API}/memories", content=huge)
    assert reply.status_code == 413
    assert "CORTEX_MAX_BODY_BYTES" in reply.json()["error"]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts what arrives
        yield b'{"content": "'
        for _ in range(10):
            yield b"x" * 1_000_000
        yield b'"}'

    reply = client.post(f"{API}/memories", content=chunks())
    assert reply.status_code == 413
    assert total(client) == before


def test_a_bad_agent_header_is_refused(client: TestClient) -> None:
    reply = client.post(f"{API}/recall", json={"query": "x"}, headers={"X-Cortex-Agent": " "})
    assert reply.status_code == 400
    assert reply.json()["error"]["field"] == "X-Cortex-Agent"


def test_agents_never_see_each_others_memories_on_any_route(client: TestClient) -> None:
    a_id = remember(client, "Agent A secret: the launch code is tulip", agent="A")
    b_id = remember(client, "Agent B note: the launch code is orchid", agent="B")
    assert recall_ids(client, "launch code", agent_id="A") == [a_id]
    assert recall_ids(client, "launch code", agent_id="B") == [b_id]
    header_b = {"X-Cortex-Agent": "B"}
    reply = client.post(f"{API}/recall", json={"query": "launch code"}, headers=header_b)
    assert [m["id"] for m in reply.json()["memories"]] == [b_id]
    search = client.post(f"{API}/search", json={"query": "launch", "agent_id": "A"}).json()
    assert [m["id"] for m in search["results"]] == [a_id]
    debug = client.post(
        f"{API}/search", json={"query": "launch", "agent_id": "B", "debug": True}
    ).json()
    assert a_id not in str(debug) and "tulip" not in str(debug)
    # by id: B can neither read, change nor forget A's memory
    assert client.get(f"{API}/memories/{a_id}", headers=header_b).status_code == 404
    assert client.get(f"{API}/memories/{a_id}?agent_id=A").json()["memory"]["id"] == a_id
    patch = client.patch(f"{API}/memories/{a_id}", json={"importance": 0.1}, headers=header_b)
    assert patch.status_code == 404
    assert client.delete(f"{API}/memories/{a_id}", headers=header_b).status_code == 404
    assert recall_ids(client, "launch code", agent_id="A") == [a_id]
    stats_b = client.get(f"{API}/stats", headers=header_b).json()
    assert (stats_b["agent_id"], stats_b["memories"]["total"]) == ("B", 1)
    if hasattr(client.app.state.service, "list_memories"):  # type: ignore[attr-defined]
        listed = client.get(f"{API}/memories", headers=header_b).json()["memories"]
        assert [m["id"] for m in listed] == [b_id]


def test_shared_memories_reach_other_agents_only_when_they_opt_in(client: TestClient) -> None:
    shared = remember(client, "Household wifi password is in the blue notebook", "A", shared=True)
    remember(client, "A private: wifi router admin is on port 8443", "A")
    assert recall_ids(client, "wifi", agent_id="B") == []
    assert recall_ids(client, "wifi", agent_id="B", include_shared=True) == [shared]
    private = remember(client, "A private: the wifi guest network is off", "A")
    client.patch(f"{API}/memories/{private}", json={"shared": True, "agent_id": "A"})
    assert set(recall_ids(client, "wifi", agent_id="B", include_shared=True)) == {
        shared,
        private,
    }
    # a shared memory is still the owner's: B cannot forget it
    assert client.delete(f"{API}/memories/{shared}?agent_id=B").status_code == 404


def test_patch_and_delete_change_the_owners_memory(client: TestClient) -> None:
    memory_id = remember(client, "Standup moved to 10:30", "A")
    reply = client.patch(
        f"{API}/memories/{memory_id}",
        json={"agent_id": "A", "importance": 0.2, "category": "decision"},
    )
    assert reply.status_code == 200
    assert (reply.json()["importance"], reply.json()["category"]) == (0.2, "decision")
    bad = client.patch(f"{API}/memories/{memory_id}", json={"agent_id": "A", "layer": "attic"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "layer"
    gone = client.delete(f"{API}/memories/{memory_id}?agent_id=A&reason=done")
    assert gone.json() == {"id": memory_id, "status": "forgotten", "new_id": None}
    assert recall_ids(client, "standup", agent_id="A") == []
    assert client.get(f"{API}/memories/nope?agent_id=A").status_code == 400


def test_dns_rebinding_hosts_and_foreign_origins_are_refused(client: TestClient) -> None:
    evil = client.post(f"{API}/recall", json={"query": "x"}, headers={"Host": "evil.example"})
    assert evil.status_code == 421
    own = client.post(
        f"{API}/recall", json={"query": "x"}, headers={"Origin": "http://127.0.0.1:21100"}
    )
    assert own.status_code == 200  # the server's own origin (the dashboard), exactly
    for origin in (
        "http://evil.example",
        "http://localhost:5173",  # another port on the same machine is another origin
        "http://127.0.0.1:21101",
        "http://127.0.0.1",
        "https://127.0.0.1:21100",  # another scheme
        "http://localhost:21100",  # another host name for the same socket
        "null",  # a sandboxed frame or a file:// page
    ):
        page = client.post(f"{API}/recall", json={"query": "x"}, headers={"Origin": origin})
        assert page.status_code == 403, origin
        assert page.json()["error"]["code"] == "origin_not_allowed"


# Every route that writes, with a body it would accept; /mcp and /messages/ too.
_WRITES = [
    ("POST", f"{API}/memories", {"content": "a page planted this"}),
    ("POST", f"{API}/recall", {"query": "planted"}),
    ("POST", f"{API}/search", {"query": "planted"}),
    ("POST", f"{API}/ingest", {"user_message": "I live in Lyon", "assistant_message": "ok"}),
    ("POST", f"{API}/flush", {"messages": [{"role": "user", "content": "I live in Lyon"}]}),
    ("POST", f"{API}/lifecycle/run", {}),
    ("POST", f"{API}/export", {}),
    ("POST", f"{API}/import", {"content": "- the page planted this"}),
    ("POST", f"{API}/relations", {"subject": "page", "predicate": "planted", "object": "this"}),
    ("PATCH", f"{API}/memories/{{id}}", {"importance": 0.1}),
    ("DELETE", f"{API}/memories/{{id}}?purge=true", None),
    ("DELETE", f"{API}/relations/{{rel}}", None),
    ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    ("POST", "/messages/?session_id=0123456789abcdef0123456789abcdef", {"jsonrpc": "2.0"}),
]


def _write_targets(client: TestClient) -> list[tuple[str, str, Any]]:
    memory = remember(client, "Owner's bike lock code is kept elsewhere")
    relation = client.post(
        f"{API}/relations", json={"subject": "owner", "predicate": "rides", "object": "a bike"}
    ).json()["id"]
    return [(method, path.format(id=memory, rel=relation), body) for method, path, body in _WRITES]


def _snapshot(client: TestClient) -> tuple[Any, ...]:
    db_path = client.app.state.service.settings.db_path  # type: ignore[attr-defined]
    with contextlib.closing(sqlite_module().connect(db_path)) as conn:
        return tuple(
            conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            for table in ("memories", "relations", "lifecycle_log", "turns", "access_log")
        )


def test_a_page_from_another_origin_changes_nothing_on_any_writing_route(
    client: TestClient,
) -> None:
    targets = _write_targets(client)
    before = _snapshot(client)
    for origin in ("http://localhost:5173", "http://127.0.0.1:8080", "http://evil.example"):
        for method, path, body in targets:
            reply = client.request(method, path, json=body, headers={"Origin": origin})
            assert reply.status_code == 403, (origin, method, path, reply.text)
        # without an Origin (a no-cors request), the browser's Sec-Fetch-Site still tells
        for method, path, body in targets:
            site = {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors"}
            reply = client.request(method, path, json=body, headers=site)
            assert reply.status_code == 403, (method, path, reply.text)
    assert _snapshot(client) == before
    # a link opened in a tab may still show the page (a GET navigation changes nothing)
    tab = client.get(
        f"{API}/health", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    )
    assert tab.status_code == 200


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "application/json-patch+json",
    ],
)
def test_bodies_that_are_not_declared_json_get_415_and_change_nothing(
    client: TestClient, content_type: str | None
) -> None:
    """What a page can send to any origin without a CORS preflight is refused."""
    targets = _write_targets(client)
    before = _snapshot(client)
    for method, path, body in targets:
        if body is None:
            continue
        headers = {"Content-Type": content_type} if content_type else {}
        raw = json.dumps(body).encode()
        reply = client.request(method, path, content=raw, headers=headers)
        assert reply.status_code == 415, (method, path, reply.text)
        assert reply.json()["error"]["field"] == "Content-Type"
    assert _snapshot(client) == before
    ok = client.post(
        f"{API}/recall",
        content=b'{"query": "bike"}',
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert ok.status_code == 200


def test_allowed_hosts_and_cors_origins_are_configurable(tmp_path: Any) -> None:
    settings = load_settings(
        db_path=tmp_path / "b.db",
        embedding_provider="none",
        allowed_hosts="memory.lan:*",
        cors_origins="https://dash.example",
    )
    with rest_client(settings) as c:
        ok = c.get(f"{API}/stats", headers={"Host": "memory.lan:21100"})
        assert ok.status_code == 200
        preflight = c.options(
            f"{API}/recall",
            headers={
                "Origin": "https://dash.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://dash.example"


def test_the_server_refuses_a_public_address_without_a_token(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="CORTEX_API_TOKEN"):
        create_app(settings, lambda: open_cortex(settings), host="0.0.0.0")
    with_token = load_settings(db_path=settings.db_path, embedding_provider="none", api_token="t")
    app = create_app(with_token, lambda: open_cortex(with_token), host="0.0.0.0")
    assert app is not None


def test_lifecycle_routes_preview_run_and_log(client: TestClient) -> None:
    remember(client, "Lifecycle: user prefers morning meetings", "A")
    preview = client.get(f"{API}/lifecycle/preview?agent_id=A")
    assert preview.status_code == 200, preview.text
    assert preview.json()["status"] == "preview"
    run = client.post(f"{API}/lifecycle/run", json={"agent_id": "A"})
    assert run.status_code == 200, run.text
    assert run.json()["status"] in {"done", "busy"}
    log = client.get(f"{API}/lifecycle/log?limit=5")
    assert log.status_code == 200 and isinstance(log.json()["entries"], list)
    assert client.get(f"{API}/lifecycle/log?limit=0").status_code == 422


def test_lifecycle_routes_act_on_and_show_only_the_callers_agent(
    client: TestClient, clock: FakeClock
) -> None:
    a_working = remember(
        client, "Agent A: a passing note about the tulip order", "A", layer="working"
    )
    a_gone = remember(client, "Agent A: the old tulip supplier was Vos", "A")
    assert client.delete(f"{API}/memories/{a_gone}?agent_id=A&reason=tulips").status_code == 200
    remember(client, "Agent B: the orchid order is due", "B", layer="working")
    clock.advance(days=40)  # long past the working layer's 48 hours

    header_b = {"X-Cortex-Agent": "B"}
    for run in (
        client.post(f"{API}/lifecycle/run", json={}, headers=header_b),
        client.post(f"{API}/lifecycle/run", json={"agent_id": "B"}),
        client.post(f"{API}/lifecycle/run", json={}),  # no agent: the server's own, not all
    ):
        assert run.status_code == 200, run.text
        assert run.json()["agent_id"] in {"B", "default"}
        assert a_working not in str(run.json()) and "tulip" not in run.text
    preview_b = client.get(f"{API}/lifecycle/preview", headers=header_b)
    assert preview_b.json()["agent_id"] == "B" and a_working not in preview_b.text
    mine = client.get(f"{API}/memories/{a_working}?agent_id=A").json()["memory"]
    assert mine["layer"] == "working"  # no run of B's (or the default's) touched it

    for log in (
        client.get(f"{API}/lifecycle/log", headers=header_b),
        client.get(f"{API}/lifecycle/log?agent_id=B&limit=10000"),
        client.get(f"{API}/lifecycle/log"),
    ):
        assert log.status_code == 200, log.text
        assert a_working not in log.text and a_gone not in log.text and "tulip" not in log.text
    log_a = client.get(f"{API}/lifecycle/log?agent_id=A").json()["entries"]
    forgets = [e for e in log_a if e["action"] == "forget"]  # and who remembered each of A's
    assert len(forgets) == 1 and forgets[0]["memory_ids"] == [a_gone]
    assert {e["action"] for e in log_a} == {"forget", "remember"}
    ran_before = len(log_a)

    run_a = client.post(f"{API}/lifecycle/run", json={}, headers={"X-Cortex-Agent": "A"})
    assert run_a.json()["agent_id"] == "A"
    assert client.get(f"{API}/memories/{a_working}?agent_id=A").json()["memory"]["layer"] != (
        "working"
    )
    assert len(client.get(f"{API}/lifecycle/log?agent_id=A").json()["entries"]) > ran_before
    # a purged memory's audit entries stay its owner's, and only its owner's
    assert client.delete(f"{API}/memories/{a_gone}?agent_id=A&purge=true").status_code == 200
    purged = client.get(f"{API}/lifecycle/log?agent_id=A").json()["entries"]
    assert {"purge", "forget"} <= {e["action"] for e in purged if e["memory_ids"] == [a_gone]}
    assert a_gone not in client.get(f"{API}/lifecycle/log", headers=header_b).text


def test_list_export_and_import_over_rest_stay_within_the_agent(client: TestClient) -> None:
    a_id = remember(client, "Agent A: the safe is in locker 4711", "A")
    b_id = remember(client, "Agent B: the bike is in rack 1234", "B")
    listed = client.get(f"{API}/memories?agent_id=B&limit=10").json()
    assert [m["id"] for m in listed["memories"]] == [b_id]
    exported = client.post(f"{API}/export", json={}, headers={"X-Cortex-Agent": "B"})
    assert exported.status_code == 200, exported.text
    assert "1234" in exported.text and "4711" not in exported.text and a_id not in exported.text
    imported = client.post(
        f"{API}/import",
        json={
            "format": "markdown",
            "content": "## Preferences\n\n- C likes ramen\n",
            "agent_id": "C",
        },
    )
    assert imported.status_code == 200, imported.text
    assert recall_ids(client, "ramen", agent_id="C")
    assert recall_ids(client, "ramen", agent_id="A") == []
    bad = client.post(f"{API}/import", json={"format": "yaml", "content": "x"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "format"


def _rows_of(client: TestClient, agent: str) -> list[tuple[Any, ...]]:
    db_path = client.app.state.service.settings.db_path  # type: ignore[attr-defined]
    with contextlib.closing(sqlite_module().connect(db_path)) as conn:
        memories = conn.execute(
            "SELECT * FROM memories WHERE agent_id = ? ORDER BY id", (agent,)
        ).fetchall()
        relations = conn.execute(
            "SELECT * FROM relations WHERE agent_id = ? ORDER BY id", (agent,)
        ).fetchall()
    return [*memories, *relations]


def test_an_import_writes_only_into_the_callers_agent(client: TestClient) -> None:
    """B posts A's whole export back (ids, agent ids and log entries of A's): it lands in B as
    B's own copies; A's rows, and A's view of the audit log, stay exactly as they were."""
    a_id = remember(client, "Agent A: the vault combination is 31-7-22", "A")
    client.post(
        f"{API}/relations",
        json={"subject": "vault", "predicate": "opens with", "object": "31-7-22", "agent_id": "A"},
    )
    assert client.delete(f"{API}/memories/{a_id}?agent_id=A&reason=moved").status_code == 200
    document = client.post(f"{API}/export", json={"agent_id": "A"}).json()["document"]
    assert document["memories"] and document["relations"] and document["lifecycle_log"]
    a_before = _rows_of(client, "A")
    a_log = client.get(f"{API}/lifecycle/log?agent_id=A").json()["entries"]

    for body in (
        {"format": "json", "document": document},
        {"format": "json", "content": json.dumps(document)},
    ):
        reply = client.post(f"{API}/import", json=body, headers={"X-Cortex-Agent": "B"})
        assert reply.status_code == 200, reply.text
    assert _rows_of(client, "A") == a_before
    assert client.get(f"{API}/lifecycle/log?agent_id=A").json()["entries"] == a_log
    copies = _rows_of(client, "B")  # the forgotten memory comes as forgotten, under a new id
    assert copies and a_id not in {row[0] for row in copies}
    # and A cannot plant into B by naming B in the document
    planted = json.loads(json.dumps(document).replace('"A"', '"B"'))
    b_before = _rows_of(client, "B")
    reply = client.post(
        f"{API}/import",
        json={"format": "json", "document": planted},
        headers={"X-Cortex-Agent": "A"},
    )
    assert reply.status_code in (200, 400), reply.text
    assert _rows_of(client, "B") == b_before


def test_relations_are_listed_per_agent(client: TestClient) -> None:
    doc = "## Relations\n\n- Harry ──owns──▶ Oracle Cloud VPS\n"
    imported = client.post(
        f"{API}/import", json={"format": "markdown", "content": doc, "agent_id": "A"}
    )
    assert imported.status_code == 200, imported.text
    mine = client.get(f"{API}/relations?agent_id=A&limit=5").json()["relations"]
    assert [(r["subject"], r["object"]) for r in mine] == [("Harry", "Oracle Cloud VPS")]
    theirs = client.get(f"{API}/relations", headers={"X-Cortex-Agent": "B"})
    assert theirs.json() == {"relations": []}
    assert client.get(f"{API}/relations?limit=0").status_code == 422


def relations_of(client: TestClient, agent: str) -> list[dict[str, Any]]:
    reply = client.get(f"{API}/relations", headers={"X-Cortex-Agent": agent})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["relations"])


def test_a_relation_is_created_listed_and_deleted_over_rest(client: TestClient) -> None:
    body = {
        "subject": "Harry",
        "predicate": "owns",
        "object": "  Oracle Cloud VPS ",
        "agent_id": "A",
    }
    created = client.post(f"{API}/relations", json=body)
    assert created.status_code == 201, created.text
    relation = created.json()
    assert (relation["subject"], relation["predicate"], relation["object"]) == (
        "Harry",
        "owns",
        "Oracle Cloud VPS",
    )
    again = client.post(f"{API}/relations", json=body)
    assert again.status_code == 201 and again.json()["id"] == relation["id"]
    assert [r["id"] for r in relations_of(client, "A")] == [relation["id"]]
    deleted = client.delete(f"{API}/relations/{relation['id']}?agent_id=A")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"id": relation["id"], "deleted": True}
    assert relations_of(client, "A") == []
    gone = client.delete(f"{API}/relations/{relation['id']}?agent_id=A")
    assert gone.status_code == 404 and gone.json()["error"]["field"] == "id"


def test_agent_b_can_neither_see_nor_delete_agent_as_relation(client: TestClient) -> None:
    body = {"subject": "Harry", "predicate": "prefers", "object": "ramen"}
    made = client.post(f"{API}/relations", json=body, headers={"X-Cortex-Agent": "A"}).json()
    assert relations_of(client, "B") == []
    theirs = client.delete(f"{API}/relations/{made['id']}", headers={"X-Cortex-Agent": "B"})
    assert theirs.status_code == 404
    assert "B" in theirs.json()["error"]["message"]
    assert [r["id"] for r in relations_of(client, "A")] == [made["id"]]


def test_a_relation_holds_no_secret(client: TestClient, tmp_path: Path) -> None:
    secret = "ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4"
    body = {"subject": "deploy", "predicate": "uses token", "object": secret}
    stored = client.post(f"{API}/relations", json=body)
    assert stored.status_code == 201, stored.text
    assert stored.json()["object"].startswith("[REDACTED:")
    [listed] = client.get(f"{API}/relations").json()["relations"]
    assert listed["object"] == stored.json()["object"]
    on_disk = b"".join(p.read_bytes() for p in tmp_path.glob("brain.db*"))
    assert secret.encode() not in on_disk


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"subject": "a", "predicate": "b"}, 422, "object"),
        ({"subject": "", "predicate": "b", "object": "c"}, 422, "subject"),
        ({"subject": "   ", "predicate": "b", "object": "c"}, 400, "subject"),
        ({"subject": "a", "predicate": "b" * 201, "object": "c"}, 422, "predicate"),
        ({"subject": "a", "predicate": "b", "object": "c", "colour": "red"}, 422, "colour"),
    ],
)
def test_a_bad_relation_body_is_refused_naming_the_field_and_changes_nothing(
    client: TestClient, body: dict[str, Any], status: int, field: str
) -> None:
    reply = client.post(f"{API}/relations", json=body)
    assert reply.status_code == status, reply.text
    assert reply.json()["error"]["field"] == field
    assert client.get(f"{API}/relations").json() == {"relations": []}


def test_deleting_a_relation_by_a_malformed_id_is_refused_and_changes_nothing(
    client: TestClient,
) -> None:
    made = client.post(f"{API}/relations", json={"subject": "a", "predicate": "b", "object": "c"})
    assert made.status_code == 201
    reply = client.delete(f"{API}/relations/not-an-id")
    assert reply.status_code == 400
    assert reply.json()["error"]["field"] == "id"
    assert "relation id" in reply.json()["error"]["message"]
    assert len(client.get(f"{API}/relations").json()["relations"]) == 1
