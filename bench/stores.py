"""SQLite and PostgreSQL side by side (issue 17, acceptance 3): recall p50/p95, text only and
with vectors, and remember throughput, one after another and from concurrent clients, at
10K and 1M memories, with the same data and the same queries on both stores.

    python bench/stores.py                                  # 10000,1000000
    python bench/stores.py --sizes 10000 --queries 50
    python bench/stores.py --database-url postgresql://u:p@host/postgres  # your server

The data is bench/scale_data.py's cached database of each size (six agents from 55% to
0.5% of the memories, English, Chinese and Japanese, 384-dim vectors of its deterministic
model; built once under /tmp/cortex-scale and only read here). SQLite is measured on a copy
of it (SQLite's backup API: the remembers and access counts must not change the cache);
PostgreSQL gets the same rows with `cortex-mcp migrate`'s engine (timed: the bulk copy at that
size) into a fresh database on an embedded PostgreSQL 16 with pgvector (pgserver, in a
temporary folder removed at the end; its default settings) or on the server of
`--database-url` (a user who may CREATE DATABASE).

The queries are recall_scale.py's (a few words of a memory, asked as the agent that owns it; a
fifth generic), the same list on both stores. Through the service (`open_cortex`, the path
every transport takes), on each store in turn:
- text recall p50/p95: recalls with no embedding provider;
- the first recall with vectors of each agent (it builds the agent's vector index), summed;
- hybrid recall p50/p95: the query embedded in-process by the data's own model (no network);
- remember/s: `--remembers` new memories one after another, then the same number from
  `--clients` concurrent tasks (PostgreSQL writes through its pool; SQLite has one writer).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as cortex_mcp does; numpy loads first here

from bench.pg import postgres_databases  # noqa: E402
from bench.recall_scale import make_queries  # noqa: E402
from bench.scale_data import MODEL, ScaleEmbedder, ensure  # noqa: E402
from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.engine.exchange.migrate import migrate  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402

WARM = 10
TOPICS = "garden invoice router passport piano mortgage backup concert lease".split()
PLACES = "Berlin Tokyo Lisbon Osaka Austin Nairobi Oslo Lyon Seoul Quito".split()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def new_fact(rng: random.Random, n: int) -> str:
    return f"Bench note {n}: the {rng.choice(TOPICS)} in {rng.choice(PLACES)} on day {n % 28 + 1}"


def copy_sqlite(source: Path, target: Path) -> float:
    """A consistent copy of the cached file (another process may be reading or writing it)."""
    started = time.perf_counter()
    os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o600))  # private, as cortex-mcp makes it
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst, pages=65_536)
    finally:
        dst.close()
        src.close()
    return time.perf_counter() - started


def settings_for(store: str, location: str) -> Any:
    extra: dict[str, Any] = {"database_url": location} if store == "postgres" else {}
    return load_settings(
        db_path=Path(location) if store == "sqlite" else Path("unused.db"),
        embedding_provider="openai",
        embedding_base_url="http://127.0.0.1:9/v1",  # never called: the provider is in-process
        embedding_model=MODEL,
        **extra,
    )


async def timed_recalls(service: CortexService, queries: list[tuple[str, str]]) -> list[float]:
    took = []
    for agent, question in queries:
        started = time.perf_counter()
        await service.memories.recall(RecallRequest(query=question, agent_id=agent, max_results=10))
        took.append((time.perf_counter() - started) * 1000)
    await service.drain()
    return took


async def remembers(service: CortexService, count: int, clients: int, first: int) -> float:
    """Remembers per second of `count` new memories from `clients` concurrent tasks."""
    rng = random.Random(first)
    per_client = count // clients

    async def client(k: int) -> None:
        for n in range(per_client):
            await service.memories.remember(
                RememberRequest(content=new_fact(rng, first + k * per_client + n), agent_id="main")
            )

    started = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    return per_client * clients / (time.perf_counter() - started)


async def measure(settings: Any, queries: list[tuple[str, str]], args: Any) -> dict[str, float]:
    figures: dict[str, float] = {}
    warm, timed = queries[:WARM], queries[WARM:]
    async with open_cortex(settings, background=False) as service:
        service.engines.embeddings.providers = []  # text only
        await timed_recalls(service, warm)
        text = await timed_recalls(service, timed)
        figures["text_p50"], figures["text_p95"] = statistics.median(text), pct(text, 0.95)
        service.engines.embeddings.providers = [ScaleEmbedder()]
        started = time.perf_counter()
        for agent in sorted({agent for agent, _ in queries}):  # each agent's vector index
            await service.memories.recall(RecallRequest(query="warm up", agent_id=agent))
        figures["index_s"] = time.perf_counter() - started
        await timed_recalls(service, warm)
        hybrid = await timed_recalls(service, timed)
        figures["hybrid_p50"], figures["hybrid_p95"] = statistics.median(hybrid), pct(hybrid, 0.95)
        figures["serial"] = await remembers(service, args.remembers, 1, 10_000_000)
        figures["parallel"] = await remembers(service, args.remembers, args.clients, 20_000_000)
    return figures


class PhaseLog:
    """Each phase of the copy as it starts, with the seconds since the copy began."""

    def __init__(self, started: float) -> None:
        self.started, self.phase = started, ""

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if phase != self.phase:
            self.phase = phase
            took = time.perf_counter() - self.started
            print(f"  {took:7.1f} s  {phase} ({total or 0:,} rows)", file=sys.stderr, flush=True)


async def run_size(size: int, args: Any, folder: Path, fresh: Any) -> list[tuple[str, Any]]:
    cache = await ensure(size, vectors=True)
    queries = make_queries(cache, args.queries + WARM, seed=size)
    work = folder / f"work-{size}.db"
    print(f"{size:,}: SQLite copy in {copy_sqlite(cache, work):.0f} s", file=sys.stderr)
    pg_url = fresh(f"cortex_bench_{size}")
    started = time.perf_counter()
    report = await migrate(str(cache), pg_url, progress=PhaseLog(started))
    seconds = time.perf_counter() - started
    memories = next(t.rows for t in report.tables if t.table == "memories")
    print(
        f"{size:,}: migrate to PostgreSQL {report.rows:,} rows in {seconds:.0f} s"
        f" ({memories / seconds:,.0f} memories/s, load {os.getloadavg()[0]:.1f})"
    )
    rows = []
    for store, location in (("sqlite", str(work)), ("postgres", pg_url)):
        figures = await measure(settings_for(store, location), queries, args)
        figures["load"] = os.getloadavg()[0]
        rows.append((store, figures))
        print(f"  {store}: {figures}", file=sys.stderr)
    work.unlink(missing_ok=True)
    fresh(f"cortex_bench_{size}")  # emptied again: the next size has the disk
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,1000000", help="comma-separated memory counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=400)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--database-url", help="a PostgreSQL server (default: embedded)")
    args = parser.parse_args()
    results = []
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cortex-stores-")))
        fresh = stack.enter_context(postgres_databases(args.database_url))
        for size in [int(s) for s in args.sizes.split(",")]:
            for store, figures in asyncio.run(run_size(size, args, folder, fresh)):
                results.append((size, store, figures))
    print(
        f"\n{args.queries} recalls of 10 (the same queries on both stores); {args.remembers}"
        f" remembers one after another, then {args.remembers} from {args.clients} clients;"
        f" {os.cpu_count()} CPUs"
    )
    print(
        "| memories | store | text p50 / p95 ms | hybrid p50 / p95 ms | vector indexes built s"
        f" | remember/s (1) | remember/s ({args.clients}) | load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size, store, f in results:
        print(
            f"| {size:,} | {store} | {f['text_p50']:.1f} / {f['text_p95']:.1f}"
            f" | {f['hybrid_p50']:.1f} / {f['hybrid_p95']:.1f} | {f['index_s']:.1f}"
            f" | {f['serial']:.0f} | {f['parallel']:.0f} | {f['load']:.1f} |"
        )


if __name__ == "__main__":
    main()
