"""`cortex-mcp serve --transport all` as a subprocess on a free loopback port, over real
sockets: MCP over SSE and Streamable HTTP, the OpenClaw bridge's REST calls, auth, a stdio
server on the same file, resource notifications and a SIGTERM drain."""

from __future__ import annotations

import json
import signal
import sqlite3
import statistics
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from cortex_mcp.prompts import mcp_prompt_files
from tests.helpers.http_helpers import AUTH, TOKEN, ServeProcess
from tests.helpers.stdio_helpers import HANG_S, server_command, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

TOOLS = {"cortex_recall", "cortex_remember", "cortex_forget", "cortex_search_debug"}
BRIDGE_BUDGET_S = 3.0  # what the OpenClaw bridge waits for a recall on an idle machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    db = tmp_path_factory.mktemp("serve") / "brain.db"
    with ServeProcess(db) as proc:
        yield proc


@asynccontextmanager
async def sse_session(server: ServeProcess, **headers: str) -> AsyncIterator[Client]:
    transport = sse_client(server.url + "/sse", headers={**AUTH, **headers})
    async with Client(transport) as client:
        yield client


@asynccontextmanager
async def http_session(server: ServeProcess, **headers: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={**AUTH, **headers}, timeout=httpx2.Timeout(30, read=300))
    async with http, Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
        yield c


async def _tool(client: Client, name: str, **arguments: Any) -> Any:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def _rest(server: ServeProcess, method: str, path: str, **kwargs: Any) -> httpx2.Response:
    headers = {**AUTH, **kwargs.pop("headers", {})}
    timeout = kwargs.pop("timeout", HANG_S)
    return httpx2.request(
        method, server.url + "/api/v1" + path, headers=headers, timeout=timeout, **kwargs
    )


@pytest.mark.parametrize("session", [sse_session, http_session], ids=["sse", "streamable"])
async def test_mcp_clients_over_sse_and_streamable_http_list_and_call_the_tools(
    server: ServeProcess, session: Any
) -> None:
    agent = f"agent-{session.__name__}"
    with anyio.fail_after(HANG_S):
        async with session(server) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            fact = f"{agent} prefers window seats on long flights"
            stored = await _tool(client, "cortex_remember", content=fact, agent_id=agent)
            found = await _tool(client, "cortex_recall", query="window seats", agent_id=agent)
            assert [m["id"] for m in found["memories"]] == [stored["id"]]
            other = await _tool(client, "cortex_recall", query="window seats", agent_id="x")
            assert other["memories"] == []
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            templates = {f.name: f for f in mcp_prompt_files()}
            assert set(prompts) == set(templates)  # every user-facing template, with arguments
            for name, template in templates.items():
                assert [a.name for a in prompts[name].arguments or []] == template.arguments
            rendered = await client.get_prompt("recall_topic", {"topic": "the VPS"})
            assert "the VPS" in str(rendered.messages[0].content)


async def test_the_agent_header_scopes_mcp_tools(server: ServeProcess) -> None:
    with anyio.fail_after(HANG_S):
        async with http_session(server, **{"X-Cortex-Agent": "header-agent"}) as client:
            stored = await _tool(client, "cortex_remember", content="Header agent likes kiwis")
    reply = _rest(server, "POST", "/recall", json={"query": "kiwis", "agent_id": "header-agent"})
    assert [m["id"] for m in reply.json()["memories"]] == [stored["id"]]
    assert _rest(server, "POST", "/recall", json={"query": "kiwis"}).json()["memories"] == []


async def _everything_b_sees(b: Client, a_id: str) -> str:
    """Every tool, resource and prompt, as agent B; each reply as text."""
    replies = []
    for query in ("tulip bulbs", "Keukenhof", a_id):
        for tool in ("cortex_recall", "cortex_search_debug"):
            result = await b.call_tool(tool, {"query": query})
            assert not result.is_error, result.content
            replies.append(result.model_dump_json())
    for arguments in ({"memory_id": a_id}, {"memory_id": a_id, "purge": True}):
        refused = await b.call_tool("cortex_forget", arguments)
        assert refused.is_error
        replies.append(refused.model_dump_json())
    superseding = await b.call_tool("cortex_remember", {"content": "B's", "supersedes": a_id})
    assert superseding.is_error
    replies.append(superseding.model_dump_json())
    assert {t.name for t in (await b.list_tools()).tools} == TOOLS
    for resource in (await b.list_resources()).resources:
        replies.append((await b.read_resource(resource.uri)).model_dump_json())
    with pytest.raises(MCPError):
        await b.read_resource(f"cortex://memories/{a_id}")
    for prompt in (await b.list_prompts()).prompts:
        arguments = {a.name: "tulips" for a in prompt.arguments or [] if a.required}
        replies.append((await b.get_prompt(prompt.name, arguments)).model_dump_json())
    return "\n".join(replies)


@pytest.mark.parametrize("session", [sse_session, http_session], ids=["sse", "streamable"])
async def test_two_agents_by_header_see_and_change_only_their_own(
    server: ServeProcess, session: Any
) -> None:
    """Agent A and agent B on one server, told apart only by X-Cortex-Agent: every tool,
    resource (cortex://core, profile, stats, memories/{id}) and prompt answers B for B."""
    a_agent, b_agent = f"A-{session.__name__}", f"B-{session.__name__}"
    secret = f"{a_agent} keeps the Keukenhof tulip bulbs in the cellar"
    with anyio.fail_after(120):
        async with session(server, **{"X-Cortex-Agent": a_agent}) as a:
            a_id = (await _tool(a, "cortex_remember", content=secret, category="preference"))["id"]
            core_a = (await a.read_resource("cortex://core")).contents[0].text
            assert "Keukenhof" in core_a  # the header reaches the resources, not only tools
            stats_a = json.loads((await a.read_resource("cortex://stats")).contents[0].text)
            assert stats_a["agent_id"] == a_agent and stats_a["memories"]["total"] == 1
        async with session(server, **{"X-Cortex-Agent": b_agent}) as b:
            seen = await _everything_b_sees(b, a_id)
            stats_b = json.loads((await b.read_resource("cortex://stats")).contents[0].text)
            profile_b = json.loads((await b.read_resource("cortex://profile")).contents[0].text)
        async with session(server, **{"X-Cortex-Agent": a_agent}) as a:
            detail = await a.read_resource(f"cortex://memories/{a_id}")
    for fragment in ("cellar", "keeps the", a_agent):  # none of them in B's own queries
        assert fragment not in seen
    assert stats_b["agent_id"] == b_agent and stats_b["memories"]["total"] == 0
    assert "all_agents" not in stats_b
    assert profile_b["agent_id"] == b_agent
    memory = json.loads(detail.contents[0].text)["memory"]
    assert memory["content"] == secret and memory["forgotten_at"] is None


async def test_a_stdio_server_of_another_agent_sees_nothing_of_the_http_agents(
    server: ServeProcess,
) -> None:
    """stdio answers for its server's agent (CORTEX_AGENT_ID), on the same database file."""
    secret = "A-stdio keeps the Keukenhof tulip bulbs in the cellar"
    with anyio.fail_after(120):
        async with http_session(server, **{"X-Cortex-Agent": "A-stdio"}) as a:
            a_id = (await _tool(a, "cortex_remember", content=secret))["id"]
        db = Path(server.log).parent / "brain.db"
        command = server_command()
        params = StdioServerParameters(
            command=command[0], args=command[1:], env=server_env(db, CORTEX_AGENT_ID="B-stdio")
        )
        async with Client(params, mode="legacy") as b:
            seen = await _everything_b_sees(b, a_id)
            stats = json.loads((await b.read_resource("cortex://stats")).contents[0].text)
    assert "cellar" not in seen and "keeps the" not in seen and "A-stdio" not in seen
    assert stats["agent_id"] == "B-stdio" and stats["memories"]["total"] == 0


def test_the_start_up_log_names_the_dashboard_url(server: ServeProcess) -> None:
    assert f"dashboard: {server.url}/" in server.log.read_text(errors="replace")


def test_health_answers_without_a_token_and_everything_else_is_401(server: ServeProcess) -> None:
    health = httpx2.get(server.url + "/api/v1/health", timeout=HANG_S)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    for method, path in [
        ("POST", "/api/v1/recall"),
        ("GET", "/api/v1/stats"),
        ("GET", "/api/v1/openapi.json"),
        ("POST", "/mcp"),
        ("GET", "/sse"),
        ("POST", "/messages/"),
    ]:
        reply = httpx2.request(method, server.url + path, json={}, timeout=HANG_S)
        assert reply.status_code == 401, path
        assert TOKEN not in reply.text


def _sse_messages_url(server: ServeProcess, lines: Iterator[str]) -> str:
    """The `/messages/?session_id=...` URL an open SSE stream announces. `lines` stays open
    (closing the line iterator would close the stream, and the session with it)."""
    for line in lines:
        if line.startswith("data: /messages/"):
            return server.url + line.removeprefix("data: ")
    raise AssertionError("the SSE stream announced no endpoint")


MALFORMED = {
    "nested 100k deep": b"[" * 100_000 + b"]" * 100_000,
    "object nested 100k deep": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "integer of 5000 digits": b'{"jsonrpc": "2.0", "id": 1' + b"0" * 5000 + b', "method": "ping"}',
    "NaN": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name":'
    b' "cortex_remember", "arguments": {"content": "x", "importance": NaN}}}',
    "not JSON": b"{'jsonrpc': 2.0",
    "invalid UTF-8": b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}',
}


def _over_the_limit() -> Iterator[bytes]:
    for _ in range(1100):  # 1.1 MiB in chunks, no Content-Length: the default limit is 1 MiB
        yield b" " * 1024


def test_malformed_and_oversized_bodies_get_4xx_on_rest_mcp_and_messages(
    server: ServeProcess,
) -> None:
    json_type = {**AUTH, "Content-Type": "application/json"}
    mcp_headers = {**json_type, "Accept": "application/json, text/event-stream"}
    with (
        httpx2.Client(timeout=30) as http,
        http.stream("GET", server.url + "/sse", headers=AUTH) as stream,
    ):
        lines = stream.iter_lines()
        messages = _sse_messages_url(server, lines)
        targets = {
            "REST": (server.url + "/api/v1/memories", json_type),
            "/mcp": (server.url + "/mcp", mcp_headers),
            "/messages/": (messages, json_type),
        }
        for where, (url, headers) in targets.items():
            for name, body in MALFORMED.items():
                reply = http.post(url, content=body, headers=headers)
                assert 400 <= reply.status_code < 500, (where, name, reply.text[:200])
            chunked = http.post(url, content=_over_the_limit(), headers=headers)
            assert chunked.status_code == 413, (where, chunked.text[:200])
            assert "CORTEX_MAX_BODY_BYTES" in chunked.text
        still = http.post(
            messages, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=json_type
        )
        assert still.status_code == 202  # the SSE session survived all of it
    log = server.log.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log
    ok = _rest(server, "POST", "/memories", json={"content": "Still writable after the probe"})
    assert ok.status_code == 201


def _round_trip_floor(server: ServeProcess) -> float:
    """The median wall time of GET /health on this server now: the HTTP stack, no work."""
    seconds = []
    for _ in range(5):
        started = time.perf_counter()
        httpx2.get(server.url + "/api/v1/health", timeout=HANG_S)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def test_the_openclaw_bridge_sequence(server: ServeProcess) -> None:
    agent, session = "openclaw-main", "s-1"
    _rest(
        server, "POST", "/memories", json={"content": "User budget is 50M yen", "agent_id": agent}
    )
    floor = _round_trip_floor(server)
    started = time.perf_counter()
    recall = _rest(
        server,
        "POST",
        "/recall",
        json={"query": "what is the user's budget?", "agent_id": agent, "max_tokens": 2000},
    )
    took = time.perf_counter() - started
    assert recall.status_code == 200 and "50M yen" in recall.json()["context"]
    # within the bridge's budget, which stretches with what a bare round trip to this server
    # costs now (a loaded machine slows both)
    assert took < BRIDGE_BUDGET_S + 20 * floor, (took, floor)
    turn = {
        "user_message": "I decided to rent the Shinagawa 1LDK",
        "assistant_message": "Noted: you chose the Shinagawa 1LDK.",
        "agent_id": agent,
        "session_id": session,
    }
    ingest = _rest(server, "POST", "/ingest", json=turn)
    messages = [
        {"role": "user", "content": "Remember: my accountant is Sato-san", "ts": 1},
        {"role": "assistant", "content": "Got it."},
    ]
    flush_body = {"messages": messages, "agent_id": agent, "session_id": session}
    flush = _rest(server, "POST", "/flush", json={**flush_body, "reason": "compaction"})
    assert ingest.status_code == 202, ingest.text  # fire-and-forget: accepted, raw turn kept
    assert flush.status_code == 200, flush.text
    deadline = time.monotonic() + HANG_S  # the background extraction; bounds a hang
    while time.monotonic() < deadline:
        hits = _rest(server, "POST", "/search", json={"query": "Shinagawa", "agent_id": agent})
        if hits.json()["results"]:
            break
        time.sleep(0.2)
    assert hits.json()["results"]
    accountant = _rest(server, "POST", "/search", json={"query": "accountant", "agent_id": agent})
    assert accountant.json()["results"]


async def test_a_memory_remembered_over_stdio_is_recalled_over_rest_and_sse(
    server: ServeProcess,
) -> None:
    db = Path(server.log).parent / "brain.db"
    params = StdioServerParameters(
        command=server_command()[0],
        args=server_command()[1:],
        env=server_env(db),
    )
    with anyio.fail_after(HANG_S):
        async with Client(params) as stdio:
            stored = await _tool(
                stdio, "cortex_remember", content="Stdio fact: the cat is called Miso"
            )
        rest = _rest(server, "POST", "/recall", json={"query": "cat called"})
        assert [m["id"] for m in rest.json()["memories"]] == [stored["id"]]
        async with sse_session(server) as sse:
            found = await _tool(sse, "cortex_recall", query="what is the cat called?")
        assert [m["id"] for m in found["memories"]] == [stored["id"]]


async def test_core_memory_changes_notify_resource_subscribers(server: ServeProcess) -> None:
    with anyio.fail_after(HANG_S):
        async with (
            http_session(server) as client,
            client.listen(resource_subscriptions=["cortex://core"]) as events,
        ):
            _rest(server, "POST", "/memories", json={"content": "Notify: user moved to Osaka"})
            event = await events.__anext__()
            assert getattr(event, "uri", None) == "cortex://core"


def test_sigterm_drains_in_flight_writes(tmp_path: Path) -> None:
    """Writes racing a SIGTERM: every write the server acknowledged is in the file."""
    db = tmp_path / "brain.db"
    acknowledged: list[str] = []
    errors: list[str] = []
    proc = ServeProcess(db).__enter__()
    stop = threading.Event()

    def writer(n: int) -> None:
        with httpx2.Client(headers=AUTH, timeout=HANG_S) as http:
            i = 0
            while not stop.is_set():
                try:
                    reply = http.post(
                        proc.url + "/api/v1/memories",
                        json={"content": f"writer {n} fact {i}"},
                    )
                except httpx2.TransportError:
                    return
                if reply.status_code == 201:
                    acknowledged.append(reply.json()["id"])
                elif reply.status_code != 503:
                    errors.append(reply.text)
                i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + HANG_S
    while len(acknowledged) < 8 and time.monotonic() < deadline:  # writes are in flight
        time.sleep(0.05)
    code = proc.stop(signal.SIGTERM)
    stop.set()
    for t in threads:
        t.join(HANG_S)
    # uvicorn shuts down cleanly, then re-raises the signal so the exit status tells a supervisor
    assert code in (0, -signal.SIGTERM), proc.log.read_text()
    assert "Application shutdown complete" in proc.log.read_text()
    assert acknowledged and not errors
    with sqlite3.connect(db) as conn:
        stored = {row[0] for row in conn.execute("SELECT id FROM memories")}
    assert set(acknowledged) <= stored


def test_a_server_whose_port_was_taken_starts_on_another_and_is_not_taken_for_the_other(
    server: ServeProcess, tmp_path: Path
) -> None:
    """The helper's guarantee, that every HTTP test here rests on: a server given a port
    another server took meanwhile exits, and starts again on another port. Meanwhile the other
    server answers /health on the first port: that is not this server being ready."""
    with ServeProcess(tmp_path / "brain.db", first_port=server.port) as second:
        assert second.port != server.port
        assert "cannot listen on" in (tmp_path / f"serve-{server.port}.log").read_text()
        mine = httpx2.get(second.url + "/api/v1/stats", headers=AUTH).json()
        theirs = httpx2.get(server.url + "/api/v1/stats", headers=AUTH).json()
        assert mine["db_path"] == str(tmp_path / "brain.db") != theirs["db_path"]
