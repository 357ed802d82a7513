"""Knowledge updates (issue 34): does recall answer what is true now, the history in order, and
what was true during a period?

Each case of bench/data/knowledge_updates.json remembers a fact and its update(s) with their
dates among ten distractors (one agent per case, text only, through the service as an MCP or
REST call would), then asks:

- `now` ("where does Marco live now?"): the current fact is the first hit;
- `before` ("where did Marco live before?"): every fact of the chain is in the top 5, in time
  order;
- `during` ("where did Marco live in March 2025?"): the fact valid then is in the top 5 (R@5).

`now` for the recall is the day after the last fact. Run on any checkout (the service calls it
makes exist since fc77e14), so today's and an older build's figures come from one script:

    python bench/knowledge_updates.py                      # every case
    python bench/knowledge_updates.py --part heldout
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

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import RecallRequest, RememberRequest, build  # noqa: E402

CASES = ROOT / "bench" / "data" / "knowledge_updates.json"


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
        for i, text in enumerate(case["distractors"]):
            when = (last - timedelta(days=3 * i + 1)).date().isoformat()
            await cortex.memories.remember(
                build(RememberRequest, content=text, category="fact", occurred_at=when)
            )
        now = (last + timedelta(days=1)).date().isoformat() + "T12:00:00Z"
        for question, kind, expected in case["questions"]:
            result = await cortex.memories.recall(
                build(RecallRequest, query=question, max_results=5, now=now)
            )
            got = [m.id for m in result.memories]
            want = [ids[i] for i in expected]
            outcomes.append((kind, question, _hit(kind, got, want)))
    return outcomes


def _hit(kind: str, got: list[str], want: list[str]) -> bool:
    if kind == "now":
        return bool(got) and got[0] == want[0]
    if kind == "before":
        order = [memory_id for memory_id in got if memory_id in want]
        return order == want
    return all(memory_id in got[:5] for memory_id in want)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("heldout", "dev", "all"), default="all")
    parser.add_argument("--show", action="store_true", help="print each question's outcome")
    args = parser.parse_args()
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    if args.part != "all":
        cases = [c for c in cases if c["part"] == args.part]
    totals: dict[tuple[str, str], list[bool]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            for kind, question, hit in await run_case(case, Path(tmp)):
                totals[(kind, case["lang"])].append(hit)
                totals[(kind, "all")].append(hit)
                if args.show:
                    print(f"{'ok  ' if hit else 'MISS'} {kind:7} {case['id']:10} {question}")
    print(f"{'question':8} {'lang':4} {'hits':>6}")
    for kind in ("now", "before", "during"):
        for lang in ("en", "zh", "ja", "all"):
            hits = totals.get((kind, lang))
            if hits:
                print(
                    f"{kind:8} {lang:4} {sum(hits):>3}/{len(hits):<3} {sum(hits) / len(hits):.2f}"
                )


if __name__ == "__main__":
    asyncio.run(main())
