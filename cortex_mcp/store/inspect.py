"""A look at the database that changes nothing: for `cortex-mcp doctor` and `cortex://stats`.

Opened with ``mode=ro`` (never created, never migrated, never checkpointed), checked with
SQLite's full ``integrity_check`` (``quick_check`` skips index-to-table consistency)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cortex_mcp.store.connection import RawConnection, sqlite_module
from cortex_mcp.store.files import connect_uri, storage_fault
from cortex_mcp.store.schema import SCHEMA_VERSION

Status = Literal["ok", "degraded", "failed"]

_MAX_PROBLEMS = 3


@dataclass(frozen=True)
class DatabaseReport:
    status: Status
    detail: str
    schema_version: int | None = None
    memories: int | None = None


def inspect_database(path: Path) -> DatabaseReport:
    """The database's health in one line, read-only. A missing file is fine (the server
    creates it) as long as its folder could be created or written."""
    if path.is_dir():
        return DatabaseReport("failed", f"{path} is a directory, not a file")
    if not path.exists():
        return _not_created_yet(path)
    try:
        return _inspect(path)
    except sqlite_module().DatabaseError as exc:
        fault = storage_fault(exc, path)
        return DatabaseReport("failed", fault.message if fault else f"{path}: {exc}")


def _not_created_yet(path: Path) -> DatabaseReport:
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        return DatabaseReport(
            "failed", f"{path} does not exist and cannot be created: {folder} is not writable"
        )
    return DatabaseReport("ok", f"{path} does not exist yet: the server creates it at start")


def _inspect(path: Path) -> DatabaseReport:
    target, uri = connect_uri(path, "ro")
    conn = sqlite_module().connect(target, uri=uri, isolation_level=None)
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
        memories, forgotten = _memory_counts(conn) if version else (0, 0)
    finally:
        conn.close()
    if problems != ["ok"]:
        shown = "; ".join(problems[:_MAX_PROBLEMS])
        more = f" (+{len(problems) - _MAX_PROBLEMS} more)" if len(problems) > _MAX_PROBLEMS else ""
        return DatabaseReport(
            "failed", f"{path} is corrupt: integrity_check found {shown}{more}", version
        )
    if version > SCHEMA_VERSION:
        return DatabaseReport(
            "failed",
            f"{path} has schema {version}, newer than this cortex-mcp understands"
            f" ({SCHEMA_VERSION}): upgrade cortex-mcp",
            version,
        )
    summary = f"{path}: schema {version}, {memories} memories ({forgotten} forgotten), integrity ok"
    if version < SCHEMA_VERSION:
        summary += f"; upgraded to schema {SCHEMA_VERSION} at the next start"
    if not os.access(path, os.W_OK):
        return DatabaseReport(
            "degraded",
            f"{summary}; read-only for this user: recall works, writes are refused",
            version,
            memories,
        )
    return DatabaseReport("ok", summary, version, memories)


def _memory_counts(conn: RawConnection) -> tuple[int, int]:
    row = conn.execute("SELECT COUNT(*), COUNT(forgotten_at) FROM memories").fetchone()
    return int(row[0]), int(row[1])
