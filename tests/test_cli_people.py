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
