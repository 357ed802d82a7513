"""The lifecycle with an LLM: merge and compress texts come from the prompts, calls are capped
per run, and a failing provider falls back to the rule-based path with a note."""

from __future__ import annotations

import pytest

from cortex_mcp.errors import ProviderError
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RememberRequest
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


class ScriptedModel:
    """Answers each prompt from a script and remembers what it was asked."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    async def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_an_llm_writes_the_merged_memory_and_the_history_summary(
    service: CortexService, clock: FakeClock
) -> None:
    old = await service.memories.remember(
        RememberRequest(content="The user lives in Tokyo", category="identity")
    )
    clock.advance(minutes=1)
    new = await service.memories.remember(
        RememberRequest(content="User lives in Tokyo.", category="identity")
    )
    archived = await service.memories.remember(
        RememberRequest(content="Fixed the NTT router IPv6 forwarding", layer="archive")
    )
    clock.advance(days=100)
    model = ScriptedModel(
        "The user lives in Tokyo (Shinagawa).", "In November the router was fixed."
    )
    assert service.engines.lifecycle is not None
    service.engines.lifecycle.llm = model
    preview = await service.lifecycle.preview()
    assert [a.llm for a in preview.actions if a.kind in ("merge", "compress")] == [True, True]
    assert model.prompts == []  # a preview never calls the LLM
    report = await service.lifecycle.run()
    assert "The user lives in Tokyo" in model.prompts[0] and "[20" in model.prompts[0]
    assert "Fixed the NTT router" in model.prompts[1]
    created = {kind.split(":")[0]: mid for kind, mid in report.created.items()}
    merged = await service.stores.memories.get(created["merge"])
    assert merged is not None and merged.content == "The user lives in Tokyo (Shinagawa)."
    for older in (old.id, new.id):
        memory = await service.stores.memories.get(older)
        assert memory is not None and memory.superseded_by == merged.id
    summary = await service.stores.memories.get(created["compress"])
    assert summary is not None
    assert summary.content == "[2026-11] In November the router was fixed."
    assert summary.metadata["covers"] == [archived.id] and summary.metadata["method"] == "llm"


async def test_llm_calls_are_capped_per_run_and_a_failure_falls_back_to_rules(
    service: CortexService, clock: FakeClock
) -> None:
    for n in range(3):
        await service.memories.remember(
            RememberRequest(content=f"Old note {n} about the garden", layer="archive")
        )
        clock.advance(days=31)
    clock.advance(days=95)
    assert service.engines.lifecycle is not None
    service.engines.lifecycle.settings = service.engines.lifecycle.settings.model_copy(
        update={"llm_max_calls": 2}
    )
    model = ScriptedModel(ProviderError("stub: 503"), "A garden summary.")
    service.engines.lifecycle.llm = model
    report = await service.lifecycle.run()
    compress = [a for a in report.actions if a.kind == "compress"]
    assert len(compress) == 3 and [a.llm for a in compress] == [True, True, False]
    assert len(model.prompts) == 2
    assert any("LLM unavailable" in note for note in report.notes)
    found = await service.stores.memories.get_many(list(report.created.values()))
    texts = [memory.content for memory in found.values()]
    assert sum("archived memories:" in t for t in texts) == 2  # extractive: failed + over cap
    assert "A garden summary." in " ".join(texts)
