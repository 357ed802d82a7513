"""Recall latency on PostgreSQL, before and after a change, in one run (issue 17).

    python bench/pg_recall.py --before /path/to/older/checkout [--size 10000]

The same memories (one agent's facts, 384-dim stub vectors) go into
one fresh PostgreSQL database per checkout, each copied by that checkout's own `migrate`
(so each has its own schema), then `VACUUM ANALYZE` as autovacuum would soon do (`--raw`
skips it: the state right after a copy). Then rounds alternate between the checkouts and a
SQLite file (the simple baseline): each round is a fresh process of that checkout opening the
service (`open_cortex`) and timing `--queries` recalls after a warm-up, text only and hybrid
(the query embedded by the local stub over HTTP, the same cost everywhere). Alternating
rounds share the machine's load fairly; the table gives p50/p95 over all rounds.

`--scale` measures text recall on scale_data.py's cached database of `--size` instead (six
agents from 55% to 0.5% of the memories, English, Chinese and Japanese; recall_scale.py's
questions, each asked as the agent whose memory it was drawn from, a fifth generic): where
BM25's document counts over common words and phrases cost most.

    python bench/pg_recall.py --scale --size 1000000 --before /path/to/older/checkout
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.migrate import BATCH, SUBJECTS, TOPICS, memory_pages  # noqa: E402
from bench.pg import postgres_databases  # noqa: E402
from bench.recall_scale import make_queries  # noqa: E402
from bench.scale_data import ensure  # noqa: E402
from bench.stores import copy_sqlite  # noqa: E402
from cortex_mcp.store.copy import SqliteTarget  # noqa: E402
from cortex_mcp.store.tables import table  # noqa: E402
from tests.helpers.embedding_stub import StubState, embedding_stub  # noqa: E402

DIM = 384


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


# run by each checkout's python with that checkout first on sys.path
_COPY = """
import asyncio, sys
from cortex_mcp.engine.exchange.migrate import migrate
asyncio.run(migrate(sys.argv[1], sys.argv[2], batch=5000))
"""

_MEASURE_SCALE = """
import asyncio, json, sys, time
from pathlib import Path
from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
location, questions = sys.argv[1], json.loads(Path(sys.argv[2]).read_text())
extra = {"database_url": location} if location.startswith("postgres") else {}
settings = load_settings(
    db_path=Path(location) if not extra else Path("unused.db"), embedding_provider="none", **extra
)
async def main():
    async with open_cortex(settings, background=False) as service:
        took = []
        for n, (agent, question) in enumerate(questions):
            started = time.perf_counter()
            await service.memories.recall(question, agent_id=agent, max_results=10)
            if n >= 10:  # the first ten warm the caches
                took.append((time.perf_counter() - started) * 1000)
    print(json.dumps(took))
asyncio.run(main())
"""

_MEASURE = """
import asyncio, json, random, sys, time
from pathlib import Path
from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
SUBJECTS = {subjects!r}
TOPICS = {topics!r}
location, embed, mode, queries, seed = sys.argv[1:6]
extra = {{"database_url": location}} if location.startswith("postgres") else {{}}
settings = load_settings(
    db_path=Path(location) if not extra else Path("unused.db"),
    embedding_provider="openai" if mode == "hybrid" else "none",
    embedding_base_url=embed, embedding_model="stub-embed", embedding_dimensions={dim},
    embedding_timeout_s=60.0, **extra,
)
rng = random.Random(int(seed))
def question():
    return f"when did {{rng.choice(SUBJECTS)}} look at the {{rng.choice(TOPICS)}}"
async def main():
    async with open_cortex(settings, background=False) as service:
        for _ in range(5):
            await service.memories.recall(question(), agent_id="bench", max_results=10)
        took = []
        for _ in range(int(queries)):
            started = time.perf_counter()
            await service.memories.recall(question(), agent_id="bench", max_results=10)
            took.append((time.perf_counter() - started) * 1000)
    print(json.dumps(took))
asyncio.run(main())
"""


def python_of(tree: Path) -> str:
    venv = tree / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def run_in(tree: Path, code: str, *args: str) -> str:
    wrapped = f"import sys; sys.path.insert(0, {str(tree)!r})\n{code}"
    done = subprocess.run(
        [python_of(tree), "-c", wrapped, *args],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


def vacuum(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="a checkout of the code before the change")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--queries", type=int, default=50, help="timed recalls per round")
    parser.add_argument("--modes", default="text,hybrid")
    parser.add_argument("--raw", action="store_true", help="no VACUUM ANALYZE after the copy")
    parser.add_argument("--database-url", help="a PostgreSQL server (default: embedded)")
    parser.add_argument("--scale", action="store_true", help="scale_data.py's data, text only")
    args = parser.parse_args()
    measure = _MEASURE.format(subjects=SUBJECTS, topics=TOPICS, dim=DIM)
    trees = {**({"before": args.before.resolve()} if args.before else {}), "after": ROOT}
    times: dict[tuple[str, str], list[float]] = {}
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        fresh = stack.enter_context(postgres_databases(args.database_url))
        embed, _ = stack.enter_context(embedding_stub(StubState(keep_alive=True)))
        source = folder / "source.db"
        stores_at: dict[str, str] = {"sqlite": str(folder / "work.db")}
        if args.scale:  # copies of the cached file (a newer checkout may upgrade its schema)
            cache = asyncio.run(ensure(args.size, vectors=True))
            copy_sqlite(cache, source)
            copy_sqlite(cache, Path(stores_at["sqlite"]))
            questions = folder / "questions.json"
            asked = make_queries(cache, args.queries + 10, seed=args.size)
            questions.write_text(json.dumps(asked))
        else:
            asyncio.run(build_sqlite(source, args.size, DIM))
            run_in(ROOT, _COPY, str(source), stores_at["sqlite"])
        for name, tree in trees.items():
            url = fresh(f"cortex_recall_{name}")
            run_in(tree, _COPY, str(source), url)
            if not args.raw:
                vacuum(url)
            stores_at[f"postgres {name}"] = url
        for round_number in range(args.rounds):
            if args.scale:
                for store, location in stores_at.items():
                    tree = trees[store.split()[-1]] if store != "sqlite" else ROOT
                    took = json.loads(run_in(tree, _MEASURE_SCALE, location, str(questions)))
                    times.setdefault(("text", store), []).extend(took)
                    print(f"  round {round_number} text {store}", file=sys.stderr)
                continue
            for mode in args.modes.split(","):
                for store, location in stores_at.items():
                    tree = trees[store.split()[-1]] if store != "sqlite" else ROOT
                    took = json.loads(
                        run_in(
                            tree,
                            measure,
                            location,
                            embed,
                            mode,
                            str(args.queries),
                            str(round_number),
                        )
                    )
                    times.setdefault((mode, store), []).extend(took)
                    print(f"  round {round_number} {mode} {store}", file=sys.stderr)
    data = "scale_data.py's" if args.scale else "one agent's"
    print(
        f"\nrecall of {data} {args.size:,} memories, {args.rounds} alternating rounds x"
        f" {args.queries} recalls ({'right after the copy' if args.raw else 'VACUUM ANALYZE'})"
    )
    print("| mode | store | p50 ms | p95 ms | p50 / SQLite | p95 / SQLite |")
    print("|---|---|---|---|---|---|")
    for (mode, store), took in times.items():
        base = times[(mode, "sqlite")]
        p50, p95 = statistics.median(took), pct(took, 0.95)
        ratios = f"{p50 / statistics.median(base):.2f} | {p95 / pct(base, 0.95):.2f}"
        print(f"| {mode} | {store} | {p50:.1f} | {p95:.1f} | {ratios} |")


if __name__ == "__main__":
    main()
