"""Reads that are given memory ids find them by id, however many memories their agent has:
SQLite, without statistics, preferred to walk the agent's index (every memory of the agent)
for a statement that names the agent beside the ids, so a recall's row read grew with the
agent's memories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from tests.conftest import FakeClock
from tests.helpers.filler_memories import write_filler_memories

pytestmark = pytest.mark.anyio

NOW = "2026-03-01T12:00:00+00:00"
WANTED = [f"early-{i}" for i in range(1, 501, 10)]


async def _steps(db: Any, read: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[int, set[str]]:
    """SQLite's virtual machine steps (in hundreds) a read took on any connection, and the ids
    it gave."""
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    connections = [db.conn, *db._readers, db._on_loop]
    for conn in connections:
        await conn.set_progress_handler(count, 100)
    try:
        found = await read()
    finally:
        for conn in connections:
            await conn.set_progress_handler(None, 0)
    return counted[0], set(found)


async def test_reading_memories_by_id_does_not_grow_with_the_memories_of_their_agent(
    settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(settings, clock=clock) as svc:
        memories, browse = svc.stores.memories, svc.stores.browse
        db = memories.db  # type: ignore[attr-defined]
        await db.transact(lambda conn: write_filler_memories(conn, "early", 500, NOW))

        async def by_memories() -> dict[str, Any]:
            return await memories.get_many(WANTED, agent_id="a1")

        async def by_browse() -> dict[str, Any]:
            return await browse.memories_of("a1", WANTED)

        few = [await _steps(db, by_memories), await _steps(db, by_browse)]
        await db.transact(lambda conn: write_filler_memories(conn, "later", 50_000, NOW))
        many = [await _steps(db, by_memories), await _steps(db, by_browse)]
        other_agent = await memories.get_many(WANTED, agent_id="a2")

    for (few_steps, few_ids), (many_steps, many_ids) in zip(few, many, strict=True):
        assert few_ids == many_ids == set(WANTED)
        assert many_steps < few_steps * 2 + 5, (few_steps, many_steps)
    assert other_agent == {}
