"""One agent's lifecycle never holds up another's, on a served `cortex-mcp serve` over SQLite
and PostgreSQL: while alice's lease is held (by another process) or alice runs her lifecycle
in a loop, bob's runs are done every time and the operator's `cortex-mcp lifecycle run` runs
every other agent and reports alice busy; a busy answer names no host or process (the
server's log does)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from cortex_mcp.config import Settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.service.requests import TokenRequest, build
from tests.helpers.http_helpers import AUTH, ServeProcess
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
API = "/api/v1"
NOW = "2027-06-01T03:00:00+00:00"
AGENTS = ("alice", "bob", "carol")
WORKER = [sys.executable, "-m", "tests.helpers.lifecycle_worker"]


def _env(settings: Settings) -> dict[str, str]:
    if settings.database_url is None:
        return {}
    return {"CORTEX_DATABASE_URL": settings.database_url.get_secret_value()}


async def _tokens(settings: Settings) -> dict[str, str]:
    async with open_tokens(settings) as tokens:
        made = [await tokens.create(build(TokenRequest, agent=a)) for a in AGENTS]
        return {agent: str(token["token"]) for agent, token in zip(AGENTS, made, strict=True)}


@pytest.fixture
def served(backend_settings: Settings) -> Iterator[tuple[ServeProcess, dict[str, str]]]:
    tokens = anyio.run(_tokens, backend_settings)
    with ServeProcess(backend_settings.db_path, **_env(backend_settings)) as server:
        for agent in AGENTS:
            for n in range(3):
                body = {"content": f"{agent}'s working note {n}", "agent_id": agent}
                reply = httpx2.post(server.url + API + "/memories", json=body, headers=AUTH)
                assert reply.is_success, reply.text
        yield server, tokens


def _run(server: ServeProcess, token: str) -> dict[str, Any]:
    reply = httpx2.post(
        server.url + API + "/lifecycle/run",
        json={},
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _operator(settings: Settings) -> tuple[int, dict[str, Any], str]:
    """`cortex-mcp lifecycle run --json`, every agent, as the operator runs it."""
    done = subprocess.run(
        [*server_command(), "lifecycle", "run", "--json"],
        env=server_env(settings.db_path, **_env(settings)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def _hold(settings: Settings, gate: Path, agent: str) -> subprocess.Popen[str]:
    """Another process that takes `agent`'s lease and keeps it until `gate` exists."""
    worker = subprocess.Popen(
        [*WORKER, str(settings.db_path), NOW, "hold", str(gate), agent],
        cwd=ROOT,
        env=server_env(settings.db_path, **_env(settings)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not Path(f"{gate}.started").exists():
        assert time.monotonic() < deadline and worker.poll() is None, worker.communicate()
        time.sleep(0.02)
    return worker


def test_while_alices_lease_is_held_bob_and_the_operator_run_and_alice_learns_no_host(
    served: tuple[ServeProcess, dict[str, str]], backend_settings: Settings, tmp_path: Path
) -> None:
    server, tokens = served
    gate = tmp_path / "gate"
    holder = _hold(backend_settings, gate, "alice")
    try:
        with ThreadPoolExecutor(2) as pool:  # alice's, carol's and bob's runs at once
            alices = pool.submit(_run, server, tokens["alice"])
            carols = pool.submit(_run, server, tokens["carol"])
            reports = [_run(server, tokens["bob"]) for _ in range(3)]
            alice, carol = alices.result(), carols.result()
        code, operator, err = _operator(backend_settings)
    finally:
        gate.write_text("go")
        out, _ = holder.communicate(timeout=60)
    assert [r["status"] for r in [*reports, carol]] == ["done"] * 4
    assert alice["status"] == "busy" and alice["busy_agents"] == ["alice"]
    for secret in (socket.gethostname(), str(holder.pid), str(server.proc.pid)):
        assert secret not in json.dumps(alice) and secret not in json.dumps(operator)
    # the operator's run is not refused: every other agent ran, alice is reported busy
    assert code == 0 and operator["status"] == "done", (operator, err)
    assert operator["busy_agents"] == ["alice"] and "skipped" in err
    assert len(operator["run_ids"]) == 2  # bob's and carol's
    assert json.loads(out)["status"] == "done"
    # the server's log names who held the lease (host and process), for the operator
    log = server.log.read_text(errors="replace")
    assert f"{socket.gethostname()}:{holder.pid}:" in log
    assert _run(server, tokens["alice"])["status"] == "done"


def test_while_alice_runs_her_lifecycle_in_a_loop_bob_and_the_operator_are_never_refused(
    served: tuple[ServeProcess, dict[str, str]], backend_settings: Settings
) -> None:
    server, tokens = served
    stop = threading.Event()
    alices: list[str] = []

    def loop() -> None:
        while not stop.is_set():
            alices.append(_run(server, tokens["alice"])["status"])

    looping = threading.Thread(target=loop)
    looping.start()
    try:
        while not alices:
            time.sleep(0.01)
        bobs = [_run(server, tokens["bob"])["status"] for _ in range(5)]
        code, operator, err = _operator(backend_settings)
    finally:
        stop.set()
        looping.join(timeout=120)
    assert bobs == ["done"] * 5
    assert code == 0 and operator["status"] == "done", (operator, err)
    assert set(operator["busy_agents"]) <= {"alice"}
    assert len(operator["run_ids"]) + len(operator["busy_agents"]) == len(AGENTS)
    # alice's own runs are busy only while the operator's run has her turn
    assert "done" in alices and set(alices) <= {"done", "busy"}
