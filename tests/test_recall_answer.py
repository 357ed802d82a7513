"""A recall's answer as it is built after the search: each memory with its score, and the tool
result the SDK sends (issue 37 acceptance 4: what the answer costs the server and the client)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from jsonschema.validators import validator_for
from mcp import Client

from cortex_mcp.config import Settings
from cortex_mcp.engine.recall import when
from cortex_mcp.engine.recall.gate import build_context
from cortex_mcp.models import (
    BeliefSummary,
    Category,
    Layer,
    Memory,
    MemoryKind,
    RecallMeta,
    RecallResult,
    ScoredMemory,
    to_iso,
)
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from cortex_mcp.transports.render import recall_text
from cortex_mcp.transports.tools import recall_output_schema
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


def _memory() -> Memory:
    return Memory(
        id="01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51",
        agent_id="default",
        layer=Layer.core,
        category=Category.preference,
        content="Anna likes green tea",
        source="chat",
        importance=0.7,
        confidence=0.8,
        decay_score=1.0,
        access_count=3,
        created_at="2026-12-01T10:00:00.000000Z",
        updated_at="2026-12-01T10:00:00.000000Z",
        metadata={"speaker": "user"},
        occurred_at="2026-11-30T10:00:00.000000Z",
        kind=MemoryKind.opinion,
        entities=["Anna"],
        valid_from="2026-11-30T10:00:00.000000Z",
        belief=BeliefSummary.model_validate(
            {
                "id": "b1",
                "holder": "Anna",
                "statement": "likes green tea",
                "confidence": 0.8,
                "for": 2,
                "against": 0,
                "trend": "steady",
            }
        ),
    )


def test_a_scored_memory_is_the_memory_with_its_score_as_validating_its_fields_would_give() -> None:
    memory = _memory()
    validated = ScoredMemory(**memory.model_dump(), score=0.731, truncated=True)
    scored = ScoredMemory.of(memory, 0.731, True)
    assert scored == validated
    assert scored.model_dump(mode="json") == validated.model_dump(mode="json")
    assert scored.layer is Layer.core and isinstance(scored.belief, BeliefSummary)
    assert ScoredMemory.of(memory, 0.5).truncated is False


def test_a_scored_memory_takes_changes_and_leaves_the_memory_it_came_from_as_it_was() -> None:
    memory = _memory()
    scored = ScoredMemory.of(memory, 0.2, source="cut…")
    assert scored.source == "cut…" and memory.source == "chat"
    assert scored.model_dump(exclude={"source", "score", "truncated"}) == memory.model_dump(
        exclude={"source"}
    )


def test_a_memory_updated_with_its_names_and_belief_is_what_model_copy_makes() -> None:
    memory = _memory()
    names, belief = ["Anna", "Tom"], None
    updated = memory.updated(entities=names, belief=belief)
    copied = memory.model_copy(update={"entities": names, "belief": belief})
    assert updated == copied and type(updated) is Memory
    assert updated.model_fields_set == copied.model_fields_set
    assert memory.entities == ["Anna"] and memory.belief is not None  # left as it was


class _Unread(dict[str, Any]):
    """A memory that fails the check that reads it."""

    def __contains__(self, key: object) -> bool:
        raise AssertionError("the output schema looked inside a memory")

    def __iter__(self) -> Any:
        raise AssertionError("the output schema looked inside a memory")


def test_a_recall_is_checked_against_its_output_schema_without_a_look_inside_each_memory() -> None:
    schema = recall_output_schema()
    validator = validator_for(schema)(schema)
    answer = {
        "context": "",
        "memories": [_Unread(id="m") for _ in range(10)],
        "meta": {"took_ms": 1.0, "degraded": [], "skipped_reason": None},
    }
    assert list(validator.iter_errors(answer)) == []
    assert list(validator.iter_errors({**answer, "memories": {}}))  # still an array


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_recalled_memory_has_each_key_the_output_schema_names(
    mode: str, settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock), settings)
    async with Client(server, mode=mode) as client:
        for content in ("Anna likes green tea", "Anna moved to Osaka in 2025"):
            await client.call_tool("cortex_remember", {"content": content, "source": "chat"})
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("cortex_recall", {"query": "Anna"})
    assert not result.is_error and result.structured_content is not None
    described = tools["cortex_recall"].output_schema["properties"]["memories"]["description"]
    named = described.split(": ", 1)[1].split(", ")
    assert named == [*ScoredMemory.model_fields]
    memories = result.structured_content["memories"]
    assert len(memories) == 2 and all([*memory] == named for memory in memories)


def test_a_recall_reads_each_memorys_date_once_for_its_context_and_its_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memories = [
        _memory().model_copy(update={"id": f"m{i}", "occurred_at": f"2026-11-2{i}T10:00:00Z"})
        for i in range(5)
    ]
    read: list[str] = []
    original = when.from_iso
    monkeypatch.setattr(when, "from_iso", lambda text: read.append(text) or original(text))
    now = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)
    context, kept, _ = build_context(memories, 2000, now)
    result = RecallResult(
        context=context,
        memories=[ScoredMemory.of(m, 0.5) for m in kept],
        meta=RecallMeta(took_ms=1.0, now=to_iso(now), timezone="UTC"),
    )
    text = recall_text(result)
    assert "2026-11-24, 13 days ago" in context and "2026-11-24, 13 days ago" in text
    assert sorted(read) == sorted(m.occurred_at for m in memories)


def test_a_moment_is_dated_in_each_zone_the_same_instant_is_seen_from() -> None:
    instant = datetime(2026, 12, 7, 23, 30, tzinfo=UTC)
    moment = "2026-12-07T20:00:00.000000Z"
    assert when.dated(moment, instant) == "2026-12-07, today"
    assert when.dated(moment, instant.astimezone(ZoneInfo("Asia/Tokyo"))) == "2026-12-08, today"
    assert when.dated(moment, instant.astimezone(ZoneInfo("Pacific/Kiritimati"))) == (
        "2026-12-08, today"
    )
    assert when.dated(moment, instant.astimezone(ZoneInfo("America/Los_Angeles"))) == (
        "2026-12-07, today"
    )
    late = "2026-12-07T02:00:00.000000Z"  # the 6th in Los Angeles, the 7th in Tokyo
    assert when.dated(late, instant.astimezone(ZoneInfo("America/Los_Angeles"))) == (
        "2026-12-06, yesterday"
    )
    assert when.dated(late, instant.astimezone(ZoneInfo("Asia/Tokyo"))) == "2026-12-07, yesterday"
