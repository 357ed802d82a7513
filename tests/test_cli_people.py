"""The commands a person types, through the installed console script: list, search, show,
add, forget, stats, lifecycle, import, export; human text by default, JSON with --json."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).parent / "fixtures"
LONG_AGO = "2020-01-01T03:00:00.000000Z"


def _cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args], capture_output=True, text=True, timeout=90, env=server_env(db)
    )


def _json(*args: str, db: Path) -> Any:
    done = _cli(*args, "--json", db=db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_add_list_search_show_forget_and_stats_for_people_and_scripts(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    added = _cli("add", "Harry prefers green tea in the morning", "--category", "preference", db=db)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("remembered: ") and added.stdout.rstrip().endswith("(core)")
    memory_id = added.stdout.split()[1]
    # global options after the command, too
    listed = _cli("list", "--layer", "core", "--db", str(db), db=tmp_path / "unused.db")
    assert memory_id in listed.stdout and "preference" in listed.stdout
    assert [m["id"] for m in _json("list", "--category", "preference", db=db)] == [memory_id]
    found = _cli("search", "green tea", db=db)
    assert memory_id in found.stdout
    assert _json("search", "green tea", db=db)["memories"][0]["id"] == memory_id
    shown = _cli("show", memory_id, db=db)
    assert shown.stdout.startswith("Harry prefers green tea in the morning")
    assert _json("show", memory_id, db=db)["memory"]["category"] == "preference"
    stats = _cli("stats", db=db)
    assert "core 1" in stats.stdout and "lifecycle: last success never" in stats.stdout
    forgotten = _cli("forget", memory_id, "--reason", "changed taste", db=db)
    assert forgotten.stdout.strip() == f"forgotten: {memory_id}"
    assert _json("list", db=db) == []
    assert _json("forget", memory_id, "--purge", db=db)["status"] == "purged"
    assert _json("stats", db=db)["memories"]["total"] == 0


def test_bad_input_gets_one_line_and_a_nonzero_exit(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    bad = _cli("add", "x", "--importance", "3", db=db)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("cortex-mcp: importance")
    assert "Traceback" not in bad.stderr
    missing = _cli("show", "0190aaaa-0000-7000-8000-000000000000", db=db)
    assert missing.returncode == 1 and "no memory" in missing.stderr


def test_lifecycle_preview_then_run_from_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    _cli(
        "add",
        "Decided to self-host everything",
        "--category",
        "decision",
        "--layer",
        "working",
        db=db,
    )
    _cli("add", "A forgettable fact", "--importance", "0.1", db=db)
    with sqlite3.connect(db) as conn:  # a run refuses a future --now: age the memories instead
        conn.execute("UPDATE memories SET created_at = ?, updated_at = ?", (LONG_AGO, LONG_AGO))
    preview = _cli("lifecycle", "preview", db=db)
    assert "would promote" in preview.stdout and "would archive" in preview.stdout
    planned = _json("lifecycle", "preview", db=db)["actions"]
    run = _json("lifecycle", "run", "--agent", "default", db=db)
    assert run["status"] == "done" and run["actions"] == planned
    again = _cli("lifecycle", "run", db=db)
    assert again.returncode == 0 and "promote 0" in again.stdout
    bad = _cli("lifecycle", "run", "--now", "yesterday", db=db)
    assert bad.returncode == 2 and "now:" in bad.stderr


def test_import_twice_then_export_json_markdown_and_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    first = _cli("import", str(FIXTURES / "openclaw"), db=db)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported 19 memories, 2 relations")
    again = _json("import", str(FIXTURES / "openclaw"), db=db)
    assert again["memories"] == 0 and again["existing"] == 19
    out = tmp_path / "export.json"
    assert _json("export", "--format", "json", "--out", str(out), db=db)["path"] == str(out)
    assert len(json.loads(out.read_text())["memories"]) == 19
    folder = tmp_path / "md"
    _cli("export", "--format", "markdown", "--out", str(folder), db=db)
    assert "## Preferences" in (folder / "MEMORY.md").read_text()
    copy = tmp_path / "copy.db"
    result = _json("export", "--format", "sqlite", "--out", str(copy), db=db)
    assert result["integrity"] == "ok" and result["memories"] == 19
    # a backup is one self-contained file only its owner can read, as is the JSON export
    assert sorted(p.name for p in tmp_path.glob("copy.db*")) == ["copy.db"]
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with open(copy, "rb") as raw:
        assert raw.read(20)[18:20] == b"\x01\x01"  # rollback journal, not WAL (file header)
    with sqlite3.connect(copy) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 19
    exists = _cli("export", "--format", "sqlite", "--out", str(copy), db=db)
    assert exists.returncode == 2 and "exists" in exists.stderr


def test_a_bad_import_file_names_the_line_in_one_line_exits_2_and_imports_nothing(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "memory.jsonl"
    bad.write_text('{"type":"entity","name":"A","observations":["x"]}\n{"type":"thing"}\n')
    done = _cli("import", str(bad), db=tmp_path / "brain.db")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"cortex-mcp: {bad}:2: 'type' must be 'entity' or 'relation', got 'thing'\n"
    )
    assert "(total 0)" in _cli("stats", db=tmp_path / "brain.db").stdout


def test_forget_with_a_correction_and_add_with_supersedes_replace_a_memory(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    old = _json("add", "The user's office is on the 3rd floor", db=db)["id"]
    corrected = _cli("forget", old, "--correction", "The user's office is on the 5th floor", db=db)
    assert corrected.returncode == 0, corrected.stderr
    new = corrected.stdout.split()[-1]
    assert corrected.stdout.strip() == f"corrected: {old} is superseded by {new}"
    assert _json("show", new, db=db)["memory"]["content"] == "The user's office is on the 5th floor"
    assert _json("show", old, db=db)["memory"]["superseded_by"] == new

    added = _cli("add", "The user's office is on the 6th floor", "--supersedes", new[-6:], db=db)
    assert added.returncode == 0, added.stderr
    newest = added.stdout.split()[1]
    assert added.stdout.splitlines()[1] == f"superseded: {new}"
    assert _json("show", new, db=db)["memory"]["superseded_by"] == newest
    assert [m["id"] for m in _json("list", db=db)] == [newest]


def test_an_id_is_found_by_its_last_characters_and_help_says_how_many_to_type(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    first = _json("add", "The user's bike is a blue Brompton", db=db)["id"]
    second = _json("add", "The user's car is a red Fiat", db=db)["id"]
    assert first[:8] == second[:8]  # UUIDv7: made the same minute, the same first 8
    shown = _cli("show", first[-6:].upper(), db=db)
    assert shown.stdout.startswith("The user's bike is a blue Brompton"), shown.stderr
    assert _json("forget", second[-5:], db=db) == {
        "id": second,
        "status": "forgotten",
        "new_id": None,
    }
    helped = " ".join(_cli("show", "--help", db=db).stdout.split())
    assert "first or last characters" in helped and "share their first 8 to 12" in helped


def test_lifecycle_preview_shows_the_start_of_each_memory_it_would_touch(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    kept = _json(
        "add",
        "Decided to self-host everything",
        "--category",
        "decision",
        "--layer",
        "working",
        db=db,
    )["id"]
    _cli("add", "A forgettable fact about the weather in May", "--importance", "0.1", db=db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET created_at = ?, updated_at = ?", (LONG_AGO, LONG_AGO))
    lines = _cli("lifecycle", "preview", db=db).stdout.splitlines()
    promote = next(i for i, line in enumerate(lines) if "would promote" in line)
    assert lines[promote + 1].split(None, 1) == [kept, "Decided to self-host everything"]
    assert any(line.endswith("A forgettable fact about the weather in May") for line in lines)


def test_list_and_search_line_up_their_columns_whatever_the_category(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    for text, category in (("Launch the beta in June", "project_state"), ("Beta bugs", "fact")):
        _cli("add", text, "--category", category, "--occurred-at", "2026-05-06", db=db)
    listed = _cli("list", db=db).stdout.splitlines()
    found = _cli("search", "beta", db=db).stdout.splitlines()
    for lines in (listed, found):
        assert len(lines) == 2, lines
        days = {line.index("2026-05-06") for line in lines}
        contents = {
            line.index("Launch") if "Launch" in line else line.index("Beta") for line in lines
        }
        assert len(days) == 1 and len(contents) == 1, lines


def test_lifecycle_preview_lists_what_its_reflect_step_would_change_and_the_run_does_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    _cli("add", "Marco lives in Turin", "--layer", "core", db=db)
    _cli("add", "Marco moved to Milan", db=db)
    preview = _cli("lifecycle", "preview", "--agent", "default", db=db)
    assert preview.returncode == 0, preview.stderr
    assert "would reflect on 2 new memories of default" in preview.stdout
    assert "would propose archive" in preview.stdout  # Turin, in core, is superseded
    planned = _json("lifecycle", "preview", "--agent", "default", db=db)
    [reflect] = planned["reflect"]
    assert planned["counts"]["reflect_proposals"] == len(reflect["proposals"]) == 1
    run = _json("lifecycle", "run", "--agent", "default", db=db)
    [done] = run["reflect"]
    assert [(p["memory_id"], p["action"], p["reason"]) for p in done["proposals"]] == [
        (p["memory_id"], p["action"], p["reason"]) for p in reflect["proposals"]
    ]
    assert run["counts"]["reflect_proposals"] == 1
    assert "would reflect" not in _cli("lifecycle", "preview", db=db).stdout  # nothing new


def test_a_wrong_update_forgotten_with_a_correction_on_the_command_line_is_undone_and_logged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    turin = _json("add", "Marco lives in Turin", db=db)["id"]
    wrong = _json("add", "Marco moved to Milan", db=db)["id"]
    found = _json("search", "Where does Marco live now?", db=db)["memories"]
    assert found[0]["id"] == wrong  # the update closed Turin
    corrected = _cli("forget", wrong, "--correction", "Marco moved to Rome", db=db)
    assert corrected.returncode == 0, corrected.stderr
    rome = corrected.stdout.split()[-1]
    found = _json("search", "Where does Marco live now?", db=db)["memories"]
    assert found[0]["id"] == rome and wrong not in {m["id"] for m in found}
    assert _json("show", turin, db=db)["memory"]["status"] == "superseded"
    entries = _json("lifecycle", "log", db=db)["entries"]
    closed = [e for e in entries if e["action"] == "validity" and turin in e["memory_ids"]]
    assert len(closed) >= 2  # closed by the wrong update, then by the correction
