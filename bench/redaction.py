"""Redaction figures on the labelled corpus (tests/helpers/redaction_corpus.py), from one run:
- secrets caught / missed by category and language (a secret counts as caught when its value
  is gone from the redacted text);
- the false-positive rate on ordinary text: hand-written look-alikes (ids, UUIDs, hashes, dates,
  prices, phone numbers), generated look-alikes, and every turn of the dev LoCoMo conversations
  when shared/datasets/locomo_dev.json is beside the checkout;
- the same for the forms probe item 4 of issue 26 found (`PROBE_SECRETS`) and for the held-back
  forms written before the patterns for them and not used to write them
  (tests/helpers/redaction_heldback.py), each a table of its own;
- issue 32 item 10: the new secret shapes of tests/data/secret_shapes_dev.jsonl and
  secret_shapes_dev2.jsonl (read while the rules were written) and tests/data/secret_shapes_heldout.jsonl (written before them and not
  read while writing them: its misses are never printed), and the false positives on ordinary
  text in three languages: the corpus's ordinary lines, the dev LoCoMo turns, sieve_dev.jsonl,
  the MemoryBank dev dialogues in English and Chinese (user and AI text) and the Chinese and
  Japanese sieve fixtures (tests/fixtures/sieve_zh.jsonl, sieve_ja.jsonl);
- the detector's median cost per text against the strongest simple baseline measured in the same
  run (one compiled regex of the provider prefixes, which is what a minimal redactor does).

    python bench/redaction.py [--show-missed] [--show-changed]

The end-to-end check (remember, ingest, import and flush; database, WAL and provider bytes) is
tests/test_redaction_corpus.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.engine.redaction import redact  # noqa: E402
from tests.helpers import datasets  # noqa: E402
from tests.helpers.redaction_corpus import (  # noqa: E402
    ORDINARY,
    PROBE_SECRETS,
    SECRETS,
    Secret,
    locomo_turns,
)
from tests.helpers.redaction_heldback import HELD_BACK  # noqa: E402

_BASELINE = re.compile(r"\b(?:sk-|ghp_|xox[bp]-|AKIA|AIza|glpat-)[A-Za-z0-9_\-]{16,}")


def _median_us(texts: list[str]) -> tuple[float, float]:
    """Median time per text of the detector and of the baseline, timed text by text in turn
    (a loaded machine's pauses land in a few samples instead of every average)."""
    ours, baseline = [], []
    for text in texts * 3:
        started = time.perf_counter()
        redact(text)
        middle = time.perf_counter()
        _BASELINE.sub("[REDACTED]", text)
        ours.append(middle - started)
        baseline.append(time.perf_counter() - middle)
    return statistics.median(ours) * 1e6, statistics.median(baseline) * 1e6


def _secret_table(title: str, secrets: list[Secret], show_missed: bool) -> None:
    caught: Counter[tuple[str, str]] = Counter()
    missed: Counter[tuple[str, str]] = Counter()
    missed_items = []
    for item in secrets:
        key = (item.category, item.lang)
        if item.secret in redact(item.text).text:
            missed[key] += 1
            missed_items.append(item)
        else:
            caught[key] += 1
    print(title)
    print(f"{'category':<22} {'lang':<4} {'caught':>6} {'missed':>6}")
    for key in sorted(set(caught) | set(missed)):
        print(f"{key[0]:<22} {key[1]:<4} {caught[key]:>6} {missed[key]:>6}")
    total_caught, total_missed = sum(caught.values()), sum(missed.values())
    print(f"{'all':<27} {total_caught:>6} {total_missed:>6}  ({len(secrets)} secrets)")
    if show_missed:
        for item in missed_items:
            print(f"  missed {item.category}/{item.lang}: {item.text!r}")
    print()


def _shapes(name: str) -> list[Secret]:
    path = ROOT / "tests" / "data" / name
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [Secret(r["category"], r["lang"], r["text"], r["secret"]) for r in rows]


DEV_SHAPES = _shapes("secret_shapes_dev.jsonl") + _shapes("secret_shapes_dev2.jsonl")
HELD_OUT_SHAPES = _shapes("secret_shapes_heldout.jsonl")


def _dataset_texts() -> dict[str, list[str]]:
    """Ordinary text of the data files beside the checkout, by name ({} for a missing one)."""
    texts: dict[str, list[str]] = {}
    sieve = datasets.find("sieve_dev.jsonl", os.environ)
    if sieve is not None:
        lines = sieve.read_text("utf-8").splitlines()
        texts["sieve_dev.jsonl lines (en)"] = [json.loads(line)["text"] for line in lines if line]
    for name, language in (("memorybank_dev_en.json", "en"), ("memorybank_dev_cn.json", "zh")):
        found = next((f / name for f in datasets.default_folders() if (f / name).is_file()), None)
        if found is None:
            continue
        users = json.loads(found.read_text("utf-8"))["users"]
        texts[f"{name} turns ({language})"] = [
            turn[side]
            for user in users
            for turn in user["memories"]
            for side in ("user_text", "ai_text")
        ]
    for language in ("zh", "ja"):
        path = ROOT / "tests" / "fixtures" / f"sieve_{language}.jsonl"
        lines = path.read_text("utf-8").splitlines()
        texts[f"sieve_{language}.jsonl lines ({language})"] = [
            json.loads(x)["text"] for x in lines if x
        ]
    return texts


def main(args: argparse.Namespace) -> None:
    _secret_table("labelled corpus", SECRETS, args.show_missed)
    _secret_table("probe item 4 forms (issue 26)", PROBE_SECRETS, args.show_missed)
    _secret_table("held-back forms (not used to write patterns)", HELD_BACK, False)
    _secret_table("issue 32 dev shapes (read while writing rules)", DEV_SHAPES, args.show_missed)
    _secret_table("issue 32 held-out shapes (not read while writing rules)", HELD_OUT_SHAPES, False)

    turns = locomo_turns()
    print(f"{'ordinary text':<34} {'sentences':>9} {'changed':>8} {'rate':>7}")
    sets = [("hand-written and generated", ORDINARY), ("dev LoCoMo turns", turns)]
    sets += list(_dataset_texts().items())
    everything = [text for _, texts in sets for text in texts]
    for name, texts in [*sets, ("all", everything)]:
        changed = [t for t in texts if redact(t).changed]
        rate = len(changed) / len(texts) if texts else 0.0
        print(f"{name:<34} {len(texts):>9} {len(changed):>8} {rate:>7.2%}")
        if args.show_changed and name != "all":
            for text in changed:
                print(f"  changed: {text!r} -> {redact(text).text!r}")
    if not turns:
        print("(dev LoCoMo turns not found beside the checkout: shared/datasets/locomo_dev.json)")

    texts = ORDINARY + turns + [s.text for s in SECRETS + PROBE_SECRETS]
    ours, baseline = _median_us(texts)
    print()
    print(f"median cost per text: {ours:.1f} us (one provider-prefix regex: {baseline:.1f} us,")
    print(f"ratio {ours / baseline:.1f}x) over {len(texts)} texts")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-missed", action="store_true", help="print each missed secret")
    parser.add_argument("--show-changed", action="store_true", help="print each changed line")
    main(parser.parse_args())
