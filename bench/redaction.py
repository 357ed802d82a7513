"""Redaction figures on the labelled corpus (tests/helpers/redaction_corpus.py), from one run:
- secrets caught / missed by category and language (a secret counts as caught when its value
  is gone from the redacted text);
- the false-positive rate on ordinary text: hand-written look-alikes (ids, UUIDs, hashes, dates,
  prices, phone numbers), generated look-alikes, and every turn of the dev LoCoMo conversations
  when shared/datasets/locomo_dev.json is beside the checkout;
- the same for the forms probe item 4 of issue 26 found (`PROBE_SECRETS`) and for the held-back
  forms written before the patterns for them and not used to write them
  (tests/helpers/redaction_heldback.py), each a table of its own;
- the detector's median cost per text against the strongest simple baseline measured in the same
  run (one compiled regex of the provider prefixes, which is what a minimal redactor does).

    python bench/redaction.py [--show-missed] [--show-changed]

The end-to-end check (remember, ingest, import and flush; database, WAL and provider bytes) is
tests/test_redaction_corpus.py.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.engine.redaction import redact  # noqa: E402
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


def main(args: argparse.Namespace) -> None:
    _secret_table("labelled corpus", SECRETS, args.show_missed)
    _secret_table("probe item 4 forms (issue 26)", PROBE_SECRETS, args.show_missed)
    _secret_table("held-back forms (not used to write patterns)", HELD_BACK, False)

    turns = locomo_turns()
    print(f"{'ordinary text':<34} {'sentences':>9} {'changed':>8} {'rate':>7}")
    sets = [("hand-written and generated", ORDINARY), ("dev LoCoMo turns", turns)]
    for name, texts in [*sets, ("all", ORDINARY + turns)]:
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
