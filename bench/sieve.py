"""How well rules-only ingest picks what belongs in core memory, on labelled dialogue lines.

    nice python bench/sieve.py [--set PATH ...] [--show-errors] [--llm-stub]
    nice python bench/sieve.py --split      # working two thirds and held-back third apart
    nice python bench/sieve.py --split --baseline 3b2a74b   # and the rules of that commit beside

Protocol (../shared/datasets/README.md): each line alone is the user message of a turn with an
empty assistant message, ingested without an LLM or embeddings for a fresh agent; "goes to core"
means the turn left at least one core memory. Prints precision, recall and F1 of core against
`label == "core"` per language and per labelled category, and how many core memories do not name
the line's speaker. Defaults: the dev set in ../shared/datasets (when present) and the Chinese and
Japanese sets and the English correction cases in tests/fixtures.

`--split` reports the dev lines (the dev set and the Chinese and Japanese sets) in two parts: a
working two thirds to read while writing rules, and a held-back third whose figures are computed
but whose lines are never printed (`--show-errors` shows the working part's errors only). The
rule is `part_of`: a line's scene (its conversation, session and block of ten turns, so lines
of one exchange stay together) is held back when the SHA-256 of "conv|session|block" is 0 mod 3.
The English correction cases are a rule table of our own, reported whole.

The fresh sets (bench/data/sieve_fresh*.jsonl: user-to-agent chat in English, Chinese and
Japanese, each written before the rules were read; see bench/data/README.md) are all measured, one
row per set and language, and their lines are never printed. sieve_fresh.jsonl has been measured
often since; sieve_fresh2.jsonl is the set the rules have not seen: measure it once, at the end of
a change (`--set` the other sets while changing rules). `--baseline REV` also measures the rules of commit REV (its
`cortex_mcp` package, checked out to a temporary folder and run by this script) on the same
lines in the same run, and prints its precision and recall beside.

`--llm-stub` runs the same lines with an LLM configured (the scripted stub of the tests, through
the real OpenAI SDK): a plumbing check of the deep channel, whose memories go to working memory,
not a measure of any model. The rules must stand on their own.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import IngestRequest, build  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
FRESH_SETS = sorted(
    (ROOT / "bench" / "data").glob("sieve_fresh*.jsonl")
)  # never read while writing rules
SPLIT_SETS = {"sieve_dev", "sieve_zh", "sieve_ja"}  # labelled dialogue, split by `part_of`
OWN_SETS = [
    FIXTURES / "sieve_en_corrections.jsonl",
    FIXTURES / "sieve_zh.jsonl",
    FIXTURES / "sieve_ja.jsonl",
]


def find_dev_set() -> Path | None:
    """$CORTEX_SIEVE_DEV, else shared/datasets/sieve_dev.jsonl beside the checkout or one of its
    parents (worktrees live one level deeper)."""
    candidates = (
        [Path(os.environ["CORTEX_SIEVE_DEV"])] if os.environ.get("CORTEX_SIEVE_DEV") else []
    )
    candidates += [p / "shared" / "datasets" / "sieve_dev.jsonl" for p in ROOT.parents[:3]]
    return next((p for p in candidates if p.is_file()), None)


def part_of(line: dict[str, Any]) -> str:
    """ "held" for the held-back third of the dev lines, "working" for the rest, "fresh" for the
    fresh set, "whole" for a set that is not split. The unit is a scene: conversation, session ("D3" of "D3:14") and block
    of ten turns, hashed, so related lines fall on the same side and the rule needs no list."""
    if str(line.get("set", "")).startswith("sieve_fresh"):
        return "fresh"
    if line.get("set") not in SPLIT_SETS:
        return "whole"
    session, _, turn = str(line["dia_id"]).partition(":")
    digits = "".join(c for c in turn if c.isdigit())
    scene = f"{line['conv']}|{session}|{int(digits or 0) // 10}"
    return "held" if int(hashlib.sha256(scene.encode()).hexdigest(), 16) % 3 == 0 else "working"


@dataclass(frozen=True)
class Judged:
    line: dict[str, Any]
    core: list[str]  # contents of the core memories the turn left
    outcome: str = ""  # what the deep channel did: extracted | fallback | skipped

    @property
    def predicted(self) -> bool:
        return bool(self.core)

    @property
    def wanted(self) -> bool:
        return self.line["label"] == "core"

    @property
    def unnamed(self) -> list[str]:
        """Core memories that do not carry the line's speaker."""
        speaker = self.line.get("speaker")
        return [c for c in self.core if speaker and speaker not in c]


def load_lines(paths: Iterable[Path]) -> list[dict[str, Any]]:
    lines = []
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            rows = [json.loads(row) for row in handle if row.strip()]
        lines += [{**row, "set": path.stem} for row in rows]
    return lines


async def judge(lines: list[dict[str, Any]], **overrides: Any) -> list[Judged]:
    """Ingest each line for its own agent (one database, no LLM unless overridden)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            db_path=Path(tmp) / "sieve.db",
            **{"embedding_provider": "none", "llm_provider": "none", **overrides},
        )
        judged = []
        async with open_cortex(settings, background=False) as service:
            for number, line in enumerate(lines):
                result = await service.conversation.ingest(
                    build(
                        IngestRequest,
                        user_message=line["text"],
                        assistant_message="",
                        agent_id=f"line-{number}",
                    )
                )
                left = {m.id: m for m in [*result.high_signals, *result.extracted]}
                core = [m.content for m in left.values() if m.layer.value == "core"]
                judged.append(Judged(line, core, result.outcome or ""))
        return judged


def stub_extraction(_request: Any) -> Any:
    """The scripted deep channel: one working memory per turn it is asked about."""
    from tests.helpers.llm_stub import extraction

    item = {"content": "stub: the turn", "category": "fact", "importance": 0.5, "source": "user"}
    return extraction([item])


async def judge_with_llm_stub(lines: list[dict[str, Any]]) -> tuple[list[Judged], int]:
    """The same lines with the stub LLM configured; also how many requests it received."""
    from tests.helpers.llm_stub import llm_stub

    with llm_stub() as stub:
        stub.responder = stub_extraction
        judged = await judge(lines, llm_provider="openai", llm_base_url=stub.openai_url)
        return judged, len(stub.received)


@dataclass(frozen=True)
class Score:
    true_pos: int
    predicted: int
    wanted: int

    @property
    def precision(self) -> float:
        return self.true_pos / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.true_pos / self.wanted if self.wanted else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score(judged: Iterable[Judged]) -> Score:
    rows = list(judged)
    return Score(
        true_pos=sum(j.predicted and j.wanted for j in rows),
        predicted=sum(j.predicted for j in rows),
        wanted=sum(j.wanted for j in rows),
    )


def by_language(judged: list[Judged], split: bool = False) -> dict[str, list[Judged]]:
    groups: dict[str, list[Judged]] = defaultdict(list)
    for j in judged:
        part = f" {part_of(j.line)}" if split and part_of(j.line) != "fresh" else ""
        groups[f"{j.line.get('set', '?')} ({j.line['lang']}){part}"].append(j)
    return dict(groups)


def _unseen(line: dict[str, Any]) -> bool:
    """Lines whose errors are never printed: the held-back third and the fresh set."""
    return part_of(line) in {"held", "fresh"}


def _report(
    judged: list[Judged],
    show_errors: bool,
    split: bool = False,
    baseline: list[Judged] | None = None,
) -> None:
    before = by_language(baseline, split) if baseline is not None else {}
    head = f"{'P before':>9} {'R before':>9}" if baseline is not None else ""
    print(f"{'set':<30} {'lines':>5} {'core':>5} {'->core':>6} {'P':>6} {'R':>6} {'F1':>6} {head}")
    for language, rows in sorted(by_language(judged, split).items()):
        s = score(rows)
        old = score(before[language]) if language in before else None
        then = f" {old.precision:>9.3f} {old.recall:>9.3f}" if old else ""
        print(
            f"{language:<30} {len(rows):>5} {s.wanted:>5} {s.predicted:>6} "
            f"{s.precision:>6.3f} {s.recall:>6.3f} {s.f1:>6.3f}{then}"
        )
        groups: dict[str, list[Judged]] = defaultdict(list)
        for j in rows:
            groups[f"{j.line['label']}/{j.line['category']}"].append(j)
        hidden = split or any(_unseen(j.line) for j in rows)
        for name, members in sorted(groups.items()) if not hidden else []:
            went = sum(j.predicted for j in members)
            print(f"  {name:<28} {len(members):>5} {'':>5} {went:>6}")
    unnamed = [c for j in judged for c in j.unnamed]
    print(f"core memories without their speaker: {len(unnamed)}")
    if show_errors:
        for j in judged:
            if j.predicted != j.wanted and not _unseen(j.line):
                kind = "FP" if j.predicted else "FN"
                print(f"{kind} [{j.line['label']}/{j.line['category']}] {j.line['text']}")


def judge_at(revision: str, lines: list[dict[str, Any]]) -> list[Judged]:
    """The same lines through the rules of `revision`: its package checked out beside this
    script in a temporary folder, run there with `--predict`."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", revision, "cortex_mcp"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        (Path(tmp) / "bench").mkdir()
        shutil.copy(Path(__file__), Path(tmp) / "bench" / "sieve.py")
        rows = Path(tmp) / "lines.jsonl"
        rows.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": tmp}
        result = subprocess.run(
            [sys.executable, str(Path(tmp) / "bench" / "sieve.py"), "--predict", str(rows)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    cores = json.loads(result.stdout)
    return [Judged(line, core) for line, core in zip(lines, cores, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, action="append", dest="sets")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--llm-stub", action="store_true")
    parser.add_argument("--split", action="store_true", help="working part and held-back third")
    parser.add_argument("--baseline", metavar="REV", help="also measure the rules of commit REV")
    parser.add_argument("--predict", type=Path, help=argparse.SUPPRESS)  # used by --baseline
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # every line without an LLM logs its fallback
    if args.predict:  # lines as JSON in, each line's core memories as JSON out
        rows = [json.loads(row) for row in args.predict.read_text(encoding="utf-8").splitlines()]
        print(json.dumps([j.core for j in asyncio.run(judge(rows))]))
        return
    dev = find_dev_set()
    sets = args.sets or ([dev] if dev else []) + OWN_SETS + FRESH_SETS
    if dev is None and not args.sets:
        print("sieve_dev.jsonl not found (set CORTEX_SIEVE_DEV): own sets only")
    lines = load_lines(sets)
    judged = asyncio.run(judge(lines))
    baseline = judge_at(args.baseline, lines) if args.baseline else None
    print(
        "rules only (no LLM, no embeddings):" + (f" before = {args.baseline}" if baseline else "")
    )
    _report(judged, args.show_errors, args.split, baseline)
    if args.llm_stub:
        with_llm, calls = asyncio.run(judge_with_llm_stub(lines))
        outcomes = Counter(j.outcome for j in with_llm)
        same = sum(a.core == b.core for a, b in zip(judged, with_llm, strict=True))
        print(f"\nwith the stub LLM (plumbing check): {calls} requests, outcomes {dict(outcomes)}")
        print(f"core memories identical to rules-only on {same}/{len(lines)} lines")
        _report(with_llm, show_errors=False)


if __name__ == "__main__":
    main()
