"""Where pgvector's exact scan stops being enough: knn latency, exact and through HNSW.

Prints, per number of vectors, the median and p95 of `PgVectorStore.knn` (k=10) with an exact
scan and with the HNSW index, and HNSW's recall@10 against the exact answer, on an embedded
PostgreSQL (pgserver). The store builds HNSW from `vectors.HNSW_MIN_ROWS` vectors on.

    python tests/bench/pg_vectors.py [--sizes 2000,10000,40000] [--dim 384] [--queries 50]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cortex_mcp.config import load_settings
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.postgres.vectors import PgVectorStore, VectorValue
from tests.postgres_server import PostgresServer


async def fill(db: Any, vectors: np.ndarray) -> list[str]:
    ids = [f"00000000-0000-7000-8000-{n:012d}" for n in range(len(vectors))]

    def copy_rows(raw: Any) -> None:
        with raw.cursor() as cursor:
            with cursor.copy(
                "COPY memories (id, agent_id, layer, category, content, content_hash,"
                " created_at, updated_at) FROM STDIN"
            ) as copy:
                for n, memory_id in enumerate(ids):
                    copy.write_row((memory_id, "bench", "core", "fact", f"m{n}", f"h{n}", "t", "t"))
            with cursor.copy(
                "COPY memory_vectors (memory_id, model, dim, vector, updated_at) FROM STDIN"
            ) as copy:
                copy.set_types(["text", "text", "int4", "vector", "text"])
                for memory_id, vector in zip(ids, vectors, strict=True):
                    row = (memory_id, "bench", vectors.shape[1], VectorValue(vector.tobytes()), "t")
                    copy.write_row(row)
            raw.execute("ANALYZE memory_vectors")
            raw.execute(
                "INSERT INTO meta(key, value) VALUES ('vec_index', %s)",
                (f"bench|{vectors.shape[1]}",),
            )

    await db.run(copy_rows)
    return ids


async def timed_knn(
    store: PgVectorStore, queries: np.ndarray
) -> tuple[list[float], list[list[str]]]:
    times, answers = [], []
    for query in queries:
        start = time.perf_counter()
        found = await store.knn(query.tobytes(), 10)
        times.append((time.perf_counter() - start) * 1000)
        answers.append([memory_id for memory_id, _ in found])
    return times, answers


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


async def measure(server: PostgresServer, size: int, dim: int, queries: int) -> None:
    rng = np.random.default_rng(size)
    vectors = rng.normal(size=(size, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    probes = rng.normal(size=(queries, dim)).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    with server.fresh_database() as url:
        async with open_database(load_settings(database_url=url)) as db:
            store = store_classes(db).vectors(db)
            assert isinstance(store, PgVectorStore)
            await fill(db, vectors)
            exact_ms, exact = await timed_knn(store, probes)
            start = time.perf_counter()
            await store._build_hnsw(dim)
            build_s = time.perf_counter() - start
            hnsw_ms, approx = await timed_knn(store, probes)
    recall = statistics.mean(len(set(a) & set(e)) / 10 for a, e in zip(approx, exact, strict=True))
    print(
        f"{size:>8} vectors x {dim}: exact p50 {statistics.median(exact_ms):7.1f} ms"
        f" p95 {p95(exact_ms):7.1f} | hnsw p50 {statistics.median(hnsw_ms):6.1f} ms"
        f" p95 {p95(hnsw_ms):6.1f} recall@10 {recall:.3f} (built in {build_s:.1f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2000,10000,40000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    server = PostgresServer()
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            asyncio.run(measure(server, size, args.dim, args.queries))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
