"""SQLite's small reads (a recall's candidate rows, its vector pool's filter check, the keepers'
marks, the names and beliefs of what it returns) run on the event loop's own connection, with
no trip to a reader's thread; they give what a reader gives, and a lock held elsewhere sends
them to a reader, which waits, while the loop goes on serving. A recall starts its slow parts
first: the query's embedding request, then the full-text search on a reader's thread, and
only then looks up the page a question asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.stages import entity_cache
from cortex_mcp.service import memories as service_memories
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from cortex_mcp.store.connection import sqlite_module
from tests.conftest import FakeClock, stub_settings

pytestmark = pytest.mark.anyio

FACTS = [
    "The user's sister Anna lives in Lisbon and teaches piano",
    "The user prefers green tea over coffee in the morning",
    "The user's cat Luna is afraid of the vacuum cleaner",
    "The user runs the Lisbon half marathon every October",
    "Anna's piano students play a recital in December",
]
QUERIES = ["Where does Anna live?", "what does the user drink", "Luna the cat", "marathon"]


async def _remembered(svc: Any, facts: list[str]) -> None:
    """`facts` remembered, linked and embedded."""
    for fact in facts:
        await svc.memories.remember(RememberRequest(content=fact))
    await svc.drain()
    await svc.embed_pending()


async def _recalls(svc: Any) -> list[list[tuple[str, float]]]:
    answers = []
    for query in QUERIES:
        result = await svc.memories.recall(RecallRequest(query=query, max_results=3))
        answers.append([(m.id, m.score) for m in result.memories])
    return answers


async def test_a_recall_reads_its_small_reads_without_a_trip_and_finds_the_same(
    tmp_path: Path, embeddings_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_cortex(
        stub_settings(tmp_path / "brain.db", embeddings_url), clock=clock
    ) as svc:
        await _remembered(svc, FACTS)
        db = svc.stores.db
        await _recalls(svc)  # warm: settled, vectors loaded
        trips: list[str] = []
        fetchall = db.fetchall

        async def counted(sql: str, params: Any = ()) -> list[Any]:
            trips.append(sql)
            return await fetchall(sql, params)

        monkeypatch.setattr(db, "fetchall", counted)
        on_loop = await _recalls(svc)
        trips_on_loop = list(trips)
        monkeypatch.setattr(db, "_on_loop", None)  # every read by a reader's thread
        by_readers = await _recalls(svc)
        monkeypatch.undo()  # the connection is closed with the others
    assert on_loop == by_readers and all(on_loop)
    small = ("SELECT id, agent_id, layer", "SELECT m.id FROM memories m WHERE m.id IN", "MAX(seq)")
    assert [s for s in trips_on_loop if s.startswith(small) or "MAX(seq)" in s] == [], trips_on_loop
    assert [s for s in trips if s.startswith(small)], trips  # what a reader read without it
    # what is left for the readers: the text search, and the slots a question asks about
    # ("where does Anna live?": whose homes are known), which grow with what the agent knows
    left = [s for s in trips_on_loop if "memories_fts MATCH" not in s]
    assert all("FROM memory_slots" in s for s in left), left
    assert sum("memories_fts MATCH" in s for s in trips_on_loop) == len(QUERIES), trips_on_loop


async def test_a_recall_asks_the_writer_nothing_and_still_sees_new_vectors(
    tmp_path: Path, embeddings_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vector index looks for new vectors by their watermark, read on the loop: not by the
    store's commit counter, which only the writer's connection reads comparably (a trip that
    queues behind every write in progress, an import's batches included). What another
    server on the same file embeds is searched by the next recall all the same."""
    settings = stub_settings(tmp_path / "brain.db", embeddings_url)
    async with open_cortex(settings, clock=clock) as svc:
        await _remembered(svc, FACTS)
        await _recalls(svc)  # warm: settled, vectors loaded
        db, index = svc.stores.db, svc.memories.searcher.index
        monkeypatch.setattr(entity_cache, "RECHECK_S", 3600.0)  # its own, timed, check
        asked: list[int] = []
        data_version = db.data_version

        async def counted() -> int:
            asked.append(1)
            return await data_version()

        monkeypatch.setattr(db, "data_version", counted)
        await _recalls(svc)
        assert asked == []
        agent = svc.settings.agent_id
        held = index.describe(agent)["vectors"]
        async with open_cortex(settings, clock=clock) as other:
            await other.memories.remember(RememberRequest(content="Anna moved to Porto"))
            await other.drain()
            await other.embed_pending()
        await svc.memories.recall(RecallRequest(query="Anna Porto", max_results=3))
        monkeypatch.undo()
        assert index.describe(agent)["vectors"] == held + 1


class _LockedOnce:
    """The event loop's connection as SQLite answers it when another connection holds a lock
    it needs (WAL readers meet this in a recovery, or beside a connection in exclusive
    locking mode): the first statement refused at once, as busy_timeout 0 refuses it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.refused = 0

    def execute(self, sql: str, params: Any = ()) -> Any:
        if not self.refused:
            self.refused += 1
            raise sqlite_module().OperationalError("database is locked")
        return self.raw.execute(sql, params)


async def test_a_small_read_the_loop_cannot_start_goes_to_a_reader(
    settings: Settings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_cortex(settings, clock=clock) as svc:
        remembered = await svc.memories.remember(RememberRequest(content="Kept while locked"))
        db = svc.stores.db
        locked = _LockedOnce(db._on_loop._conn)
        trips: list[str] = []
        fetchall = db.fetchall

        async def counted(sql: str, params: Any = ()) -> list[Any]:
            trips.append(sql)
            return await fetchall(sql, params)

        monkeypatch.setattr(db._on_loop, "_connection", locked)
        monkeypatch.setattr(db, "fetchall", counted)
        found = await svc.stores.memories.get_many([remembered.id])
        again = await svc.stores.memories.get_many([remembered.id])
        monkeypatch.undo()
    assert list(found) == list(again) == [remembered.id]
    assert locked.refused == 1 and len(trips) == 1  # the refused read went to a reader, once


async def test_the_text_search_and_the_embedding_are_under_way_before_the_page_lookup(
    tmp_path: Path, embeddings_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_cortex(
        stub_settings(tmp_path / "brain.db", embeddings_url), clock=clock
    ) as svc:
        await _remembered(svc, FACTS)
        await svc.memories.recall(RecallRequest(query="Tell me about Anna"))  # warm
        events: list[str] = []
        db = svc.stores.db
        fetchall, find_page = db.fetchall, service_memories.find_page
        embedder = svc.memories.searcher.embeddings.providers[0]
        post = embedder._client.post

        async def counted_fetchall(sql: str, params: Any = ()) -> list[Any]:
            if "memories_fts MATCH" in sql:
                events.append("text search")
            return await fetchall(sql, params)

        async def counted_find_page(*args: Any) -> Any:
            events.append("page lookup")
            return await find_page(*args)

        async def counted_post(*args: Any, **kwargs: Any) -> Any:
            events.append("embedding")
            return await post(*args, **kwargs)

        monkeypatch.setattr(db, "fetchall", counted_fetchall)
        monkeypatch.setattr(service_memories, "find_page", counted_find_page)
        monkeypatch.setattr(embedder._client, "post", counted_post)
        result = await svc.memories.recall(RecallRequest(query="Tell me about Anna"))
        monkeypatch.undo()
    assert result.meta.entity is not None and result.meta.entity.name == "Anna"
    assert events[:3] == ["embedding", "text search", "page lookup"], events
