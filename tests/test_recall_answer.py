"""A recall's answer as it is built after the search: each memory with its score, and the tool
result the SDK sends (issue 37 acceptance 4: what the answer costs the server and the client)."""

from __future__ import annotations

from cortex_mcp.models import (
    BeliefSummary,
    Category,
    Layer,
    Memory,
    MemoryKind,
    ScoredMemory,
)


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


def test_a_scored_memory_is_the_memory_with_its_score_as_validating_its_fields_would_give() -> (
    None
):
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
