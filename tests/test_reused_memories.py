"""Searches reuse the memories they built from rows read before (`get_many(reuse=True)`), on
SQLite and PostgreSQL: a row read again with the same values gives the same memory, a row
changed in any way (access counts, a correction, a forget, an edit, the lifecycle) gives a new
one, and nothing is ever given that the store did not just return for the read. On SQLite,
rows and filter answers read while no connection has committed since are not read again; a
commit by this process or another, even one landing while a read runs, has them read anew."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import Layer, Memory
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    UpdateRequest,
)
from cortex_mcp.store.memories import MEMORY_COLUMNS, ReusedMemories
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store_service(
    backend_settings: Settings, clock: FakeClock
) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _remember(service: CortexService, content: str, **fields: object) -> str:
    return (await service.memories.remember(RememberRequest(content=content, **fields))).id


async def _both(
    service: CortexService, ids: list[str]
) -> tuple[dict[str, Memory], dict[str, Memory]]:
    """The memories as a search reads them (reused) and as a fresh read builds them."""
    memories = service.stores.memories
    return await memories.get_many(ids, reuse=True), await memories.get_many(ids)


async def test_an_unchanged_row_gives_the_memory_built_the_first_time(
    store_service: CortexService,
) -> None:
    ids = [await _remember(store_service, f"the user keeps bees in hive {n}") for n in range(3)]
    first, _ = await _both(store_service, ids)
    again, fresh = await _both(store_service, ids)
    assert all(again[i] is first[i] for i in ids)
    assert again == fresh


async def test_every_kind_of_change_gives_a_memory_built_from_the_new_row(
    store_service: CortexService, clock: FakeClock
) -> None:
    service = store_service
    counted = await _remember(service, "Harry runs marathons on Sundays")
    corrected = await _remember(service, "Harry lives in Turin")
    forgotten = await _remember(service, "the spare key is under the mat")
    edited = await _remember(service, "the team meets on Mondays")
    expiring = await _remember(service, "buy milk on the way home", layer=Layer.working)
    ids = [counted, corrected, forgotten, edited, expiring]
    before, _ = await _both(service, ids)

    await service.memories.recall(RecallRequest(query="marathons on Sundays"))
    await service.memories.access.flush()  # the access counts a recall leaves
    await service.memories.forget(
        ForgetRequest(memory_id=corrected, correction="Harry lives in Milan")
    )
    await service.memories.forget(ForgetRequest(memory_id=forgotten))
    await service.memories.update_memory(edited, UpdateRequest(importance=0.95))
    clock.advance(days=3)  # the working note is past its TTL: the lifecycle archives it
    await service.lifecycle.run()

    after, fresh = await _both(service, ids)
    assert after == fresh
    assert all(after[i] is not before[i] for i in ids)
    assert after[counted].access_count == before[counted].access_count + 1
    assert after[corrected].superseded_by is not None
    assert after[forgotten].forgotten_at is not None
    assert after[edited].importance == 0.95
    assert after[expiring].layer is Layer.archive
    # and what changed is reused in turn
    again, _ = await _both(service, ids)
    assert all(again[i] is after[i] for i in ids)


async def test_a_memory_read_for_one_agent_is_never_given_to_another(
    store_service: CortexService,
) -> None:
    service = store_service
    own = await _remember(service, "Anna's passport number is kept in the blue folder")
    read, _ = await _both(service, [own])
    assert own in read
    other = await service.stores.memories.get_many([own], agent_id="someone-else", reuse=True)
    assert other == {}
    recalled = await service.memories.recall(
        RecallRequest(query="passport blue folder", agent_id="someone-else")
    )
    assert recalled.memories == []


async def test_a_purged_memory_is_not_given_from_what_was_built_before(
    store_service: CortexService,
) -> None:
    service = store_service
    purged = await _remember(service, "the old wifi password was hunter2-like")
    read, _ = await _both(service, [purged])
    assert purged in read
    await service.memories.forget(ForgetRequest(memory_id=purged, purge=True))
    assert await service.stores.memories.get_many([purged], reuse=True) == {}


def test_the_kept_memories_start_over_past_their_bound() -> None:
    reused = ReusedMemories(most=2)
    rows = [_row(f"id-{n}") for n in range(3)]
    built = [reused.memory(row) for row in rows]
    assert reused.memory(rows[2]) is built[2]
    assert reused.memory(rows[0]) is not built[0]  # dropped when the bound was reached
    assert reused.memory(rows[0]) == built[0]


def _row(memory_id: str) -> sqlite3.Row:
    """A row of MEMORY_COLUMNS as SQLite gives it."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    values = {
        "id": memory_id,
        "layer": "core",
        "category": "fact",
        "content": f"memory {memory_id}",
        "importance": 0.5,
        "confidence": 0.8,
        "decay_score": 1.0,
        "access_count": 0,
        "created_at": "2026-12-01T00:00:00Z",
        "updated_at": "2026-12-01T00:00:00Z",
        "metadata": "{}",
        "shared": 0,
        "occurred_at": "2026-12-01T00:00:00Z",
        "status": "current",
    }
    columns = [c.strip() for c in MEMORY_COLUMNS.split(",")]
    selected = ", ".join(f"? AS {c}" for c in columns)
    params = [values.get(c, "default" if c == "agent_id" else None) for c in columns]
    row = conn.execute(f"SELECT {selected}", params).fetchone()
    conn.close()
    return row


# ---- SQLite: what was read while no connection committed is not read again ------------------


def _statements(service: CortexService) -> list[str]:
    """The statements the event loop's own connection runs from now on (the small reads)."""
    seen: list[str] = []
    service.stores.db._on_loop._conn.set_trace_callback(seen.append)  # type: ignore[union-attr]
    return seen


def _commit_elsewhere(settings: Settings, change: str, memory_id: str) -> None:
    """`UPDATE memories SET <change>` of one memory, committed by another process."""
    script = (
        "import sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        f"conn.execute('UPDATE memories SET {change} WHERE id = ?', [sys.argv[2]])\n"
    )
    subprocess.run([sys.executable, "-c", script, str(settings.db_path), memory_id], check=True)


async def test_rows_and_filter_answers_read_since_the_last_commit_are_not_read_again(
    service: CortexService,
) -> None:
    ids = [await _remember(service, f"the user keeps bees in hive {n}") for n in range(3)]
    memories = service.stores.memories
    filters = service.memories.filters(None, None, None)
    read, unread = ids[:2], ids[2]
    first = await memories.get_many(read, reuse=True)
    allowed = await memories.eligible(read, filters)
    statements = _statements(service)
    again = await memories.get_many(read, reuse=True)
    allowed_again = await memories.eligible(read, filters)
    assert all(again[i] is first[i] for i in read) and allowed_again == allowed == set(read)
    assert [s for s in statements if "memories" in s] == [], statements
    # an id not read yet is read alone
    assert set(await memories.get_many(ids, reuse=True)) == set(ids)
    assert await memories.eligible(ids, filters) == set(ids)
    assert [s.split(" WHERE ")[1] for s in statements if "FROM memories" in s] == [
        f"id IN ('{unread}')",
        f"m.id IN ('{unread}') AND +m.agent_id = 'default' AND m.forgotten_at IS NULL"
        " AND m.superseded_by IS NULL",
    ]


async def test_a_commit_by_this_process_or_another_is_read_at_once(
    service: CortexService, settings: Settings
) -> None:
    kept = await _remember(service, "the spare key is under the mat")
    dropped = await _remember(service, "the old key is in the drawer")
    ids = [kept, dropped]
    memories = service.stores.memories
    filters = service.memories.filters(None, None, None)
    await memories.get_many(ids, reuse=True)
    assert await memories.eligible(ids, filters) == set(ids)

    await service.memories.forget(ForgetRequest(memory_id=dropped))  # this process's writer
    assert await memories.eligible(ids, filters) == {kept}
    assert (await memories.get_many(ids, reuse=True))[dropped].forgotten_at is not None

    _commit_elsewhere(settings, "importance = 0.99, forgotten_at = NULL", dropped)
    assert (await memories.get_many(ids, reuse=True))[dropped].importance == 0.99
    assert await memories.eligible(ids, filters) == set(ids)


async def test_a_commit_while_the_missing_rows_are_read_has_every_row_read_again(
    service: CortexService, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What was kept from before would be older than what was just read: all are read at
    one moment, as one statement reads them."""
    known = await _remember(service, "Harry runs marathons on Sundays")
    fresh = await _remember(service, "Harry swims on Mondays")
    memories = service.stores.memories
    filters = service.memories.filters(None, None, None)
    await memories.get_many([known], reuse=True)
    await memories.eligible([known], filters)
    db = service.stores.db
    fetch_small = db.fetch_small

    def commit_meanwhile(change: str) -> None:
        async def committed(sql: str, params: Any = ()) -> list[Any]:
            _commit_elsewhere(settings, change, known)
            monkeypatch.setattr(db, "fetch_small", fetch_small)
            return await fetch_small(sql, params)

        monkeypatch.setattr(db, "fetch_small", committed)

    commit_meanwhile("importance = 0.11")
    found = await memories.get_many([known, fresh], reuse=True)
    assert found[known].importance == 0.11 and fresh in found
    commit_meanwhile("forgotten_at = importance")
    assert await memories.eligible([known, fresh], filters) == {fresh}
