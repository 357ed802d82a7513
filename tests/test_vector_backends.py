"""Vector backends by size: exact numpy, the IVF index past the memory budget, and sqlite-vec.

Real parts: a SQLite file, the openai SDK against the local embedding stub. A budget of 0 MB
forces the IVF path on a small database; the same checks run on every backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from cortex_mcp.config import Settings
from cortex_mcp.errors import StorageError
from cortex_mcp.models import SearchFilters
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.ivf import IvfIndex, quantize
from cortex_mcp.search.partitions import ExactPartition
from cortex_mcp.search.vector import IndexNotReady
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    UpdateRequest,
)
from tests.conftest import FACTS, FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState

pytestmark = pytest.mark.anyio

# (setting, the backend a search reports)
BACKENDS = [
    ({"vector_backend": "auto"}, "numpy"),
    ({"vector_backend": "auto", "numpy_max_mb": 0}, "ivf"),
    ({"vector_backend": "vec0"}, "vec0"),
]


def _settings(tmp_path: Path, url: str, search: dict[str, object]) -> Settings:
    return stub_settings(tmp_path / "brain.db", url, search=search)


@pytest.fixture(params=BACKENDS, ids=[backend for _, backend in BACKENDS])
async def on_each_backend(
    request: pytest.FixtureRequest, tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> AsyncIterator[tuple[CortexService, str]]:
    """A service on each backend's settings, and the backend its searches must report."""
    search, backend = request.param
    settings = _settings(tmp_path, stub[0], search)
    async with open_cortex(settings, clock=clock, background=False) as service:
        yield service, backend


async def _vector_hits(service: CortexService, query: str, agent: str) -> tuple[list[str], str]:
    """The vector channel alone (no text channel to hide what it returns)."""
    filters = SearchFilters(agent_id=agent, now="2030-01-01T00:00:00Z")
    vector = (await service.engines.embeddings.embed([query])).vectors[0]
    model = service.engines.embeddings.primary.model_key
    index = service.engines.searcher.index
    try:
        hits, backend = await index.search(vector, model, 10, filters)
    except IndexNotReady:  # being built in the background: wait, as a later recall would
        await index.settled()
        hits, backend = await index.search(vector, model, 10, filters)
    return [memory_id for memory_id, _ in hits], backend


async def _filler(service: CortexService, n: int, agent: str | None = None) -> None:
    for i in range(n):
        await service.memories.remember(
            RememberRequest(
                content=f"Filler memory number {i} about gardening and tomatoes", agent_id=agent
            )
        )


async def test_the_backend_follows_the_budget_and_finds_the_right_memory(
    on_each_backend: tuple[CortexService, str],
) -> None:
    service, backend = on_each_backend
    ids = [(await service.memories.remember(RememberRequest(content=fact))).id for fact in FACTS]
    await _filler(service, 60)
    await service.embed_pending()
    await _vector_hits(service, "firewall", "default")  # the index is ready
    report = await service.memories.search_debug(
        SearchDebugRequest(query="firewall blocks port", max_results=5)
    )
    assert report["providers"]["vector_backend"] == backend
    assert report["hits"][0]["id"] == ids[1]
    hits, reported = await _vector_hits(service, "golden retriever adopted", "default")
    assert reported == backend and hits[0] == ids[2]


async def test_the_index_follows_remember_forget_restore_and_purge(
    on_each_backend: tuple[CortexService, str],
) -> None:
    service, backend = on_each_backend
    await _filler(service, 30)
    await service.embed_pending()
    assert (await _vector_hits(service, "anything at all", "default"))[1] == backend  # built

    fact = await service.memories.remember(
        RememberRequest(content=FACTS[2])
    )  # after the index was built
    await service.embed_pending()
    assert (await _vector_hits(service, "golden retriever adopted", "default"))[0][0] == fact.id

    await service.memories.forget(ForgetRequest(memory_id=fact.id))
    assert fact.id not in (await _vector_hits(service, "golden retriever adopted", "default"))[0]

    restored = await service.memories.remember(
        RememberRequest(content=FACTS[2])
    )  # the same content again revives it
    assert restored.id == fact.id
    assert (await _vector_hits(service, "golden retriever adopted", "default"))[0][0] == fact.id

    await service.memories.forget(ForgetRequest(memory_id=fact.id, purge=True))
    assert fact.id not in (await _vector_hits(service, "golden retriever adopted", "default"))[0]


async def test_one_agents_recall_never_returns_another_agents_memory(
    on_each_backend: tuple[CortexService, str],
) -> None:
    service, backend = on_each_backend
    mine = {
        (await service.memories.remember(RememberRequest(content=fact, agent_id="a"))).id
        for fact in FACTS[:2]
    }
    theirs = {
        (await service.memories.remember(RememberRequest(content=fact, agent_id="b"))).id
        for fact in FACTS
    }
    await _filler(service, 40, agent="b")
    await service.embed_pending()
    for query in FACTS:
        hits, reported = await _vector_hits(service, query, "a")
        assert reported == backend
        assert set(hits) <= mine, query
        recalled = await service.memories.recall(
            RecallRequest(query=query, agent_id="a", max_results=10)
        )
        assert {m.id for m in recalled.memories} <= mine
    shared = await service.memories.remember(
        RememberRequest(content="Team note: the staging VPS moved to Osaka", agent_id="b")
    )
    await service.memories.update_memory(shared.id, UpdateRequest(shared=True, agent_id="b"))
    await service.embed_pending()
    found = await service.memories.recall(
        RecallRequest(query="staging VPS Osaka", agent_id="a", include_shared=True)
    )
    assert shared.id in {m.id for m in found.memories}
    assert theirs.isdisjoint({m.id for m in found.memories})


async def test_another_process_writes_and_purges_are_seen(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, _ = stub
    settings = _settings(tmp_path, url, {"numpy_max_mb": 0})
    async with open_cortex(settings, clock=clock, background=False) as reader:
        await _filler(reader, 20)
        await reader.embed_pending()
        assert (await _vector_hits(reader, "tomatoes", "default"))[1] == "ivf"
        async with open_cortex(settings, clock=clock, background=False) as writer:
            fact = await writer.memories.remember(RememberRequest(content=FACTS[0]))
            await writer.embed_pending()
            assert (await _vector_hits(reader, FACTS[0], "default"))[0][0] == fact.id
            await writer.memories.forget(ForgetRequest(memory_id=fact.id, purge=True))
        assert fact.id not in (await _vector_hits(reader, FACTS[0], "default"))[0]


def test_ivf_finds_what_an_exact_scan_finds() -> None:
    """Recall@10 of the IVF index against the exact top 10, on clustered unit vectors."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((50, 64)).astype(np.float32)
    vectors = centres[rng.integers(0, 50, 20_000)] + rng.standard_normal((20_000, 64)).astype(
        np.float32
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"m{i}" for i in range(len(vectors))]
    index = IvfIndex.build(ids, *quantize(vectors))
    queries = vectors[rng.choice(len(vectors), 50, replace=False)]
    queries = queries + 0.05 * rng.standard_normal(queries.shape).astype(np.float32)
    found = 0
    for query in queries:
        exact = {ids[i] for i in np.argsort(-(vectors @ query))[:10]}
        found += len(exact & {memory_id for memory_id, _ in index.search(query, 10)})
    assert found / (10 * len(queries)) >= 0.9
    index.remove(["m0"])
    index.upsert("new", vectors[1])
    hits = [memory_id for memory_id, _ in index.search(vectors[1], 5)]
    assert "new" in hits and "m0" not in hits and len(index) == len(ids)


async def _similarity(service: CortexService, query: str, memory_id: str) -> float:
    """The cosine the vector index gives this memory for `query`."""
    filters = SearchFilters(agent_id="default", now="2030-01-01T00:00:00Z")
    vector = (await service.engines.embeddings.embed([query])).vectors[0]
    model = service.engines.embeddings.primary.model_key
    await _vector_hits(service, query, "default")  # built, if it was not
    hits, _ = await service.engines.searcher.index.search(vector, model, 50, filters)
    return dict(hits)[memory_id]


async def _stored_similarity(service: CortexService, query: str, memory_id: str) -> float:
    """The cosine of `query` with the memory's vector as the table holds it now."""
    vector = (await service.engines.embeddings.embed([query])).vectors[0]
    model = service.engines.embeddings.primary.model_key
    stored = await service.stores.vectors.vectors_of([memory_id], model, len(vector))
    return float(np.frombuffer(stored[memory_id], dtype=np.float32) @ vector)


async def test_a_summary_embedded_again_after_a_purge_is_searched_by_its_new_vector(
    on_each_backend: tuple[CortexService, str], clock: FakeClock
) -> None:
    """Purging a memory a summary quotes rewrites the summary and drops its vector; the
    indexer embeds the new text. The summary's vector was the newest row, so the new one
    may land on the same rowid: the index must still hold the new vector, not the old one
    (which was made from the purged text)."""
    service, _ = on_each_backend
    secret = await service.memories.remember(
        RememberRequest(content="The safe stands behind painting 31-7-12", layer="archive")
    )
    await service.memories.remember(
        RememberRequest(content="The bike was repaired in March", layer="archive")
    )
    await service.embed_pending()
    clock.advance(days=95)
    report = await service.lifecycle.run()
    summary_id = next(iter(report.created.values()))
    await service.embed_pending()
    query = "safe stands behind painting"
    before = await _similarity(service, query, summary_id)
    assert before > 0.3  # the summary quotes the secret: close to the query

    await service.memories.forget(ForgetRequest(memory_id=secret.id, purge=True))
    assert await service.embed_pending() == 1  # the summary's new text

    after = await _stored_similarity(service, query, summary_id)
    assert after < before - 0.2
    assert await _similarity(service, query, summary_id) == pytest.approx(after, abs=0.02)


async def test_a_memory_waiting_for_its_vector_is_ranked_by_its_text_not_halved(
    on_each_backend: tuple[CortexService, str], clock: FakeClock
) -> None:
    """Until the indexer reaches a memory it has no cosine: it must not lose to an indexed
    memory with fewer of the query's words because its missing channel counted as 0."""
    service, _ = on_each_backend
    await _filler(service, 20)
    indexed = await service.memories.remember(
        RememberRequest(content="The firewall rules were reviewed with the router vendor")
    )
    await service.embed_pending()
    waiting = await service.memories.remember(
        RememberRequest(content="Firewall blocks port 8443 on the office router since Monday")
    )
    query = "firewall blocks port 8443 router"
    filters = SearchFilters(agent_id="default", now="2030-01-01T00:00:00Z")
    now = clock.now()
    searcher = service.engines.searcher
    text = await searcher.search(query, filters, 5, now, mode="text")
    hybrid = await searcher.search(query, filters, 5, now, mode="hybrid")
    assert hybrid.ranked[0].cosine is None  # waiting for the indexer
    assert text.ranked[0].memory_id == waiting.id
    assert [c.memory_id for c in hybrid.ranked[:2]] == [waiting.id, indexed.id]


async def test_while_most_text_hits_wait_for_vectors_recall_ranks_by_text_and_says_so(
    on_each_backend: tuple[CortexService, str], clock: FakeClock
) -> None:
    service, _ = on_each_backend
    await service.memories.remember(RememberRequest(content="The router firewall was replaced"))
    await service.embed_pending()
    for n in range(6):  # imported in bulk: no vector yet
        await service.memories.remember(
            RememberRequest(content=f"Router firewall rule {n} blocks port {8000 + n}")
        )
    await _vector_hits(service, "firewall", "default")  # the index is built
    filters = SearchFilters(agent_id="default", now="2030-01-01T00:00:00Z")
    searcher = service.engines.searcher
    query = "which router firewall rule blocks port 8003"
    text = await searcher.search(query, filters, 5, clock.now(), mode="text")
    hybrid = await searcher.search(query, filters, 5, clock.now(), mode="hybrid")
    assert [c.memory_id for c in hybrid.ranked] == [c.memory_id for c in text.ranked]
    assert hybrid.degraded == [
        "vectors for 14% of the text hits so far: ranked by text until the indexer catches up"
    ]


@pytest.mark.parametrize("backend", ["auto", "vec0 not loadable"])
async def test_a_vector_another_process_saves_is_searched_by_the_next_recall(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock, backend: str
) -> None:
    """The index takes in what changed while the query is embedded, before it searches (also
    when sqlite-vec was asked for but cannot load, and the in-process index serves)."""
    settings = _settings(tmp_path, stub[0], {"vector_backend": backend.split()[0]})
    async with open_cortex(settings, clock=clock, background=False) as reader:
        if backend != "auto":
            reader.engines.searcher.index.vectors.db.vec_loaded = False
        await _filler(reader, 5)
        await reader.embed_pending()
        await reader.memories.recall(RecallRequest(query="gardening"))  # the index is loaded
        async with open_cortex(settings, clock=clock, background=False) as writer:
            fact = await writer.memories.remember(RememberRequest(content=FACTS[1]))
            await writer.embed_pending()
        report = await reader.memories.search_debug(SearchDebugRequest(query=FACTS[1]))
        [hit] = [h for h in report["hits"] if h["id"] == fact.id]
        assert hit["vector"]["rank"] is not None  # found by the vector channel itself
        recalled = await reader.memories.recall(RecallRequest(query=FACTS[1]))
        assert recalled.memories[0].id == fact.id


async def test_a_recall_that_fails_before_its_search_leaves_no_embedding_running(
    service_and_stub: tuple[CortexService, StubState], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query's embedding starts before new facts are settled; when settling fails, the
    recall says so and the embedding (here one that never answers) is stopped."""
    service, state = service_and_stub
    await service.memories.remember(RememberRequest(content=FACTS[0]))
    await service.embed_pending()

    async def broken(agent_id: str, *, batches: int | None = 1) -> int:
        raise StorageError("the disk went away; nothing was changed")

    monkeypatch.setattr(service.memories.validity, "settle", broken)
    state.mode = "hang"
    try:
        with pytest.raises(StorageError):
            await service.memories.recall(RecallRequest(query="rental apartments"))
        started = [t for t in asyncio.all_tasks() if t.get_name() == "cortex-embed-query"]
        # a cancelled task ends within a few steps of the loop (a bound on a hang, not a speed)
        if started:
            await asyncio.wait(started, timeout=30)
        assert started and all(t.cancelled() for t in started)
    finally:
        state.recover()


@pytest.fixture
async def service_and_stub(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> AsyncIterator[tuple[CortexService, StubState]]:
    async with open_cortex(_settings(tmp_path, stub[0], {}), clock=clock, background=False) as s:
        yield s, stub[1]


def test_the_exact_pool_keeps_every_vector_tied_with_its_last_the_older_first() -> None:
    """However few the pool, which of a tie makes the cut is never the partition's choice."""
    partition = ExactPartition(2)
    scores = [0.1, 0.5, 0.9, 0.5, 0.5, 0.5, 0.2]  # the query is (1, 0): a vector's x
    for n, x in enumerate(scores):
        partition.upsert(f"m{n}", np.array([x, (1 - x * x) ** 0.5], dtype=np.float32))
    query = np.array([1.0, 0.0], dtype=np.float32)
    for want in range(1, 8):
        found = [memory_id for memory_id, _ in partition.search(query, want)]
        best = ["m2", "m1", "m3", "m4", "m5", "m6", "m0"]
        assert found[:want] == best[:want]
    assert [m for m, _ in partition.search(query, 2)] == ["m2", "m1", "m3", "m4", "m5"]


async def test_when_the_filters_reject_the_nearest_the_next_nearest_are_found(
    on_each_backend: tuple[CortexService, str],
) -> None:
    """The first pool is small on the exact backend: when forgotten memories fill it, the
    search looks further and returns what an unfiltered search ranks next."""
    service, _ = on_each_backend
    await _filler(service, 40)
    await service.embed_pending()
    query = "gardening tomatoes filler memory"
    before, _ = await _vector_hits(service, query, "default")
    for memory_id in before[:8]:
        await service.memories.forget(ForgetRequest(memory_id=memory_id))
    after, _ = await _vector_hits(service, query, "default")
    assert len(after) == 10 and not set(after) & set(before[:8])
    assert after[:2] == before[8:10]
