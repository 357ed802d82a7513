"""What the HTTP server does against hostile clients and pages (issue 26's probe): no page of
another origin can frame the dashboard or the API; an agent named in the X-Cortex-Agent header
(UTF-8) is the agent of the same name anywhere else, and no agent id may hold a bidi control or
another control or format character; a client that sends part of a request and stalls is cut
off within a bound, and stalled clients do not keep others from being served."""

from __future__ import annotations

import select
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.engine import validate
from cortex_mcp.errors import ConfigError
from cortex_mcp.transports.dashboard import CSP
from cortex_mcp.transports.framing import without_framing
from tests.helpers.http_helpers import AUTH, TOKEN, ServeProcess, rest_client
from tests.helpers.stdio_helpers import HANG_S, server_command, server_env

API = "/api/v1"


@pytest.fixture(params=["no token", "token"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    token = TOKEN if request.param == "token" else None
    settings = load_settings(
        db_path=tmp_path / "brain.db", embedding_provider="none", api_token=token
    )
    with rest_client(settings) as c:
        yield c


FRAMED_PATHS = [
    ("GET", "/"),
    ("GET", "/ui/index.html"),
    ("GET", "/ui/app.js"),
    ("GET", "/ui/app.css"),
    ("GET", "/ui/auth"),
    ("GET", "/ui/no-such-file.html"),
    ("GET", f"{API}/health"),
    ("GET", f"{API}/agents"),
    ("GET", f"{API}/openapi.json"),
    ("GET", "/no/such/route"),
    ("POST", f"{API}/recall"),
]


def _frame_ancestors(csp: str) -> list[str]:
    return [d.strip() for d in csp.split(";") if d.strip().startswith("frame-ancestors")]


@pytest.mark.parametrize(("method", "path"), FRAMED_PATHS)
def test_every_response_forbids_framing(client: TestClient, method: str, path: str) -> None:
    for headers in ({}, AUTH):  # refused (401 with a token) and answered
        reply = client.request(method, path, headers=headers, json={} if method == "POST" else None)
        said = f"{method} {path} -> {reply.status_code} {dict(reply.headers)}"
        assert reply.headers.get("x-frame-options") == "DENY", said
        assert _frame_ancestors(reply.headers.get("content-security-policy", "")) == [
            "frame-ancestors 'none'"
        ], said


@pytest.mark.parametrize("path", ["/", "/ui/index.html"])
def test_the_dashboard_page_keeps_its_whole_policy_at_either_address(
    client: TestClient, path: str
) -> None:
    reply = client.get(path, headers=AUTH)
    assert reply.status_code == 200 and "<html" in reply.text
    assert reply.headers["content-security-policy"] == CSP
    assert reply.headers["x-content-type-options"] == "nosniff"


def test_a_policy_of_a_route_is_kept_and_its_framing_set_to_none() -> None:
    assert without_framing("") == "frame-ancestors 'none'"
    assert without_framing("default-src 'self'; frame-ancestors *; base-uri 'none'") == (
        "default-src 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    assert without_framing("default-src 'self';") == "default-src 'self'; frame-ancestors 'none'"


# --- agent ids: one name is one agent, and it cannot hide what it is ---------------------------

NAME = "José-田中"
# bidi controls (embedding, override, isolate, marks), zero-width and other format characters,
# line separators
INVISIBLE = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u200b",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\u061c",
    "\u2028",
    "\U000e0001",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path_factory.mktemp("serve") / "brain.db") as proc:
        yield proc


def _rest(served: ServeProcess, method: str, path: str, **kwargs: object) -> httpx2.Response:
    headers = {**AUTH, **kwargs.pop("headers", {})}  # type: ignore[dict-item]
    return httpx2.request(
        method, f"{served.url}{API}{path}", headers=headers, timeout=HANG_S, **kwargs
    )  # type: ignore[arg-type]


def _contents(served: ServeProcess, agent: str) -> list[str]:
    reply = _rest(served, "GET", "/memories", params={"agent_id": agent})
    assert reply.status_code == 200, reply.text
    return [m["content"] for m in reply.json()["memories"]]


def test_a_utf8_agent_header_names_the_same_agent_as_the_body(served: ServeProcess) -> None:
    header = {"X-Cortex-Agent": NAME.encode()}
    written = _rest(
        served, "POST", "/memories", json={"content": "Header José likes figs"}, headers=header
    )
    assert written.status_code == 201, written.text
    _rest(served, "POST", "/memories", json={"content": "Body José likes dates", "agent_id": NAME})
    assert sorted(_contents(served, NAME)) == ["Body José likes dates", "Header José likes figs"]
    listed = _rest(served, "GET", "/memories", headers=header).json()["memories"]
    assert sorted(m["content"] for m in listed) == [
        "Body José likes dates",
        "Header José likes figs",
    ]
    agents = [a["agent_id"] for a in _rest(served, "GET", "/agents").json()["agents"]]
    assert NAME in agents and NAME.encode().decode("latin-1") not in agents


@pytest.mark.anyio
async def test_mcp_over_http_reads_the_agent_header_as_utf8(served: ServeProcess) -> None:
    _rest(served, "POST", "/memories", json={"content": "MCP José keeps bees", "agent_id": NAME})
    headers = {**AUTH, "X-Cortex-Agent": NAME.encode()}
    with anyio.fail_after(HANG_S):
        http = httpx2.AsyncClient(headers=headers, timeout=HANG_S)
        async with http, Client(streamable_http_client(served.url + "/mcp", http_client=http)) as c:
            found = await c.call_tool("cortex_recall", {"query": "bees"})
            stored = await c.call_tool("cortex_remember", {"content": "MCP José sells honey"})
    assert not found.is_error and not stored.is_error
    assert [m["content"] for m in found.structured_content["memories"]] == ["MCP José keeps bees"]
    assert "MCP José sells honey" in _contents(served, NAME)


def test_an_agent_header_that_is_not_utf8_is_refused(served: ServeProcess) -> None:
    before = _rest(served, "GET", "/agents").json()
    for raw in (b"Jos\xe9", b"\xff\xfe", b"a\xc3"):
        reply = _rest(
            served, "POST", "/memories", json={"content": "x y z"}, headers={"X-Cortex-Agent": raw}
        )
        assert reply.status_code == 400, (raw, reply.text)
        error = reply.json()["error"]
        assert error["field"] == "X-Cortex-Agent" and "UTF-8" in error["message"], error
    assert _rest(served, "GET", "/agents").json() == before


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_an_agent_id_with_a_bidi_or_format_character_is_refused_everywhere(
    served: ServeProcess, char: str
) -> None:
    agent = f"admin{char}x"
    before = _rest(served, "GET", "/agents").json()
    refusals = [
        _rest(served, "POST", "/memories", json={"content": "planted fact", "agent_id": agent}),
        _rest(served, "POST", "/recall", json={"query": "planted", "agent_id": agent}),
        _rest(served, "GET", "/memories", params={"agent_id": agent}),
        _rest(
            served,
            "POST",
            "/memories",
            json={"content": "planted fact"},
            headers={"X-Cortex-Agent": agent.encode()},
        ),
    ]
    for reply, field in zip(refusals, ["agent_id"] * 3 + ["X-Cortex-Agent"], strict=True):
        assert reply.status_code in (400, 422), reply.text
        error = reply.json()["error"]
        assert error["field"] == field, error
        assert f"U+{ord(char):04X}" in error["message"] and "format" in error["message"], error
    assert _rest(served, "GET", "/agents").json() == before


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200f"])
def test_an_agent_id_with_a_bidi_control_is_refused_by_the_cli_and_the_config(
    tmp_path: Path, char: str
) -> None:
    agent = f"admin{char}x"
    env = server_env(tmp_path / "brain.db")
    for args, extra, named in (
        (["--agent-id", agent, "stats"], {}, "CORTEX_AGENT_ID"),
        (["stats"], {"CORTEX_AGENT_ID": agent}, "CORTEX_AGENT_ID"),
        (["lifecycle", "preview", "--agent", agent], {}, "agent"),
    ):
        done = subprocess.run(
            [*server_command(), *args],
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        said = f"{args} {extra}: {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert done.returncode == 2, said
        assert named in done.stderr and f"U+{ord(char):04X}" in done.stderr, said
        assert "Traceback" not in done.stderr, said
    with pytest.raises(ConfigError, match=r"CORTEX_AGENT_ID: .*U\+202E"):
        load_settings(db_path=tmp_path / "b.db", agent_id="a\u202eb")


def test_the_published_agent_id_pattern_refuses_what_the_rule_refuses() -> None:
    """The pattern in the OpenAPI document and tool schemas and the server's own check agree
    on every character (a client generating ids from the document meets no refusal). The
    surrogates are left out: no JSON text, UTF-8 header or URL carries one (each is refused
    before as invalid Unicode), and the rule refuses them too."""
    import re

    from cortex_mcp.service.requests import RememberRequest

    field = RememberRequest.model_json_schema()["properties"]["agent_id"]
    pattern = re.compile(next(s["pattern"] for s in field["anyOf"] if "pattern" in s))
    disagree = []
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            assert validate.agent_id_problem(chr(code)) is not None
            continue
        char = chr(code)
        published = pattern.fullmatch(f"a{char}b") is not None
        try:
            validate.agent_id(f"a{char}b", "default")
            checked = True
        except Exception:
            checked = False
        if published != checked:
            disagree.append(f"U+{code:04X}")
    assert disagree == []


# --- half-open requests: a stalled client is cut off, the others are served --------------------


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> tuple[float, bytes]:
    """Seconds until the server closed `sock` (reading what it sent), or inf past `seconds`."""
    started = time.monotonic()
    got = b""
    sock.settimeout(0.2)
    while time.monotonic() - started < seconds:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return time.monotonic() - started, got
        if not chunk:
            return time.monotonic() - started, got
        got += chunk
    return float("inf"), got


def _health(port: int) -> float:
    started = time.monotonic()
    reply = httpx2.get(f"http://127.0.0.1:{port}{API}/health", timeout=HANG_S)
    assert reply.status_code == 200
    return time.monotonic() - started


PARTIAL_HEADS = [
    b"",  # connected, said nothing
    b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # no blank line ending the head
    b"POST /api/v1/memo",
]


def test_stalled_request_heads_are_cut_off_and_do_not_keep_others_waiting(
    served: ServeProcess,
) -> None:
    """`cortex-mcp serve` as users run it: many connections that never finish their request
    line and headers; a normal request is still answered at once, and every stalled one is
    closed within the head deadline (10 s) plus slack."""
    port = served.port
    stalled = []
    for n in range(150):
        sock = _connect(port)
        sock.sendall(PARTIAL_HEADS[n % len(PARTIAL_HEADS)])
        stalled.append(sock)
    try:
        assert _health(port) < 2.0
        started = time.monotonic()
        for sock in stalled:
            waited, _ = _closed_within(sock, max(0.5, 16.0 - (time.monotonic() - started)))
            assert waited != float("inf"), "a stalled connection was still open after 16 s"
        assert time.monotonic() - started < 16.0
        assert _health(port) < 2.0
    finally:
        for sock in stalled:
            sock.close()


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The server's own uvicorn set-up in this process with short deadlines (head 1 s, body
    1 s), on a free port of a real socket."""
    import asyncio

    import uvicorn

    from cortex_mcp.runtime import open_cortex
    from cortex_mcp.transports.http import create_app, server_config
    from tests.helpers.http_helpers import free_port

    db = tmp_path_factory.mktemp("bounded") / "brain.db"
    settings = load_settings(db_path=db, embedding_provider="none", lifecycle={"schedule": "off"})
    app = create_app(settings, lambda: open_cortex(settings), body_timeout_s=1.0)
    port = free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, head_timeout_s=1.0))
    thread = threading.Thread(target=asyncio.run, args=(server.serve(),), daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(HANG_S)


def _count(port: int) -> int:
    reply = httpx2.get(f"http://127.0.0.1:{port}{API}/memories", timeout=HANG_S)
    return len(reply.json()["memories"])


BODY = b'{"content": "A fact sent far too slowly to be stored"}'


@pytest.mark.parametrize("form", ["declared length", "chunked", "dripped"])
def test_a_stalled_or_dripping_body_is_answered_408_and_closed(bounded: int, form: str) -> None:
    before = _count(bounded)
    sock = _connect(bounded)
    head = (
        b"POST /api/v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    )
    try:
        if form == "chunked":
            sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n5\r\n" + BODY[:5] + b"\r\n")
        else:
            sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY[:10])
        if form == "dripped":  # a byte every 0.3 s: never idle for the deadline, never done
            for byte in BODY[10:20]:  # stops once the server has answered
                if select.select([sock], [], [], 0.3)[0]:
                    break
                sock.sendall(bytes([byte]))
        waited, answer = _closed_within(sock, 6.0)
    finally:
        sock.close()
    assert waited < 4.0, f"still open ({form})"
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b'"field":"body"' in answer.replace(b" ", b""), answer
    assert _count(bounded) == before


def test_a_partial_second_request_on_a_kept_alive_connection_is_cut_off(bounded: int) -> None:
    sock = _connect(bounded)
    try:
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200 "), first
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.")
        waited, _ = _closed_within(sock, 6.0)
    finally:
        sock.close()
    assert waited < 4.0


def test_a_body_in_parts_within_the_bound_and_a_long_stream_are_not_cut(bounded: int) -> None:
    before = _count(bounded)
    sock = _connect(bounded)
    try:
        body = b'{"content": "Sent in two parts, quickly enough"}'
        sock.sendall(
            b"POST /api/v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:10]
        )
        time.sleep(0.3)
        sock.sendall(body[10:])
        answer = sock.recv(4096)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 201 "), answer
    assert _count(bounded) == before + 1
    # an SSE stream is a long answer to a request without a body: it outlives the deadlines
    with httpx2.stream("GET", f"http://127.0.0.1:{bounded}/sse", timeout=HANG_S) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        assert next(lines).startswith("event: endpoint")
        time.sleep(2.5)
        assert not stream.is_closed
