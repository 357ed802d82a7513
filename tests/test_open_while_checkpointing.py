"""Opening a database another process is checkpointing: never called truncated.

A checkpoint copies the WAL into the file page by page, page 1 (with the new page count)
first, so until it ends the file is shorter than its header says. A checkpoint stopped
midway (a full disk, a kill, or a process the scheduler parks) leaves the file so, with the
pages safe in the WAL. A copy really cut short is still refused in one line, untouched.

Every state here is made by SQLite in another process: no file is edited by hand except the
cut-short copies, which are what a user's interrupted copy leaves."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_mcp.errors import StorageError
from cortex_mcp.store import files
from cortex_mcp.store.connection import sqlite_module

ROWS = 300

# Fills the WAL (nothing checkpointed), then checkpoints with the file size capped just past
# the file's current end, as a full disk would: page 1 is written, the pages that extend the
# file are not, and the process exits with the WAL beside the file.
STOPPED_CHECKPOINT = f"""
import os, resource, signal, sqlite3, sys
path = sys.argv[1]
conn = sqlite3.connect(path, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA wal_autocheckpoint=0")
conn.execute("CREATE TABLE notes (n INTEGER, body BLOB)")
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.execute("BEGIN")
conn.executemany("INSERT INTO notes VALUES (?, randomblob(3000))", [(n,) for n in range({ROWS})])
conn.execute("COMMIT")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = os.path.getsize(path) + 4096
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
try:
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
except sqlite3.Error:
    pass
os._exit(0)
"""

# Grows the file and checkpoints, again and again, until it has done `rounds` rounds.
GROW_AND_CHECKPOINT = """
import sqlite3, sys
path, rounds = sys.argv[1], int(sys.argv[2])
conn = sqlite3.connect(path, isolation_level=None)
conn.execute("PRAGMA wal_autocheckpoint=0")
for _ in range(rounds):
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO notes VALUES (0, randomblob(4000))", [()] * 250)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
conn.close()
"""


def run_python(code: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code, *args])


def header_and_size(path: Path) -> tuple[int, int]:
    """The file's size and the size its header's page count records."""
    header = path.read_bytes()[:100]
    page_size = int.from_bytes(header[16:18], "big")
    return path.stat().st_size, int.from_bytes(header[28:32], "big") * page_size


def count_rows(path: Path) -> int:
    conn = sqlite_module().connect(str(path))
    try:
        return int(conn.execute("SELECT COUNT(*) FROM notes").fetchone()[0])
    finally:
        conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_checkpoint_stopped_midway_is_opened_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    assert run_python(STOPPED_CHECKPOINT, str(path)).wait(timeout=120) == 0
    size, recorded = header_and_size(path)
    assert size < recorded, "the checkpoint did not stop midway"
    assert Path(f"{path}-wal").stat().st_size > recorded - size

    access = files.check_database(path, thorough=True)

    assert access.writable
    assert count_rows(path) == ROWS


def test_opening_again_and_again_while_another_process_checkpoints_is_never_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "brain.db"
    conn = sqlite_module().connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE notes (n INTEGER, body BLOB)")
    conn.close()
    writer = run_python(GROW_AND_CHECKPOINT, str(path), "40")
    opened = 0
    try:
        while writer.poll() is None:  # as many opens as fit in the writer's 40 rounds
            files.check_database(path, create=False)
            opened += 1
    finally:
        writer.kill()
        writer.wait()
    assert writer.returncode == 0
    assert opened > 0
    assert count_rows(path) == 40 * 250


@pytest.mark.parametrize("cut", ["at a page boundary", "inside a page"])
def test_a_copy_cut_short_is_refused_in_one_line_and_left_untouched(
    tmp_path: Path, cut: str
) -> None:
    path = tmp_path / "brain.db"
    assert run_python(STOPPED_CHECKPOINT, str(path)).wait(timeout=120) == 0
    conn = sqlite_module().connect(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # a whole file now, no WAL
    conn.close()
    size, recorded = header_and_size(path)
    assert size == recorded
    keep = size // 2 // 4096 * 4096 + (0 if cut == "at a page boundary" else 100)
    os.truncate(path, keep)
    before = digest(path), sorted(p.name for p in tmp_path.iterdir())

    with pytest.raises(StorageError) as refused:
        files.check_database(path, thorough=True)

    line = str(refused.value)
    assert line == (
        f"database {path} is truncated ({keep} of {recorded} bytes); restore it from a backup,"
        " or move it away and cortex-mcp starts a new one"
    )
    assert (digest(path), sorted(p.name for p in tmp_path.iterdir())) == before
