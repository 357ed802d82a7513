"""Recall latency at 1K / 10K / 100K synthetic memories, in-process and over an MCP stdio session.

    python bench/latency.py                  # sizes 1000,10000,100000
    python bench/latency.py --sizes 1000,10000 --queries 200

Vectors are 384-dimensional and come from the hashing stub server in tests/helpers/embedding_stub.py
(served on 127.0.0.1, OpenAI wire format), so the embedding provider's own time is small and
is reported separately. The in-process "recall" figures take the provider's time out the
honest way: the query is embedded by the same hashing function called in-process (about
0.05 ms), not by subtracting a round trip from a call whose channels overlap. "embed" is the
HTTP provider's own round trip, and the stdio figures include it.
The bare FTS5 row is one `MATCH ... ORDER BY bm25 LIMIT 20` on the same file, same run.
Also printed: exact KNN time of each vector backend (numpy matrix vs sqlite-vec vec0) and RSS,
and the transport floor: an echo tool on the same SDK over stdio (bench/echo_server.py),
measured in the same run with the same client, with stdio recall (up to 10 memories returned)
and remember as ratios to it. The cost of each search stage is the median of its time in the
in-process recalls, and recall p50 with the reranker stage is measured against the /rerank stub
(tests/helpers/rerank_stub.py, its own process on 127.0.0.1) interleaved with recalls without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as cortex_mcp does; numpy loads first here

import numpy as np  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from cortex_mcp.config import SearchSettings, load_settings  # noqa: E402
from cortex_mcp.models import SearchFilters, SystemClock, to_iso  # noqa: E402
from cortex_mcp.providers.rerank import GuardedReranker, HttpReranker  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.search.stages.rerank import Rerank  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.store.connection import sqlite_module  # noqa: E402
from cortex_mcp.tokenize import count_tokens  # noqa: E402
from tests.helpers.embedding_stub import StubState, embedding_stub, stub_vector  # noqa: E402
from tests.helpers.stdio_helpers import server_command, server_env  # noqa: E402

DIM = 384
CPU_MS: dict[str, list[float]] = {}  # server CPU per call, one entry per measured batch
RECALL_K = 10  # memories a stdio recall returns (the issue's figure: 10 from ~700)
SUBJECTS = "Harry Alice Bob the-team our-client Mei Kenji Sofia the-landlord the-vps".split()
VERBS = "prefers bought deployed fixed reviewed scheduled moved cancelled planned measured".split()
CJK = "投资 房产 股票 服务器 防火墙 品川 東京 利回り 会議 予算 旅行 猫".split()


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(size)]


STOP_RANKS = 50  # the most frequent words of real text are stop words the query builder drops


def _zipf_word(rng: random.Random, vocab: list[str]) -> str:
    """Zipf-distributed content words: rank r has weight 1/(r + STOP_RANKS)."""
    while True:
        rank = int((STOP_RANKS + 1) * rng.paretovariate(1.0)) - STOP_RANKS - 1
        if 0 <= rank < len(vocab):
            return vocab[rank]


def synthetic_memory(rng: random.Random, vocab: list[str], i: int) -> str:
    words = [_zipf_word(rng, vocab) for _ in range(rng.randint(6, 16))]
    extra = f" {rng.choice(CJK)}{rng.choice(CJK)}" if rng.random() < 0.2 else ""
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {' '.join(words)} #{i}{extra}"


def synthetic_query(rng: random.Random, vocab: list[str]) -> str:
    words = [_zipf_word(rng, vocab) for _ in range(rng.randint(2, 5))]
    if rng.random() < 0.15:
        words.append(rng.choice(CJK))
    return f"what about {' '.join(words)}?"


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


async def fill(service: CortexService, n: int, rng: random.Random, vocab: list[str]) -> float:
    started = time.perf_counter()
    for i in range(n):
        await service.memories.remember(
            RememberRequest(content=synthetic_memory(rng, vocab, i), importance=0.5)
        )
    await service.embed_pending()
    return time.perf_counter() - started


class InProcessStub:
    """The stub server's vectors without the HTTP round trip: same model key, same vectors."""

    name = "in-process-stub"
    model_key = "stub-384"

    def ready(self) -> bool:
        return True

    async def embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([stub_vector(t, DIM) for t in texts])


STAGE_MS: dict[str, list[float]] = {}  # per stage of the search, the last in-process run's


async def measure_inprocess(
    service: CortexService, queries: list[str]
) -> tuple[list[float], list[float]]:
    recall_ms, embed_ms = [], []
    STAGE_MS.clear()
    filters_now = to_iso(SystemClock().now())
    filters = SearchFilters(agent_id=service.settings.agent_id, now=filters_now)
    for q in queries[:20]:  # warm caches (the numpy matrix loads on first search)
        await service.engines.searcher.search(q, filters, 5, SystemClock().now())
    for q in queries:
        started = time.perf_counter()
        result = await service.memories.recall(RecallRequest(query=q, max_results=5))
        total = (time.perf_counter() - started) * 1000
        embed_ms.append(result.meta.timings_ms.get("embed", 0.0))
        for stage, ms in result.meta.timings_ms.items():
            STAGE_MS.setdefault(stage, []).append(ms)
        recall_ms.append(total)
        assert result.meta.channels == ["text", "vector"], result.meta
    await service.drain()
    return recall_ms, embed_ms


def start_rerank_stub() -> tuple[subprocess.Popen[str], str]:
    """The /rerank stub in its own process on 127.0.0.1, and its port."""
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.rerank_stub", "--favourite", "budget"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    port = (stub.stdout.readline() if stub.stdout else "").split()[1]
    return stub, port


async def measure_rerank(service: CortexService, queries: list[str]) -> dict[str, float]:
    """In-process recall p50 without and with the reranker stage, interleaved query by query:
    the reranker is the /rerank stub (tests/helpers/rerank_stub.py) in its own process on
    127.0.0.1, reranking the top 20 (the default), called through the HTTP reranker."""
    stage = next(s for s in service.engines.searcher.stages if isinstance(s, Rerank))
    stub, port = start_rerank_stub()
    try:
        http = HttpReranker(
            base_url=f"http://127.0.0.1:{port}/v1", model="stub", api_key=None, timeout_s=2.0
        )
        reranker = GuardedReranker(http, timeout_s=2.0)
        times: dict[bool, list[float]] = {False: [], True: []}
        for i, q in enumerate(queries):
            for on in (i % 2 == 0, i % 2 != 0):
                stage.reranker = reranker if on else None
                started = time.perf_counter()
                result = await service.memories.recall(RecallRequest(query=q, max_results=5))
                times[on].append((time.perf_counter() - started) * 1000)
                assert not [d for d in result.meta.degraded if d.startswith("reranker")], result
        await http.close()
    finally:
        stage.reranker = None
        stub.kill()
        stub.wait()
    return {"off": pct(times[False], 50), "on": pct(times[True], 50)}


def measure_bare_fts(db_path: Path, queries: list[str]) -> list[float]:
    from cortex_mcp.search.text import build_query

    conn = sqlite_module().connect(str(db_path))
    out = []
    for q in queries:
        match = build_query(q).match
        started = time.perf_counter()
        conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 20",
            (match,),
        ).fetchall()
        out.append((time.perf_counter() - started) * 1000)
    conn.close()
    return out


async def measure_knn(service: CortexService, queries: list[str]) -> dict[str, float]:
    """Median exact-KNN time (k=20, no filters beyond the default) per backend."""
    results: dict[str, float] = {}
    model = (
        service.engines.embeddings.primary.model_key if service.engines.embeddings.primary else ""
    )
    vectors = (await service.engines.embeddings.embed(queries[:50])).vectors
    filters = SearchFilters(agent_id=service.settings.agent_id, now=to_iso(SystemClock().now()))
    index = service.engines.searcher.index
    for backend in ("numpy", "vec0"):
        if backend == "vec0" and not service.stores.db.vec_loaded:
            continue
        index.backend_setting = backend
        await index.search(vectors[0], model, 20, filters)  # build / warm
        times = []
        for v in vectors:
            started = time.perf_counter()
            await index.search(v, model, 20, filters)
            times.append((time.perf_counter() - started) * 1000)
        results[backend] = statistics.median(times)
    index.backend_setting = "auto"
    return results


def _stdio_params(db_path: Path, url: str) -> StdioServerParameters:
    command, *args = server_command()
    env = server_env(
        db_path,
        CORTEX_EMBEDDING_PROVIDER="openai",
        CORTEX_EMBEDDING_BASE_URL=url,
        CORTEX_EMBEDDING_MODEL="stub-384",
        CORTEX_LOG_LEVEL="WARNING",
    )
    return StdioServerParameters(command=command, args=args, env=env)


def _child_cpu_s(marker: str) -> float:
    """CPU seconds used so far by our child process whose command line contains `marker`
    (Linux /proc): wall time on a loaded machine mostly measures the scheduler."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid() and marker in cmdline:
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return float("nan")


async def _timed(
    client: Client, tool: str, arguments: list[dict[str, Any]], marker: str = "cortex"
) -> list[float]:
    """Wall ms per call; the server's CPU ms per call is appended to CPU_MS[tool]."""
    out = []
    cpu_before = _child_cpu_s(marker)
    for args in arguments:
        started = time.perf_counter()
        result = await client.call_tool(tool, args)
        out.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.content
    CPU_MS.setdefault(tool, []).append((_child_cpu_s(marker) - cpu_before) * 1000 / len(arguments))
    return out


async def measure_stdio(db_path: Path, url: str, queries: list[str]) -> dict[str, list[float]]:
    """Over one stdio session: recall returning up to 10 memories, then remember (new facts)."""
    recalls = [{"query": q, "max_results": RECALL_K} for q in queries]
    rng = random.Random(7)
    facts = [
        {"content": f"Latency probe {i}: {rng.random():.12f} budget notes for the quarterly review"}
        for i in range(len(queries))
    ]
    async with Client(_stdio_params(db_path, url), mode="legacy") as client:
        await _timed(client, "cortex_recall", recalls[:10])  # warm up
        recall = await _timed(client, "cortex_recall", recalls)
        remember = await _timed(client, "cortex_remember", facts)
        returned = await client.call_tool("cortex_recall", recalls[0])
        sizes = [len(returned.structured_content["memories"])]
        text = returned.content[0].text
        as_json = json.dumps(returned.structured_content, ensure_ascii=False, indent=2)
    return {
        "recall": recall,
        "remember": remember,
        "returned": sizes,
        "text_tokens": [count_tokens(text), count_tokens(as_json)],
    }


async def measure_echo_floor(queries: list[str]) -> list[float]:
    """The transport floor: the same SDK, an echo tool, the same client, over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).with_name("echo_server.py"))]
    )
    async with Client(params, mode="legacy") as client:
        args = [{"text": q} for q in queries]
        await _timed(client, "echo", args[:10], "echo_server")
        return await _timed(client, "echo", args, "echo_server")


def measure_initialize(db_path: Path) -> list[float]:
    from tests.helpers.stdio_helpers import RawStdioServer

    times = []
    for _ in range(5):
        started = time.perf_counter()
        server = RawStdioServer(db_path)
        server.initialize()
        times.append((time.perf_counter() - started) * 1000)
        server.close()
    return times


async def bench_size(n: int, n_queries: int, url: str, tmp: Path) -> dict[str, Any]:
    rng = random.Random(n)
    vocab = _vocabulary(rng)
    db_path = tmp / f"bench-{n}.db"
    settings = load_settings(
        db_path=db_path,
        embedding_provider="openai",
        embedding_base_url=url,
        embedding_model="stub-384",
        embedding_batch_size=256,
        embedding_timeout_s=30,
        search=SearchSettings(),
    )
    queries = [synthetic_query(rng, vocab) for _ in range(n_queries)]
    async with open_cortex(settings, background=False) as service:
        fill_s = await fill(service, n, rng, vocab)
        _, embed_ms = await measure_inprocess(service, queries[:100])  # HTTP provider
        http_provider = service.engines.embeddings.providers
        service.engines.embeddings.providers = [InProcessStub()]
        recall_ms, _ = await measure_inprocess(service, queries)
        stages = {name: pct(STAGE_MS[name], 50) for name in STAGE_MS}
        rerank = await measure_rerank(service, queries[:100])
        service.engines.embeddings.providers = http_provider
        knn = await measure_knn(service, queries)
    bare = measure_bare_fts(db_path, queries)
    stdio_queries = queries[: min(200, n_queries)]
    echo = await measure_echo_floor(stdio_queries)
    stdio = await measure_stdio(db_path, url, stdio_queries)
    return {
        "n": n,
        "fill_s": fill_s,
        "recall_p50": pct(recall_ms, 50),
        "recall_p95": pct(recall_ms, 95),
        "stages": stages,
        "stage_order": [stage.name for stage in service.engines.searcher.stages],
        "rerank": rerank,
        "embed_p50": pct(embed_ms, 50),
        "fts_p50": pct(bare, 50),
        "fts_p95": pct(bare, 95),
        "stdio_p50": pct(stdio["recall"], 50),
        "stdio_p95": pct(stdio["recall"], 95),
        "remember_p50": pct(stdio["remember"], 50),
        "remember_p95": pct(stdio["remember"], 95),
        "echo_p50": pct(echo, 50),
        "echo_p95": pct(echo, 95),
        "returned": stdio["returned"][0],
        "text_tokens": stdio["text_tokens"],
        "cpu": {tool: values[-1] for tool, values in CPU_MS.items()},
        "knn": knn,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


nan = float("nan")


async def run(args: argparse.Namespace) -> None:
    with (
        embedding_stub(StubState(default_dim=DIM, keep_alive=True)) as (url, _),
        tempfile.TemporaryDirectory() as t,
    ):
        tmp = Path(t)
        init = measure_initialize(tmp / "init.db")
        print(
            f"stdio initialize after spawn: median {statistics.median(init):.0f} ms, "
            f"max {max(init):.0f} ms over {len(init)} spawns\n"
        )
        rows = []
        for n in [int(s) for s in args.sizes.split(",")]:
            row = await bench_size(n, args.queries, url, tmp)
            rows.append(row)
            print(f"size {n}: filled in {row['fill_s']:.1f}s", file=sys.stderr)
    print(
        "| memories | recall p50 | recall p95 | HTTP embed p50 | bare FTS5 p50/p95 | p50 ratio | stdio p50/p95 | KNN numpy | KNN vec0 | max RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        knn = r["knn"]
        print(
            f"| {r['n']:,} | {r['recall_p50']:.2f} ms | {r['recall_p95']:.2f} ms | {r['embed_p50']:.2f} ms"
            f" | {r['fts_p50']:.2f} / {r['fts_p95']:.2f} ms | {r['recall_p50'] / max(r['fts_p50'], 1e-3):.1f}x"
            f" | {r['stdio_p50']:.2f} / {r['stdio_p95']:.2f} ms"
            f" | {knn.get('numpy', float('nan')):.2f} ms | {knn.get('vec0', float('nan')):.2f} ms | {r['rss_mb']:.0f} MB |"
        )
    print("\nCost of each search stage, in-process (median ms per recall; the channels run the")
    print("text channel on the database thread while the query is embedded and searched):\n")
    for r in rows:
        order, medians = r["stage_order"], r["stages"]
        parts = [f"{name} {medians.get(name, nan):.3f}" for name in order]
        inner = [
            f"{name} {medians[name]:.3f}" for name in ("text", "embed", "vector") if name in medians
        ]
        print(f"- {r['n']:,} memories: {' · '.join(parts)} (inside channels: {', '.join(inner)})")
    print("\nRecall p50 in-process, without and with the reranker stage (the /rerank stub on")
    print("127.0.0.1 in its own process, top 20 reranked), interleaved:\n")
    for r in rows:
        rr = r["rerank"]
        print(
            f"- {r['n']:,} memories: {rr['off']:.2f} ms without, {rr['on']:.2f} ms with"
            f" (+{rr['on'] - rr['off']:.2f} ms)"
        )
    print(
        "\nOver stdio, against the transport floor (an echo tool on the same SDK, same client,"
        f" same run); recall returns up to {RECALL_K} memories, remember stores a new fact:\n"
    )
    print(
        "| memories | echo floor p50/p95 | recall p50/p95 | recall / floor | remember p50/p95"
        " | remember / floor | server CPU per call: echo / recall / remember |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        floor = max(r["echo_p50"], 1e-3)
        cpu = r["cpu"]
        print(
            f"| {r['n']:,} | {r['echo_p50']:.2f} / {r['echo_p95']:.2f} ms"
            f" | {r['stdio_p50']:.2f} / {r['stdio_p95']:.2f} ms ({r['returned']} returned)"
            f" | {r['stdio_p50'] / floor:.2f}x"
            f" | {r['remember_p50']:.2f} / {r['remember_p95']:.2f} ms"
            f" | {r['remember_p50'] / floor:.2f}x"
            f" | {cpu.get('echo', nan):.2f} / {cpu.get('cortex_recall', nan):.2f}"
            f" / {cpu.get('cortex_remember', nan):.2f} ms |"
        )
    for r in rows:
        readable, as_json = r["text_tokens"]
        print(
            f"\n{r['n']:,} memories: the text content of a {r['returned']}-memory recall is"
            f" {readable} tokens; the same result as pretty JSON would be {as_json}"
            f" ({as_json / max(readable, 1):.1f}x)"
        )
    print(
        f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        " (wall-time ratios stretch under load; server CPU per call much less)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
