"""What checking a credential costs per request: the admin token (a constant-time compare), an
agent token found in the 1 s cache, and an agent token looked up in the database (salted
HMAC-SHA256 of its secret), on a SQLite file; and a whole REST request (`GET /api/v1/relations`)
(its agent's relations) with the admin token against an agent token, through the served app in process.

    python bench/tokens.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import tokens as token_module
from cortex_mcp.service.requests import TokenRequest, build
from cortex_mcp.transports.http import create_app

ADMIN = "bench-admin-token"


async def _median_us(call: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


async def _identify(db: Path, rounds: int) -> list[tuple[str, float]]:
    settings = load_settings(db_path=db, embedding_provider="none", api_token=ADMIN)
    async with open_tokens(settings) as tokens:
        agent = (await tokens.create(build(TokenRequest, agent="alice")))["token"]
        rows = [
            ("identify: admin token", await _median_us(lambda: tokens.identify(ADMIN), rounds)),
            (
                "identify: agent token, cached",
                await _median_us(lambda: tokens.identify(agent), rounds),
            ),
        ]
        token_module.CACHE_SECONDS = 0.0
        rows.append(
            (
                "identify: agent token, database",
                await _median_us(lambda: tokens.identify(agent), rounds),
            )
        )
        token_module.CACHE_SECONDS = 1.0
        return rows


def _requests(db: Path, rounds: int) -> list[tuple[str, float]]:
    settings = load_settings(
        db_path=db, embedding_provider="none", api_token=ADMIN, auth_failures_per_minute=10_000
    )
    agent = asyncio.run(_agent_token(settings))
    app = create_app(settings, lambda: open_cortex(settings))
    rows = []
    with TestClient(app, base_url="http://127.0.0.1:21100") as client:
        for label, token in (
            ("GET /relations: admin token", ADMIN),
            ("GET /relations: agent token", agent),
        ):
            headers = {"Authorization": f"Bearer {token}"}
            for _ in range(20):  # warm up
                client.get("/api/v1/relations", headers=headers)
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                reply = client.get("/api/v1/relations", headers=headers)
                times.append(time.perf_counter() - started)
                assert reply.status_code == 200, reply.text
            rows.append((label, statistics.median(times) * 1e6))
    return rows


async def _agent_token(settings: object) -> str:
    async with open_tokens(settings) as tokens:  # type: ignore[arg-type]
        return str((await tokens.create(build(TokenRequest, agent="bob")))["token"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        rows = asyncio.run(_identify(db, args.rounds))
        rows += _requests(db, max(50, args.rounds // 10))
    print(f"{'what':<36} {'median µs':>10}")
    for label, median in rows:
        print(f"{label:<36} {median:>10.1f}")


if __name__ == "__main__":
    main()
