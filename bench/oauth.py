"""What an identity provider's JWT access token costs per REST request (issue 35, acceptance
5): `POST /api/v1/recall` through the served app in process, on a SQLite file, with the admin
token, an agent token (`cxt_`) and a JWT (RS256, its key fetched once from a provider on
loopback and cached), interleaved round by round so drift hits all three alike; then the
credential check alone (`TokenService.identify`) for each. Prints medians (p50) and the JWT's
extra cost over each of the other two.

    python bench/oauth.py [--rounds 1000]
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

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import TokenRequest, build
from cortex_mcp.transports.http import create_app
from tests.helpers.issuer import LocalIssuer

ADMIN = "bench-admin-token"
PUBLIC = "http://127.0.0.1:21100"


def _settings(db: Path, issuer: LocalIssuer) -> Settings:
    return load_settings(
        db_path=db,
        embedding_provider="none",
        api_token=ADMIN,
        oauth_issuer=issuer.url,
        public_url=PUBLIC,
        auth_failures_per_minute=10_000,
    )


async def _agent_token(settings: Settings) -> str:
    async with open_tokens(settings) as tokens:
        return str((await tokens.create(build(TokenRequest, agent="bob")))["token"])


def _requests(settings: Settings, tokens: dict[str, str], rounds: int) -> dict[str, float]:
    app = create_app(settings, lambda: open_cortex(settings))
    times: dict[str, list[float]] = {label: [] for label in tokens}
    # every credential asks about the same agent's memories (the admin names it)
    body = {"query": "what does bob like", "max_results": 5, "agent_id": "bob"}
    with TestClient(app, base_url=PUBLIC) as client:
        seed = {"content": "Bob likes rowing", "agent_id": "bob"}
        client.post("/api/v1/memories", json=seed, headers=_h(ADMIN))
        order = list(tokens)
        for n in range(rounds + 20):
            for label in order[n % 3 :] + order[: n % 3]:  # a different one first each round
                started = time.perf_counter()
                reply = client.post("/api/v1/recall", json=body, headers=_h(tokens[label]))
                elapsed = time.perf_counter() - started
                assert reply.status_code == 200, (label, reply.text)
                if n >= 20:  # warm-up rounds left out
                    times[label].append(elapsed)
    return {label: statistics.median(t) * 1e3 for label, t in times.items()}


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _identify(settings: Settings, tokens: dict[str, str], rounds: int) -> dict[str, float]:
    async with open_tokens(settings) as service:
        found = {}
        for label, token in tokens.items():
            await service.identify(token)  # the JWKS fetched, the agent token cached
            found[label] = await _median_us(lambda t=token: service.identify(t), rounds)
        return found


async def _median_us(call: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, LocalIssuer().serving() as issuer:
        settings = _settings(Path(folder) / "bench.db", issuer)
        tokens = {
            "admin token": ADMIN,
            "agent token (cxt_)": asyncio.run(_agent_token(settings)),
            "JWT (RS256, cached key)": issuer.token(
                subject="bob", audience=PUBLIC, lifetime_s=3600
            ),
        }
        per_request = _requests(settings, tokens, args.rounds)
        per_check = asyncio.run(_identify(settings, tokens, args.rounds * 5))
    print(f"POST /api/v1/recall, {args.rounds} interleaved rounds")
    print(f"{'credential':<26} {'p50 request ms':>15} {'p50 check µs':>13}")
    for label in tokens:
        print(f"{label:<26} {per_request[label]:>15.3f} {per_check[label]:>13.1f}")
    jwt_label = "JWT (RS256, cached key)"
    for other in ("admin token", "agent token (cxt_)"):
        extra = per_request[jwt_label] - per_request[other]
        print(f"JWT over {other}: {extra:+.3f} ms a request (target: < 0.2 ms)")


if __name__ == "__main__":
    main()
