"""The linking rules' bench in small: its scoring counts what it should, and a run prints the
table of every language and part with the cost per call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench import entity_mentions

ROOT = Path(__file__).resolve().parent.parent


def test_the_score_counts_names_references_and_aliases_against_the_labels():
    lines = [
        {
            "text": "My sister Anna met Grace in May.",
            "mentions": [{"name": "Anna", "kind": "person", "aliases": ["my sister"]}],
            "references": ["my brother"],
        }
    ]
    score = entity_mentions.score(lines)
    assert (score.mentions.tp, score.mentions.fp, score.mentions.fn) == (1, 1, 0)  # Grace is extra
    assert (score.references.tp, score.references.fn) == (0, 1)
    assert score.aliases.tp == 1 and score.kinds_right == 1
    assert len(score.errors) == 1


def test_a_run_prints_precision_and_recall_per_language_and_part_and_the_cost_per_call():
    run = subprocess.run(
        [sys.executable, "bench/entity_mentions.py", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    for row in ["| en | dev |", "| en | heldout |", "| zh | natural |", "| ja | heldout |"]:
        assert row in run.stdout
    assert "typical en turn" in run.stdout and "find_mentions µs (median)" in run.stdout
