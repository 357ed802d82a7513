"""Tests that read a data file the repository does not hold are marked `needs_data`: a run
without the file skips them and its summary says, per file, how many did not run and how to
provide it (tests/helpers/datasets.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import datasets

ROOT = Path(__file__).resolve().parent.parent
MARKED = [
    "tests/test_redaction_corpus.py::test_the_ordinary_set_holds_every_dev_locomo_turn_when_the_data_is_here",
    "tests/test_aging_bench.py::test_the_first_weeks_of_a_dev_conversation_keep_the_invariants",
    "tests/test_sieve_dialogue.py::test_core_precision_and_recall_hold_on_the_dev_dialogue",
]


def test_a_run_without_the_data_files_says_per_file_how_many_tests_did_not_run_and_how_to_get_it(
    tmp_path: Path,
) -> None:
    env = {**os.environ, datasets.FOLDER_VARIABLE: str(tmp_path)}  # an empty folder of data
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *MARKED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "3 skipped" in result.stdout
    lines = [line for line in result.stdout.splitlines() if "did not run without" in line]
    assert lines == [
        datasets.missing_line("locomo_dev.json", 2),
        datasets.missing_line("sieve_dev.jsonl", 1),
    ]
    assert "2 tests did not run without locomo_dev.json" in lines[0]
    assert "set CORTEX_LOCOMO=/path/to/locomo_dev.json" in lines[0]
    assert "1 test did not run without sieve_dev.jsonl" in lines[1]


def test_a_data_file_is_found_at_its_variable_first_then_in_the_folder_named(
    tmp_path: Path,
) -> None:
    named = tmp_path / "elsewhere.json"
    named.write_text("[]")
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "locomo_dev.json").write_text("[]")
    assert datasets.find("locomo_dev.json", {"CORTEX_LOCOMO": str(named)}) == named
    found = datasets.find("locomo_dev.json", {datasets.FOLDER_VARIABLE: str(folder)})
    assert found == folder / "locomo_dev.json"
    assert datasets.find("sieve_dev.jsonl", {datasets.FOLDER_VARIABLE: str(folder)}) is None
