"""Broken embedding providers degrade recall to text, say so, and recover on their own.

The real openai SDK talks to tests/helpers/embedding_stub.py on 127.0.0.1 in each fault mode."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.runtime import build_embedders, open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest, SearchDebugRequest
from tests.conftest import FakeClock, stub_settings
from tests.helpers.embedding_stub import FAULT_MODES, StubState, stub_vector
from tests.helpers.stdio_helpers import HANG_S, RawStdioServer

pytestmark = pytest.mark.anyio

TIMEOUT_S = 1.0
MARGIN_S = 0.5
FACTS = [
    "The VPS firewall blocks port 8080 by default",
    "Harry invests in rental apartments in Shinagawa",
    "The quarterly budget review is scheduled for Friday",
]


def _settings(tmp_path: Path, url: str) -> Settings:
    return stub_settings(tmp_path / "brain.db", url, timeout_s=TIMEOUT_S)


def _fast_breaker(service: CortexService, cooldown_s: float = 0.3) -> None:
    for health in service.engines.embeddings.health.values():
        health.base_cooldown_s = cooldown_s


async def _vector_count(service: CortexService) -> int:
    return sum((await service.status.stats())["vectors"].values())


async def _recall_seconds(service: CortexService, query: str, times: int) -> list[float]:
    seconds = []
    for _ in range(times):
        started = time.perf_counter()
        await service.memories.recall(RecallRequest(query=query))
        seconds.append(time.perf_counter() - started)
    return seconds


async def _wait_for(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("mode", FAULT_MODES)
async def test_every_fault_mode_answers_from_text_shows_the_fault_and_backfills_after_recovery(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, mode: str
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock) as service:
        _fast_breaker(service)
        for fact in FACTS:
            await service.memories.remember(RememberRequest(content=fact))
        assert await service.embed_pending() == len(FACTS)
        service.start_warm_up()
        healthy = await _recall_seconds(service, "firewall port", times=3)

        state.mode = mode
        await service.memories.remember(
            RememberRequest(content="Backups run nightly at 02:00 on the VPS")
        )
        await service.memories.remember(
            RememberRequest(content="Deploys to the cluster happen on Tuesdays")
        )
        started = time.perf_counter()
        result = await service.memories.recall(RecallRequest(query="firewall port"))
        elapsed = time.perf_counter() - started

        # waits for the provider at most its timeout, on top of what a healthy recall costs
        # on this machine right now (measured above: a loaded machine slows both alike)
        bound = TIMEOUT_S + MARGIN_S + 3 * statistics.median(healthy)
        assert elapsed < bound, f"{mode}: recall took {elapsed:.2f} s (bound {bound:.2f} s)"
        assert result.memories[0].content == FACTS[0]
        if mode == "mixed_dims":  # the query's own row is fine; the pending rows are not
            assert "vector" in result.meta.channels
        else:
            assert result.meta.channels == ["text"]
            assert len(result.meta.degraded) == 1, result.meta.degraded
            assert "text search only" in result.meta.degraded[0]

        async def fault_in_stats() -> bool:
            embeddings = (await service.status.stats())["embeddings"]
            health = embeddings["health"]["openai"]
            return bool(health["last_error"] or health["rejected_vectors"])

        assert await _wait_for(fault_in_stats, HANG_S), (await service.status.stats())["embeddings"]

        state.recover()

        async def backfilled() -> bool:
            return await _vector_count(service) == len(FACTS) + 2

        assert await _wait_for(backfilled, HANG_S), (await service.status.stats())["embeddings"]
        after = await service.memories.recall(RecallRequest(query="firewall port"))
        assert after.meta.channels == ["text", "vector"] and after.meta.degraded == []


async def test_a_hanging_provider_is_skipped_once_its_circuit_opens(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        _fast_breaker(service, cooldown_s=60)
        for fact in FACTS:
            await service.memories.remember(RememberRequest(content=fact))
        await service.embed_pending()
        state.mode = "hang"
        paid = []
        for _ in range(3):
            started = time.perf_counter()
            await service.memories.recall(RecallRequest(query="firewall port"))
            paid.append(time.perf_counter() - started)
        assert min(paid) >= TIMEOUT_S * 0.9  # each of these waited for the provider
        health = (await service.status.stats())["embeddings"]["health"]["openai"]
        assert health["state"] == "open" and "timed out" in health["last_error"]

        requests_when_opened = len(state.requests)
        skipped = []
        for _ in range(5):
            started = time.perf_counter()
            result = await service.memories.recall(RecallRequest(query="firewall port"))
            skipped.append(time.perf_counter() - started)
            assert result.memories[0].content == FACTS[0]
            assert "skipped for" in result.meta.degraded[0]
        # skipped: no call reached the provider, and (ratios in this run, so load cannot
        # flip them) a recall took a fraction of one that waited for it
        assert len(state.requests) == requests_when_opened
        assert statistics.median(skipped) < min(paid) / 4, (skipped, paid)


async def test_an_open_circuit_is_probed_in_the_background_and_closes_when_the_provider_is_back(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        _fast_breaker(service, cooldown_s=0.2)
        state.mode = "http500"
        for _ in range(3):
            await service.memories.recall(RecallRequest(query="firewall port"))
        health = service.engines.embeddings.health["openai"]
        assert health.is_open and "HTTP 500" in (health.last_error or "")
        requests_when_opened = len(state.requests)

        async def probes(count: int) -> bool:
            return len(state.requests) >= requests_when_opened + count

        # one probe after 0.2 s fails, which doubles the wait to 0.4 s before the next; load
        # can only delay probes, so the times (when the stub received each request) are
        # lower bounds
        assert await _wait_for(lambda: probes(2), HANG_S)
        last_recall, first_probe, second_probe = state.arrived[requests_when_opened - 1 :][:3]
        assert first_probe - last_recall >= 0.2 * 0.9
        assert second_probe - first_probe >= 0.4 * 0.9

        async def second_probe_failed() -> bool:  # the stub has the request before we see its 500
            return health.cooldown_s >= 0.8 - 1e-9

        assert await _wait_for(second_probe_failed, HANG_S)
        assert health.is_open
        state.recover()

        async def closed() -> bool:
            return not health.is_open

        assert await _wait_for(closed, HANG_S)  # a deadline: the next probe is due within 1.6 s
        assert (
            await service.memories.recall(RecallRequest(query="firewall port"))
        ).meta.degraded == []


@pytest.mark.parametrize("mode", ["nan", "mixed_dims", "nonnumeric"])
async def test_malformed_vectors_are_rejected_counted_and_never_stored(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, mode: str
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        await service.memories.remember(RememberRequest(content=FACTS[0]))
        await service.embed_pending()  # learns the dimension from good vectors
        state.mode = mode
        for fact in FACTS[1:]:
            await service.memories.remember(RememberRequest(content=fact))
        with pytest.raises(Exception, match="malformed"):
            await service.embed_pending()
        stats = (await service.status.stats())["embeddings"]
        stored = await _vector_count(service)
        expected_good = 1 if mode != "mixed_dims" else 2  # one of the two new rows was full size
        assert stored == expected_good
        assert stats["health"]["openai"]["rejected_vectors"] >= 1
        assert stats["indexer"]["rejected_vectors"] >= 1
        assert "malformed" in stats["indexer"]["last_error"]
        result = await service.memories.search_debug(
            SearchDebugRequest(query="firewall port", max_results=5)
        )
        for hit in result["hits"]:
            if hit["vector"] is not None and hit["vector"].get("score") is not None:
                assert hit["vector"]["score"] == hit["vector"]["score"]  # never NaN


async def test_the_background_indexer_survives_a_provider_that_crashes_its_parser(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock) as service:
        _fast_breaker(service)
        service.start_warm_up()
        state.mode = "nonjson"
        await service.memories.remember(RememberRequest(content=FACTS[0]))

        async def failed() -> bool:
            return bool((await service.status.stats())["embeddings"]["indexer"]["last_error"])

        assert await _wait_for(failed, HANG_S)
        indexer = (await service.status.stats())["embeddings"]["indexer"]
        assert indexer["running"] and "not JSON" in indexer["last_error"]
        state.recover()

        async def embedded() -> bool:
            return await _vector_count(service) == 1

        assert await _wait_for(embedded, HANG_S)
        assert (await service.status.stats())["embeddings"]["indexer"]["last_error"] is None


async def test_probe_reports_ok_against_a_working_provider_and_failed_against_a_dead_url(
    tmp_path: Path, stub: tuple[str, StubState]
) -> None:
    url, _ = stub
    good = _settings(tmp_path, url)
    dead = _settings(tmp_path, "http://127.0.0.1:9/v1")
    for settings, status, words in [(good, "ok", "dimensions"), (dead, "failed", "connect")]:
        cascade = EmbeddingCascade(build_embedders(settings, ["openai"]), timeout_s=TIMEOUT_S)
        try:
            [probe] = await cascade.probe_all()
        finally:
            await cascade.close()
        assert (probe.name, probe.status) == ("openai", status)
        assert words in probe.detail, probe


@pytest.mark.slow
def test_over_stdio_every_fault_mode_answers_recall_and_shuts_down_with_exit_0(
    tmp_path: Path, stub: tuple[str, StubState]
) -> None:
    url, state = stub
    env = {
        "CORTEX_EMBEDDING_PROVIDER": "openai",
        "CORTEX_EMBEDDING_BASE_URL": url,
        "CORTEX_EMBEDDING_MODEL": "stub-embed",
        "CORTEX_EMBEDDING_TIMEOUT_S": str(TIMEOUT_S),
    }
    for mode in FAULT_MODES:
        state.recover()
        state.mode = mode
        server = RawStdioServer(tmp_path / f"{mode}.db", **env)
        try:
            server.initialize()
            server.call_tool("cortex_remember", {"content": FACTS[0]})
            reply = server.call_tool("cortex_recall", {"query": "firewall port"})
            assert not reply.get("isError"), (mode, reply)
            assert FACTS[0] in reply["structuredContent"]["context"], mode
        finally:
            code = server.close()
        errors = b"".join(server.stderr).decode(errors="replace")
        assert code == 0, (mode, errors[-2000:])
        assert "Traceback" not in errors, (mode, errors[-2000:])


class _SecondEmbedder:
    """A second provider of the cascade, in-process (the Embedder protocol, no network)."""

    name = "second"
    model_key = "second-model"

    def ready(self) -> bool:
        return True

    async def warm_up(self, *, wait: bool = False) -> None:
        return None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [stub_vector(text, 32).tolist() for text in texts]


async def test_when_the_first_provider_is_down_the_indexer_fills_the_fallbacks_vectors(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        service.engines.embeddings.providers.append(_SecondEmbedder())
        state.mode = "http500"
        for fact in FACTS:
            await service.memories.remember(RememberRequest(content=fact))
        for _ in range(3):  # the first provider's circuit opens
            with pytest.raises(ProviderError):
                await service.embed_pending()
        assert await service.embed_pending() == len(FACTS)
        assert (await service.status.stats())["vectors"] == {"second-model": len(FACTS)}
        result = await service.memories.recall(RecallRequest(query="firewall blocks"))
        assert result.meta.channels == ["text", "vector"]
        assert result.memories[0].content == FACTS[0]
        [note] = result.meta.degraded
        assert note.startswith("embeddings from second (openai: skipped for"), note
