"""The background indexer against the real openai SDK and a local stub that records what it is
sent: batch sizes, requests in flight, the order of the queue, refusals and back-off."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.embeddings import ProviderBusy
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from cortex_mcp.store.database import Database
from cortex_mcp.store.memories import Accesses
from cortex_mcp.store.schema import EMBEDDING_QUEUE, MIGRATIONS, SCHEMA_VERSION
from cortex_mcp.store.vectors import VectorStore
from tests.conftest import FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState, embedding_stub
from tests.helpers.older_schema import sqlite_back_to

pytestmark = pytest.mark.anyio

EMBEDDING_QUEUE_MIGRATION = MIGRATIONS.index(EMBEDDING_QUEUE) + 1


@pytest.fixture
def stub() -> Iterator[tuple[str, StubState]]:
    with embedding_stub(StubState(keep_alive=True)) as served:
        yield served


def _settings(tmp_path: Path, url: str, **extra: Any) -> Settings:
    return stub_settings(tmp_path / "brain.db", url, timeout_s=30.0, **extra)


async def _remember(service: CortexService, count: int, prefix: str = "fact") -> list[str]:
    return [
        (
            await service.memories.remember(
                RememberRequest(content=f"{prefix} number {i} about topic {i}")
            )
        ).id
        for i in range(count)
    ]


async def _vectors(service: CortexService) -> int:
    return sum((await service.status.stats())["vectors"].values())


async def _wait_for(predicate: Callable[[], Awaitable[bool]], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(0.02)
    return False


_PROBE = ["cortex-mcp health check", "ok"]  # what stats and the breaker send


def _batches(state: StubState) -> list[list[str]]:
    """The inputs of each indexing request the stub served, in order (no probes)."""
    return [inputs for inputs in state.served if inputs != _PROBE]


def _texts(state: StubState) -> list[str]:
    return [text for body in state.requests if body["input"] != _PROBE for text in body["input"]]


async def test_batches_of_the_provider_size_with_several_requests_in_flight(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    settings = _settings(tmp_path, url, embedding_batch_size=8, embedding_concurrency=3)
    async with open_cortex(settings, clock=clock, background=False) as service:
        ids = await _remember(service, 60)
        state.latency_s = 0.3  # long enough that batches overlap however loaded the machine
        assert await service.embed_pending() == len(ids)
        assert await _vectors(service) == len(ids)
    sizes = [len(batch) for batch in _batches(state)]
    assert max(sizes) == 8 and sum(sizes) == len(ids)
    assert sizes.count(8) == len(ids) // 8
    assert state.peak_in_flight == 3  # never more than the setting, and the setting is used
    assert sorted(_texts(state)) == sorted(f"fact number {i} about topic {i}" for i in range(60))


async def test_the_defaults_follow_the_provider(
    tmp_path: Path, stub: tuple[str, StubState]
) -> None:
    url, _ = stub
    async with open_cortex(_settings(tmp_path, url), background=False) as service:
        provider = service.engines.embeddings.providers[0]
        assert (provider.batch_size, provider.concurrency) == (128, 4)


async def test_the_queue_is_read_most_recalled_first_then_newest(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    settings = _settings(tmp_path, url, embedding_batch_size=4, embedding_concurrency=1)
    async with open_cortex(settings, clock=clock, background=False) as service:
        ids = await _remember(service, 12)
        # memory 2 was recalled three times, memory 5 once; the rest never
        now = clock.now().isoformat()
        recalls = [Accesses([(ids[2], 0)], "q", now)] * 3 + [Accesses([(ids[5], 0)], "q", now)]
        await service.stores.memories.record_accesses(recalls)
        await service.embed_pending()
    order = [int(text.split()[2]) for text in _texts(state)]
    assert order == [2, 5, 11, 10, 9, 8, 7, 6, 4, 3, 1, 0]
    assert [len(batch) for batch in _batches(state)] == [4, 4, 4]


async def test_a_memory_a_recall_found_without_a_vector_goes_to_the_front(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    settings = _settings(tmp_path, url, embedding_batch_size=3, embedding_concurrency=1)
    async with open_cortex(settings, clock=clock, background=False) as service:
        old = (
            await service.memories.remember(
                RememberRequest(content="the boiler was serviced by Kowalski")
            )
        ).id
        await _remember(service, 9)
        assert service.engines.indexer is not None
        service.engines.indexer._tracked.clear()  # another process wrote them: no fresh path here
        result = await service.memories.recall(RecallRequest(query="who serviced the boiler"))
        assert result.memories[0].id == old  # found by its words, without a vector
        before = len(state.requests)
        await service.embed_pending()
    first_batch = state.requests[before]["input"]
    assert first_batch[0] == "the boiler was serviced by Kowalski"
    assert sum(len(body["input"]) for body in state.requests[before:]) == 10  # each once


async def test_a_batch_refused_as_too_large_is_split_and_the_smaller_size_kept(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, caplog: Any
) -> None:
    url, state = stub
    state.max_inputs = 5
    settings = _settings(tmp_path, url, embedding_batch_size=16, embedding_concurrency=1)
    caplog.set_level(logging.WARNING)
    async with open_cortex(settings, clock=clock, background=False) as service:
        ids = await _remember(service, 40)
        assert await service.embed_pending() == len(ids)
        assert await _vectors(service) == len(ids)
        assert service.engines.embeddings.providers[0].batch_size == 4  # 16, 8, then 4 fits
    assert state.refused.count(400) == 2  # it learnt once: one refusal per size tried
    sizes = [len(batch) for batch in _batches(state)]
    assert max(sizes) <= 5 and sum(sizes) == len(ids)
    warned = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert any("sending 8 per request from now on" in line for line in warned), warned
    assert any("sending 4 per request from now on" in line for line in warned), warned


async def test_a_busy_provider_gets_fewer_requests_and_no_memory_is_lost(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, caplog: Any
) -> None:
    url, state = stub
    state.max_concurrent, state.latency_s = 1, 0.2  # a second request at once gets HTTP 429
    settings = _settings(tmp_path, url, embedding_batch_size=5, embedding_concurrency=4)
    caplog.set_level(logging.WARNING)
    async with open_cortex(settings, clock=clock, background=False) as service:
        for health in service.engines.embeddings.health.values():
            health.base_cooldown_s = 0.1  # the breaker may open on a burst of 429s
        ids = await _remember(service, 40)
        assert service.engines.indexer is not None
        failures = 0
        for _ in range(200):  # what the background loop does, without its waits
            try:
                await service.embed_pending()
                break
            except ProviderError:
                failures += 1
                await asyncio.sleep(0.1)
        assert await _vectors(service) == len(ids)
        assert service.engines.indexer.report()["requests_in_flight_limit"]["openai"] <= 2
    assert failures >= 1 and 429 in state.refused
    assert sorted(set(_texts(state))) == sorted(
        f"fact number {i} about topic {i}" for i in range(40)
    )
    served = [text for batch in _batches(state) for text in batch]
    assert len(served) == len(ids) == len(set(served))  # each once: refused ones were retried
    assert any(
        "answered busy" in r.getMessage() and "(was 4)" in r.getMessage() for r in caplog.records
    )


async def test_the_indexer_blocks_neither_remember_nor_recall(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    settings = _settings(tmp_path, url, embedding_batch_size=50, embedding_concurrency=2)
    async with open_cortex(settings, clock=clock, background=True) as service:
        assert service.engines.indexer is not None
        service.engines.indexer.settle_s = 0.0
        service.start_warm_up()
        await _remember(service, 20, prefix="warm")
        assert await _wait_for(lambda: _done(service, 20), 60.0)
        # the provider now holds every request of nothing but bulk notes (the indexer's) until
        # released; a recall's own request (its query and a few memories) is answered
        state.hold = _only_bulk
        await _remember(service, 400, prefix="bulk")
        assert await _wait_for(_holding(state), 60.0)
        # a remember or recall that waited behind an indexer request would wait for ever:
        # the deadline only bounds that hang, it is no speed limit
        for n in range(5):
            await asyncio.wait_for(
                service.memories.remember(RememberRequest(content=f"busy note {n}")), _HANG_S
            )
            result = await asyncio.wait_for(
                service.memories.recall(RecallRequest(query="number 7 of the bulk")), _HANG_S
            )
            # nothing failed or waited; most bulk notes have no vector yet, which it says
            assert result.memories, result.meta
            assert [d.split("%")[1] for d in result.meta.degraded] == [_WAITING_NOTE], result.meta
            assert result.meta.channels == ["text", "vector"]  # its query was embedded
        assert state.held > 0  # all of it happened while the indexer waited on the provider
        state.release.set()


_WAITING_NOTE = " of the text hits so far: ranked by text until the indexer catches up"
_HANG_S = 60.0  # far past any remember or recall on a loaded machine; bounds a hang


def _only_bulk(texts: list[str]) -> bool:
    return all(text.startswith("bulk ") for text in texts)


def _holding(state: StubState) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return state.held > 0

    return check


async def _done(service: CortexService, count: int) -> bool:
    return await _vectors(service) >= count


async def test_an_older_database_gets_its_backlog_queued_when_it_migrates(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    async with Database(path):
        pass
    conn = sqlite3.connect(path)  # back to the schema before the queue
    for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'trg_queue_%'"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE embedding_queue")
    sqlite_back_to(conn, SCHEMA_VERSION, EMBEDDING_QUEUE_MIGRATION - 1)
    for n, forgotten in ((1, None), (2, None), (3, "2026-01-02")):
        conn.execute(
            "INSERT INTO memories (id, agent_id, layer, category, content, content_hash,"
            " created_at, updated_at, forgotten_at) VALUES (?, 'default', 'core', 'fact', ?, ?,"
            " '2026-01-01', '2026-01-01', ?)",
            (f"m{n}", f"memory {n}", f"h{n}", forgotten),
        )
    conn.execute(
        "INSERT INTO memory_vectors (memory_id, model, dim, vector, updated_at)"
        " VALUES ('m1', 'stub-embed', 2, x'0000803f00000000', '2026-01-01')"
    )
    conn.execute(f"PRAGMA user_version = {EMBEDDING_QUEUE_MIGRATION - 1}")
    conn.commit()
    conn.close()

    async with Database(path) as db:
        vectors = VectorStore(db)
        assert [p.memory_id for p in await vectors.pending("stub-embed", 10)] == ["m2"]
        assert await vectors.requeue_other_models("another-model") == 1  # m1's vector
        assert [p.memory_id for p in await vectors.pending("another-model", 10)] == ["m2", "m1"]


async def test_a_retry_after_from_a_busy_provider_reaches_the_indexer(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    state.max_concurrent, state.retry_after_s = 0, 7.5  # every request: 429, retry in 7.5 s
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        await _remember(service, 3)
        with pytest.raises(ProviderBusy) as raised:
            await service.embed_pending()
        assert raised.value.retry_after_s == 7.5 and "HTTP 429" in raised.value.message
        assert (
            service.engines.indexer is not None and service.engines.indexer.last_error is not None
        )
        assert await service.stores.vectors.queued() == 3  # all still waiting
