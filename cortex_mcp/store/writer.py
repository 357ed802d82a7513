"""The writer connection's work queue: write transactions run on the writer's own thread, each
in one trip, and writes that arrive while one is running go together in the next trip.

Why: a transaction written as a chain of awaits pays an event-loop wake-up per statement while
it holds the process's write lock, and under twenty concurrent clients each wake-up waits
behind the whole loop. A transaction written as one synchronous function pays one.

Waiting for another process: the writer connection has no busy timeout of its own (SQLite's
busy handler sleeps in steps that grow to 100 ms, so a waiter often sleeps long after the
lock came free); `begin_immediate` polls instead, with short jittered waits, up to the same
overall limit.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import aiosqlite

from cortex_mcp.store.connection import BUSY_TIMEOUT_MS, RawConnection, operational_error
from cortex_mcp.store.interfaces import Names, WriteFn, changed_names

log = logging.getLogger(__name__)

T = TypeVar("T")

_FIRST_WAIT_S = 0.0002
_LONGEST_WAIT_S = 0.002  # polling at most this far apart keeps a waiter's wake-up short
_BATCH_MAX = 64  # a trip never holds the lock for more than this many transactions


def begin_immediate(conn: RawConnection, timeout_s: float = BUSY_TIMEOUT_MS / 1000) -> None:
    """BEGIN IMMEDIATE, retried with short jittered waits while another process holds the
    lock, for at most `timeout_s` (then SQLite's own "database is locked" error)."""
    locked = operational_error()
    deadline = time.monotonic() + timeout_s
    wait = _FIRST_WAIT_S
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except locked as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(wait * random.uniform(0.5, 1.5))
        wait = min(wait * 2, _LONGEST_WAIT_S)


def rollback(conn: RawConnection) -> None:
    """Roll back what is left of a failed transaction (SQLite may already have)."""
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except Exception as exc:  # the original error is the one worth reporting
        log.warning("rollback after a failed write also failed: %s", exc)


async def on_thread(conn: aiosqlite.Connection, fn: Callable[[RawConnection], T]) -> T:
    """Run `fn(sqlite3 connection)` on the aiosqlite connection's own thread: one trip.

    aiosqlite has no public call for this; `_execute` is the queue all its public methods
    use (the same from 0.17 to 0.22), and `_conn` the connection they run on."""
    raw = conn._conn
    result: T = await conn._execute(fn, raw)
    return result


@dataclass
class _Job:
    fn: WriteFn[Any]
    future: asyncio.Future[Any] = field(repr=False)
    bookkeeping: bool = False
    names: Names[Any] = True


def _run_batch(jobs: list[_Job], conn: RawConnection) -> list[tuple[bool, Any]]:
    """Each job in its own transaction (one failing undoes no other), all in one trip. When
    the lock cannot be had (another process held it too long), the rest fail at once too."""
    outcomes: list[tuple[bool, Any]] = []
    for job in jobs:
        try:
            begin_immediate(conn)
        except Exception as exc:
            return outcomes + [(False, exc)] * (len(jobs) - len(outcomes))
        try:
            result = job.fn(conn)
            conn.execute("COMMIT")
        except Exception as exc:
            rollback(conn)
            outcomes.append((False, exc))
        else:
            outcomes.append((True, result))
    return outcomes


class WriteQueue:
    """One-trip transactions waiting for the writer. A single drain task takes every waiting
    job (up to _BATCH_MAX), holds the process's write lock for one trip, and hands each caller
    its own result or error; a checkpoint takes the same lock."""

    def __init__(self, conn: Callable[[], aiosqlite.Connection], lock: asyncio.Lock) -> None:
        self._conn = conn
        self._lock = lock
        self._jobs: deque[_Job] = deque()
        self._drainer: asyncio.Task[None] | None = None
        self.committed = 0
        self.changed = 0  # committed but for bookkeeping (`submit(bookkeeping=True)`)
        self.names_changed = 0  # `changed` but those that changed no name (`submit(names=)`)

    async def submit(
        self, fn: WriteFn[T], *, bookkeeping: bool = False, names: Names[T] = True
    ) -> T:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.append(_Job(fn, future, bookkeeping, names))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain(), name="cortex-writer")
        return await future

    async def _drain(self) -> None:
        while self._jobs:
            async with self._lock:
                batch = [self._jobs.popleft() for _ in range(min(len(self._jobs), _BATCH_MAX))]
                try:
                    outcomes = await on_thread(self._conn(), partial(_run_batch, batch))
                except Exception as exc:  # the connection is gone (closed): tell everyone
                    outcomes = [(False, exc)] * len(batch)
                except BaseException:  # cancelled (the loop is closing): so are the callers
                    for job in [*batch, *self._jobs]:
                        job.future.cancel()
                    self._jobs.clear()
                    raise
            _settle(batch, outcomes)
            self.committed += sum(1 for ok, _ in outcomes if ok)
            self.changed += sum(
                1
                for job, (ok, _) in zip(batch, outcomes, strict=True)
                if ok and not job.bookkeeping
            )
            self.names_changed += sum(
                1
                for job, (ok, result) in zip(batch, outcomes, strict=True)
                if ok and not job.bookkeeping and changed_names(job.names, result)
            )

    async def wait_idle(self) -> None:
        """Until every job submitted so far has run (close waits for this)."""
        while self._drainer is not None and not self._drainer.done():
            await asyncio.gather(self._drainer, return_exceptions=True)


def _settle(batch: list[_Job], outcomes: list[tuple[bool, Any]]) -> None:
    for job, (ok, value) in zip(batch, outcomes, strict=True):
        if job.future.done():  # the caller was cancelled: the write stands, nobody to tell
            continue
        if ok:
            job.future.set_result(value)
        else:
            job.future.set_exception(value)
