"""Two stdio server processes writing to one SQLite file at the same time."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import TEST_KNOBS
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PER_PROCESS = int(TEST_KNOBS.get("CORTEX_TEST_PER_PROCESS", "100"))


async def _remember_many(db: Path, prefix: str, errors: list[str]) -> None:
    command, *args = server_command()
    params = StdioServerParameters(command=command, args=args, env=server_env(db))
    async with Client(params, mode="legacy") as client:
        for i in range(PER_PROCESS):
            content = f"{prefix} fact number {i}: the {prefix} sensor reads {i * 7} units"
            result = await client.call_tool("cortex_remember", {"content": content})
            if result.is_error:
                errors.append(str(result.content))


async def test_two_processes_write_to_one_file_without_loss_or_corruption(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    errors: list[str] = []
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(_remember_many, db, "alpha", errors)
            group.start_soon(_remember_many, db, "beta", errors)
    assert errors == []
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 2 * PER_PROCESS
        assert conn.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == 2 * PER_PROCESS
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
    finally:
        conn.close()


def _open_and_close(path: str) -> str | None:
    """Open the store in a fresh process (creating and migrating the file if first); the error, if any."""
    import asyncio
    import traceback

    from cortex_mcp.store.database import Database

    async def go() -> str | None:
        db = Database(Path(path))
        try:
            await db.open()
        except Exception as exc:
            return "".join(traceback.format_exception(exc))[-2500:]
        await db.close()
        return None

    return asyncio.run(go())


def test_processes_that_create_one_new_file_at_the_same_moment_all_open_it(tmp_path: Path) -> None:
    """Two servers started together on a new file: one switches it to WAL and migrates while the
    other connects; the second waits instead of failing with 'database is locked' (CI saw it)."""
    import multiprocessing

    errors: list[str] = []
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        for round_ in range(12):
            path = str(tmp_path / f"new-{round_}.db")
            errors += [e for e in pool.map(_open_and_close, [path] * 4) if e]
    assert errors == []
