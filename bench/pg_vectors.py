"""Where pgvector's exact scan of one agent stops being enough: the HNSW crossover.

For each agent size, one agent's vectors sit among other agents' (`--crowd` vectors in all):
- the agent's knn (`PgVectorStore.agent_knn`, k=10 nearest of `--want` candidates, what a
  recall asks for) with an exact scan, then through the agent's own HNSW index (partial:
  `WHERE agent_id = ...`), p50/p95 ms, and HNSW's recall@10 against the exact answer;
- a small agent (`--small` vectors) among them: its top 10 through the design (its rows scanned
  exactly) and, for comparison, through one HNSW index over every agent filtered by agent
  afterwards (what pgvector 0.6 does with a WHERE on an unpartitioned index): its recall@10
  (measured at the first size only).

Vectors are clustered like text embeddings (`--clusters` centres, noise around them), or
`--data random` (uniform on the sphere: HNSW's worst case). The store builds an agent's HNSW
index from `vectors.HNSW_MIN_ROWS` vectors on; pick it where HNSW's p50 beats exact's.

    python bench/pg_vectors.py [--sizes 2000,10000,20000,50000] [--dim 384]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cortex_mcp.config import load_settings
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.postgres.vectors import (
    HNSW_EF_SEARCH,
    HNSW_MIN_ROWS,
    PgVectorStore,
    VectorValue,
)
from tests.helpers.postgres_server import PostgresServer

MODEL = "bench"


def unit_vectors(rng: np.random.Generator, n: int, dim: int, args: argparse.Namespace) -> Any:
    if args.data == "random":
        vectors = rng.normal(size=(n, dim))
    else:
        centres = np.random.default_rng(0).normal(size=(args.clusters, dim))
        vectors = centres[rng.integers(0, args.clusters, n)] + rng.normal(size=(n, dim)) * 0.6
    vectors = vectors.astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


async def fill(db: Any, agents: dict[str, np.ndarray], dim: int) -> None:
    def copy_rows(raw: Any) -> None:
        with raw.cursor() as cursor:
            rows = [
                (f"{agent}-{n}", agent, vector)
                for agent, vectors in agents.items()
                for n, vector in enumerate(vectors)
            ]
            with cursor.copy(
                "COPY memories (id, agent_id, layer, category, content, content_hash,"
                " created_at, updated_at) FROM STDIN"
            ) as copy:
                for memory_id, agent, _ in rows:
                    copy.write_row(
                        (memory_id, agent, "core", "fact", memory_id, memory_id, "t", "t")
                    )
            with cursor.copy(
                "COPY memory_vectors (memory_id, model, dim, vector, updated_at) FROM STDIN"
            ) as copy:
                copy.set_types(["text", "text", "int4", "vector", "text"])
                for memory_id, _, vector in rows:
                    copy.write_row((memory_id, MODEL, dim, VectorValue(vector.tobytes()), "t"))
        raw.execute("VACUUM ANALYZE memory_vectors")
        raw.execute("VACUUM ANALYZE memories")

    await db.run(copy_rows)


async def timed(
    store: PgVectorStore, agent: str, dim: int, probes: np.ndarray, want: int
) -> tuple[list[float], list[list[str]]]:
    times, answers = [], []
    for probe in probes:
        start = time.perf_counter()
        found = await store.agent_knn(agent, MODEL, dim, probe.tobytes(), want)
        times.append((time.perf_counter() - start) * 1000)
        answers.append([memory_id for memory_id, _ in found[:10]])
    return times, answers


async def global_hnsw_top10(db: Any, agent: str, dim: int, probes: np.ndarray) -> list[list[str]]:
    """One HNSW index over every agent, the agent filter applied to what it returns (forced:
    for an agent this small the planner rightly scans its rows; an agent of a few percent of
    the rows gets the index, and what the small agent gets here)."""
    await db.run(
        lambda raw: raw.execute(
            f"CREATE INDEX bench_global ON memory_vectors USING hnsw"
            f" ((vector::vector({dim})) vector_cosine_ops)"
        )
    )

    def top10(raw: Any, probe: np.ndarray) -> list[Any]:
        with raw.transaction():  # the planner would scan a small agent's rows instead
            raw.execute("SET LOCAL enable_seqscan = off")
            raw.execute("SET LOCAL enable_sort = off")
            return list(
                raw.execute(
                    f"SELECT memory_id FROM memory_vectors WHERE agent_id = %s AND model = %s"
                    f" ORDER BY (vector::vector({dim})) <=> %s::vector({dim}) LIMIT 10",
                    (agent, MODEL, VectorValue(probe.tobytes())),
                ).fetchall()
            )

    answers = []
    for probe in probes:
        rows = await db.run(lambda raw, probe=probe: top10(raw, probe))
        answers.append([str(row[0]) for row in rows])
    await db.run(lambda raw: raw.execute("DROP INDEX bench_global"))
    return answers


def recall_at_10(approx: list[list[str]], exact: list[list[str]]) -> float:
    pairs = zip(approx, exact, strict=True)
    return statistics.mean(len(set(a) & set(e)) / max(len(e), 1) for a, e in pairs)


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


async def measure(
    server: PostgresServer, size: int, args: argparse.Namespace, global_index: bool
) -> dict[str, Any]:
    rng = np.random.default_rng(size)
    dim = args.dim
    agents = {"big": unit_vectors(rng, size, dim, args)}
    rest = max(args.crowd - size - args.small, 0)
    if rest:
        agents["others"] = unit_vectors(rng, rest, dim, args)
    agents["small"] = unit_vectors(rng, args.small, dim, args)
    probes = unit_vectors(rng, args.queries, dim, args)
    row: dict[str, Any] = {"size": size}
    with server.fresh_database() as url:
        async with open_database(load_settings(database_url=url)) as db:
            store = store_classes(db).vectors(db)
            assert isinstance(store, PgVectorStore)
            await fill(db, agents, dim)
            exact_ms, exact = await timed(store, "big", dim, probes, args.want)
            _, small_exact = await timed(store, "small", dim, probes, args.want)
            start = time.perf_counter()
            await store.build_agent_hnsw("big", MODEL, dim)
            row["build_s"] = time.perf_counter() - start
            hnsw_ms, approx = await timed(store, "big", dim, probes, args.want)
            _, small_design = await timed(store, "small", dim, probes, args.want)
            if global_index:  # the same at every size: measured once
                small_global = await global_hnsw_top10(db, "small", dim, probes)
                row["small_global"] = recall_at_10(small_global, small_exact)
    row.update(
        exact_p50=statistics.median(exact_ms),
        exact_p95=p95(exact_ms),
        hnsw_p50=statistics.median(hnsw_ms),
        hnsw_p95=p95(hnsw_ms),
        recall=recall_at_10(approx, exact),
        small_design=recall_at_10(small_design, small_exact),
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000,10000,20000,50000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--crowd", type=int, default=60_000, help="vectors of all agents")
    parser.add_argument("--small", type=int, default=300, help="the small agent's vectors")
    parser.add_argument(
        "--want", type=int, default=120, help="candidates a recall asks for (10 x 4 x 3)"
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--data", choices=("clustered", "random"), default="clustered")
    parser.add_argument("--clusters", type=int, default=200)
    parser.add_argument(
        "--no-global-index",
        dest="global_index",
        action="store_false",
        help="skip the comparison with one HNSW index over every agent",
    )
    args = parser.parse_args()
    server = PostgresServer()
    rows = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(asyncio.run(measure(server, size, args, args.global_index and not rows)))
            print(rows[-1], file=sys.stderr)
    finally:
        server.stop()
    print(
        f"\none agent's knn among {args.crowd:,} vectors ({args.dim}-dim, {args.data}),"
        f" {args.want} candidates, {args.queries} queries, ef_search {HNSW_EF_SEARCH};"
        f" the store builds HNSW from {HNSW_MIN_ROWS:,} vectors of an agent"
    )
    print(
        "| agent vectors | exact p50 ms | p95 | HNSW p50 ms | p95 | HNSW/exact p50 |"
        " HNSW recall@10 | build s | small agent recall@10: design | one global HNSW |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        glob = f"{r['small_global']:.3f}" if "small_global" in r else "-"
        print(
            f"| {r['size']:,} | {r['exact_p50']:.1f} | {r['exact_p95']:.1f} | {r['hnsw_p50']:.1f}"
            f" | {r['hnsw_p95']:.1f} | {r['hnsw_p50'] / r['exact_p50']:.2f} | {r['recall']:.3f}"
            f" | {r['build_s']:.1f} | {r['small_design']:.3f} | {glob} |"
        )


if __name__ == "__main__":
    main()
