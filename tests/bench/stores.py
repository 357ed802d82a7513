"""SQLite and PostgreSQL side by side (issue 17, acceptance 3): recall p50/p95 and remember
throughput on each store at a few sizes, on the same memories and the same queries.

    python tests/bench/stores.py --sizes 10000
    python tests/bench/stores.py --sizes 10000,1000000 --keep ~/cortex-bench   # build once, reuse
    python tests/bench/stores.py --database-url postgresql://u:p@host/postgres  # your server

Each size is built once as a SQLite file through the store's bulk row writer (the one
`cortex-mcp migrate` uses): one agent's memories of every layer dated over a year, each with
a vector of `--dim` dimensions from the local embedding stub (hashed word stems: texts sharing
words are close). PostgreSQL gets the same rows with `cortex-mcp migrate`'s engine, into a
fresh database on an embedded PostgreSQL 16 with pgvector (pgserver; the dev extra brings it)
or on the server of `--database-url` (a user who may CREATE DATABASE).

Then, through the service (`open_cortex`, the path every transport takes), on each store:
- the first recall, which builds or loads the vector index (vec0 or numpy on SQLite, exact
  scan or HNSW past its size on PostgreSQL);
- recall p50/p95 over `--queries` hybrid recalls (the query embedded by the stub over HTTP,
  the same cost on both stores);
- remember throughput: `--remembers` new memories one after the other, and again from 8 tasks
  at once (PostgreSQL writes in parallel through its pool; SQLite has one writer).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.engine.exchange.migrate import migrate  # noqa: E402
from cortex_mcp.models import new_id, to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.store.copy import SqliteTarget  # noqa: E402
from cortex_mcp.store.tables import table  # noqa: E402
from cortex_mcp.tokenize import content_hash  # noqa: E402
from tests.bench.pg import postgres_databases  # noqa: E402
from tests.embedding_stub import StubState, embedding_stub, stub_vector  # noqa: E402

MODEL = "stub-embed"
AGENT = "bench"
BATCH = 5000
SUBJECTS = (
    "Harry Alice Bob Mei Kenji Sofia Omar Lena Priya Tomas Yuki Chen Grace Ivan Nadia Pablo"
    " the-team the-landlord our-client the-dentist the-bank the-school"
).split()
VERBS = (
    "prefers bought deployed fixed reviewed scheduled moved cancelled planned visited sold"
    " painted booked repaired renewed returned ordered shipped audited upgraded"
).split()
TOPICS = (
    "budget firewall vps apartment meeting invoice kubernetes travel cat dentist garden"
    " router laptop lease insurance passport concert recipe bicycle piano backup printer"
    " contract mortgage holiday wedding newsletter database certificate subscription"
).split()
PLACES = "Berlin Tokyo Lisbon Osaka Austin Nairobi Oslo Lyon Seoul Quito".split()


def fact(rng: random.Random, n: int) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} in"
        f" {rng.choice(PLACES)} (note {n}) on day {rng.randint(1, 28)}"
    )


def question(rng: random.Random) -> str:
    return f"when did {rng.choice(SUBJECTS)} look at the {rng.choice(TOPICS)}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def memory_pages(size: int, dim: int) -> Iterator[tuple[list[Any], list[Any]]]:
    """Memory rows and vector rows, in pages, as `store.tables` describes them."""
    rng = random.Random(size)
    first = datetime(2025, 11, 1, tzinfo=UTC)
    layers = ["core"] * 6 + ["archive"] * 3 + ["working"]
    for offset in range(0, size, BATCH):
        memories, vectors = [], []
        for n in range(offset, min(size, offset + BATCH)):
            content = fact(rng, n)
            moment = to_iso(first + timedelta(minutes=n * 525_600 // size))
            memory_id = new_id()
            memories.append(
                (
                    n + 1,
                    memory_id,
                    AGENT,
                    rng.choice(layers),
                    "fact",
                    content,
                    content_hash(content),
                    None,
                    0.5,
                    0.8,
                    1.0,
                    0,
                    None,
                    moment,
                    moment,
                    None,
                    None,
                    None,
                    "{}",
                    0,
                )
            )
            blob = stub_vector(content, dim).astype("<f4").tobytes()
            vectors.append((memory_id, MODEL, dim, blob, moment))
        yield memories, vectors


async def build_sqlite(path: Path, size: int, dim: int) -> float:
    started = time.perf_counter()
    target = SqliteTarget(path)
    await target.open()
    try:
        for done, (memories, vectors) in enumerate(memory_pages(size, dim), 1):
            await target.write(table("memories"), memories)
            await target.write(table("memory_vectors"), vectors)
            print(f"\r  building {min(done * BATCH, size):,}/{size:,}", end="", file=sys.stderr)
        await target.commit()
    except BaseException:
        await target.abort()
        raise
    print(file=sys.stderr)
    return time.perf_counter() - started


def settings_for(store: str, location: str, embed_url: str, dim: int) -> Any:
    extra: dict[str, Any] = {"database_url": location} if store == "postgres" else {}
    return load_settings(
        db_path=Path(location) if store == "sqlite" else Path("unused.db"),
        embedding_provider="openai",
        embedding_base_url=embed_url,
        embedding_model=MODEL,
        embedding_dimensions=dim,
        embedding_timeout_s=60.0,
        **extra,
    )


async def measure(settings: Any, queries: int, remembers: int, size: int) -> dict[str, float]:
    rng = random.Random(7)
    figures: dict[str, float] = {}
    async with open_cortex(settings, background=False) as service:
        t0 = time.perf_counter()
        first = await service.recall(question(rng), agent_id=AGENT, max_results=10)
        figures["first_ms"] = (time.perf_counter() - t0) * 1000
        if first.meta.degraded:
            print(f"  degraded: {first.meta.skipped_reason}", file=sys.stderr)
        took = []
        for _ in range(queries):
            t0 = time.perf_counter()
            await service.recall(question(rng), agent_id=AGENT, max_results=10)
            took.append((time.perf_counter() - t0) * 1000)
        figures["p50"], figures["p95"] = statistics.median(took), pct(took, 0.95)
        t0 = time.perf_counter()
        for n in range(remembers):
            await service.remember(fact(rng, size + n), agent_id=AGENT)
        figures["serial"] = remembers / (time.perf_counter() - t0)

        async def writer(k: int) -> None:
            for n in range(remembers // 8):
                await service.remember(fact(rng, size * 2 + k * remembers + n), agent_id=AGENT)

        t0 = time.perf_counter()
        await asyncio.gather(*(writer(k) for k in range(8)))
        figures["parallel"] = (remembers // 8 * 8) / (time.perf_counter() - t0)
    return figures


async def run_size(
    size: int, args: argparse.Namespace, folder: Path, fresh: Callable[[str], str], embed: str
) -> list[tuple[str, dict[str, float]]]:
    path = folder / f"stores-{size}-{args.dim}.db"
    rows: list[tuple[str, dict[str, float]]] = []
    if not path.exists():
        print(f"{size:,}: built SQLite in {await build_sqlite(path, size, args.dim):.0f} s")
    pg_url = fresh(f"cortex_bench_{size}")
    started = time.perf_counter()
    report = await migrate(str(path), pg_url, batch=BATCH)
    seconds = time.perf_counter() - started
    print(
        f"{size:,}: migrate to PostgreSQL {report.rows:,} rows in {seconds:.0f} s"
        f" ({report.rows / seconds:,.0f} rows/s)"
    )
    work = folder / f"work-{size}.db"  # the measured copy: remembers must not grow the kept file
    await migrate(str(path), str(work), replace=True, batch=BATCH)
    for store, location in (("sqlite", str(work)), ("postgres", pg_url)):
        figures = await measure(
            settings_for(store, location, embed, args.dim), args.queries, args.remembers, size
        )
        rows.append((store, figures))
        print(f"  {store}: {figures}", file=sys.stderr)
    work.unlink(missing_ok=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000", help="comma-separated memory counts")
    parser.add_argument("--dim", type=int, default=384, help="vector dimensions")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=400)
    parser.add_argument("--database-url", help="a PostgreSQL server (default: embedded)")
    parser.add_argument("--keep", type=Path, help="a folder for the built SQLite files")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    with ExitStack() as stack:
        folder = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        folder.mkdir(parents=True, exist_ok=True)
        fresh = stack.enter_context(postgres_databases(args.database_url))
        embed, _ = stack.enter_context(embedding_stub(StubState(keep_alive=True)))
        for size in sizes:
            for store, figures in asyncio.run(run_size(size, args, folder, fresh, embed)):
                results.append((size, store, figures))
    print(
        f"\nhybrid recall of one agent's memories ({args.dim}-dim vectors), {args.queries}"
        f" queries; remember of new memories ({args.remembers})"
    )
    print(
        "| memories | store | first recall ms | recall p50 ms | p95 ms | remember/s (1) |"
        " remember/s (8 tasks) |"
    )
    print("|---|---|---|---|---|---|---|")
    for size, store, f in results:
        print(
            f"| {size:,} | {store} | {f['first_ms']:.0f} | {f['p50']:.1f} | {f['p95']:.1f}"
            f" | {f['serial']:.0f} | {f['parallel']:.0f} |"
        )


if __name__ == "__main__":
    main()
