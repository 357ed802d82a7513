"""Who a question is about: recall of questions that name a person, pet or place, with the strong
FTS5 BM25 baseline in the same run, and the "tell me about X" pages.

Question sets:
- LoCoMo (shared/datasets/locomo_dev.json, its own questions of categories 1-4): multi-hop
  (category 1: "What are the names of <name>'s pets?", the answer spread over sessions), dates
  (category 2), open-domain (3), single-hop (4) and all four together. Held back while tuning:
  conv-42 and conv-43 (`HELD_CONVERSATIONS`); the tuning part is the other three.
- alias sets (bench/data/entity_aliases.json): small chats in English, Chinese and Japanese
  where a person introduced by name is later called by a kinship or role word ("my sister
  Anna" ... "my sister", "我表弟张伟" ... "我表弟", "上司の田中さん" ... "部長") and a friend's
  display name is never what friends call them; a dev and a held-back set per language, and a
  second held-back set per language ("held2", printed as its own row) written before the rules
  were changed again.

Measured per question: R@10 (the fraction of its evidence turns in the top 10) and all@10 (1 when
every evidence turn is in the top 10). Memories go in as bench/time_recall.py puts them: one per
turn, "<speaker>: <text>", through the service's import with its session's date as `created_at`
and `occurred_at`, one SQLite database per conversation (as the baseline has one FTS5 table per
conversation); questions are ranked by the service's search (`now` = noon of the day after the
last session), text only and then with vectors: the loopback embedding stub of the tests
(tests/helpers/embedding_stub.py, hashed word stems plus a few meaning classes: no model) or,
with `--embed-url`, any OpenAI-compatible endpoint.

Pages: for every person, pet or place a tuning question names (LoCoMo: the capitalised names
its questions use that its turns say; alias sets: the set's `pages`), recall is asked
"Tell me about X" ("告诉我关于X的事", "Xについて教えて"); a page is there when `meta.entity`
names X (or has X among its aliases), and it is about X when at least half of its memories are
labelled about X (alias sets: the turn's labels; LoCoMo: the turn names X, or X said it in the
first person: a rule, not a hand label).

Latency: the search's p50 over every question and over the questions that name a speaker or a
page name (each asked for the first time), and recall's p50 over the latter (asked again after
the searches; the first recall settles the import, a write, so the entity stage starts them
with nothing kept, as after a remembered turn), each beside the same search without the entity work (no entity stage, and the vector channel
embeds the question alone, not also the question without its names: main before issue 33),
the same questions asked of both in turn (which goes first alternates), after one untimed
search and recall of each part's first question without the entity work (the first reads of
the text and the settling of a new import are no entity cost; the stage's first reads of names
and links are). On a machine others share the
CPU time per call (the process's, so the database threads' too) is the figure to compare; wall
time is printed beside it. Then the p50 of each stage with and without the entity work: the
entity stage's own cost (`entity`, and `entity_names`: the names looked up while the channels
search), and what the memories it adds cost the stages after it.

    python bench/entities_locomo.py                    # text only and with the stub's vectors
    python bench/entities_locomo.py --embed-url http://127.0.0.1:8765/v1 --model all-MiniLM-L6-v2
    python bench/entities_locomo.py --modes text --sets aliases
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.embed_cache import caching_proxy  # noqa: E402
from bench.locomo_data import load_dataset  # noqa: E402
from bench.locomo_recall import DEFAULT_CACHE  # noqa: E402
from bench.time_data import Corpus, session_times  # noqa: E402
from bench.time_recall import Bm25, default_datasets, load  # noqa: E402
from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.models import SearchFilters  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.search.hybrid import HybridSearch  # noqa: E402
from cortex_mcp.search.stages.channels import Channels  # noqa: E402
from cortex_mcp.search.stages.state import SearchState  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.service.memories import MemoryService  # noqa: E402
from cortex_mcp.service.requests import RecallRequest  # noqa: E402
from tests.helpers.embedding_stub import StubState, embedding_stub  # noqa: E402

try:  # the names' key (issue 33); before it, case and spacing alone
    from cortex_mcp.tokenize import normalize_name
except ImportError:  # pragma: no cover - main before the entities work

    def normalize_name(text: str) -> str:
        return " ".join(text.casefold().split())


HELD_CONVERSATIONS = ("conv-42", "conv-43")
ALIASES = ROOT / "bench" / "data" / "entity_aliases.json"
CATEGORY = {
    1: "multi-hop (cat 1)",
    2: "dates (cat 2)",
    3: "open-domain (cat 3)",
    4: "single-hop (cat 4)",
}
ALL = "all"
PAGE_QUERY = {"en": "Tell me about {}", "zh": "告诉我关于{}的事", "ja": "{}について教えて"}
_NAME = re.compile(r"\b([A-Z][a-z]+)(?:'s)?\b")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine|myself)\b")
_NOT_NAMES = frozenset(
    """What When Where Who Whom Which Why How Did Does Do Is Are Was Were Would Could Can Has Have
    Had Will Should Might In On At Of For The A An And Or If According Since After Before During
    January February March April May June July August September October November December Monday
    Tuesday Wednesday Thursday Friday Saturday Sunday""".split()
)


@dataclass
class Asked:
    text: str
    evidence: set[str]
    group: str


@dataclass
class Part:
    """One agent's memories and what is asked of them."""

    set_name: str  # "locomo", "aliases en", ...
    held: bool
    corpus: Corpus
    asked: list[Asked]
    pages: dict[str, set[str]]  # name -> the turns labelled about it
    lang: str = "en"
    named: frozenset[str] = frozenset()  # names whose question counts as "names an entity"


@dataclass
class Tally:
    """Per question (R@10, all@10), by (set, group, held)."""

    rows: dict[tuple[str, str, bool], list[tuple[float, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def add(self, key: tuple[str, str, bool], ranked: list[str], evidence: set[str]) -> None:
        found = len(set(ranked[:10]) & evidence)
        row = (found / len(evidence), float(found == len(evidence)))
        self.rows[key].append(row)
        self.rows[(key[0], ALL, key[2])].append(row)

    def mean(self, keys: list[tuple[str, str, bool]], metric: int) -> float:
        values = [row[metric] for key in keys for row in self.rows.get(key, [])]
        return statistics.mean(values) if values else float("nan")


@dataclass
class Pages:
    asked: int = 0
    given: int = 0
    about: int = 0  # pages at least half of whose memories are labelled about the name


@dataclass
class Run:
    cortex: Tally = field(default_factory=Tally)
    bm25: Tally = field(default_factory=Tally)
    search_ms: list[float] = field(default_factory=list)
    named_ms: list[float] = field(default_factory=list)
    # the same questions asked right after of the same search without the entity work (none
    # before it existed): its cost, on a machine others share, in one run
    without_ms: list[float] = field(default_factory=list)
    named_without_ms: list[float] = field(default_factory=list)
    stage_ms: list[float] = field(default_factory=list)
    # CPU milliseconds of the named questions' searches, with and without
    named_cpu: list[float] = field(default_factory=list)
    named_without_cpu: list[float] = field(default_factory=list)
    # each stage's milliseconds over the named questions (0 where it did not run), with and without
    stages: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    stages_without: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    # recall (the tool's path: context, entities, access counts) of the questions that name a
    # speaker or a page name, with and without the entity work, interleaved: wall and CPU
    recall_ms: list[float] = field(default_factory=list)
    recall_without_ms: list[float] = field(default_factory=list)
    recall_cpu: list[float] = field(default_factory=list)
    recall_without_cpu: list[float] = field(default_factory=list)
    pages: dict[tuple[str, bool], Pages] = field(default_factory=lambda: defaultdict(Pages))


def locomo_parts(path: Path) -> list[Part]:
    """One part per dev conversation: its turns dated by session, its questions by category."""
    samples = {s["sample_id"]: s for s in json.loads(path.read_text(encoding="utf-8"))}
    parts = []
    for conv in load_dataset(path, "dev"):
        sample = samples[conv.sample_id]
        starts = session_times(sample)
        memories = {}
        for dia_id, text in conv.turns.items():
            session, turn = (int(n) for n in dia_id[1:].split(":"))
            if session in starts:
                memories[dia_id] = (text, starts[session] + timedelta(minutes=turn))
        last = max(at for _, at in memories.values())
        now = datetime.combine(last.date() + timedelta(days=1), datetime.min.time(), UTC)
        corpus = Corpus(conv.sample_id, memories, now + timedelta(hours=12))
        asked = [
            Asked(q["question"], evidence & set(memories), CATEGORY[q["category"]])
            for q, evidence in _categorised(sample, conv.questions)
            if evidence & set(memories)
        ]
        speakers = {sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]}
        held = conv.sample_id in HELD_CONVERSATIONS
        pages = {} if held else _locomo_pages(asked, memories)
        parts.append(
            Part("locomo", held, corpus, asked, pages, named=frozenset(speakers | set(pages)))
        )
    return parts


def _categorised(
    sample: dict[str, Any], questions: list[tuple[str, set[str]]]
) -> Iterator[tuple[dict[str, Any], set[str]]]:
    """LoCoMo's QA items beside the evidence bench/locomo_data.py read for them (same order)."""
    items = iter(q for q in sample["qa"] if q["category"] in CATEGORY)
    for question, evidence in questions:
        item = next(q for q in items if q["question"] == question)
        yield item, evidence


def _locomo_pages(
    asked: list[Asked], memories: dict[str, tuple[str, datetime]]
) -> dict[str, set[str]]:
    """The capitalised names the questions use that at least three turns say, each with the turns
    about it by rule: the turn names it, or it is the speaker talking in the first person."""
    names = {m for a in asked for m in _NAME.findall(a.text) if m not in _NOT_NAMES}
    pages = {}
    for name in sorted(names):
        word = re.compile(rf"\b{re.escape(name)}\b")
        about = set()
        for dia_id, (text, _) in memories.items():
            speaker, _, said = text.partition(": ")
            if word.search(said) or (speaker == name and _FIRST_PERSON.search(said)):
                about.add(dia_id)
        if sum(bool(word.search(text)) for text, _ in memories.values()) >= 3:
            pages[name] = about
    return pages


def alias_parts(path: Path) -> list[Part]:
    data = json.loads(path.read_text(encoding="utf-8"))
    parts = []
    for chat in data["sets"]:
        memories: dict[str, tuple[str, datetime]] = {}
        about: dict[str, set[str]] = defaultdict(set)
        for session in chat["sessions"]:
            start = datetime.fromisoformat(session["date"]).replace(hour=10, tzinfo=UTC)
            for minute, (turn_id, text, names) in enumerate(session["turns"]):
                memories[turn_id] = (text, start + timedelta(minutes=minute))
                for name in names:
                    about[name].add(turn_id)
        last = max(at for _, at in memories.values())
        now = datetime.combine(last.date() + timedelta(days=1), datetime.min.time(), UTC)
        corpus = Corpus(f"aliases-{chat['name']}", memories, now + timedelta(hours=12))
        asked = [Asked(q["q"], set(q["evidence"]), q["kind"]) for q in chat["questions"]]
        pages = {name: about[name] for name in chat["pages"]}
        # a later held-back part ("held2") is its own row, so it is never averaged with the first
        suffix = f" {chat['part']}" if "part" in chat else ""
        parts.append(
            Part(
                f"aliases {chat['lang']}{suffix}",
                chat["held"],
                corpus,
                asked,
                pages,
                lang=chat["lang"],
                named=frozenset(about),
            )
        )
    return parts


async def measure_part(
    run: Run, part: Part, service: CortexService, owners: dict[str, str]
) -> None:
    baseline = Bm25(part.corpus.memories)
    searcher = service.engines.searcher
    without = without_entities(searcher)
    filters = service.memories.filters(part.corpus.agent, None, None)
    if part.asked:  # what a first question costs either way (the text's first reads)
        await without.search(part.asked[0].text, filters, 10, part.corpus.now)
    for n, asked in enumerate(part.asked):
        key = (part.set_name, asked.group, part.held)
        if n % 2:  # which goes first alternates: the second finds the pages the first read
            took_without, plain = await _timed(without, asked.text, filters, part.corpus.now)
            took, outcome = await _timed(searcher, asked.text, filters, part.corpus.now)
        else:
            took, outcome = await _timed(searcher, asked.text, filters, part.corpus.now)
            took_without, plain = await _timed(without, asked.text, filters, part.corpus.now)
        run.search_ms.append(took.wall)
        run.without_ms.append(took_without.wall)
        if any(name in asked.text for name in part.named):
            run.named_ms.append(took.wall)
            run.named_without_ms.append(took_without.wall)
            run.named_cpu.append(took.cpu)
            run.named_without_cpu.append(took_without.cpu)
            for stage in dict.fromkeys([*outcome.timings_ms, *plain.timings_ms]):
                run.stages[stage].append(outcome.timings_ms.get(stage, 0.0))
                run.stages_without[stage].append(plain.timings_ms.get(stage, 0.0))
        run.stage_ms.append(outcome.timings_ms.get("entity", 0.0))
        ranked = [owners.get(c.memory_id, "") for c in outcome.ranked]
        run.cortex.add(key, ranked, asked.evidence)
        run.bm25.add(key, baseline.search(asked.text), asked.evidence)
    for name, labelled in part.pages.items():
        await ask_page(run, part, service, owners, name, labelled)
    await time_recalls(run, part, service, without)


def without_entities(searcher: HybridSearch) -> HybridSearch:
    """The same search without the entity work: no entity stage, and a vector channel that
    embeds the question alone (not also the question without its names)."""
    plain = copy.copy(searcher)
    plain.vector_channel = copy.copy(searcher.vector_channel)
    plain.vector_channel.topic_of = None
    plain.stages = []
    for stage in searcher.stages:
        if isinstance(stage, Channels):
            stage = copy.copy(stage)
            stage.vector = plain.vector_channel
        if stage.name != "entity":
            plain.stages.append(stage)
    return plain


async def time_recalls(run: Run, part: Part, service: CortexService, without: HybridSearch) -> None:
    """Recall's own p50 on the questions that name someone, with the entity work and without
    it (last: recalls count accesses, which would move the rankings measured above)."""
    plain = dataclasses.replace(service.memories, searcher=without)
    named = [a for a in part.asked if any(name in a.text for name in part.named)]
    if named:  # what a first recall costs either way (settling the new import)
        await _recall(plain, part, named[0])
    for n, asked in enumerate(named):
        order = [
            (service.memories, run.recall_ms, run.recall_cpu),
            (plain, run.recall_without_ms, run.recall_without_cpu),
        ]
        for memories, wall, cpu in order if n % 2 == 0 else reversed(order):
            took = await _recall(memories, part, asked)
            wall.append(took.wall)
            cpu.append(took.cpu)


@dataclass
class Took:
    wall: float  # milliseconds
    cpu: float  # the process's CPU milliseconds (the database threads' too)


@contextmanager
def _clock() -> Iterator[Took]:
    took = Took(0.0, 0.0)
    wall, cpu = time.perf_counter(), time.process_time()
    yield took
    took.wall = (time.perf_counter() - wall) * 1000
    took.cpu = (time.process_time() - cpu) * 1000


async def _recall(memories: MemoryService, part: Part, asked: Asked) -> Took:
    request = RecallRequest(
        query=asked.text,
        agent_id=part.corpus.agent,
        max_results=10,
        now=part.corpus.now.isoformat(),
    )
    with _clock() as took:
        await memories.recall(request)
    return took


async def _timed(
    searcher: HybridSearch, text: str, filters: SearchFilters, now: datetime
) -> tuple[Took, SearchState]:
    with _clock() as took:
        outcome = await searcher.search(text, filters, 10, now)
    return took, outcome


async def ask_page(
    run: Run,
    part: Part,
    service: CortexService,
    owners: dict[str, str],
    name: str,
    labelled: set[str],
) -> None:
    tally = run.pages[(part.set_name, part.held)]
    tally.asked += 1
    result = await service.memories.recall(
        RecallRequest(
            query=PAGE_QUERY[part.lang].format(name),
            agent_id=part.corpus.agent,
            max_results=10,
            max_tokens=100_000,
            now=part.corpus.now.isoformat(),
        )
    )
    page = _field(result.meta, "entity")
    if page is None:
        return
    names = {normalize_name(_field(page, "name") or "")}
    names |= {normalize_name(alias) for alias in _field(page, "aliases") or []}
    if normalize_name(name) not in names:
        return
    tally.given += 1
    shown = [owners.get(i, "") for i in _field(page, "memory_ids") or []]
    if shown and sum(turn in labelled for turn in shown) * 2 >= len(shown):
        tally.about += 1


def _field(value: Any, name: str) -> Any:
    """A field of a model or of a dict (meta.entity may be either)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


async def measure(parts: list[Part], overrides: dict[str, Any], vectors: bool) -> Run:
    run = Run()
    with tempfile.TemporaryDirectory() as tmp:
        for part in parts:
            settings = load_settings(db_path=Path(tmp) / f"{part.corpus.agent}.db", **overrides)
            async with open_cortex(settings, background=False) as service:
                owners = await load(service, part.corpus)
                if vectors:
                    await service.embed_pending()
                await measure_part(run, part, service, owners)
    return run


def print_run(run: Run, title: str) -> None:
    print(f"\n## {title}\n")
    parts = (
        ((False,), "tuning part"),
        ((True,), "held back (not looked at while tuning)"),
        ((False, True), "both parts"),
    )
    for helds, caption in parts:
        print(f"### {caption}\n")
        print(
            "| question set | questions | n | cortex R@10 | BM25 R@10 | ΔR@10 "
            "| cortex all@10 | BM25 all@10 | all@10 ratio |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for set_name, group in sorted({(k[0], k[1]) for k in run.cortex.rows}, key=_order):
            _row(run, set_name, group, [(set_name, group, held) for held in helds])
        print()
    for (set_name, held), pages in sorted(run.pages.items()):
        part = "held back" if held else "tuning"
        print(
            f"'tell me about X', {set_name} ({part}): a page for {pages.given}/{pages.asked}"
            f" ({_share(pages.given, pages.asked)}), at least half about X: {pages.about}"
            f" ({_share(pages.about, pages.asked)})"
        )
    print_latency(run)


def print_latency(run: Run) -> None:
    p50 = statistics.median
    named, named_without = p50(run.named_ms), p50(run.named_without_ms)
    print(
        f"\nsearch p50 {p50(run.search_ms):.2f} ms over {len(run.search_ms)}"
        f" questions ({p50(run.without_ms):.2f} ms without the entity work);"
        f" {named:.2f} ms over the {len(run.named_ms)} that name a speaker or a page name"
        f" ({named_without:.2f} ms without it: {named / named_without:.2f}x);"
        f" entity stage p50 {p50(run.stage_ms):.3f} ms"
    )
    if not run.named_ms:
        return
    cpu, cpu_without = p50(run.named_cpu), p50(run.named_without_cpu)
    print(
        f"search CPU p50 over the {len(run.named_cpu)} that name someone: {cpu:.2f} ms,"
        f" {cpu_without:.2f} ms without the entity work ({cpu / cpu_without:.2f}x)"
    )
    recall, recall_without = p50(run.recall_ms), p50(run.recall_without_ms)
    cpu, cpu_without = p50(run.recall_cpu), p50(run.recall_without_cpu)
    print(
        f"recall p50 over the {len(run.recall_ms)} questions that name someone: {recall:.2f} ms,"
        f" {recall_without:.2f} ms without the entity work ({recall / recall_without:.2f}x);"
        f" CPU {cpu:.2f} ms, {cpu_without:.2f} ms without ({cpu / cpu_without:.2f}x)"
    )
    print("\n| stage (named questions) | p50 ms | without the entity work | difference |")
    print("|---|---|---|---|")
    for stage in run.stages:  # in the order they ran
        with_, without = p50(run.stages[stage]), p50(run.stages_without[stage])
        print(f"| {stage} | {with_:.3f} | {without:.3f} | {with_ - without:+.3f} |")


def _row(run: Run, set_name: str, group: str, keys: list[tuple[str, str, bool]]) -> None:
    n = sum(len(run.cortex.rows.get(k, [])) for k in keys)
    if not n:  # a set with no question in this part (a held2 set in the tuning table)
        return
    c10, b10 = run.cortex.mean(keys, 0), run.bm25.mean(keys, 0)
    call, ball = run.cortex.mean(keys, 1), run.bm25.mean(keys, 1)
    ratio = f"{call / ball:.2f}x" if ball else "-"
    print(
        f"| {set_name} | {group} | {n} | {c10:.3f} | {b10:.3f} | {c10 - b10:+.3f}"
        f" | {call:.3f} | {ball:.3f} | {ratio} |"
    )


def _share(count: int, total: int) -> str:
    return f"{count / total:.0%}" if total else "-"


def _order(key: tuple[str, str]) -> tuple[int, str, int]:
    groups = [*CATEGORY.values(), "multi", "single", ALL]
    return (key[0] != "locomo", key[0], groups.index(key[1]) if key[1] in groups else 99)


@contextmanager
def vector_settings(embed_url: str | None, model: str) -> Iterator[dict[str, Any]]:
    """Settings for the vector rows: the given endpoint through the benchmarks' vector cache
    (bench/embed_cache.py: a later run needs no server), else the embedding stub on loopback."""
    with ExitStack() as stack:
        if embed_url is None:
            state = StubState(default_dim=384, keep_alive=True, meaning=True)
            embed_url, _ = stack.enter_context(embedding_stub(state))
        else:
            proxy = stack.enter_context(caching_proxy(DEFAULT_CACHE, embed_url))
            embed_url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        yield {
            "embedding_provider": "openai",
            "embedding_base_url": embed_url,
            "embedding_model": model,
            "embedding_timeout_s": 60.0,
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", type=Path, default=default_datasets())
    parser.add_argument(
        "--sets", nargs="+", choices=["locomo", "aliases"], default=["locomo", "aliases"]
    )
    parser.add_argument(
        "--modes", nargs="+", choices=["text", "vectors"], default=["text", "vectors"]
    )
    parser.add_argument("--embed-url", help="an OpenAI-compatible /v1 base URL (default: the stub)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="the model it serves")
    args = parser.parse_args()
    parts: list[Part] = []
    if "locomo" in args.sets:
        path = args.datasets / "locomo_dev.json"
        if not path.is_file():
            sys.exit(f"{path} not found (pass --datasets FOLDER)")
        parts += locomo_parts(path)
    if "aliases" in args.sets:
        parts += alias_parts(ALIASES)
    held = [p.corpus.agent for p in parts if p.held]
    print(f"entities bench: {len(parts)} agents; held back: {', '.join(held)}")
    if "text" in args.modes:
        run = asyncio.run(measure(parts, {"embedding_provider": "none"}, vectors=False))
        print_run(run, "text only")
    if "vectors" in args.modes:
        with vector_settings(args.embed_url, args.model) as overrides:
            run = asyncio.run(measure(parts, overrides, vectors=True))
        source = args.embed_url or "the loopback stub (hashed word stems + meaning classes)"
        print_run(run, f"with vectors: {source}")


if __name__ == "__main__":
    main()
