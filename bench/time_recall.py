"""Time-aware recall benchmark: R@5, R@10 and MRR@10 per question set and kind, with the strong
FTS5 BM25 baseline in the same run.

Question sets (bench/time_data.py says how each is built and dated):
- memorybank en / zh: MemoryBank's diaries, kinds date ("On May 6th, I read a book..."),
  relative ("A few days ago...", "最近...") and plain; `now` is noon of the day after the
  user's last day.
- locomo dates: generated "What did <speaker> say about <word> in <Month Year>?" (kind month) and
  "... on <Month> <day>?" (kind day); `now` is noon of the day after the last session.
- locomo qa: LoCoMo's own questions (categories 1-4) over the same dated turns, split by the
  query parser into qa (no time words: R@10 is the figure to watch, time must not change it)
  and qa+time (a time named, often relative to the session it was asked in, not to `now`).

Memories go in through the service's import (a cortex-mcp export document, each memory's date as
its `created_at` and `occurred_at`), one SQLite database per user or conversation, as the baseline
has one FTS5 table per user or conversation (IDF over that agent's memories only). Questions are
asked in-process through the service's `search` (no access counting, so the order of questions
changes nothing), with `now` when the service takes one; `--mcp N` then asks N questions of each
set and kind again through `cortex_recall` over MCP stdio, on the same databases, and prints the
two R@5 side by side.

Held back: three users per language (odd positions) and a third of the generated LoCoMo
questions; their figures print in a table of their own. Tune on the other table only.

    python bench/time_recall.py                 # all sets from shared/datasets
    python bench/time_recall.py --sets memorybank_en --mcp 10
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.time_data import (  # noqa: E402
    Corpus,
    Question,
    bm25_match,
    cjk_bigrams,
    load_memorybank,
    locomo_corpora,
)
from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.models import to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.search.time_expressions import parse_time  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.service.requests import ImportRequest, RecallRequest, SearchRequest, build  # noqa: E402

SETS = ("memorybank_en", "memorybank_zh", "locomo")
FILES = {
    "memorybank_en": "memorybank_dev_en.json",
    "memorybank_zh": "memorybank_dev_cn.json",
    "locomo": "locomo_dev.json",
}
KIND_ORDER = ("date", "relative", "plain", "month", "day", "qa", "qa+time")
TAKES_NOW = "now" in SearchRequest.model_fields


@dataclass
class Tally:
    """Per-question (R@5, R@10, MRR@10) of one method, by (set, kind, held)."""

    rows: dict[tuple[str, str, bool], list[tuple[float, float, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def add(self, key: tuple[str, str, bool], ranked: list[str], evidence: set[str]) -> None:
        def recall_at(k: int) -> float:
            return len(set(ranked[:k]) & evidence) / len(evidence)

        first = next((i for i, source in enumerate(ranked[:10]) if source in evidence), None)
        self.rows[key].append(
            (recall_at(5), recall_at(10), 0.0 if first is None else 1 / (first + 1))
        )

    def mean(self, key: tuple[str, str, bool], metric: int) -> float:
        return statistics.mean(row[metric] for row in self.rows[key])


class Bm25:
    """The strong FTS5 baseline over one corpus (bench/time_data.py bm25_match)."""

    def __init__(self, memories: dict[str, tuple[str, Any]]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(src UNINDEXED, text, tokenize='porter unicode61')"
        )
        self.conn.executemany(
            "INSERT INTO t VALUES (?, ?)",
            [(source, cjk_bigrams(text)) for source, (text, _) in memories.items()],
        )

    def search(self, question: str, k: int = 10) -> list[str]:
        match = bm25_match(question)
        if not match:
            return []
        rows = self.conn.execute(
            "SELECT src FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)
        ).fetchall()
        return [row[0] for row in rows]


def memory_id(agent: str, source: str) -> str:
    """A fixed UUID per memory, so the import keeps it and the ranking maps back to turns."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"cortex-timebench:{agent}:{source}"))


def export_document(corpus: Corpus) -> dict[str, Any]:
    memories = []
    for source, (text, when) in corpus.memories.items():
        at = to_iso(when)
        memories.append(
            {
                "id": memory_id(corpus.agent, source),
                "content": text,
                "layer": "core",
                "category": "fact",
                "importance": 0.5,
                "created_at": at,
                "occurred_at": at,
            }
        )
    return {"format": "cortex-mcp-export", "memories": memories}


async def load(service: CortexService, corpus: Corpus) -> dict[str, str]:
    """Import the corpus; memory id -> its source id."""
    await service.exchange.import_memories(
        build(ImportRequest, document=export_document(corpus), agent_id=corpus.agent)
    )
    return {memory_id(corpus.agent, source): source for source in corpus.memories}


async def ask(service: CortexService, corpus: Corpus, question: Question) -> list[str]:
    fields: dict[str, Any] = {"query": question.text, "agent_id": corpus.agent, "limit": 10}
    if TAKES_NOW:
        fields["now"] = to_iso(corpus.now)
    hits = await service.memories.search(SearchRequest(**fields))
    return [hit.id for hit in hits]


@dataclass
class Run:
    cortex: Tally = field(default_factory=Tally)
    bm25: Tally = field(default_factory=Tally)
    ms: dict[tuple[str, str, bool], list[float]] = field(default_factory=lambda: defaultdict(list))
    databases: list[tuple[str, Path, Corpus, dict[str, str]]] = field(default_factory=list)


async def measure_corpus(run: Run, set_name: str, corpus: Corpus, db_path: Path) -> None:
    settings = load_settings(db_path=db_path, embedding_provider="none")
    baseline = Bm25(corpus.memories)
    async with open_cortex(settings, background=False) as service:
        owners = await load(service, corpus)
        for question in corpus.questions:
            key = (set_name, kind_of(question, corpus), question.held)
            started = time.perf_counter()
            ranked = await ask(service, corpus, question)
            run.ms[key].append((time.perf_counter() - started) * 1000)
            run.cortex.add(key, [owners.get(i, "") for i in ranked], question.evidence)
            run.bm25.add(key, baseline.search(question.text), question.evidence)
    run.databases.append((set_name, db_path, corpus, owners))


def kind_of(question: Question, corpus: Corpus) -> str:
    """LoCoMo's own questions are "qa", or "qa+time" when the parser finds a time in them
    (they are not written to name one: "When did ...?" has none, "in 2022" has)."""
    if question.kind != "qa":
        return question.kind
    return "qa+time" if parse_time(question.text, corpus.now).window is not None else "qa"


def corpora_of(set_name: str, folder: Path) -> list[Corpus]:
    path = folder / FILES[set_name]
    if not path.is_file():
        raise SystemExit(f"{set_name}: {path} not found (pass --datasets FOLDER)")
    if set_name == "locomo":
        return locomo_corpora(path)
    return [corpus for corpus, _ in load_memorybank(path)]


def print_table(run: Run, held: bool) -> None:
    title = "held back (not looked at while tuning)" if held else "tuning split"
    print(f"\n### {title}\n")
    print(
        "| question set | kind | cortex R@5 | BM25 R@5 | cortex R@10 | BM25 R@10 "
        "| cortex MRR | BM25 MRR | n | p50 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted((k for k in run.cortex.rows if k[2] == held), key=_order)
    for key in keys:
        c, b = run.cortex, run.bm25
        print(
            f"| {key[0]} | {key[1]} | {c.mean(key, 0):.3f} | {b.mean(key, 0):.3f}"
            f" | {c.mean(key, 1):.3f} | {b.mean(key, 1):.3f}"
            f" | {c.mean(key, 2):.3f} | {b.mean(key, 2):.3f} | {len(c.rows[key])}"
            f" | {statistics.median(run.ms[key]):.2f} |"
        )


def mcp_sample(
    run: Run, per_kind: int
) -> list[tuple[Path, Corpus, dict[str, str], list[Question]]]:
    """Up to `per_kind` questions of each (set, kind), the first ones in order of the corpora."""
    taken: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for set_name, db_path, corpus, owners in run.databases:
        chosen = []
        for question in corpus.questions:
            if taken[(set_name, question.kind)] < per_kind:
                taken[(set_name, question.kind)] += 1
                chosen.append(question)
        if chosen:
            out.append((db_path, corpus, owners, chosen))
    return out


async def over_mcp(run: Run, per_kind: int) -> None:
    """Questions of each set and kind asked again, through cortex_recall over stdio, beside the
    in-process search's answer to the same questions."""
    from mcp import Client, StdioServerParameters

    from tests.helpers.stdio_helpers import server_command, server_env

    stdio, local = Tally(), Tally()
    names = {db_path: set_name for set_name, db_path, _, _ in run.databases}
    for db_path, corpus, owners, questions in mcp_sample(run, per_kind):
        settings = load_settings(db_path=db_path, embedding_provider="none")
        async with open_cortex(settings, background=False) as service:
            for question in questions:
                key = (names[db_path], kind_of(question, corpus), question.held)
                ranked = await ask(service, corpus, question)
                local.add(key, [owners.get(i, "") for i in ranked], question.evidence)
        command = server_command()
        params = StdioServerParameters(
            command=command[0],
            args=command[1:],
            env=server_env(db_path, CORTEX_LOG_LEVEL="WARNING"),
        )
        async with Client(params, mode="legacy") as client:
            for question in questions:
                key = (names[db_path], kind_of(question, corpus), question.held)
                ids = await recall_over_stdio(client, corpus, question)
                stdio.add(key, [owners.get(i, "") for i in ids], question.evidence)
    print("\n### a sample over MCP stdio (cortex_recall, max_results 5)\n")
    print("| question set | kind | held back | in-process search R@5 | stdio recall R@5 | n |")
    print("|---|---|---|---|---|---|")
    for key in sorted(stdio.rows, key=_order):
        print(
            f"| {key[0]} | {key[1]} | {'yes' if key[2] else 'no'} | {local.mean(key, 0):.3f}"
            f" | {stdio.mean(key, 0):.3f} | {len(stdio.rows[key])} |"
        )


async def recall_over_stdio(client: Any, corpus: Corpus, question: Question) -> list[str]:
    arguments: dict[str, Any] = {"query": question.text, "agent_id": corpus.agent, "max_results": 5}
    if "now" in RecallRequest.model_fields:
        arguments["now"] = to_iso(corpus.now)
    result = await client.call_tool("cortex_recall", arguments)
    if result.is_error:
        raise SystemExit(f"cortex_recall over stdio failed: {result.content}")
    return [memory["id"] for memory in result.structured_content["memories"]]


def _order(key: tuple[str, str, bool]) -> tuple[int, int, bool]:
    return (SETS.index(key[0]) if key[0] in SETS else 9, KIND_ORDER.index(key[1]), key[2])


async def main_async(args: argparse.Namespace) -> None:
    run = Run()
    with tempfile.TemporaryDirectory() as tmp:
        for set_name in args.sets:
            for corpus in corpora_of(set_name, args.datasets):
                name = "locomo" if set_name == "locomo" else set_name
                db_path = Path(tmp) / f"{corpus.agent}.db"
                await measure_corpus(run, name, corpus, db_path)
        print(f"time-aware recall: text only, `now` passed: {TAKES_NOW}")
        every = [ms for times in run.ms.values() for ms in times]
        print(
            f"in-process search p50 {statistics.median(every):.2f} ms over {len(every)} questions"
        )
        print_table(run, held=False)
        print_table(run, held=True)
        if args.mcp:
            await over_mcp(run, args.mcp)


def default_datasets() -> Path:
    for parent in ROOT.parents[:3]:
        if (parent / "shared" / "datasets").is_dir():
            return parent / "shared" / "datasets"
    return ROOT / "datasets"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--datasets", type=Path, default=default_datasets(), help="folder of the files"
    )
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument(
        "--mcp", type=int, default=0, help="questions of each set and kind asked over MCP stdio too"
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
