"""Aging: real dialogue through rules-only ingest, the lifecycle every night, questions a month on.

    nice python bench/aging.py [--dataset PATH] [--split dev] [--conversations conv-26]
                                     [--days N] [--after-days 30] [--log]

Every turn of the LoCoMo conversations goes through `ingest` (no LLM, no embeddings) as
"<speaker>: <text>" with an empty assistant message, at its session's date and time; the
lifecycle runs every night at 03:00 from the first session on; every question of categories 1-4
is asked (`search`, top 10, text only) `--after-days` after the last session. Three stores of the
same turns are measured in the same run:

- aged: ingest + the nightly lifecycle;
- never: ingest, the lifecycle never runs (the schedule is off, the server was down, ...);
- control: one memory per turn, `remember`ed as it is, no lifecycle (the protocol of
  shared/datasets/README.md).

A hit is exact: a memory counts for the turn it came from (its `turn_id`, or the control's own
map), never for a summary that mentions it. R@10 is the fraction of a question's evidence turns
in the top 10, averaged; MRR@10 the reciprocal rank of the first hit. Besides the figures it
prints the layer counts per month, the turns that cannot be traced to any memory (a turn skipped
as small talk is counted apart), the supersedes by rule, and supersedes with no audit entry.
`--days N` keeps the first N days of each conversation (the suite runs a small one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RememberRequest, SearchRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.locomo_data import DEV_IDS, DataNotFound, find_dataset  # noqa: E402
from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import IngestRequest, LifecycleLogRequest, build  # noqa: E402

_DIA = re.compile(r"D:?(\d+):0*(\d+)")
MODES = ("aged", "never", "control")


@dataclass
class Turn:
    dia_id: str
    text: str  # "<speaker>: <text>"
    at: datetime
    session: str


@dataclass
class Dialogue:
    sample_id: str
    turns: list[Turn]
    questions: list[tuple[str, set[str]]]


@dataclass
class Outcome:
    ranks: list[list[set[str]]] = field(default_factory=list)  # per question: turns per rank
    evidence: list[set[str]] = field(default_factory=list)
    months: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    skipped: int = 0  # small talk: nothing stored, by design
    untraceable: list[str] = field(default_factory=list)
    unfindable: list[str] = field(default_factory=list)  # every memory of it left recall
    supersedes: list[dict[str, Any]] = field(default_factory=list)
    unlogged: list[str] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)  # spoken corrections that replaced nothing
    seconds: float = 0.0

    def recall_at(self, k: int = 10) -> float:
        scores = []
        for ranked, evidence in zip(self.ranks, self.evidence, strict=True):
            got = set().union(*ranked[:k]) if ranked[:k] else set()
            scores.append(len(got & evidence) / len(evidence))
        return sum(scores) / len(scores) if scores else 0.0

    def mrr(self, k: int = 10) -> float:
        total = 0.0
        for ranked, evidence in zip(self.ranks, self.evidence, strict=True):
            first = next((i for i, turns in enumerate(ranked[:k]) if turns & evidence), None)
            total += 0.0 if first is None else 1.0 / (first + 1)
        return total / len(self.ranks) if self.ranks else 0.0


class SimClock:
    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment


# ---- data -----------------------------------------------------------------------------------


def _session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_dialogues(path: Path, split: str, only: set[str], days: int | None) -> list[Dialogue]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    dialogues = []
    for sample in samples:
        sample_id = sample["sample_id"]
        if only and sample_id not in only:
            continue
        if not only and split != "all" and (sample_id in DEV_IDS) != (split == "dev"):
            continue
        dialogues.append(_dialogue(sample, days))
    if not dialogues:
        raise DataNotFound(f"{path} holds no conversation of the {split} split {sorted(only)}")
    return dialogues


def _dialogue(sample: dict[str, Any], days: int | None) -> Dialogue:
    conv = sample["conversation"]
    sessions = sorted(
        (int(key.split("_")[1]), key)
        for key, value in conv.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
    )
    turns: list[Turn] = []
    first: datetime | None = None
    for _, key in sessions:
        start = _session_time(conv[f"{key}_date_time"])
        first = first or start
        if days is not None and start > first + timedelta(days=days):
            break
        for i, turn in enumerate(conv[key]):
            text = f"{turn['speaker']}: {turn['text']}"
            turns.append(Turn(turn["dia_id"], text, start + timedelta(seconds=20 * i), key))
    kept = {t.dia_id for t in turns}
    questions = []
    for qa in sample["qa"]:
        if qa["category"] not in (1, 2, 3, 4):
            continue
        evidence = {f"D{a}:{b}" for raw in qa["evidence"] for a, b in _DIA.findall(raw)}
        evidence &= kept
        if evidence and (days is None or evidence <= kept):
            questions.append((qa["question"], evidence))
    return Dialogue(sample["sample_id"], turns, questions)


# ---- one store of one conversation ------------------------------------------------------


async def age(dialogue: Dialogue, mode: str, folder: Path, after_days: int) -> Outcome:
    started = time.perf_counter()
    settings = load_settings(
        db_path=folder / f"{dialogue.sample_id}-{mode}.db",
        embedding_provider="none",
        llm_provider="none",
        lifecycle={"schedule": "off"},
    )
    clock = SimClock(dialogue.turns[0].at)
    outcome = Outcome(turns=len(dialogue.turns))
    turn_of: dict[str, str] = {}  # turn id (or the control's memory id) -> dia_id
    skipped: set[str] = set()
    async with open_cortex(settings, clock=clock, background=False) as service:
        night = _next_night(dialogue.turns[0].at)
        month_end = dialogue.turns[0].at + timedelta(days=30)
        for turn in dialogue.turns:
            night = await _nights_until(service, clock, night, turn.at, mode, outcome)
            while turn.at >= month_end:
                outcome.months.append(await _layers(service, month_end))
                month_end += timedelta(days=30)
            clock.moment = turn.at
            if mode == "control":
                made = await service.memories.remember(
                    RememberRequest(content=turn.text, category="context", source="locomo")
                )
                turn_of[made.id] = turn.dia_id
                continue
            result = await service.conversation.ingest(
                build(
                    IngestRequest,
                    user_message=turn.text,
                    assistant_message="",
                    session_id=f"{dialogue.sample_id}:{turn.session}",
                ),
                wait=True,
            )
            turn_of[result.turn_id] = turn.dia_id
            if result.outcome == "skipped" and not result.high_signals:
                skipped.add(turn.dia_id)
        asked = dialogue.turns[-1].at + timedelta(days=after_days)
        await _nights_until(service, clock, night, asked, mode, outcome)
        outcome.months.append(await _layers(service, asked))
        clock.moment = asked
        for question, evidence in dialogue.questions:
            hits = await service.memories.search(SearchRequest(query=question, limit=10))
            outcome.ranks.append([_turns_of(m, turn_of, mode) for m in hits])
            outcome.evidence.append(evidence)
        if mode != "control":
            await _audit(service, turn_of, skipped, outcome)
    outcome.skipped = len(skipped)
    outcome.seconds = time.perf_counter() - started
    return outcome


def _next_night(moment: datetime) -> datetime:
    night = moment.replace(hour=3, minute=0, second=0, microsecond=0)
    return night if night > moment else night + timedelta(days=1)


async def _nights_until(
    service: Any, clock: SimClock, night: datetime, until: datetime, mode: str, outcome: Outcome
) -> datetime:
    while night <= until:
        if mode == "aged":
            clock.moment = night
            await service.lifecycle.run()
        night += timedelta(days=1)
    return night


async def _layers(service: Any, moment: datetime) -> dict[str, Any]:
    counts = await service.stores.memories.counts()
    everything = await service.stores.exports.memories(None)
    summaries = sum(1 for m in everything if m.category.value == "summary")
    return {"date": moment.date().isoformat(), **counts["by_layer"], "summaries": summaries}


def _turns_of(memory: Any, turn_of: dict[str, str], mode: str) -> set[str]:
    """The turn a memory came from: exact hits only (a summary stands for no turn)."""
    key = memory.id if mode == "control" else memory.metadata.get("turn_id")
    found = turn_of.get(str(key)) if key else None
    return {found} if found else set()


async def _audit(
    service: Any, turn_of: dict[str, str], skipped: set[str], outcome: Outcome
) -> None:
    everything = {m.id: m for m in await service.stores.exports.memories(None)}
    covered = {
        i
        for m in everything.values()
        if m.superseded_by is None
        for i in m.metadata.get("covers", [])
    }
    by_turn: dict[str, list[Any]] = {}
    for memory in everything.values():
        dia = turn_of.get(str(memory.metadata.get("turn_id")))
        if dia:
            by_turn.setdefault(dia, []).append(memory)
    for dia in sorted(set(turn_of.values()) - skipped):
        memories = by_turn.get(dia, [])
        if not memories:
            outcome.untraceable.append(dia)
        elif all((m.superseded_by or m.forgotten_at) and m.id not in covered for m in memories):
            outcome.unfindable.append(dia)
    log = await service.lifecycle.log(build(LifecycleLogRequest, limit=10_000))
    pairs: set[tuple[str, str]] = set()
    for entry in log:
        ids = entry["memory_ids"]
        if entry["action"] in ("supersede", "correct") and "superseded" in entry["details"]:
            details = entry["details"]
            pairs.add((details["superseded"], details["by"]))
            outcome.supersedes.append(_supersede_row(details["rule"], ids, everything))
        elif entry["action"] == "merge":
            kept = entry["details"].get("after", [])
            for old in entry["details"].get("before", []):
                for new in kept:
                    if old != new:
                        pairs.add((old, new))
                        outcome.supersedes.append(_supersede_row("merge", [old, new], everything))
    replacing = {row["new"] for row in outcome.supersedes}
    outcome.corrections = [
        m.content
        for m in everything.values()
        if m.metadata.get("signal") == "correction" and m.content not in replacing
    ]
    outcome.unlogged = [
        m.id
        for m in everything.values()
        if m.superseded_by and (m.id, m.superseded_by) not in pairs
    ]


def _supersede_row(rule: str, ids: list[str], everything: dict[str, Any]) -> dict[str, Any]:
    old, new = (everything.get(i) for i in ids[:2])
    return {
        "rule": rule,
        "old": old.content if old else ids[0],
        "new": new.content if new else ids[1],
    }


# ---- the run --------------------------------------------------------------------------------


async def run(dialogues: list[Dialogue], after_days: int) -> dict[str, dict[str, Outcome]]:
    results: dict[str, dict[str, Outcome]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dialogue in dialogues:
            results[dialogue.sample_id] = {
                mode: await age(dialogue, mode, Path(tmp), after_days) for mode in MODES
            }
    return results


def pooled(results: dict[str, dict[str, Outcome]], mode: str) -> Outcome:
    total = Outcome()
    for by_mode in results.values():
        o = by_mode[mode]
        total.ranks += o.ranks
        total.evidence += o.evidence
        total.turns += o.turns
        total.skipped += o.skipped
        total.untraceable += o.untraceable
        total.unfindable += o.unfindable
        total.supersedes += o.supersedes
        total.unlogged += o.unlogged
        total.corrections += o.corrections
        total.seconds += o.seconds
    return total


def report(results: dict[str, dict[str, Outcome]], show_log: bool) -> list[str]:
    """The printed table; also what the suite checks. Returns the problems found."""
    outcomes = {mode: pooled(results, mode) for mode in MODES}
    control = outcomes["control"]
    print(f"{len(results)} conversations, {control.turns} turns, {len(control.ranks)} questions")
    print(f"{'store':<34} {'R@10':>6} {'MRR@10':>7} {'vs control R@10':>16} {'seconds':>8}")
    names = {
        "aged": "aged (lifecycle every night)",
        "never": "never (lifecycle never runs)",
        "control": "control (one memory per turn)",
    }
    for mode in MODES:
        o = outcomes[mode]
        delta = o.recall_at() - control.recall_at()
        print(
            f"{names[mode]:<34} {o.recall_at():>6.3f} {o.mrr():>7.3f} {delta:>+16.3f}"
            f" {o.seconds:>8.1f}"
        )
    print("\nper conversation, R@10 aged / never / control:")
    for sample_id, by_mode in results.items():
        figures = " / ".join(f"{by_mode[mode].recall_at():.3f}" for mode in MODES)
        print(f"  {sample_id}: {figures}")
    for sample_id, by_mode in results.items():
        print(f"\nlayers per month, {sample_id} (aged):")
        print(f"  {'date':<10} {'working':>8} {'core':>6} {'archive':>8} {'summaries':>10}")
        for month in by_mode["aged"].months:
            print(
                f"  {month['date']:<10} {month['working']:>8} {month['core']:>6}"
                f" {month['archive']:>8} {month['summaries']:>10}"
            )
    problems = []
    for mode in ("aged", "never"):
        o = outcomes[mode]
        print(
            f"\n{mode}: turns {o.turns}, skipped as small talk {o.skipped}, untraceable"
            f" {len(o.untraceable)}, out of recall {len(o.unfindable)},"
            f" supersedes {len(o.supersedes)} (unlogged {len(o.unlogged)}), corrections that"
            f" replaced nothing {len(o.corrections)}"
        )
        rules = Counter(row["rule"] for row in o.supersedes)
        for rule, n in sorted(rules.items()):
            print(f"  supersedes by {rule}: {n}")
        if o.untraceable:
            problems.append(f"{mode}: {len(o.untraceable)} untraceable turns {o.untraceable[:5]}")
        if o.unlogged:
            problems.append(f"{mode}: {len(o.unlogged)} supersedes without an audit entry")
        if show_log:
            for row in o.supersedes:
                print(f"  [{row['rule']}] {row['old']!r}\n      -> {row['new']!r}")
            for text in o.corrections:
                print(f"  [kept beside, no memory of the same speaker about it] {text!r}")
    aged, never = outcomes["aged"], outcomes["never"]
    if aged.recall_at() < control.recall_at() - 0.005:
        problems.append(f"aged R@10 {aged.recall_at():.3f} < control - 0.005")
    if never.recall_at() < control.recall_at() - 0.02:
        problems.append(f"never-run R@10 {never.recall_at():.3f} < control - 0.02")
    print("\ninvariants: " + ("all hold" if not problems else "; ".join(problems)))
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path)
    parser.add_argument("--split", default="dev", choices=["dev", "heldout", "all"])
    parser.add_argument("--conversations", default="", help="comma-separated sample ids")
    parser.add_argument("--days", type=int, help="keep only the first N days of each")
    parser.add_argument("--after-days", type=int, default=30)
    parser.add_argument("--log", action="store_true", help="print every supersede")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # every raw turn would log its fallback
    try:
        path = find_dataset(args.dataset, ROOT)
        only = {c for c in args.conversations.split(",") if c}
        dialogues = load_dialogues(path, args.split, only, args.days)
    except DataNotFound as exc:
        print(exc, file=sys.stderr)
        sys.exit(2)
    results = asyncio.run(run(dialogues, args.after_days))
    if report(results, args.log):
        sys.exit(1)


if __name__ == "__main__":
    main()
