"""LoCoMo retrieval benchmark: recall@5, recall@10 and MRR@10 per channel and fusion method.

Protocol (../shared/datasets/README.md): one memory per turn, text "<speaker>: <text>", stored
with the service's `remember`; every QA of categories 1-4 is a query; recall@k is the fraction
of its evidence turns in the top k, averaged over queries. A plain FTS5 (porter) BM25 baseline
is computed in the same run over the same turns.

    python tests/bench/locomo_recall.py                       # text channel only
    python tests/bench/locomo_recall.py --embed-url http://127.0.0.1:8765/v1 --embed-model all-MiniLM-L6-v2

For the semantic rows, serve all-MiniLM-L6-v2 offline with tests/bench/embed_server.py (see
tests/bench/setup_bench_env.sh). The `recall (tool path)` row goes through `service.recall`
exactly as the MCP tool does (access counts accumulate across queries, as in real use); the
other rows use the side-effect-free search so each variant sees the same database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import SearchSettings, load_settings  # noqa: E402
from cortex_mcp.models import SearchFilters, SystemClock, to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402

DEFAULT_DATASET = ROOT.parent / "shared" / "datasets" / "locomo_dev.json"
_DIA = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass
class Conversation:
    sample_id: str
    turns: dict[str, str]  # dia_id -> "<speaker>: <text>"
    questions: list[tuple[str, set[str]]]  # (question, evidence dia_ids)


def load_dataset(path: Path) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns = {
            turn["dia_id"]: f"{turn['speaker']}: {turn['text']}"
            for key, session in conv.items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
        }
        questions = []
        for qa in sample["qa"]:
            if qa["category"] not in (1, 2, 3, 4):
                continue
            evidence = {f"D{a}:{b}" for raw in qa["evidence"] for a, b in _DIA.findall(raw)}
            evidence &= set(turns)
            if evidence:
                questions.append((qa["question"], evidence))
        conversations.append(Conversation(sample["sample_id"], turns, questions))
    return conversations


@dataclass
class Scores:
    r5: list[float]
    r10: list[float]
    mrr: list[float]
    ms: list[float]

    @classmethod
    def empty(cls) -> Scores:
        return cls([], [], [], [])

    def add(self, ranked: list[set[str]], evidence: set[str], ms: float) -> None:
        def recall_at(k: int) -> float:
            got: set[str] = set().union(*ranked[:k]) if ranked[:k] else set()
            return len(got & evidence) / len(evidence)

        self.r5.append(recall_at(5))
        self.r10.append(recall_at(10))
        first = next((i for i, turns in enumerate(ranked[:10]) if turns & evidence), None)
        self.mrr.append(0.0 if first is None else 1.0 / (first + 1))
        self.ms.append(ms)

    def row(self, name: str) -> str:
        return (
            f"| {name:<34} | {statistics.mean(self.r5):.4f} | {statistics.mean(self.r10):.4f}"
            f" | {statistics.mean(self.mrr):.4f} | {statistics.median(self.ms):6.2f} |"
        )


class Fts5Baseline:
    """Plain FTS5 with the porter tokenizer, every query word OR-ed, no other processing."""

    def __init__(self, turns: dict[str, str]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, text, tokenize='porter')"
        )
        self.conn.executemany("INSERT INTO t VALUES (?, ?)", list(turns.items()))

    def search(self, question: str, k: int = 10) -> list[set[str]]:
        words = re.findall(r"\w+", question.lower())
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.conn.execute(
            "SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        ).fetchall()
        return [{row[0]} for row in rows]


def variants(has_vectors: bool) -> dict[str, tuple[str, dict[str, Any]]]:
    """name -> (mode, search settings overrides)."""
    rows: dict[str, tuple[str, dict[str, Any]]] = {"text only": ("text", {})}
    if has_vectors:
        rows |= {
            "vector only": ("vector", {}),
            "hybrid seed 0.7v+0.3/(1+rank)": (
                "hybrid",
                {"fusion": "weighted", "vector_weight": 0.7, "text_weight": 0.3},
            ),
            "hybrid rrf k=60": ("hybrid", {"fusion": "rrf"}),
            "hybrid minmax 0.7v/0.3t": (
                "hybrid",
                {"fusion": "minmax", "vector_weight": 0.7, "text_weight": 0.3},
            ),
            "hybrid minmax 0.5v/0.5t": (
                "hybrid",
                {"fusion": "minmax", "vector_weight": 0.5, "text_weight": 0.5},
            ),
            "hybrid minmax 0.4v/0.6t": (
                "hybrid",
                {"fusion": "minmax", "vector_weight": 0.4, "text_weight": 0.6},
            ),
            "hybrid minmax 0.2v/0.8t": (
                "hybrid",
                {"fusion": "minmax", "vector_weight": 0.2, "text_weight": 0.8},
            ),
            "hybrid minmax 0.3v/0.7t": (
                "hybrid",
                {"fusion": "minmax", "vector_weight": 0.3, "text_weight": 0.7},
            ),
            "hybrid default +mmr": ("hybrid", {"mmr": True}),
            "hybrid default +decay": ("hybrid", {"temporal_decay": True}),
            "hybrid default pool x8": ("hybrid", {"pool_factor": 8}),
        }
    return rows


async def load_conversation(service: CortexService, conv: Conversation) -> dict[str, set[str]]:
    """Remember every turn; return memory id -> the dia_ids it stands for."""
    owners: dict[str, set[str]] = {}
    for dia_id, text in conv.turns.items():
        result = await service.remember(text, agent_id=conv.sample_id, importance=0.5)
        owners.setdefault(result.id, set()).add(dia_id)
    return owners


def _turn_mapper(owners: dict[str, set[str]]) -> Callable[[list[str]], list[set[str]]]:
    def to_turns(ids: list[str]) -> list[set[str]]:
        return [owners.get(i, set()) for i in ids]

    return to_turns


async def run(args: argparse.Namespace) -> None:
    conversations = load_dataset(args.dataset)
    overrides: dict[str, Any] = {"embedding_provider": "none"}
    if args.embed_url:
        overrides = {
            "embedding_provider": "openai",
            "embedding_base_url": args.embed_url,
            "embedding_model": args.embed_model,
            "embedding_timeout_s": 30.0,
        }
    has_vectors = bool(args.embed_url)
    table = variants(has_vectors)
    scores: dict[str, Scores] = {
        name: Scores.empty() for name in ["FTS5 porter baseline", *table, "recall (tool path)"]
    }
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(db_path=Path(tmp) / "bench.db", **overrides)
        async with open_cortex(settings, background=False) as service:
            started = time.perf_counter()
            owners: dict[str, dict[str, set[str]]] = {}
            for conv in conversations:
                owners[conv.sample_id] = await load_conversation(service, conv)
            embedded = await service.embed_pending()
            print(
                f"loaded {sum(len(c.turns) for c in conversations)} turns, embedded {embedded}"
                f" in {time.perf_counter() - started:.1f}s",
                file=sys.stderr,
            )
            now = SystemClock().now()
            for conv in conversations:
                baseline = Fts5Baseline(conv.turns)
                filters = SearchFilters(agent_id=conv.sample_id, now=to_iso(now))
                ids_to_turns = _turn_mapper(owners[conv.sample_id])
                for question, evidence in conv.questions:
                    t0 = time.perf_counter()
                    ranked = baseline.search(question)
                    scores["FTS5 porter baseline"].add(
                        ranked, evidence, (time.perf_counter() - t0) * 1000
                    )
                    for name, (mode, extra) in table.items():
                        search_settings = SearchSettings(
                            **{**settings.search.model_dump(), **extra}
                        )
                        t0 = time.perf_counter()
                        outcome = await service.searcher.search(
                            question, filters, 10, now, mode=mode, settings=search_settings
                        )
                        ms = (time.perf_counter() - t0) * 1000
                        scores[name].add(
                            ids_to_turns([c.memory_id for c in outcome.ranked]), evidence, ms
                        )
                    t0 = time.perf_counter()
                    result = await service.recall(
                        question, max_results=10, agent_id=conv.sample_id, max_tokens=100_000
                    )
                    ms = (time.perf_counter() - t0) * 1000
                    scores["recall (tool path)"].add(
                        ids_to_turns([m.id for m in result.memories]), evidence, ms
                    )
    queries = sum(len(c.questions) for c in conversations)
    print(f"\nLoCoMo dev: {len(conversations)} conversations, {queries} queries (categories 1-4)")
    if has_vectors:
        print(f"embeddings: {args.embed_model} via {args.embed_url}")
    print(
        f"default fusion: {settings.search.fusion} {settings.search.vector_weight}v/{settings.search.text_weight}t\n"
    )
    print("| method                             | R@5    | R@10   | MRR@10 | p50 ms |")
    print("|------------------------------------|--------|--------|--------|--------|")
    for name, score in scores.items():
        print(score.row(name))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--embed-url", help="OpenAI-compatible /v1 base URL")
    parser.add_argument("--embed-model", default="all-MiniLM-L6-v2")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
