"""The write path: one-trip transactions, concurrent writers in one and in two processes, and
access counts written in batches."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.engine.recall.access import AccessBatcher
from cortex_mcp.errors import StorageError
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from cortex_mcp.store import Database
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.writer import begin_immediate
from tests.conftest import FakeClock
from tests.helpers.stdio_helpers import HANG_S, RawStdioServer

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent


def _meta_rows(path: Path, prefix: str) -> dict[str, str]:
    conn = sqlite_module().connect(path)
    try:
        rows = conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (prefix + "%",))
        return {str(key): str(value) for key, value in rows}
    finally:
        conn.close()


async def test_a_one_trip_transaction_that_fails_midway_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    async with Database(path) as db:

        def half_then_fail(conn: Any) -> None:
            conn.execute("INSERT INTO meta(key, value) VALUES ('t:first', '1')")
            conn.execute("INSERT INTO meta(key, value) VALUES ('t:second', '2')")
            raise ValueError("fails after two statements")

        with pytest.raises(ValueError, match="after two statements"):
            await db.transact(half_then_fail)
        assert _meta_rows(path, "t:") == {}
        assert not db.conn.in_transaction

        def works(conn: Any) -> int:
            conn.execute("INSERT INTO meta(key, value) VALUES ('t:after', '3')")
            return 3

        assert await db.transact(works) == 3
    assert _meta_rows(path, "t:") == {"t:after": "3"}


async def test_a_failing_transaction_undoes_no_other_in_the_same_trip(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    async with Database(path) as db:

        def insert(key: str, fail: bool = False) -> Any:
            def txn(conn: Any) -> str:
                conn.execute("INSERT INTO meta(key, value) VALUES (?, 'v')", (key,))
                if fail:
                    raise ValueError(f"{key} fails")
                return key

            return txn

        jobs = [insert(f"t:{n}", fail=n % 3 == 1) for n in range(12)]
        outcomes = await asyncio.gather(*(db.transact(job) for job in jobs), return_exceptions=True)
        expected_ok = {f"t:{n}" for n in range(12) if n % 3 != 1}
        assert {o for o in outcomes if isinstance(o, str)} == expected_ok
        failures = [o for o in outcomes if isinstance(o, ValueError)]
        assert sorted(str(f) for f in failures) == sorted(
            f"t:{n} fails" for n in range(12) if n % 3 == 1
        )
        assert db.commits >= len(expected_ok)
    assert set(_meta_rows(path, "t:")) == expected_ok


async def test_a_storage_fault_in_a_one_trip_write_is_a_storage_error(tmp_path: Path) -> None:
    async with Database(tmp_path / "brain.db") as db:
        await db.conn.execute("PRAGMA query_only = ON")

        def write(conn: Any) -> None:
            conn.execute("INSERT INTO meta(key, value) VALUES ('t:x', '1')")

        with pytest.raises(StorageError, match=r"read-only: database .*nothing was changed"):
            await db.transact(write)


async def test_concurrent_remembers_lose_nothing_and_duplicate_nothing(
    settings: Settings, clock: FakeClock
) -> None:
    contents = [f"task {n} remembers that locker {n} holds {n * 3} keys" for n in range(150)]
    async with open_cortex(settings, clock=clock, background=False) as service:
        made = await asyncio.gather(
            *(service.memories.remember(RememberRequest(content=c)) for c in contents)
        )
        again = await asyncio.gather(
            *(service.memories.remember(RememberRequest(content=contents[0])) for _ in range(20))
        )
    assert len({m.id for m in made}) == len(contents)
    assert {m.id for m in again} == {made[0].id}
    assert all(m.deduplicated for m in again)
    conn = sqlite_module().connect(settings.db_path)
    try:
        stored = dict(conn.execute("SELECT id, content FROM memories").fetchall())
        fts_rows = conn.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0]
    finally:
        conn.close()
    assert stored == {m.id: c for m, c in zip(made, contents, strict=True)}
    assert fts_rows == len(contents)


def _worker(db: Path, prefix: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.remember_worker", str(db), prefix, str(count)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_two_processes_remembering_at_once_lose_and_duplicate_nothing(
    settings: Settings,
) -> None:
    per_process = 120
    async with open_cortex(settings, background=False):
        pass  # the schema exists before both start
    workers = [_worker(settings.db_path, prefix, per_process) for prefix in ("alpha", "beta")]
    acknowledged: list[tuple[str, str]] = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        assert "Traceback" not in err
        acknowledged += [tuple(line.split(" ", 1)) for line in out.splitlines()]  # type: ignore[misc]
    assert len(acknowledged) == 2 * per_process
    conn = sqlite_module().connect(settings.db_path)
    try:
        stored = dict(conn.execute("SELECT id, content FROM memories").fetchall())
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert stored == dict(acknowledged)
    assert Counter(stored.values()).most_common(1)[0][1] == 1


def _hold_lock(path: Path, seconds: float, holding: threading.Event) -> None:
    conn = sqlite_module().connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("BEGIN IMMEDIATE")
        holding.set()
        time.sleep(seconds)
        conn.execute("COMMIT")
    finally:
        conn.close()


async def test_a_write_waits_for_another_connection_then_goes_through(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    async with Database(path) as db:
        holding = threading.Event()
        holder = threading.Thread(target=_hold_lock, args=(path, 0.3, holding))
        holder.start()
        await asyncio.to_thread(holding.wait, 5)

        def write(conn: Any) -> None:
            conn.execute("INSERT INTO meta(key, value) VALUES ('t:waited', '1')")

        await db.transact(write)
        holder.join()
    assert _meta_rows(path, "t:") == {"t:waited": "1"}


def test_a_lock_held_too_long_gives_up_with_the_database_locked_error(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    sqlite_module().connect(path).execute("PRAGMA journal_mode=WAL").fetchall()
    holding = threading.Event()
    holder = threading.Thread(target=_hold_lock, args=(path, 1.0, holding))
    holder.start()
    holding.wait(5)
    conn = sqlite_module().connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        with pytest.raises(sqlite_module().OperationalError, match="locked"):
            begin_immediate(conn, timeout_s=0.1)
    finally:
        conn.close()
        holder.join()


def _access(path: Path, memory_id: str) -> tuple[int, int]:
    conn = sqlite_module().connect(path)
    try:
        count = conn.execute(
            "SELECT access_count FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()[0]
        log_rows = conn.execute(
            "SELECT COUNT(*) FROM access_log WHERE memory_id = ?", (memory_id,)
        ).fetchone()[0]
    finally:
        conn.close()
    return int(count), int(log_rows)


@pytest.mark.parametrize("interval_s", [0.0, 1.0], ids=["shorter than a recall", "1 s"])
async def test_access_counts_arrive_after_the_flush_interval(
    settings: Settings, clock: FakeClock, interval_s: float
) -> None:
    """Nobody flushes, drains or closes: only the timer can write them. Whether the interval
    ends before, between or after the recalls (a loaded machine), every count arrives once.
    That a recall writes nothing itself: test_access_counts_are_written_on_close."""
    async with open_cortex(settings, clock=clock, background=False) as service:
        made = await service.memories.remember(
            RememberRequest(content="The boiler is serviced every October")
        )
        service.engines.access.interval_s = interval_s
        for query in ("when is the boiler serviced", "boiler October", "serviced boiler"):
            found = await service.memories.recall(RecallRequest(query=query))
            assert [m.id for m in found.memories] == [made.id]
        deadline = time.monotonic() + HANG_S  # bounds a hang, not the timer's punctuality
        while _access(settings.db_path, made.id) != (3, 3):
            assert time.monotonic() < deadline, _access(settings.db_path, made.id)
            await asyncio.sleep(0.05)
        assert service.engines.access.pending == 0


async def test_access_counts_are_written_on_close(settings: Settings, clock: FakeClock) -> None:
    async with open_cortex(settings, clock=clock, background=False) as service:
        made = await service.memories.remember(
            RememberRequest(content="The boiler is serviced every October")
        )
        service.engines.access.interval_s = 3600  # only closing writes them
        await service.memories.recall(RecallRequest(query="boiler serviced"))
        await service.memories.recall(RecallRequest(query="October boiler"))
        assert _access(settings.db_path, made.id) == (0, 0)
    assert _access(settings.db_path, made.id) == (2, 2)


async def test_access_counts_wait_while_the_disk_refuses_and_are_written_after(
    tmp_path: Path, settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(settings, clock=clock, background=False) as service:
        made = await service.memories.remember(
            RememberRequest(content="The boiler is serviced every October")
        )
        batcher = AccessBatcher(service.stores.memories, interval_s=3600)
        await service.stores.db.conn.execute("PRAGMA query_only = ON")
        batcher.record([(made.id, 0)], "boiler", "2026-11-01T12:00:00+00:00")
        await batcher.flush()
        assert batcher.pending == 1 and "read-only" in (batcher.last_error or "")
        await service.stores.db.conn.execute("PRAGMA query_only = OFF")
        await batcher.close()
        assert batcher.pending == 0 and batcher.last_error is None
    assert _access(settings.db_path, made.id) == (1, 1)


_HOLD_AND_HANG = """
import sys, time
from cortex_mcp.store.connection import sqlite_module
conn = sqlite_module().connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO meta(key, value) VALUES ('t:killed', 'never committed')")
print("holding", flush=True)
time.sleep(60)
"""


def _start_holder(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _HOLD_AND_HANG, str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def _stop(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait(10)


async def test_a_write_waiting_on_a_process_that_is_killed_goes_through(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    async with Database(path) as db:
        holder = _start_holder(path)
        try:
            assert holder.stdout is not None
            assert await asyncio.to_thread(holder.stdout.readline) == "holding\n"

            def write(conn: Any) -> None:
                conn.execute("INSERT INTO meta(key, value) VALUES ('t:after-kill', '1')")

            waiting = asyncio.create_task(db.transact(write))
            await asyncio.sleep(0.2)
            assert not waiting.done()  # the other process holds the lock
            holder.kill()  # SIGKILL: no rollback, no unlock of its own
            await asyncio.wait_for(waiting, HANG_S)
        finally:
            _stop(holder)
    assert _meta_rows(path, "t:") == {"t:after-kill": "1"}


def test_a_stdio_server_stopped_by_sigterm_writes_its_access_counts(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    server = RawStdioServer(path)
    try:
        server.initialize()
        made = server.call_tool("cortex_remember", {"content": "The boiler is serviced in October"})
        memory_id = made["structuredContent"]["id"]
        for query in ("boiler service", "when is the boiler serviced"):
            found = server.call_tool("cortex_recall", {"query": query})
            assert [m["id"] for m in found["structuredContent"]["memories"]] == [memory_id]
        server.proc.send_signal(signal.SIGTERM)  # well within the flush interval
        assert server.proc.wait(timeout=HANG_S) == 128 + signal.SIGTERM  # after a clean close
    finally:
        server.close()
    assert _access(path, memory_id) == (2, 2)
