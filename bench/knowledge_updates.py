"""Knowledge updates (issue 34): does recall answer what is true now, the history in order, and
what was true during a period?

Each case of bench/data/knowledge_updates.json remembers a fact and its update(s) with their
dates among ten distractors (one agent per case, text only, through the service as an MCP or
REST call would), then asks:

- `now` ("where does Marco live now?"): the current fact is the first hit;
- `before` ("where did Marco live before?"): every fact of the chain is in the top 5, in time
  order;
- `during` ("where did Marco live in March 2025?"): the fact valid then is in the top 5 (R@5);
- `lost`: asked for the history (`include_history`, the case's `before` question, else its
  first), every superseded fact is in the top 5, marked superseded, with the day it stopped;
- `closed`: the memories the store marks superseded are exactly the facts the case replaces
  (no trip, no distractor, no fact closed that still holds).

Parts: `dev` (held in: rules were fixed on them), `heldback` (kept back while tuning), `heldout`
(the issue's cases), `heldout2` (written before the rules for the held-back misses changed: a
lower-case employer, a trip beside a move, "turned N"; never tuned on). A case's `superseded`
lists the facts a later one replaces (default: all but the last; none for a trip). Cases with `source: locomo` name turns of LoCoMo's dev conversations
where a fact changes; their text and dates come from locomo_dev.json (`--dataset`, or
$CORTEX_LOCOMO, or shared/datasets/ beside the checkout), ten other turns of the same speaker
are their distractors, and they are left out (said once) when the file is not there.

`now` for the recall is the day after the last fact. Run on any checkout (the service calls it
makes exist since fc77e14), so today's and an older build's figures come from one script:

    python bench/knowledge_updates.py                      # every case, a table per part
    python bench/knowledge_updates.py --part heldback --show
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.locomo_data import DataNotFound, find_dataset  # noqa: E402
from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import RecallRequest, RememberRequest, build  # noqa: E402

CASES = ROOT / "bench" / "data" / "knowledge_updates.json"
KINDS = ("now", "before", "during", "lost", "closed")


def locomo_case(case: dict, conversations: dict[str, dict]) -> dict:
    """A `source: locomo` case with its turns' text ("<speaker>: <text>") and session days,
    and ten other turns of the same speaker, spread over the conversation, as distractors."""
    talk = conversations[case["conv"]]["conversation"]
    turns: dict[str, tuple[str, str]] = {}
    for key, value in talk.items():
        if key.startswith("session_") and isinstance(value, list):
            day = datetime.strptime(talk[f"{key}_date_time"].split(" on ")[1], "%d %B, %Y")
            for turn in value:
                text = f"{turn['speaker']}: {turn['text']}"
                turns[turn["dia_id"]] = (text, day.date().isoformat())
    others = [
        dia
        for dia, (text, _) in turns.items()
        if dia not in case["facts"] and text.startswith(case["speaker"] + ":")
    ]
    step = max(1, len(others) // 10)
    return {
        **case,
        "facts": [list(turns[dia]) for dia in case["facts"]],
        "distractors": [turns[dia][0] for dia in others[::step][:10]],
        "distractor_days": [turns[dia][1] for dia in others[::step][:10]],
    }


async def run_case(case: dict, folder: Path) -> list[tuple[str, str, bool]]:
    settings = load_settings(db_path=folder / f"{case['id']}.db", embedding_provider="none")
    outcomes = []
    async with open_cortex(settings) as cortex:
        ids = []
        for text, date in case["facts"]:
            done = await cortex.memories.remember(
                build(RememberRequest, content=text, category="fact", occurred_at=date)
            )
            ids.append(done.id)
        last = max(datetime.fromisoformat(date) for _, date in case["facts"])
        days = case.get("distractor_days") or [
            (last - timedelta(days=3 * i + 1)).date().isoformat()
            for i in range(len(case["distractors"]))
        ]
        others = []
        for text, when in zip(case["distractors"], days, strict=True):
            done = await cortex.memories.remember(
                build(RememberRequest, content=text, category="fact", occurred_at=when)
            )
            others.append(done.id)
        now = (last + timedelta(days=1)).date().isoformat() + "T12:00:00Z"
        for question, kind, expected in case["questions"]:
            result = await cortex.memories.recall(
                build(RecallRequest, query=question, max_results=5, now=now)
            )
            got = [m.id for m in result.memories]
            want = [ids[i] for i in expected]
            outcomes.append((kind, question, _hit(kind, got, want)))
        outcomes += await _nothing_lost(cortex, case, ids, now)
        closed = await _closed_right(cortex, case, ids, others)
        outcomes.append(("closed", "(every memory's status)", closed))
    return outcomes


async def _closed_right(cortex, case: dict, ids: list[str], others: list[str]) -> bool:
    """Whether the memories marked superseded are exactly the facts the case replaces."""
    replaced = case.get("superseded", range(len(ids) - 1))
    rows = await cortex.stores.memories.get_many(ids + others)
    closed = {i for i, m in rows.items() if m.status.value == "superseded"}
    return closed == {ids[i] for i in replaced}


async def _nothing_lost(cortex, case: dict, ids: list[str], now: str) -> list:
    """Every superseded fact of the case, asked for with the history: in the top 5, marked
    superseded, with the day it stopped (`valid_to`)."""
    if len(case["facts"]) < 2:
        return []
    asked = [q for q, kind, _ in case["questions"] if kind == "before"]
    question = (asked or [case["questions"][0][0]])[0]
    result = await cortex.memories.recall(
        build(RecallRequest, query=question, max_results=5, now=now, include_history=True)
    )
    shown = {m.id: m for m in result.memories}
    replaced = case.get("superseded", range(len(ids) - 1))  # default: every fact but the last
    old = [ids[i] for i in replaced]
    if not old:  # a trip beside where someone lives: nothing is replaced
        return []
    kept = all(
        i in shown and shown[i].status.value == "superseded" and shown[i].valid_to for i in old
    )
    return [("lost", f"{question} (history)", kept)]


def _hit(kind: str, got: list[str], want: list[str]) -> bool:
    if kind == "now":
        return bool(got) and got[0] == want[0]
    if kind == "before":
        order = [memory_id for memory_id in got if memory_id in want]
        return order == want
    return all(memory_id in got[:5] for memory_id in want)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=("heldout", "dev", "heldback", "heldout2", "all"), default="all"
    )
    parser.add_argument("--show", action="store_true", help="print each question's outcome")
    parser.add_argument("--dataset", type=Path, help="locomo_dev.json (for the LoCoMo cases)")
    args = parser.parse_args()
    cases = _cases(json.loads(CASES.read_text(encoding="utf-8"))["cases"], args.dataset)
    if args.part != "all":
        cases = [c for c in cases if c["part"] == args.part]
    totals: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            for kind, question, hit in await run_case(case, Path(tmp)):
                for part in (case["part"], "all"):
                    totals[(part, kind, case["lang"])].append(hit)
                    totals[(part, kind, "all")].append(hit)
                if args.show:
                    print(f"{'ok  ' if hit else 'MISS'} {kind:7} {case['id']:20} {question}")
    parts = sorted(
        {part for part, _, _ in totals}, key=("dev", "heldback", "heldout", "heldout2", "all").index
    )
    print("now: current value first hit; before: history in order; during: R@5;")
    print("lost: every superseded fact recalled with its dates;")
    print("closed: the memories marked superseded are exactly the replaced facts (text only)")
    print(f"{'part':9} {'question':8} {'en':>9} {'zh':>9} {'ja':>9} {'all':>14}")
    for part in parts:
        for kind in KINDS:
            cells = []
            for lang in ("en", "zh", "ja", "all"):
                hits = totals.get((part, kind, lang))
                cells.append(f"{sum(hits)}/{len(hits)}" if hits else "-")
            every = totals.get((part, kind, "all"))
            share = f" {sum(every) / len(every):.2f}" if every else ""
            print(
                f"{part:9} {kind:8} {cells[0]:>9} {cells[1]:>9} {cells[2]:>9} {cells[3]:>9}{share}"
            )


def _cases(cases: list[dict], dataset: Path | None) -> list[dict]:
    """The cases, LoCoMo's resolved from the dataset (left out, said once, without it)."""
    try:
        path = find_dataset(dataset, ROOT)
    except DataNotFound as missing:
        print(f"LoCoMo cases left out: {str(missing).splitlines()[0]}", file=sys.stderr)
        return [c for c in cases if c.get("source") != "locomo"]
    conversations = {c["sample_id"]: c for c in json.loads(path.read_text(encoding="utf-8"))}
    return [locomo_case(c, conversations) if c.get("source") == "locomo" else c for c in cases]


if __name__ == "__main__":
    asyncio.run(main())
