"""Recall at 10K, 100K and 1M memories, in-process: text only and hybrid, p50/p95.

    python bench/recall_scale.py                        # 10000,100000,1000000
    python bench/recall_scale.py --sizes 10000 --queries 100

The databases come from bench/scale_data.py (built once, cached under /tmp; six agents
of 55% down to 0.5% of the memories, English, Chinese and Japanese, 384-dim vectors). Each
query is asked as the agent that owns the memory it was drawn from (a few words of it, as a
question; a fifth are generic questions of common words), through `CortexService.recall`
with max_results=10: the whole pipeline, access counts included.

Baselines, same run, same file, same queries:
- plain FTS5: `MATCH <the same OR expression> ORDER BY rank LIMIT 10`, no agent filter;
- numpy brute force: one float32 matrix of every vector in the file, `M @ q`, top 10.
Also printed: the vector index build per agent (what a restart costs), RSS, recall@10 of the
vector backend against an exact scan of the agent's vectors, and the same for the text
channel against the exact BM25 top 10 of the full expression for that agent.

The page cache: the file is read through once before anything is timed, as a server that has
been answering for a while has it cached; otherwise the first pass (text only) pays the disk
reads and the second (hybrid, the same queries) does not. `--cold` first evicts the file from
the page cache (posix_fadvise) and times one text-only pass of other queries on it.

`--locomo` plants LoCoMo's dev conversations (shared/datasets) in a copy of the database, one
agent per conversation among the distractors (cached beside it), and prints the text channel's
recall@10 of the evidence turns next to exact BM25's (the full expression, every row of the
agent, the same index) and their top-10 agreement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as cortex_mcp does; numpy loads first here

import numpy as np  # noqa: E402

from bench.locomo_data import find_dataset, load_dataset  # noqa: E402
from bench.scale_data import (  # noqa: E402
    DIM,
    JA_WORDS,
    MODEL,
    ZH_WORDS,
    ScaleEmbedder,
    ensure,
)
from cortex_mcp.config import SearchSettings, load_settings  # noqa: E402
from cortex_mcp.models import SearchFilters, SystemClock, to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.search.saved_index import index_dir  # noqa: E402
from cortex_mcp.search.text import EN_STOP_WORDS, build_query  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.store.connection import sqlite_module  # noqa: E402
from cortex_mcp.store.text import filter_sql  # noqa: E402

K = 10
GENERIC = "like really think family time love work going great new friends good day".split()


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def page_cache(path: Path, *, evict: bool) -> float:
    """Read the file through (as a long-running server has it cached) or evict it; seconds."""
    started = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        if evict:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        else:
            while os.read(fd, 1 << 22):
                pass
    finally:
        os.close(fd)
    return time.perf_counter() - started


def make_queries(path: Path, count: int, seed: int) -> list[tuple[str, str]]:
    """(agent, question): most drawn from a memory of that agent, a fifth generic."""
    conn = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
    top = conn.execute("SELECT MAX(seq) FROM memories").fetchone()[0]
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    while len(out) < count:
        row = conn.execute(
            "SELECT agent_id, content FROM memories WHERE seq = ?", (rng.randint(1, top),)
        ).fetchone()
        if row is None:
            continue
        agent, content = row
        name, _, body = content.partition(": ") if ": " in content else content.partition("：")
        if rng.random() < 0.2:
            out.append((agent, f"what do we know about {' '.join(rng.sample(GENERIC, 3))}?"))
        elif "：" in content:
            words = [w for w in [*ZH_WORDS, *JA_WORDS] if w in body]
            picked = rng.sample(words, min(2, len(words))) if words else [body[:2]]
            out.append((agent, f"{name}说过{''.join(picked)}的什么？"))
        else:
            words = [w for w in re.findall(r"[a-z]+", body) if w not in EN_STOP_WORDS]
            if len(words) < 2:
                continue
            picked = rng.sample(sorted(set(words)), min(len(set(words)), rng.randint(2, 4)))
            out.append((agent, f"what did {name} say about {' '.join(picked)}?"))
    conn.close()
    return out


async def timed_recalls(service: CortexService, queries: list[tuple[str, str]]) -> list[float]:
    times = []
    for agent, q in queries:
        started = time.perf_counter()
        await service.memories.recall(RecallRequest(query=q, max_results=K, agent_id=agent))
        times.append((time.perf_counter() - started) * 1000)
    await service.drain()
    return times


def plain_fts(path: Path, queries: list[tuple[str, str]]) -> list[float]:
    conn = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
    times = []
    for _, q in queries:
        match = build_query(q).match
        started = time.perf_counter()
        conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, K),
        ).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    conn.close()
    return times


def exact_top(conn: Any, agent: str, question: str) -> list[str]:
    """The exact BM25 top 10 of the agent's memories: the full expression, every matching row."""
    match = build_query(question).match
    if not match:
        return []
    where, params = filter_sql(SearchFilters(agent_id=agent, now=to_iso(SystemClock().now())))
    rows = conn.execute(
        "SELECT m.id FROM memories_fts CROSS JOIN memories m ON m.seq = memories_fts.rowid"
        f" WHERE memories_fts MATCH ? AND {where} ORDER BY bm25(memories_fts) LIMIT ?",
        [match, *params, K],
    ).fetchall()
    return [r[0] for r in rows]


def overlap(exact: list[str], ours: list[str]) -> float:
    return len(set(exact) & set(ours)) / len(exact) if exact else 1.0


def text_agreement(path: Path, pairs: list[tuple[tuple[str, str], list[str]]]) -> float:
    """How much of the exact BM25 top 10 (full expression, every matching row, the agent's
    filter) the text channel's top 10 holds, averaged over queries."""
    conn = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
    same = [overlap(exact_top(conn, agent, q), ours) for (agent, q), ours in pairs]
    conn.close()
    return statistics.mean(same) if same else 1.0


def all_vectors(path: Path) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """Every vector of the file: (matrix, ids, agent per row, forgotten per row)."""
    conn = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
    n = conn.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0]
    matrix = np.empty((n, DIM), dtype=np.float32)
    ids, agents, forgotten = [], [], np.zeros(n, dtype=bool)
    cursor = conn.execute(
        "SELECT v.memory_id, v.vector, m.agent_id, m.forgotten_at IS NOT NULL"
        " FROM memory_vectors v JOIN memories m ON m.id = v.memory_id"
    )
    i = 0
    while rows := cursor.fetchmany(20_000):
        for memory_id, blob, agent, gone in rows:
            matrix[i] = np.frombuffer(blob, dtype=np.float32)
            ids.append(memory_id)
            agents.append(agent)
            forgotten[i] = bool(gone)
            i += 1
    conn.close()
    return matrix[:i], ids, np.array(agents), forgotten


def brute_force(matrix: np.ndarray, vectors: np.ndarray) -> list[float]:
    times = []
    for q in vectors:
        started = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, K)[:K]
        top[np.argsort(-scores[top])]
        times.append((time.perf_counter() - started) * 1000)
    return times


async def ann_recall(
    service: CortexService,
    queries: list[tuple[str, str]],
    vectors: np.ndarray,
    baseline: tuple[np.ndarray, list[str], np.ndarray, np.ndarray],
) -> dict[str, tuple[str, float, int]]:
    """Per agent: (backend, recall@10 against the exact scan of its live vectors, queries)."""
    matrix, ids, agents, forgotten = baseline
    index = service.engines.searcher.index
    found: dict[str, list[float]] = {}
    kinds: dict[str, str] = {}
    now = to_iso(SystemClock().now())
    live = {a: np.flatnonzero((agents == a) & ~forgotten) for a in {a for a, _ in queries}}
    own = {a: matrix[rows] for a, rows in live.items()}  # one copy per agent, not per query
    for (agent, _), q in zip(queries, vectors, strict=True):
        scores = own[agent] @ q
        exact_top = live[agent][np.argpartition(-scores, K)[:K]]
        exact = {ids[i] for i in exact_top}
        filters = SearchFilters(agent_id=agent, now=now, include_superseded=True)
        hits, kinds[agent] = await index.search(q, MODEL, K, filters)
        found.setdefault(agent, []).append(len(exact & {h for h, _ in hits}) / K)
    return {a: (kinds[a], statistics.mean(v), len(v)) for a, v in found.items()}


def answered_turns(ids: list[str], owners: dict[str, set[str]]) -> set[str]:
    return set().union(*(owners.get(memory_id, set()) for memory_id in ids[:K]))


async def planted(path: Path) -> tuple[Path, list[Any]]:
    """A copy of the database with each LoCoMo dev conversation remembered as its own agent,
    built once (a marker file says it is complete)."""
    conversations = load_dataset(find_dataset(None, ROOT))
    target = path.with_name(f"{path.stem}-locomo.db")
    marker = target.with_suffix(".json")
    if not marker.exists():
        print(f"planting LoCoMo in {target}...", file=sys.stderr)
        for stale in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
            stale.unlink(missing_ok=True)
        source = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
        copy = sqlite_module().connect(target)
        target.chmod(0o600)  # memories are private, as the store keeps them
        source.backup(copy)
        source.close()
        copy.close()
        settings = load_settings(db_path=target, embedding_provider="none")
        async with open_cortex(settings, background=False) as service:
            for conv in conversations:
                for text in conv.turns.values():
                    await service.memories.remember(
                        RememberRequest(content=text, agent_id=conv.sample_id, importance=0.5)
                    )
        marker.write_text(json.dumps({"source": path.name, "agents": len(conversations)}))
    return target, conversations


async def locomo_planted(path: Path) -> dict[str, Any]:
    """R@10 of the evidence turns: the text channel, and exact BM25 over the agent's rows."""
    target, conversations = await planted(path)
    page_cache(target, evict=False)
    conn = sqlite_module().connect(f"file:{target}?mode=ro", uri=True)
    ours_r10, exact_r10, same, times = [], [], [], []
    settings = load_settings(db_path=target, embedding_provider="none")
    async with open_cortex(settings, background=False) as service:
        now = to_iso(SystemClock().now())
        for conv in conversations:
            by_text: dict[str, set[str]] = {}
            for dia, text in conv.turns.items():
                by_text.setdefault(text, set()).add(dia)
            owners = {
                memory_id: by_text.get(content, set())
                for memory_id, content in conn.execute(
                    "SELECT id, content FROM memories WHERE agent_id = ?", (conv.sample_id,)
                )
            }
            filters = SearchFilters(agent_id=conv.sample_id, now=now)
            for question, evidence in conv.questions:
                started = time.perf_counter()
                hits = await service.engines.searcher.text_channel.hits(
                    build_query(question), filters, K, K
                )
                times.append((time.perf_counter() - started) * 1000)
                ours = [memory_id for memory_id, _ in hits][:K]
                exact = exact_top(conn, conv.sample_id, question)
                ours_r10.append(len(answered_turns(ours, owners) & evidence) / len(evidence))
                exact_r10.append(len(answered_turns(exact, owners) & evidence) / len(evidence))
                same.append(overlap(exact, ours))
    conn.close()
    return {
        "queries": len(times),
        "ours": statistics.mean(ours_r10),
        "exact": statistics.mean(exact_r10),
        "agreement": statistics.mean(same),
        "ms": times,
    }


async def cold_pass(path: Path, settings: Any, n: int, n_queries: int) -> list[float]:
    """Text-only recalls of other queries right after the file left the page cache."""
    queries = make_queries(path, n_queries, seed=n + 1)
    page_cache(path, evict=True)
    async with open_cortex(settings, background=False) as service:
        service.engines.embeddings.providers = []
        return await timed_recalls(service, queries)


async def bench_size(n: int, n_queries: int, *, cold: bool, locomo: bool) -> dict[str, Any]:
    path = await ensure(n, vectors=True)
    queries = make_queries(path, n_queries + 20, seed=n)
    warm, queries = queries[:20], queries[20:]
    settings = load_settings(
        db_path=path,
        embedding_provider="openai",
        embedding_base_url="http://127.0.0.1:9/v1",  # never called: the provider is in-process
        embedding_model=MODEL,
        search=SearchSettings(),
    )
    embedder = ScaleEmbedder()
    row: dict[str, Any] = {"n": n}
    if cold:
        row["cold"] = await cold_pass(path, settings, n, n_queries)
    row["read_s"] = page_cache(path, evict=False)
    async with open_cortex(settings, background=False) as service:
        service.engines.embeddings.providers = []  # text only
        await timed_recalls(service, warm)
        row["text"] = await timed_recalls(service, queries)
        filters_now = to_iso(SystemClock().now())
        pairs = []
        for agent, q in queries[:60]:
            filters = SearchFilters(agent_id=agent, now=filters_now)
            hits = await service.engines.searcher.text_channel.hits(build_query(q), filters, K, K)
            pairs.append(((agent, q), [memory_id for memory_id, _ in hits]))
        service.engines.embeddings.providers = [embedder]
        started = time.perf_counter()
        for agent in sorted({a for a, _ in queries}):  # build every agent's index first
            await service.memories.recall(RecallRequest(query="warm up", agent_id=agent))
        await service.engines.searcher.index.settled()  # the builds run in the background
        row["build_s"] = time.perf_counter() - started
        row["builds"] = list(service.engines.searcher.index.builds)
        await timed_recalls(service, warm)
        row["hybrid"] = await timed_recalls(service, queries)
        row["rss_mb"] = rss_mb()
        vectors = await embedder.embed([q for _, q in queries])
        baseline = all_vectors(path)
        row["ann"] = await ann_recall(service, queries, vectors, baseline)
    row["fts"] = plain_fts(path, queries)
    row["agreement"] = text_agreement(path, pairs)
    row["numpy"] = brute_force(baseline[0], vectors)
    if locomo:
        row["locomo"] = await locomo_planted(path)
    return row


def report(rows: list[dict[str, Any]]) -> None:
    print(
        "| memories | text recall p50 / p95 | plain FTS5 p50 / p95 | hybrid recall p50 / p95"
        " | numpy brute force p50 / p95 | vector index build | RSS |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['n']:,} | {pct(r['text'], 50):.1f} / {pct(r['text'], 95):.1f} ms"
            f" | {pct(r['fts'], 50):.1f} / {pct(r['fts'], 95):.1f} ms"
            f" | {pct(r['hybrid'], 50):.1f} / {pct(r['hybrid'], 95):.1f} ms"
            f" | {pct(r['numpy'], 50):.1f} / {pct(r['numpy'], 95):.1f} ms"
            f" | {r['build_s']:.1f} s | {r['rss_mb']:.0f} MB |"
        )
    for r in rows:
        print(f"\n{r['n']:,} memories:")
        print(
            f"  text p95 / plain FTS5 p95: {pct(r['text'], 95) / pct(r['fts'], 95):.2f}x;"
            f" hybrid p95 / numpy brute force p95: {pct(r['hybrid'], 95) / pct(r['numpy'], 95):.2f}x"
        )
        print(f"  text channel recall@10 vs the exact BM25 top 10: {r['agreement']:.3f}")
        print(f"  file read into the page cache before timing: {r['read_s']:.1f} s")
        if "cold" in r:
            print(
                f"  text recall right after the file left the page cache: p50 / p95"
                f" {pct(r['cold'], 50):.1f} / {pct(r['cold'], 95):.1f} ms"
            )
        if "locomo" in r:
            lo = r["locomo"]
            print(
                f"  LoCoMo dev planted as 5 agents, {lo['queries']} questions: R@10 text channel"
                f" {lo['ours']:.4f}, exact BM25 {lo['exact']:.4f}; top-10 agreement"
                f" {lo['agreement']:.3f}; text channel p50 / p95"
                f" {pct(lo['ms'], 50):.1f} / {pct(lo['ms'], 95):.1f} ms"
            )
        for b in r["builds"]:
            print(
                f"  index {b.agent_id}: {b.vectors:,} vectors, {b.kind}, built in {b.seconds:.1f} s"
            )
        for agent, (kind, recall, count) in sorted(r["ann"].items()):
            print(
                f"  vector recall@10 vs exact, {agent} ({kind}): {recall:.3f} over {count} queries"
            )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


# ---- the vector index after a restart (search/index_build.py, search/saved_index.py) -------


async def restart_once(path: Path, question: tuple[str, str]) -> dict[str, Any]:
    """Open the file as a restarted server does and ask `question` (as its agent) at once:
    time to the answer (text only while the index builds or loads), to the next hybrid answer,
    and the same for every agent's index loaded or built in the background at once."""
    agent, q = question
    settings = load_settings(
        db_path=path,
        embedding_provider="openai",
        embedding_base_url="http://127.0.0.1:9/v1",  # never called: the provider is in-process
        embedding_model=MODEL,
    )
    out: dict[str, Any] = {}
    async with open_cortex(settings, background=False) as service:
        service.engines.embeddings.providers = [ScaleEmbedder()]
        index = service.engines.searcher.index
        started = time.perf_counter()
        first = await service.memories.recall(RecallRequest(query=q, max_results=K, agent_id=agent))
        out["answer_ms"] = (time.perf_counter() - started) * 1000
        out["first_degraded"] = first.meta.degraded
        during = []
        while index.describe(agent)["state"] not in ("ready", "not loaded"):  # people ask on
            begun = time.perf_counter()
            await service.memories.recall(RecallRequest(query=q, max_results=K, agent_id=agent))
            during.append((time.perf_counter() - begun) * 1000)
            await asyncio.sleep(0.2)
        out["hybrid_s"] = time.perf_counter() - started
        await index.settled()  # its file is written after it serves
        out["during_ms"] = during
        out["hybrid_degraded"] = (
            await service.memories.recall(RecallRequest(query=q, max_results=K, agent_id=agent))
        ).meta.degraded
        out["agent_report"] = index.describe(agent)
        others = sorted({a for a in await _agents(path)} - {agent})
        begun = time.perf_counter()
        await index.warm(MODEL, DIM, others)
        await index.settled()
        out["all_s"] = out["hybrid_s"] + time.perf_counter() - begun
        out["builds"] = list(index.builds)
        await service.drain()
    return out


async def _agents(path: Path) -> list[str]:
    conn = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in conn.execute("SELECT DISTINCT agent_id FROM memories")]
    finally:
        conn.close()


async def restart_figures(n: int) -> None:
    """A restart without a saved index (it is built, then saved), then one with it."""
    path = await ensure(n, vectors=True)
    saved_dir = index_dir(path)
    biggest = max(await _agents(path), key=lambda a: _agent_size(path, a))
    question = next(q for q in make_queries(path, 200, seed=n) if q[0] == biggest)
    for name in os.listdir(saved_dir) if saved_dir.exists() else []:
        (saved_dir / name).unlink()  # the first restart finds no saved index
    runs = {"no saved index (build, then save)": await restart_once(path, question)}
    size = sum(f.stat().st_size for f in saved_dir.iterdir()) if saved_dir.exists() else 0
    runs["saved index (load)"] = await restart_once(path, question)
    print(f"\n{n:,} memories, first recall after a restart (agent {biggest}):")
    print(
        "| restart | answer (text only) | recalls while it builds, p50 | hybrid after | all agents hybrid after |"
    )
    print("|---|---|---|---|---|")
    for name, r in runs.items():
        during = (
            f"{pct(r['during_ms'], 50):.0f} ms ({len(r['during_ms'])})" if r["during_ms"] else "-"
        )
        print(
            f"| {name} | {r['answer_ms']:.0f} ms | {during} | {r['hybrid_s']:.1f} s | {r['all_s']:.1f} s |"
        )
    for name, r in runs.items():
        print(f"  {name}: first answer said {r['first_degraded']}; then {r['hybrid_degraded']}")
        for b in r["builds"]:
            print(
                f"    {b.agent_id}: {b.vectors:,} vectors, {b.kind}, {b.source} in {b.seconds:.1f} s"
            )
    print(
        f"  saved indexes on disk: {size / 1e6:.0f} MB for {n:,} vectors ({path.stat().st_size / 1e6:.0f} MB database)"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def _agent_size(path: Path, agent: str) -> int:
    conn = sqlite_module().connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(
            conn.execute("SELECT COUNT(*) FROM memories WHERE agent_id = ?", (agent,)).fetchone()[0]
        )
    finally:
        conn.close()


async def run(args: argparse.Namespace) -> None:
    if args.restart:
        for n in [int(s) for s in args.sizes.split(",")]:
            await restart_figures(n)
        return
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        rows.append(await bench_size(n, args.queries, cold=args.cold, locomo=args.locomo))
        print(f"size {n:,} done", file=sys.stderr)
    report(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--restart", action="store_true", help="only the first recall after a restart"
    )
    parser.add_argument("--cold", action="store_true", help="also time a pass on a cold file")
    parser.add_argument("--locomo", action="store_true", help="plant LoCoMo dev as agents")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
