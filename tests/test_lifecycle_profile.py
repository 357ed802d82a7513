"""Phase 5 of the lifecycle refreshes the user profile by rules (no LLM) and keeps the user's
manual edits."""

from __future__ import annotations

import pytest

from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RememberRequest
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


async def test_a_run_that_promotes_a_preference_rebuilds_the_profile_and_keeps_manual_edits(
    service: CortexService, clock: FakeClock
) -> None:
    await service.memories.remember(
        RememberRequest(content="Harry lives in Tokyo", category="identity")
    )
    await service.conversation.edit_profile({"domains": ["real estate"]})
    before = await service.engines.profiles.store.get("default")
    assert before is not None and "green tea" not in before.generated["summary"]
    await service.memories.remember(
        RememberRequest(
            content="Harry prefers green tea to coffee",
            category="preference",
            layer="working",
            importance=0.8,
        )
    )
    clock.advance(hours=30)
    report = await service.lifecycle.run()
    assert report.counts["promote"] == 1
    assert "profile of default rebuilt from core memory" in report.notes
    stored = await service.engines.profiles.store.get("default")  # rebuilt by the run, not on read
    assert stored is not None and stored.built_by == "rules"
    assert "Harry prefers green tea to coffee" in stored.generated["summary"]
    profile = await service.conversation.profile()
    assert "Harry prefers green tea to coffee" in profile["summary"]
    assert profile["domains"][0] == "real estate"  # the manual edit stands


async def test_a_run_that_changes_no_profile_source_leaves_the_profile_alone(
    service: CortexService, clock: FakeClock
) -> None:
    await service.memories.remember(
        RememberRequest(content="Harry lives in Tokyo", category="identity")
    )
    await service.conversation.profile()
    await service.memories.remember(
        RememberRequest(content="Talked about the router", category="context", layer="working")
    )
    clock.advance(hours=60)
    report = await service.lifecycle.run()
    assert report.counts["expire"] == 1
    assert not any("profile" in note for note in report.notes)
