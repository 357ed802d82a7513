"""One lifecycle run at a time within a process too: the lease is held per process, so a
second run asked of the same process (the scheduler's, another request's) while one runs
answers "busy" instead of running beside it (found by the two-server test of issue 17)."""

from __future__ import annotations

import asyncio

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


async def test_two_runs_asked_of_one_process_at_once_run_one_after_the_other(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as service:
        for n in range(30):
            await service.memories.remember(
                RememberRequest(content=f"Working note {n} about the gateway", layer="working")
            )
        clock.advance(days=3)
        first, second = await asyncio.gather(service.lifecycle.run(), service.lifecycle.run())
        assert sorted([first.status, second.status]) == ["busy", "done"]
        busy = first if first.status == "busy" else second
        assert busy.holder and "this process" in busy.holder
        runs = await service.browse.lifecycle_runs()
        assert len(runs["runs"]) == 1
        third = await service.lifecycle.run()  # the lock is released when the run ends
        assert third.status == "done"
