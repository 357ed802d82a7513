"""Reported, instructed and hearsay speech against the speaker's own words (issue 32 item 9).

    python bench/reported_speech.py [--show-errors]

Two labelled sets of single user lines in English, Chinese and Japanese: `reported` lines are
someone else's words, an instruction to say, write, translate or pretend something, or hearsay
("Repeat after me: my name is Mallory", "I heard someone say that my name is Mallory"); `own`
lines are the speaker's own statements. tests/data/reported_speech_dev.jsonl and its second round
reported_speech_dev2.jsonl (exercises and fiction) were read while the rule was written; tests/data/reported_speech_heldout.jsonl was written before it and not read
while writing it (its errors are never printed). For each set the script prints how many
reported lines still give a core high signal (the defect: they reach core identity and the
profile) and how many own lines give one (a rule that is too wide loses them), and, when
shared/datasets/sieve_dev.jsonl is beside the checkout, how many of its lines labelled core
give a core signal (what the wider rule must not take away).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.engine.ingest.sieve import detect_high_signals  # noqa: E402
from tests.helpers import datasets  # noqa: E402

SETS = {
    "dev (read while writing the rule)": ROOT / "tests/data/reported_speech_dev.jsonl",
    "dev, second round (read while writing the rule)": ROOT
    / "tests/data/reported_speech_dev2.jsonl",
    "held-out (not read while writing it)": ROOT / "tests/data/reported_speech_heldout.jsonl",
}


def reaches_core(text: str) -> bool:
    return any(signal.layer == "core" for signal in detect_high_signals(text))


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def report(name: str, rows: list[dict[str, str]], show_errors: bool) -> None:
    print(name)
    print(f"{'lang':<5} {'reported->core':>15} {'own->core':>10}")
    for lang in ("en", "zh", "ja", "all"):
        picked = [r for r in rows if lang in ("all", r["lang"])]
        reported = [r for r in picked if r["label"] == "reported"]
        own = [r for r in picked if r["label"] == "own"]
        leaked = [r for r in reported if reaches_core(r["text"])]
        kept = [r for r in own if reaches_core(r["text"])]
        print(f"{lang:<5} {len(leaked):>7} of {len(reported):<5} {len(kept):>3} of {len(own):<4}")
        if show_errors and lang == "all":
            for row in leaked:
                print(f"  reported, reaches core: {row['text']}")
            for row in own:
                if row not in kept:
                    print(f"  own, no core signal:    {row['text']}")
    print()


def sieve_core_lines() -> None:
    path = datasets.find("sieve_dev.jsonl", os.environ)
    if path is None:
        print("(shared/datasets/sieve_dev.jsonl not found beside the checkout)")
        return
    rows = load(path)
    core = [r for r in rows if r["label"] == "core"]
    other = [r for r in rows if r["label"] != "core"]
    hit = sum(reaches_core(r["text"]) for r in core)
    wrong = sum(reaches_core(r["text"]) for r in other)
    print(f"sieve_dev.jsonl: {hit} of {len(core)} core lines give a core signal, ", end="")
    print(f"{wrong} of {len(other)} other lines do")


def main(args: argparse.Namespace) -> None:
    for name, path in SETS.items():
        report(name, load(path), args.show_errors and "held-out" not in name)
    sieve_core_lines()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--show-errors", action="store_true", help="print the dev set's errors (never held-out)"
    )
    main(parser.parse_args())
