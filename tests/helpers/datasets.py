"""The data files some tests read that are not part of the repository (LoCoMo is CC BY-NC): where
a test looks for each, and the line a run without it prints in its summary.

A test that needs one says so with `@pytest.mark.needs_data("locomo_dev.json")` and takes the
`data_file` fixture (its path); tests/conftest.py skips it when the file is not found and counts it.
A file is looked for, in order, at the path its variable names (`CORTEX_LOCOMO`), in the folder
`CORTEX_TEST_DATASETS` names (and only there when it is set), else in shared/datasets beside the
checkout or one of its parents (worktrees live one level deeper).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDER_VARIABLE = "CORTEX_TEST_DATASETS"


@dataclass(frozen=True)
class DataFile:
    name: str
    variable: str  # names the file itself
    what: str  # what it is and where it comes from


DATA_FILES = {
    data.name: data
    for data in (
        DataFile(
            "locomo_dev.json",
            "CORTEX_LOCOMO",
            "LoCoMo's dev conversations conv-26, -30, -41, -42, -43 of data/locomo10.json,"
            " snap-research/locomo, CC BY-NC 4.0",
        ),
        DataFile(
            "sieve_dev.jsonl",
            "CORTEX_SIEVE_DEV",
            "384 labelled sentences of those conversations, described in shared/datasets/README.md",
        ),
    )
}


def default_folders() -> list[Path]:
    return [parent / "shared" / "datasets" for parent in ROOT.parents[:3]]


def find(name: str, environ: Mapping[str, str]) -> Path | None:
    """The file `name` of DATA_FILES, or None when it is nowhere it is looked for."""
    data = DATA_FILES[name]
    candidates = [Path(environ[data.variable])] if environ.get(data.variable) else []
    if environ.get(FOLDER_VARIABLE):
        candidates.append(Path(environ[FOLDER_VARIABLE]) / name)
    else:
        candidates += [folder / name for folder in default_folders()]
    return next((path for path in candidates if path.is_file()), None)


def missing_line(name: str, skipped: int) -> str:
    """The summary line of a run in which `skipped` tests did not run without `name`."""
    data = DATA_FILES[name]
    tests = "test" if skipped == 1 else "tests"
    return (
        f"{skipped} {tests} did not run without {name} ({data.what}): set"
        f" {data.variable}=/path/to/{name}, or put it in {default_folders()[0]}"
        f" (or the folder {FOLDER_VARIABLE} names)"
    )
