"""Two `cortex-mcp serve` processes on one PostgreSQL (issue 17, acceptance 2).

Twenty REST clients spread over both servers remember, recall, send the same content to both
servers at once, and start lifecycle runs on both, while each server in turn is killed with
SIGKILL in the middle of the writes and started again. Then the database itself is read:
every acknowledged write is there, each content sent to both servers is stored once, and no
two lifecycle runs of one agent ever overlapped."""

from __future__ import annotations

import itertools
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cortex_mcp.models import to_iso
from tests.conftest import TEST_KNOBS
from tests.helpers.http_helpers import AUTH, ServeProcess

pytestmark = pytest.mark.slow

CLIENTS = 20
SECONDS = float(TEST_KNOBS.get("CORTEX_TEST_SERVERS_SECONDS", "24"))
API = "/api/v1"


@dataclass
class Tally:
    """What the clients were told, collected across threads."""

    acked: dict[str, str] = field(default_factory=dict)  # memory id -> content
    same: dict[str, set[str]] = field(default_factory=dict)  # content sent twice -> ids
    refused: int = 0  # writes that got no answer or a 5xx (a killed server): not acknowledged
    recalls: int = 0
    lifecycle: dict[str, int] = field(default_factory=dict)  # status -> count
    lock: threading.Lock = field(default_factory=threading.Lock)


class Cluster:
    """Two servers on one database; `urls` always names the live ones."""

    def __init__(self, tmp_path: Path, database_url: str) -> None:
        self.tmp_path = tmp_path
        self.database_url = database_url
        self.servers = [self._start(i) for i in range(2)]
        self.urls = [server.url for server in self.servers]
        self.killed_at: list[str] = []  # wall-clock ISO times, as the runs record theirs

    def _start(self, index: int) -> ServeProcess:
        server = ServeProcess(
            self.tmp_path / f"unused-{index}.db", CORTEX_DATABASE_URL=self.database_url
        )
        try:  # a start on a loaded 2-core machine, with 20 clients at work, takes its time
            server.wait_ready(timeout=240)
        except BaseException:
            server.stop(signal.SIGKILL)
            raise
        return server

    def kill_and_restart(self, index: int) -> None:
        self.servers[index].stop(signal.SIGKILL)
        self.killed_at.append(to_iso(datetime.now(UTC)))
        self.servers[index] = self._start(index)
        self.urls[index] = self.servers[index].url

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


ERRORS: list[str] = []


_local = threading.local()


def _post(url: str, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON answer, or None when the server was down or failed (never acknowledged)."""
    if not hasattr(_local, "client"):  # one client (and connection pool) per thread
        _local.client = httpx2.Client(headers=AUTH, timeout=30)
    try:
        response = _local.client.post(url + API + path, json=body)
    except httpx2.TransportError:
        return None
    if response.status_code >= 500:
        return None
    if response.status_code not in (200, 201):
        ERRORS.append(f"{path}: {response.status_code} {response.text[:200]}")
        return None
    return dict(response.json())


def _client(number: int, cluster: Cluster, tally: Tally, stop: threading.Event) -> None:
    rng = random.Random(number)
    home = number % 2
    sent = 0
    while not stop.is_set():
        sent += 1
        content = f"client {number} note {sent}: sensor {rng.randrange(10**6)} reads {sent * 7}"
        answer = _post(cluster.urls[home], "/memories", {"content": content})
        with tally.lock:
            if answer is None:
                tally.refused += 1
                home = 1 - home  # as a load balancer would: the other server, from now on
            else:
                tally.acked[answer["id"]] = content
        if sent % 4 == 0:
            answer = _post(cluster.urls[home], "/recall", {"query": f"client {number} sensor"})
            with tally.lock:
                tally.recalls += answer is not None
        time.sleep(0.02)  # twenty people's agents, not a load generator


def _both_at_once(cluster: Cluster, path: str, body: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The same request to both servers, released together."""
    answers: list[dict[str, Any] | None] = [None, None]
    gate = threading.Barrier(2)

    def send(index: int) -> None:
        gate.wait()
        answers[index] = _post(cluster.urls[index], path, body)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def _pairs(cluster: Cluster, tally: Tally, stop: threading.Event, name: str) -> None:
    """Idempotent remembers sent to both servers at once, and lifecycle runs on both."""
    sent = 0
    while not stop.is_set():
        sent += 1
        content = f"shared fact {name}{sent}: the gateway {sent} listens on port {8000 + sent}"
        for answer in _both_at_once(cluster, "/memories", {"content": content}):
            if answer is not None:
                with tally.lock:
                    tally.same.setdefault(content, set()).add(answer["id"])
                    tally.acked[answer["id"]] = content
        if sent % 3 == 0:
            for answer in _both_at_once(cluster, "/lifecycle/run", {}):
                status = "no answer" if answer is None else str(answer.get("status"))
                with tally.lock:
                    tally.lifecycle[status] = tally.lifecycle.get(status, 0) + 1


def _read_database(database_url: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        memories = dict(conn.execute("SELECT id, content FROM memories").fetchall())
        twins = conn.execute(
            "SELECT agent_id, content, COUNT(*) FROM memories GROUP BY agent_id, content"
            " HAVING COUNT(*) > 1"
        ).fetchall()
        runs = conn.execute(
            "SELECT id, scope, started_at, finished_at FROM lifecycle_runs ORDER BY started_at"
        ).fetchall()
    return {"memories": memories, "twins": twins, "runs": runs}


@pytest.mark.timeout(900)
def _overlapping(runs: list[tuple[Any, ...]], killed_at: list[str]) -> list[tuple[Any, ...]]:
    """Pairs of runs of one scope (an agent, whose lease it is) whose times overlap. A run that
    never finished was cut short by a kill (its row stays 'running' until a run of the same
    scope resumes it): it ends at the first kill after its start."""
    spans = []
    for run_id, scope, started, finished in runs:
        end = finished or min((k for k in killed_at if k > started), default="9999")
        spans.append((started, end, run_id, scope))
    spans.sort()
    by_scope = [[s for s in spans if s[3] == scope] for scope in {s[3] for s in spans}]
    return [(a, b) for one in by_scope for a, b in itertools.pairwise(one) if b[0] < a[1]]


def test_two_servers_on_one_postgres_lose_no_acknowledged_write_through_kills(
    tmp_path: Path, pg_url: str
) -> None:
    cluster = Cluster(tmp_path, pg_url)
    tally = Tally()
    stop = threading.Event()
    workers = [
        threading.Thread(target=_client, args=(n, cluster, tally, stop)) for n in range(CLIENTS)
    ]
    workers += [threading.Thread(target=_pairs, args=(cluster, tally, stop, name)) for name in "AB"]
    started = time.monotonic()
    try:
        for worker in workers:
            worker.start()
        for index in (0, 1):  # each server killed in turn, mid-write
            time.sleep(SECONDS / 3)
            cluster.kill_and_restart(index)
        time.sleep(max(0.0, SECONDS - (time.monotonic() - started)))
    finally:
        stop.set()
        for worker in workers:
            worker.join(60)
        cluster.stop()
    found = _read_database(pg_url)

    lost = {i: c for i, c in tally.acked.items() if found["memories"].get(i) != c}
    duplicated = {c: ids for c, ids in tally.same.items() if len(ids) > 1}
    overlapping = _overlapping(found["runs"], cluster.killed_at)
    print(
        f"\n{len(tally.acked)} acknowledged writes ({len(tally.same)} contents sent to both"
        f" servers at once), {tally.recalls} recalls, {tally.refused} writes unanswered"
        f" through {len(cluster.killed_at)} kills; lifecycle answers {tally.lifecycle},"
        f" {len(found['runs'])} runs; lost {len(lost)}, duplicated {len(duplicated)},"
        f" overlapping runs {len(overlapping)}"
    )
    assert ERRORS == []
    assert len(cluster.killed_at) == 2 and tally.refused > 0, "no write met a killed server"
    assert len(tally.acked) > 20 * CLIENTS and len(tally.same) >= 5 and tally.recalls > 0
    assert lost == {}
    assert duplicated == {} and found["twins"] == []
    assert tally.lifecycle.get("busy", 0) + len(found["runs"]) >= 2
    assert overlapping == [], found["runs"]
