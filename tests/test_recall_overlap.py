"""A recall starts its slow parts before it does its quick ones: the query's embedding request
leaves before the recall reads anything, and the text channel's full-text search is under way
on a database thread while the recall looks up the page a question asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import memories as service_memories
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from tests.conftest import FakeClock, stub_settings

pytestmark = pytest.mark.anyio

FACTS = [
    "My sister Anna lives in Lisbon and teaches piano",
    "Anna's piano students play a recital in December",
    "The user prefers green tea over coffee in the morning",
]


async def test_the_text_search_and_the_embedding_are_under_way_before_the_page_lookup(
    tmp_path: Path, embeddings_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_cortex(
        stub_settings(tmp_path / "brain.db", embeddings_url), clock=clock
    ) as svc:
        for fact in FACTS:
            await svc.memories.remember(RememberRequest(content=fact))
        await svc.drain()
        await svc.embed_pending()
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
