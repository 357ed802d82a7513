"""Memory ids an agent holds in its own metadata or log (a summary's covers, a merge's
merged_from, a log entry's before/after, a correction chain, a restore) read only that agent's
memories (issue 32): a lifecycle run, a purge, a memory's page and a restore never reach
another agent's text, and an import drops the ids of other agents' memories from its lists,
saying how many in its report. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import Category, Layer, NewMemory, to_iso
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    ImportRequest,
    LifecycleLogRequest,
    LifecycleRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

BOBS = [
    "Bob's vault code is 4471",
    "Bob once hid the spare key under the blue pot",
    "Bob's old password hint was the dog's name",
]
MARCH = "2026-03-10T09:00:00.000000Z"


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _bobs_memories(service: CortexService) -> list[str]:
    """Bob's three memories: one live, one forgotten, one superseded (ids alice may know)."""
    made = [
        await service.memories.remember(RememberRequest(content=text, agent_id="bob"))
        for text in BOBS
    ]
    await service.memories.forget(ForgetRequest(memory_id=made[1].id, agent_id="bob"))
    newer = RememberRequest(content="Bob's password hint", supersedes=made[2].id, agent_id="bob")
    await service.memories.remember(newer)
    return [m.id for m in made]


def _history_summary(covers: list[str]) -> dict[str, Any]:
    return {
        "content": "[2026-03] 3 archived memories: a walk",
        "layer": "core",
        "category": "summary",
        "occurred_at": MARCH,
        "created_at": MARCH,
        "updated_at": MARCH,
        "metadata": {
            "section": "history",
            "period": "2026-03",
            "covers": covers,
            "merged_from": covers,
        },
    }


def _old_archive(content: str) -> dict[str, Any]:
    return {
        "content": content,
        "layer": "archive",
        "category": "fact",
        "occurred_at": MARCH,
        "created_at": MARCH,
        "updated_at": MARCH,
    }


def _leaked(text: str) -> list[str]:
    return [secret for secret in (*BOBS, "4471", "blue pot", "dog's name") if secret in text]


async def test_an_imported_summary_naming_another_agents_ids_never_quotes_them_in_a_lifecycle_run(
    service: CortexService,
) -> None:
    """The reported attack: alice imports a history summary whose covers list bob's ids and
    an old archive memory of the same month, then runs her lifecycle."""
    bobs = await _bobs_memories(service)
    document = {
        "format": "cortex-mcp-export",
        "memories": [_history_summary(bobs), _old_archive("Alice walked the dog in March")],
    }
    report = await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="alice")
    )
    [summary] = [
        m for m in await service.stores.exports.memories("alice") if m.layer.value == "core"
    ]

    run = await service.lifecycle.run(build(LifecycleRequest, agent_id="alice"))
    assert run.counts["compress"] == 1
    rebuilt = await service.stores.memories.get(summary.id)
    assert rebuilt is not None and "Alice walked the dog" in rebuilt.content
    assert _leaked(rebuilt.content) == []
    assert rebuilt.content.startswith("[2026-03] 1 archived memories")  # bob's count: none
    assert report["memories"] == 2
    assert report["dropped_ids"] == 6  # three in covers, three in merged_from
    assert set(rebuilt.metadata["covers"]).isdisjoint(bobs)
    assert summary.metadata["merged_from"] == []


async def test_a_summary_already_naming_another_agents_ids_reads_only_its_own_agents_memories(
    service: CortexService, clock: FakeClock
) -> None:
    """A summary stored before imports dropped such ids (or naming ids that became another
    agent's later): the run, the period range and a purge read only alice's memories."""
    bobs = await _bobs_memories(service)
    await service.stores.db.transact(
        lambda conn: conn.execute(
            "UPDATE memories SET occurred_at = ? WHERE id = ?",
            ("2019-01-01T00:00:00.000000Z", bobs[0]),
        )
    )
    planted = NewMemory(
        agent_id="alice",
        content="[2026-03] 3 archived memories: a walk",
        category=Category.summary,
        layer=Layer.core,
        source="lifecycle",
        occurred_at=MARCH,
        metadata={"section": "history", "period": "2026-03", "covers": bobs},
    )
    summary = (await service.stores.memories.remember(planted, to_iso(clock.now()))).memory
    document = {"format": "cortex-mcp-export", "memories": [_old_archive("Alice fed the ducks")]}
    await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="alice")
    )

    await service.lifecycle.run(build(LifecycleRequest, agent_id="alice"))
    rebuilt = await service.stores.memories.get(summary.id)
    assert rebuilt is not None and "Alice fed the ducks" in rebuilt.content
    assert _leaked(rebuilt.content) == []
    assert rebuilt.content.startswith("[2026-03] 1 archived memories")
    assert rebuilt.metadata["period_range"]["start"] == MARCH  # not bob's 2019

    # bob's purge does not touch alice's summary (it is not his), and it never quoted him
    await service.memories.forget(ForgetRequest(memory_id=bobs[0], purge=True, agent_id="bob"))
    after = await service.stores.memories.get(summary.id)
    assert after is not None and after.content == rebuilt.content
    assert after.updated_at == rebuilt.updated_at


async def test_an_imported_log_entry_names_only_the_importers_memories_and_its_own_agent(
    service: CortexService,
) -> None:
    """A forged entry: bob's ids in before/after and `agent_id: bob` in its details. It is
    alice's entry, naming her memory only, and bob's log never shows it."""
    bobs = await _bobs_memories(service)
    mine = await service.memories.remember(
        RememberRequest(content="Alice likes plums", agent_id="alice")
    )
    entry = {
        "action": "merge",
        "memory_ids": [mine.id, bobs[0]],
        "details": {"agent_id": "bob", "before": [bobs[0], mine.id], "after": [bobs[1]]},
        "executed_at": "2026-10-01T10:00:00Z",
    }
    document = {"format": "cortex-mcp-export", "memories": [], "lifecycle_log": [entry]}
    report = await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="alice")
    )
    assert report["logs"] == 1 and report["dropped_ids"] == 3
    bobs_log = await service.lifecycle.log(build(LifecycleLogRequest, agent_id="bob"))
    assert all(e["details"].get("before") is None for e in bobs_log)
    assert [e["action"] for e in bobs_log] == ["supersede", "forget"]  # newest first
    [alices] = await service.lifecycle.log(build(LifecycleLogRequest, agent_id="alice"))
    assert alices["memory_ids"] == [mine.id]
    assert alices["details"]["before"] == [mine.id] and alices["details"]["after"] == []
    assert alices["details"]["agent_id"] == "alice"


async def test_a_correction_chain_and_a_restore_name_only_the_agents_own_memories(
    service: CortexService,
) -> None:
    """Alice's memory whose superseded_by names bob's memory (a row from before these
    rules): its chain shows none of bob's, and restoring it logs nothing bob's log shows."""
    bobs = await _bobs_memories(service)
    mine = await service.memories.remember(
        RememberRequest(content="Alice's bike is red", agent_id="alice")
    )
    await service.stores.db.transact(
        lambda conn: conn.execute(
            "UPDATE memories SET superseded_by = ? WHERE id = ?", (bobs[0], mine.id)
        )
    )
    memory = await service.stores.memories.get(mine.id)
    assert memory is not None
    assert [m.id for m in await service.stores.memories.chain(memory)] == []

    await service.memories.restore(mine.id, agent_id="alice")
    bobs_log = await service.lifecycle.log(build(LifecycleLogRequest, agent_id="bob"))
    assert "restore" not in [e["action"] for e in bobs_log]
    alices = await service.lifecycle.log(build(LifecycleLogRequest, agent_id="alice"))
    assert [e["memory_ids"] for e in alices if e["action"] == "restore"] == [[mine.id]]
