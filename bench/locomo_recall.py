"""LoCoMo retrieval benchmark: recall@5, recall@10 and MRR@10 per channel and fusion method.

Protocol (shared/datasets/README.md): one memory per turn, text "<speaker>: <text>", stored
with the service's `remember`; every QA of categories 1-4 is a query; recall@k is the fraction
of its evidence turns in the top k, averaged over queries. The strong FTS5 BM25 baseline (what
a competent FTS5 server does: porter unicode61, English stop words dropped, content words
quoted and OR-ed) is computed in the same run over the same turns; the weak one (stop words
kept) is printed for reference only. Every method is also shown per conversation, as its
R@10 minus the strong baseline's on that conversation.

    python bench/locomo_recall.py                  # text rows (and semantic rows if cached)
    python bench/locomo_recall.py --embed-url http://127.0.0.1:8765/v1
    python bench/locomo_recall.py --loco           # + leave-one-conversation-out weights
    python bench/locomo_recall.py --store both     # SQLite and PostgreSQL, R@10 compared

`--store postgres` (or `both`) keeps each conversation in a fresh PostgreSQL database, on an
embedded PostgreSQL 16 with pgvector (pgserver, in the dev extra) or on the server of
`--database-url` (a user who may CREATE DATABASE); `both` prints each store's table and then
the R@10 difference of every method.

Data: LoCoMo's `data/locomo10.json` (snap-research/locomo on GitHub, ACL 2024); the dev split
is five of its conversations, shipped as shared/datasets/locomo_dev.json beside the checkout.
`--split heldout` runs the other five when given the full file.

Semantic rows: bash bench/setup_bench_env.sh, then serve all-MiniLM-L6-v2 offline with
`nice ~/.cortex-bench-venv/bin/python bench/embed_server.py --port 8765`. Vectors are
cached on disk (--embed-cache), so later runs need no server at all.

`--stub-embeddings` runs the vector rows without any model: the local embedding stub
(tests/helpers/embedding_stub.py, 384 dimensions of hashed word stems) serves every vector, nothing is
cached. Its R@10 says nothing of semantic recall; with `--store both` it shows that the two
stores rank the same vectors the same way (fusion, pgvector against the in-process index).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.embed_cache import VectorCache, caching_proxy  # noqa: E402
from bench.locomo_data import (  # noqa: E402
    Conversation,
    DataNotFound,
    find_dataset,
    load_dataset,
    strong_match,
    weak_match,
)
from cortex_mcp.config import SearchSettings, load_settings  # noqa: E402
from cortex_mcp.models import SearchFilters, SystemClock, to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from tests.helpers.embedding_stub import StubState, embedding_stub  # noqa: E402

MODEL = "all-MiniLM-L6-v2"
STRONG = "FTS5 BM25, stop words dropped (strong)"
WEAK = "FTS5 BM25, stop words kept (weak)"
TOOL = "recall (tool path, access counts grow)"
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "cortex-mcp"
    / "bench-embeddings.sqlite"
)


@dataclass
class Scores:
    """Per-query figures, kept per conversation so the spread can be shown."""

    by_conv: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)
    ms: list[float] = field(default_factory=list)

    def add(self, conv: str, ranked: list[set[str]], evidence: set[str], ms: float) -> None:
        def recall_at(k: int) -> float:
            got: set[str] = set().union(*ranked[:k]) if ranked[:k] else set()
            return len(got & evidence) / len(evidence)

        first = next((i for i, turns in enumerate(ranked[:10]) if turns & evidence), None)
        mrr = 0.0 if first is None else 1.0 / (first + 1)
        self.by_conv.setdefault(conv, []).append((recall_at(5), recall_at(10), mrr))
        self.ms.append(ms)

    def mean(self, metric: int, convs: list[str] | None = None) -> float:
        rows = [r for c, rs in self.by_conv.items() if convs is None or c in convs for r in rs]
        return statistics.mean(r[metric] for r in rows)

    def r10_by_conv(self) -> dict[str, float]:
        return {c: statistics.mean(r[1] for r in rs) for c, rs in self.by_conv.items()}


class Fts5Baseline:
    """Plain FTS5 over the same turn texts, ranked by bm25(); `match` builds the query."""

    def __init__(self, turns: dict[str, str], match: Callable[[str], str]) -> None:
        self.match = match
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, text, tokenize='porter unicode61')"
        )
        self.conn.executemany("INSERT INTO t VALUES (?, ?)", list(turns.items()))

    def search(self, question: str, k: int = 10) -> list[set[str]]:
        match = self.match(question)
        if not match:
            return []
        rows = self.conn.execute(
            "SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        ).fetchall()
        return [{row[0]} for row in rows]


def variants(has_vectors: bool, loco: bool) -> dict[str, tuple[str, dict[str, Any]]]:
    """name -> (mode, search settings overrides); the first hybrid row is the default."""
    rows: dict[str, tuple[str, dict[str, Any]]] = {"text only": ("text", {})}
    if not has_vectors:
        return rows
    rows |= {
        "vector only": ("vector", {}),
        "hybrid maxnorm 0.5/0.5 (default)": ("hybrid", {}),
        "hybrid minmax 0.3v/0.7t (old default)": (
            "hybrid",
            {"fusion": "minmax", "vector_weight": 0.3, "text_weight": 0.7},
        ),
        "hybrid rrf k=60": ("hybrid", {"fusion": "rrf"}),
        "hybrid seed 0.7v+0.3/(1+rank)": (
            "hybrid",
            {"fusion": "weighted", "vector_weight": 0.7, "text_weight": 0.3},
        ),
        "hybrid default +mmr": ("hybrid", {"mmr": True}),
    }
    if loco:
        for fusion in ("maxnorm", "minmax"):
            for w in LOCO_GRID:
                rows[f"{fusion} {w:.1f}v"] = (
                    "hybrid",
                    {"fusion": fusion, "vector_weight": w, "text_weight": round(1 - w, 2)},
                )
    return rows


LOCO_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


async def load_conversation(service: CortexService, conv: Conversation) -> dict[str, set[str]]:
    """Remember every turn; return memory id -> the dia_ids it stands for."""
    owners: dict[str, set[str]] = {}
    for dia_id, text in conv.turns.items():
        result = await service.memories.remember(
            RememberRequest(content=text, agent_id=conv.sample_id, importance=0.5)
        )
        owners.setdefault(result.id, set()).add(dia_id)
    return owners


def cached_everything(cache_path: Path, conversations: list[Conversation]) -> bool:
    if not cache_path.exists():
        return False
    texts = [t for c in conversations for t in c.turns.values()]
    texts += [q for c in conversations for q, _ in c.questions]
    cache = VectorCache(cache_path)
    try:
        return len(cache.get_many(MODEL, list(set(texts)))) == len(set(texts))
    finally:
        cache.close()


@contextmanager
def conversation_store(
    overrides: dict[str, Any], fresh: Callable[[str], str] | None, conv: Conversation
) -> Iterator[Any]:
    """Settings for a store of its own: a SQLite file, or (with `fresh`) a new PostgreSQL
    database."""
    with tempfile.TemporaryDirectory() as tmp:
        if fresh is not None:
            name = "locomo_" + "".join(c if c.isalnum() else "_" for c in conv.sample_id)
            overrides = {**overrides, "database_url": fresh(name.lower())}
        yield load_settings(db_path=Path(tmp) / "bench.db", **overrides)


async def measure(
    conversations: list[Conversation],
    embed_url: str | None,
    loco: bool,
    fresh: Callable[[str], str] | None = None,
) -> tuple[dict[str, Scores], Any]:
    overrides: dict[str, Any] = {"embedding_provider": "none"}
    if embed_url:
        overrides = {
            "embedding_provider": "openai",
            "embedding_base_url": embed_url,
            "embedding_model": MODEL,
            "embedding_timeout_s": 60.0,
        }
    table = variants(bool(embed_url), loco)
    scores = {name: Scores() for name in [STRONG, WEAK, *table, TOOL]}
    settings = load_settings(db_path=Path("unused.db"), **overrides)
    # One database per conversation, as the baseline has one FTS table per conversation:
    # FTS5 computes IDF over the whole table, and other conversations' speaker names would
    # make a name look rare. Every ranking row runs first, then the tool path, whose recalls
    # count accesses (as in real use) that would otherwise leak into the other rows.
    for conv in conversations:
        with conversation_store(overrides, fresh, conv) as store_settings:
            async with open_cortex(store_settings, background=False) as service:
                started = time.perf_counter()
                owners = await load_conversation(service, conv)
                embedded = await service.embed_pending()
                print(
                    f"{conv.sample_id}: {len(conv.turns)} turns, embedded {embedded}"
                    f" in {time.perf_counter() - started:.1f}s",
                    file=sys.stderr,
                )
                now = SystemClock().now()
                await rank_rows(service, conv, owners, table, scores, now)
                await tool_path_row(service, conv, owners, scores)
    return scores, settings.search


async def rank_rows(
    service: CortexService,
    conv: Conversation,
    owners: dict[str, set[str]],
    table: dict[str, tuple[str, dict[str, Any]]],
    scores: dict[str, Scores],
    now: datetime,
) -> None:
    baselines = {
        STRONG: Fts5Baseline(conv.turns, strong_match),
        WEAK: Fts5Baseline(conv.turns, weak_match),
    }
    filters = SearchFilters(agent_id=conv.sample_id, now=to_iso(now))
    defaults = service.settings.search.model_dump()
    for question, evidence in conv.questions:
        for name, baseline in baselines.items():
            t0 = time.perf_counter()
            ranked = baseline.search(question)
            ms = (time.perf_counter() - t0) * 1000
            scores[name].add(conv.sample_id, ranked, evidence, ms)
        for name, (mode, extra) in table.items():
            search_settings = SearchSettings(**{**defaults, **extra})
            t0 = time.perf_counter()
            outcome = await service.engines.searcher.search(
                question, filters, 10, now, mode=mode, settings=search_settings
            )
            ms = (time.perf_counter() - t0) * 1000
            ids = [c.memory_id for c in outcome.ranked]
            scores[name].add(conv.sample_id, [owners.get(i, set()) for i in ids], evidence, ms)


async def tool_path_row(
    service: CortexService,
    conv: Conversation,
    owners: dict[str, set[str]],
    scores: dict[str, Scores],
) -> None:
    for question, evidence in conv.questions:
        t0 = time.perf_counter()
        result = await service.memories.recall(
            RecallRequest(
                query=question, max_results=10, agent_id=conv.sample_id, max_tokens=100_000
            )
        )
        ms = (time.perf_counter() - t0) * 1000
        ids = [m.id for m in result.memories]
        scores[TOOL].add(conv.sample_id, [owners.get(i, set()) for i in ids], evidence, ms)


def print_table(scores: dict[str, Scores], loco: bool) -> None:
    base = scores[STRONG].r10_by_conv()
    convs = list(base)
    print("R@10 per conversation: " + ", ".join(f"{c} {base[c]:.3f}" for c in convs) + "\n")
    print(
        "| method                                 | R@5    | R@10   | MRR@10 "
        "| ΔR@10 vs strong | ΔR@10 per conversation (min..max) | p50 ms |"
    )
    print("|" + "|".join("-" * n for n in (40, 8, 8, 8, 17, 35, 8)) + "|")
    strong_r10 = scores[STRONG].mean(1)
    for name, score in scores.items():
        if loco and name.split(" ")[0] in ("maxnorm", "minmax"):
            continue
        per = score.r10_by_conv()
        deltas = [per[c] - base[c] for c in convs]
        spread = f"{min(deltas):+.3f}..{max(deltas):+.3f} ({sum(d >= 0 for d in deltas)}"
        spread += f"/{len(deltas)} >= 0)"
        print(
            f"| {name:<38} | {score.mean(0):.4f} | {score.mean(1):.4f} | {score.mean(2):.4f}"
            f" | {score.mean(1) - strong_r10:+15.4f} | {spread:<33}"
            f" | {statistics.median(score.ms):6.2f} |"
        )
    print_tool_path_cost(scores, convs)
    if loco:
        print_loco(scores, convs)


def print_tool_path_cost(scores: dict[str, Scores], convs: list[str]) -> None:
    """What counting accesses costs: the tool path against the same ranking without it."""
    same = "hybrid maxnorm 0.5/0.5 (default)" if "vector only" in scores else "text only"
    tool, ranking = scores[TOOL].r10_by_conv(), scores[same].r10_by_conv()
    cells = ", ".join(f"{c} {tool[c] - ranking[c]:+.3f}" for c in convs)
    print(
        f"\nΔR@10 tool path vs {same}: {scores[TOOL].mean(1) - scores[same].mean(1):+.4f} ({cells})"
    )


def print_loco(scores: dict[str, Scores], convs: list[str]) -> None:
    """Pick the vector weight on four conversations, measure it on the fifth."""
    base = scores[STRONG].r10_by_conv()
    print("\nleave-one-conversation-out: weight chosen on the other four, R@10 on the one left out")
    for fusion in ("maxnorm", "minmax"):
        cells = []
        for held in convs:
            rest = [c for c in convs if c != held]
            best = max(LOCO_GRID, key=lambda w: scores[f"{fusion} {w:.1f}v"].mean(1, rest))
            got = scores[f"{fusion} {best:.1f}v"].r10_by_conv()[held]
            cells.append(f"{held}: {best:.1f}v {got - base[held]:+.3f}")
        print(f"  {fusion:8} " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, help="locomo_dev.json or locomo10.json")
    parser.add_argument("--split", choices=["dev", "heldout", "all"], default="dev")
    parser.add_argument("--embed-url", help="OpenAI-compatible /v1 base URL serving " + MODEL)
    parser.add_argument("--embed-cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--no-vectors", action="store_true", help="text rows only")
    parser.add_argument(
        "--stub-embeddings",
        action="store_true",
        help="vectors from the local embedding stub (hashed word stems), not a model",
    )
    parser.add_argument("--loco", action="store_true", help="leave-one-conversation-out table")
    parser.add_argument("--store", choices=["sqlite", "postgres", "both"], default="sqlite")
    parser.add_argument("--database-url", help="PostgreSQL server (default: an embedded one)")
    args = parser.parse_args()
    try:
        conversations = load_dataset(find_dataset(args.dataset, ROOT), args.split)
    except DataNotFound as exc:
        sys.exit(str(exc))
    upstream = args.embed_url
    use_vectors = not args.no_vectors and (
        args.stub_embeddings
        or upstream is not None
        or cached_everything(args.embed_cache, conversations)
    )
    if not use_vectors and not args.no_vectors:
        print(
            f"no embedding server (--embed-url) and no cached vectors in {args.embed_cache}:"
            " text rows only (see --help for the semantic rows)",
            file=sys.stderr,
        )
    queries = sum(len(c.questions) for c in conversations)
    print(f"LoCoMo {args.split}: {len(conversations)} conversations, {queries} queries (cat. 1-4)")
    stores = ["sqlite", "postgres"] if args.store == "both" else [args.store]
    by_store = {}
    with ExitStack() as stack:
        fresh = None
        if "postgres" in stores:
            from bench.pg import postgres_databases

            fresh = stack.enter_context(postgres_databases(args.database_url))
        url, proxy = None, None
        if use_vectors and args.stub_embeddings:
            url, _ = stack.enter_context(
                embedding_stub(StubState(default_dim=384, keep_alive=True))
            )
        elif use_vectors:
            proxy = stack.enter_context(caching_proxy(args.embed_cache, upstream))
            url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        for store in stores:
            chosen = fresh if store == "postgres" else None
            scores, search = asyncio.run(measure(conversations, url, args.loco, chosen))
            by_store[store] = scores
            print(f"\n## store: {store}")
            if proxy is not None:
                print(f"embeddings: {MODEL} ({proxy.misses} computed, the rest from the cache)")
            elif use_vectors:
                print("embeddings: the local stub (hashed word stems, 384 dims), not a model")
            print(f"default fusion: {search.fusion} {search.vector_weight}v/{search.text_weight}t")
            print_table(scores, args.loco)
    if len(by_store) == 2:
        print_store_difference(by_store["sqlite"], by_store["postgres"])


def print_store_difference(sqlite: dict[str, Scores], postgres: dict[str, Scores]) -> None:
    """R@10 of each method on PostgreSQL minus on SQLite (the baselines are the same FTS5)."""
    print("\n| method (same data, same queries) | R@10 SQLite | R@10 PostgreSQL | difference |")
    print("|---|---|---|---|")
    for name in sqlite:
        if name in (STRONG, WEAK):
            continue
        a, b = sqlite[name].mean(1), postgres[name].mean(1)
        print(f"| {name} | {a:.4f} | {b:.4f} | {b - a:+.4f} |")


if __name__ == "__main__":
    main()
