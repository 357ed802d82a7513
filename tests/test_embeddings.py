"""The vector channel with the real openai SDK against a local stub server."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
)
from tests.conftest import FACTS, FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("on_both_stores")]


def _settings(tmp_path: Path, url: str, timeout_s: float = 10.0, **extra: Any) -> Settings:
    return stub_settings(tmp_path / "brain.db", url, timeout_s=timeout_s, **extra)


async def _timed_recall(service: CortexService, query: str) -> float:
    started = time.perf_counter()
    await service.memories.recall(RecallRequest(query=query))
    return time.perf_counter() - started


async def _fill(service: CortexService) -> list[str]:
    ids = [(await service.memories.remember(RememberRequest(content=fact))).id for fact in FACTS]
    assert await service.embed_pending() == len(FACTS)
    return ids


async def test_hybrid_recall_uses_both_channels(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, _ = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        ids = await _fill(service)
        result = await service.memories.recall(RecallRequest(query="rental apartment investments"))
        assert result.memories[0].id == ids[0]
        assert result.meta.channels == ["text", "vector"]
        assert result.meta.degraded == []
        stats = await service.status.stats()
        assert stats["vectors"] == {"stub-embed": len(FACTS)}


async def test_no_key_and_no_model_degrades_to_text_and_says_so(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "brain.db")  # auto, no key, no local extra
    async with open_cortex(settings, clock=clock) as service:
        made = await service.memories.remember(
            RememberRequest(content="The VPS firewall blocks port 8080")
        )
        result = await service.memories.recall(RecallRequest(query="firewall port"))
        assert [m.id for m in result.memories] == [made.id]
        assert result.meta.channels == ["text"]
        assert any("text search only" in note for note in result.meta.degraded)


@pytest.mark.parametrize("failure", ["timeout", "http500"])
async def test_a_failing_provider_falls_back_to_text_within_the_timeout(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, failure: str
) -> None:
    url, state = stub
    settings = _settings(tmp_path, url, timeout_s=1.0)
    async with open_cortex(settings, clock=clock, background=False) as service:
        await _fill(service)
        healthy = statistics.median(  # what a healthy recall costs here, now
            [await _timed_recall(service, "firewall port") for _ in range(3)]
        )
        if failure == "timeout":
            state.delay_s = 30.0
        else:
            state.fail_status = 500
        started = time.perf_counter()
        result = await service.memories.recall(RecallRequest(query="firewall port"))
        elapsed = time.perf_counter() - started
        assert result.memories and "firewall" in result.memories[0].content
        assert result.meta.channels == ["text"]
        assert any("embeddings unavailable" in note for note in result.meta.degraded)
        # the 1 s timeout on top of a healthy recall measured in this run (load slows both)
        bound = 1.0 + 0.5 + 3 * healthy
        assert elapsed < bound, f"recall took {elapsed:.2f}s with a 1s provider timeout"
        stats = await service.status.stats()
        assert stats["embeddings"]["failures"]


async def test_writes_survive_an_outage_and_are_backfilled(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        state.fail_status = 503
        made = await service.memories.remember(
            RememberRequest(content="Backups run nightly at 02:00")
        )
        assert (await service.status.stats())["vectors"] == {}
        state.fail_status = None
        assert await service.embed_pending() == 1
        assert (await service.status.stats())["vectors"] == {"stub-embed": 1}
        assert (await service.memories.recall(RecallRequest(query="nightly backups"))).memories[
            0
        ].id == made.id


async def test_switching_model_or_dimensions_reindexes_without_loss(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, _ = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        ids = await _fill(service)
    switched = _settings(tmp_path, url, embedding_dimensions=32)
    async with open_cortex(switched, clock=clock, background=False) as service:
        result = await service.memories.recall(
            RecallRequest(query="golden retriever")
        )  # before re-indexing: text still works
        assert result.memories[0].id == ids[2]
        assert await service.embed_pending() == len(FACTS)
        stats = await service.status.stats()
        assert stats["memories"]["total"] == len(FACTS)
        assert stats["vectors"] == {"stub-embed@32": len(FACTS)}
        result = await service.memories.recall(RecallRequest(query="golden retriever"))
        assert result.memories[0].id == ids[2] and "vector" in result.meta.channels
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        # back to the first model: vectors come from the embedding cache, no provider call
        assert await service.embed_pending() == len(FACTS)
        assert service.engines.indexer is not None and service.engines.indexer.cache_hits == len(
            FACTS
        )


@pytest.mark.parametrize("backend", ["numpy", "vec0"])
async def test_both_vector_backends_give_the_same_ranking(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, backend: str
) -> None:
    url, _ = stub
    settings = _settings(tmp_path, url, search={"vector_backend": backend})
    async with open_cortex(settings, clock=clock, background=False) as service:
        await _fill(service)
        for i in range(40):
            await service.memories.remember(
                RememberRequest(content=f"Filler memory number {i} about gardening and tomatoes")
            )
        await service.embed_pending()
        report = await service.memories.search_debug(
            SearchDebugRequest(query="firewall blocks port", max_results=5)
        )
        assert report["providers"]["vector_backend"] == backend
        ranks = [(h["content"], h["vector"]["rank"]) for h in report["hits"]]
        assert ranks[0][0] == FACTS[1]


async def test_vector_search_respects_filters(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, _ = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        ids = await _fill(service)
        other = await service.memories.remember(
            RememberRequest(content="Harry invests in rental apartments", agent_id="someone-else")
        )
        await service.memories.forget(ForgetRequest(memory_id=ids[0]))
        await service.embed_pending()
        result = await service.memories.recall(
            RecallRequest(query="rental apartments investments", max_results=10)
        )
        found = {m.id for m in result.memories}
        assert ids[0] not in found and other.id not in found
