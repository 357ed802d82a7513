"""An export can always be imported again (issue 25): a history summary of a big month lists
every memory it covers in its metadata, and the compression's log entry names them all, far
past the 20,000 characters an imported metadata or details object may hold. Lists of ids are
bounded by their length instead; the rest of the object keeps the character limit. SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.engine.exchange.admit import MAX_METADATA_CHARS
from cortex_mcp.errors import InvalidInput
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    ImportRequest,
    LifecycleLogRequest,
    LifecycleRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio
MONTH = 700  # archived memories in one month: their ids alone are ~26,000 characters


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def test_an_export_holding_a_big_months_summary_and_its_log_imports_again(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    archived = [
        {
            "content": f"Archived note {i}: the ferry to island {i} leaves at {i % 24}:00",
            "layer": "archive",
            "category": "fact",
            "created_at": "2026-10-15T10:00:00Z",
        }
        for i in range(MONTH)
    ]
    document = {"format": "cortex-mcp-export", "memories": archived}
    await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="alice")
    )
    clock.advance(days=91)
    report = await service.lifecycle.run(build(LifecycleRequest, agent_id="alice"))
    assert report.counts["compress"] == 1
    out = tmp_path / "export.json"
    await service.exchange.export_json(str(out), agent_id="alice")
    exported = json.loads(out.read_text())
    [summary] = [m for m in exported["memories"] if m["category"] == "summary"]
    assert len(json.dumps(summary["metadata"])) > MAX_METADATA_CHARS
    [entry] = [e for e in exported["lifecycle_log"] if e["action"] == "compress"]
    assert len(json.dumps(entry["details"])) > MAX_METADATA_CHARS

    imported = await service.exchange.import_path(str(out), agent_id="bob")
    assert (imported.memories, imported.logs) == (MONTH + 1, 1)
    bob = {m.content: m for m in await service.stores.exports.memories("bob")}
    assert len(bob[summary["content"]].metadata["covers"]) == MONTH


async def test_the_rest_of_the_metadata_keeps_its_limit_beside_a_list_of_ids(
    service: CortexService,
) -> None:
    covers = [f"{i:08x}-0000-4000-8000-000000000000" for i in range(MONTH)]
    too_long = {"covers": covers, "note": "y" * MAX_METADATA_CHARS}
    not_ids = {"covers": ["a whole sentence, not an id " * 3] * MONTH}
    for metadata in (too_long, not_ids):
        memory = {"content": "A summary", "layer": "core", "category": "summary"}
        document = {"format": "cortex-mcp-export", "memories": [{**memory, "metadata": metadata}]}
        with pytest.raises(InvalidInput) as caught:
            await service.exchange.import_memories(
                build(ImportRequest, document=document, agent_id="carol")
            )
        assert "memories[0]: metadata" in str(caught.value)
        assert "over the limit of 20000" in str(caught.value)
    assert await service.stores.exports.memories("carol") == []


async def test_an_import_into_another_agent_points_its_summary_at_its_own_copies(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    """Exported from alice and imported into bob in the same store, every id is taken, so bob's
    memories get new ids: his summary covers those, and a purge of alice's memory leaves it."""
    notes = [f"Kyoto trip day {day}: visited temple number {day * 3}" for day in range(5)]
    archived = [
        {"content": text, "layer": "archive", "category": "fact", "created_at": "2026-10-15"}
        for text in notes
    ]
    document = {"format": "cortex-mcp-export", "memories": archived}
    await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="alice")
    )
    clock.advance(days=91)
    await service.lifecycle.run(build(LifecycleRequest, agent_id="alice"))
    out = tmp_path / "alice.json"
    await service.exchange.export_json(str(out), agent_id="alice")
    await service.exchange.import_path(str(out), agent_id="bob")

    alice = {m.content: m for m in await service.stores.exports.memories("alice")}
    bob = {m.content: m for m in await service.stores.exports.memories("bob")}
    [summary] = [m for m in bob.values() if m.category.value == "summary"]
    assert sorted(summary.metadata["covers"]) == sorted(bob[text].id for text in notes)
    [entry] = [
        e
        for e in await service.lifecycle.log(build(LifecycleLogRequest, agent_id="bob"))
        if e["action"] == "compress"
    ]
    assert summary.id in entry["details"]["after"]
    assert set(entry["details"]["before"]) == {bob[text].id for text in notes}

    purged = ForgetRequest(memory_id=alice[notes[0]].id, purge=True, agent_id="alice")
    await service.memories.forget(purged)
    after = await service.stores.memories.get(summary.id)
    assert after is not None and after.content == summary.content


async def test_a_purge_never_quotes_another_agents_memories_into_a_summary(
    service: CortexService,
) -> None:
    """A summary imported with covers naming memories the document does not hold, which are
    another agent's: when one of them is purged, the summary is rebuilt from its own agent's
    memories only."""
    secrets = ["Alice's bank PIN hint is the cat's birthday", "Alice hides the spare key"]
    document = {
        "format": "cortex-mcp-export",
        "memories": [{"content": t, "layer": "archive", "category": "fact"} for t in secrets],
    }
    await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="alice")
    )
    alice = [m.id for m in await service.stores.exports.memories("alice")]
    summary = {
        "content": "[2026-10] 2 archived memories: a walk; a book",
        "layer": "core",
        "category": "summary",
        "metadata": {"section": "history", "period": "2026-10", "covers": alice},
    }
    document = {"format": "cortex-mcp-export", "memories": [summary]}
    await service.exchange.import_memories(build(ImportRequest, document=document, agent_id="bob"))
    await service.memories.forget(ForgetRequest(memory_id=alice[0], purge=True, agent_id="alice"))
    [bobs] = await service.stores.exports.memories("bob")
    assert "spare key" not in bobs.content and "PIN" not in bobs.content
