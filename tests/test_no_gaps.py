"""A memory is findable at every moment of its life, whatever the lifecycle's schedule:
expired working notes before the next run, summaries beside what they cover, compressed
content remembered again."""

from __future__ import annotations

import pytest

from cortex_mcp.models import Layer
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


async def test_an_expired_working_note_is_recalled_at_archive_weight_before_any_run(
    service: CortexService, clock: FakeClock
) -> None:
    note = await service.memories.remember(
        RememberRequest(content="Router firmware 4.2 broke the VPN", layer="working")
    )
    clock.advance(hours=49)  # past the 48 h TTL, no lifecycle run
    (hit,) = await service.memories.search(SearchRequest(query="router firmware VPN"))
    assert hit.id == note.id
    debug = await service.memories.search_debug(SearchDebugRequest(query="router firmware VPN"))
    assert debug["hits"][0]["layer_weight"] == service.settings.search.layer_weights["archive"]


async def test_layer_filters_treat_an_expired_working_note_as_archive(
    service: CortexService, clock: FakeClock
) -> None:
    note = await service.memories.remember(
        RememberRequest(content="Printer toner is the TN-2420", layer="working")
    )
    assert [
        m.id
        for m in await service.memories.search(SearchRequest(query="toner", layers=["working"]))
    ] == [note.id]
    clock.advance(hours=49)
    assert await service.memories.search(SearchRequest(query="toner", layers=["working"])) == []
    assert [
        m.id
        for m in await service.memories.search(SearchRequest(query="toner", layers=["archive"]))
    ] == [note.id]


async def test_a_summary_and_an_original_it_covers_do_not_share_the_top_k(
    service: CortexService, clock: FakeClock
) -> None:
    originals = [
        await service.memories.remember(
            RememberRequest(content=text, category="fact", layer="archive")
        )
        for text in ("The garden hose leaks at the tap", "The garden shed roof needs tar")
    ]
    clock.advance(days=91)
    report = await service.lifecycle.run()
    summary_id = next(iter(report.created.values()))
    hits = [
        m.id
        for m in await service.memories.search(SearchRequest(query="garden hose leaks", limit=5))
    ]
    assert originals[0].id in hits and summary_id not in hits
    # where no original matches, the summary stands for them
    await service.memories.forget(ForgetRequest(memory_id=originals[0].id))
    await service.memories.forget(ForgetRequest(memory_id=originals[1].id))
    assert [
        m.id
        for m in await service.memories.search(SearchRequest(query="garden hose leaks", limit=5))
    ] == [summary_id]


async def test_a_summary_is_dated_by_the_month_it_covers_not_the_night_it_was_written(
    service: CortexService, clock: FakeClock
) -> None:
    old = await service.memories.remember(
        RememberRequest(content="Tokyo flat rent is 98000 yen", category="fact", layer="archive")
    )
    clock.advance(days=91)
    report = await service.lifecycle.run()
    summary_id = next(iter(report.created.values()))
    await service.memories.forget(ForgetRequest(memory_id=old.id))
    debug = await service.memories.search_debug(SearchDebugRequest(query="Tokyo flat rent"))
    (row,) = [r for r in debug["hits"] if r["id"] == summary_id]
    assert row["recency"] == 1.0  # written tonight, about a month three months ago
    assert row["layer_weight"] == service.settings.search.layer_weights["archive"]


async def test_remembering_compressed_content_again_leaves_the_compressed_state(
    service: CortexService, clock: FakeClock
) -> None:
    text = "The boiler service is every October"
    first = await service.memories.remember(
        RememberRequest(content=text, category="fact", layer="archive")
    )
    clock.advance(days=91)
    await service.lifecycle.run()
    compressed = await service.stores.memories.get(first.id)
    assert compressed is not None and "compressed_into" in compressed.metadata
    again = await service.memories.remember(RememberRequest(content=text, category="fact"))
    assert again.id == first.id and again.deduplicated
    revived = await service.stores.memories.get(first.id)
    assert revived is not None and revived.layer is Layer.core
    assert "compressed_into" not in revived.metadata
    snapshot = await service.engines.lifecycle.store.snapshot(None)
    assert first.id in {m.id for m in snapshot}  # the lifecycle acts on it again
