"""One caller against the others on a served `cortex-mcp serve --transport all` (issue 32,
items 4-6): MCP sessions one token opens, a stale token's refusals, a lifecycle run in a loop.

    python bench/fair_share.py                  # 2000 sessions from one token
    python bench/fair_share.py --sessions 5000 --lifecycle-s 5

Printed, for the server as configured by default and, beside it in the same run, for a server
whose session caps are lifted (the SDK's behaviour before the caps: 10,000 sessions, 30 min):
the server's RSS growth after one token opened `--sessions` sessions, how many of them are
still open, and another agent's `initialize` (status, ms); then how many of the admin's
requests from the stale token's address were served while the stale token was sent 50 times,
and how many of bob's lifecycle runs were done while alice ran hers in a loop.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.reader import open_tokens  # noqa: E402
from cortex_mcp.service.requests import TokenRequest, build  # noqa: E402
from tests.helpers.http_helpers import AUTH, ServeProcess  # noqa: E402

LEGACY = "2025-11-25"
HEADERS = {"Accept": "application/json, text/event-stream"}
UNCAPPED = {"CORTEX_MCP_SESSIONS_PER_CALLER": "10000", "CORTEX_MCP_SESSIONS_TOTAL": "10000"}


async def _tokens(db: Path) -> dict[str, str]:
    settings = load_settings(db_path=db, embedding_provider="none")
    async with open_tokens(settings) as tokens:
        return {
            a: str((await tokens.create(build(TokenRequest, agent=a)))["token"])
            for a in ("alice", "bob")
        }


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _initialize(client: httpx2.Client, token: str) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "b"}},
    }
    return client.post("/mcp", json=body, headers={**HEADERS, "Authorization": f"Bearer {token}"})


def _alive(client: httpx2.Client, token: str, session: str) -> bool:
    headers = {
        **HEADERS,
        "Authorization": f"Bearer {token}",
        "Mcp-Session-Id": session,
        "Mcp-Protocol-Version": LEGACY,
    }
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    return client.post("/mcp", json=ping, headers=headers).status_code == 200


def sessions(label: str, sessions: int, **env: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "brain.db"
        tokens = asyncio.run(_tokens(db))
        with ServeProcess(db, **env) as server, httpx2.Client(base_url=server.url, timeout=60) as c:
            _initialize(c, tokens["bob"])  # warm
            before = _rss_mib(server.proc.pid)
            started = time.perf_counter()
            opened = []
            for _ in range(sessions):
                reply = _initialize(c, tokens["alice"])
                if reply.status_code == 200:
                    opened.append(reply.headers["mcp-session-id"])
            took = time.perf_counter() - started
            after = _rss_mib(server.proc.pid)
            sample = opened[:: max(1, len(opened) // 200)]
            alive = sum(_alive(c, tokens["alice"], s) for s in sample) / max(1, len(sample))
            t0 = time.perf_counter()
            bob = _initialize(c, tokens["bob"])
            bob_ms = (time.perf_counter() - t0) * 1000
        print(
            f"{label:<22} {sessions:>6} opened in {took:5.1f} s  RSS +{after - before:6.1f} MiB"
            f"  still open ~{alive * len(opened):6.0f}  bob's initialize {bob.status_code}"
            f" in {bob_ms:.0f} ms"
        )


def throttle() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "brain.db"
        with ServeProcess(db) as server, httpx2.Client(base_url=server.url, timeout=30) as c:
            stale = [
                c.get("/api/v1/stats", headers={"Authorization": "Bearer stale"}).status_code
                for _ in range(50)
            ]
            admin = [c.get("/api/v1/stats", headers=AUTH).status_code for _ in range(50)]
        print(
            f"stale token: {stale.count(401)} x 401, {stale.count(429)} x 429;"
            f" the admin from the same address afterwards: {admin.count(200)} of 50 served"
        )


def lifecycle(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "brain.db"
        tokens = asyncio.run(_tokens(db))
        with ServeProcess(db) as server:
            for agent in ("alice", "bob"):
                for n in range(20):
                    body = {"content": f"{agent} note {n}", "agent_id": agent}
                    httpx2.post(server.url + "/api/v1/memories", json=body, headers=AUTH)
            stop = threading.Event()

            def run(agent: str) -> str:
                headers = {"Authorization": f"Bearer {tokens[agent]}"}
                url = server.url + "/api/v1/lifecycle/run"
                return str(httpx2.post(url, json={}, headers=headers, timeout=60).json()["status"])

            alices: list[str] = []
            loop = threading.Thread(
                target=lambda: [alices.append(run("alice")) for _ in iter(stop.is_set, True)]
            )
            loop.start()
            bobs = []
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                bobs.append(run("bob"))
            stop.set()
            loop.join()
        print(
            f"lifecycle: alice ran {len(alices)} times in a loop; bob's runs meanwhile:"
            f" {bobs.count('done')} done, {bobs.count('busy')} busy"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--lifecycle-s", type=float, default=5.0)
    args = parser.parse_args()
    sessions("caps lifted (before)", args.sessions, **UNCAPPED)
    sessions("default caps", args.sessions)
    throttle()
    lifecycle(args.lifecycle_s)


if __name__ == "__main__":
    main()
