"""The embedding fault matrix: recall latency and outcome in each way a provider breaks.

    python bench/provider_faults.py                 # 1000 memories, 1 s provider timeout
    python bench/provider_faults.py --memories 300 --no-stdio

The real openai SDK talks to tests/helpers/embedding_stub.py on 127.0.0.1. For each fault mode it
prints: the first recall's latency (it may pay the timeout), how many recalls it took for the
circuit to open, recall p50 once the circuit is open and its ratio to text-only recall on the
same file, measured query by query in turn (no provider: the strongest simple baseline), what stats reported, and
how long the backfill took after the stub recovered. Then over stdio: remember and recall p50
against the healthy stub, and the exit code of a server shut down in each mode.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402

from cortex_mcp.config import Settings, load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from tests.helpers.embedding_stub import FAULT_MODES, StubState, embedding_stub  # noqa: E402
from tests.helpers.stdio_helpers import RawStdioServer, server_command, server_env  # noqa: E402

TOPICS = "firewall budget flight ramen invoice cluster garden piano tennis museum".split()
PEOPLE = "Harry Alice Bob Mei Kenji Sofia".split()


def _memory(rng: random.Random, i: int) -> str:
    return (
        f"{rng.choice(PEOPLE)} mentioned the {rng.choice(TOPICS)} and the "
        f"{rng.choice(TOPICS)} on day {i} ({rng.randint(1000, 9999)})"
    )


def _query(rng: random.Random) -> str:
    return f"what about the {rng.choice(TOPICS)} {rng.choice(PEOPLE)} mentioned?"


def _settings(db: Path, url: str | None, timeout_s: float) -> Settings:
    if url is None:
        return load_settings(db_path=db, embedding_provider="none")
    return load_settings(
        db_path=db,
        embedding_provider="openai",
        embedding_base_url=url,
        embedding_model="stub-embed",
        embedding_timeout_s=timeout_s,
    )


async def _recall_ms(service: CortexService, query: str) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await service.memories.recall(RecallRequest(query=query))
    return (time.perf_counter() - started) * 1000, result


async def _p50(service: CortexService, queries: list[str]) -> float:
    return statistics.median([(await _recall_ms(service, q))[0] for q in queries])


async def _interleaved_p50(service: CortexService, queries: list[str]) -> tuple[float, float]:
    """Recall p50 as configured, and text-only p50 (no provider) on the same file and process,
    query by query in turn so that load on the machine weighs on both alike."""
    configured, text_only = [], []
    providers = service.engines.embeddings.providers
    for query in queries:
        configured.append((await _recall_ms(service, query))[0])
        service.engines.embeddings.providers = []
        try:
            text_only.append((await _recall_ms(service, query))[0])
        finally:
            service.engines.embeddings.providers = providers
    return statistics.median(configured), statistics.median(text_only)


async def _fill(db: Path, url: str, n: int, timeout_s: float) -> None:
    rng = random.Random(7)
    async with open_cortex(_settings(db, url, timeout_s), background=False) as service:
        for i in range(n):
            await service.memories.remember(RememberRequest(content=_memory(rng, i)))
        await service.embed_pending()


async def _one_mode(
    mode: str, db: Path, url: str, state: StubState, args: argparse.Namespace
) -> dict[str, Any]:
    rng = random.Random(mode)
    queries = [_query(rng) for _ in range(args.queries)]
    row: dict[str, Any] = {"mode": mode}
    async with open_cortex(_settings(db, url, args.timeout)) as service:
        service.start_warm_up()
        await _p50(service, queries[:5])  # warm: SDK imported, matrix loaded
        state.mode = mode
        for i in range(2):
            await service.memories.remember(
                RememberRequest(content=f"Written during the {mode} fault, note {i}")
            )
        row["first_ms"], first = await _recall_ms(service, queries[0])
        row["outcome"] = "+".join(first.meta.channels)
        row["degraded"] = first.meta.degraded[0] if first.meta.degraded else ""
        to_open = 1
        while not service.engines.embeddings.health["openai"].is_open and to_open < 10:
            await _recall_ms(service, queries[to_open % len(queries)])
            to_open += 1
        health = service.engines.embeddings.health["openai"]
        row["recalls_to_open"] = to_open if health.is_open else None
        row["p50_ms"], row["text_p50_ms"] = await _interleaved_p50(service, queries)
        stats = (await service.status.stats())["embeddings"]
        row["state"] = stats["health"]["openai"]["state"]
        row["last_error"] = (
            stats["health"]["openai"]["last_error"] or stats["indexer"]["last_error"]
        )
        row["rejected"] = stats["health"]["openai"]["rejected_vectors"]
        before = sum((await service.status.stats())["vectors"].values())
        state.recover()
        started = time.perf_counter()
        await service.memories.recall(
            RecallRequest(query=queries[0])
        )  # agents keep recalling; it may carry pending rows
        backfilled = None
        while time.perf_counter() - started < args.backfill_wait:
            vectors = sum((await service.status.stats())["vectors"].values())
            if (
                vectors >= args.memories + 2
                and not service.engines.embeddings.health["openai"].is_open
            ):
                backfilled = time.perf_counter() - started
                break
            await asyncio.sleep(0.05)
        row["backfill_s"] = backfilled
        row["missing_before"] = args.memories + 2 - before
    return row


async def _stdio_latency(db: Path, url: str, n: int) -> tuple[float, float]:
    command, *rest = server_command()
    env = server_env(
        db,
        CORTEX_EMBEDDING_PROVIDER="openai",
        CORTEX_EMBEDDING_BASE_URL=url,
        CORTEX_EMBEDDING_MODEL="stub-embed",
        CORTEX_LOG_LEVEL="WARNING",
    )
    rng = random.Random(3)
    remember, recall = [], []
    params = StdioServerParameters(command=command, args=rest, env=env)
    async with Client(params, mode="legacy") as client:
        for i in range(10):
            await client.call_tool("cortex_remember", {"content": f"warm-up note {i}"})
        for i in range(n):
            started = time.perf_counter()
            await client.call_tool("cortex_remember", {"content": _memory(rng, 10_000 + i)})
            remember.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await client.call_tool("cortex_recall", {"query": _query(rng)})
            recall.append((time.perf_counter() - started) * 1000)
    return statistics.median(remember), statistics.median(recall)


def _stdio_exit_codes(tmp: Path, url: str, state: StubState, timeout_s: float) -> dict[str, int]:
    codes = {}
    for mode in FAULT_MODES:
        state.recover()
        state.mode = mode
        server = RawStdioServer(
            tmp / f"exit-{mode}.db",
            CORTEX_EMBEDDING_PROVIDER="openai",
            CORTEX_EMBEDDING_BASE_URL=url,
            CORTEX_EMBEDDING_MODEL="stub-embed",
            CORTEX_EMBEDDING_TIMEOUT_S=str(timeout_s),
        )
        try:
            server.initialize()
            server.call_tool("cortex_remember", {"content": "The VPS firewall blocks port 8080"})
            server.call_tool("cortex_recall", {"query": "firewall port"})
        finally:
            codes[mode] = server.close()
    state.recover()
    return codes


def _fmt(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


async def run(args: argparse.Namespace) -> None:
    with embedding_stub() as (url, state), tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        rng = random.Random(1)
        queries = [_query(rng) for _ in range(args.queries)]
        rows = []
        for mode in FAULT_MODES:
            db = tmp / f"{mode}.db"
            await _fill(db, url, args.memories, args.timeout)
            rows.append(await _one_mode(mode, db, url, state, args))
            state.recover()
        db = tmp / "baseline.db"
        await _fill(db, url, args.memories, args.timeout)
        async with open_cortex(_settings(db, url, args.timeout)) as service:
            service.start_warm_up()
            await _p50(service, queries[:5])
            hybrid_p50, text_p50 = await _interleaved_p50(service, queries)
        stdio = (
            await _stdio_latency(tmp / "stdio.db", url, args.stdio_calls) if args.stdio else None
        )
        codes = _stdio_exit_codes(tmp, url, state, args.timeout) if args.stdio else {}

    print(
        f"{args.memories} memories, provider timeout {args.timeout:g} s, "
        f"{args.queries} queries per p50 (in-process recall)\n"
    )
    print(f"healthy stub: hybrid recall p50 {hybrid_p50:.2f} ms, text-only p50 {text_p50:.2f} ms\n")
    print(
        "| mode | first recall | outcome | degraded (first recall) | recalls to open |"
        " recall p50 after | text-only p50 (same run) | ratio | stats | rejected |"
        " backfill after recovery | stdio exit |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['mode']} | {r['first_ms']:.0f} ms | {r['outcome']} | {r['degraded'][:70]} |"
            f" {r['recalls_to_open'] or 'stays closed'} | {r['p50_ms']:.2f} ms |"
            f" {r['text_p50_ms']:.2f} ms | {r['p50_ms'] / r['text_p50_ms']:.2f}x | {r['state']}: {(r['last_error'] or '')[:50]} |"
            f" {r['rejected']} | {_fmt(r['backfill_s'], ' s')} ({r['missing_before']} missing) |"
            f" {codes.get(r['mode'], '-')} |"
        )
    if stdio is not None:
        print(
            f"\nstdio, healthy stub: remember p50 {stdio[0]:.2f} ms,"
            f" recall p50 (right after each remember) {stdio[1]:.2f} ms"
        )


def main() -> None:
    logging.basicConfig(level=logging.ERROR)  # the faults are the point: keep their warnings out
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--backfill-wait", type=float, default=30.0)
    parser.add_argument("--stdio-calls", type=int, default=200)
    parser.add_argument("--no-stdio", dest="stdio", action="store_false")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
