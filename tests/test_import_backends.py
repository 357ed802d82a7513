"""An import on both stores: rows numbered as each store numbers them (SQLite's import gives
its rows their `seq` under the write lock; PostgreSQL's identity column numbers them), every
imported memory found by text, and the writes after an import still get their own numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RememberRequest, SearchRequest

pytestmark = pytest.mark.anyio
WORKSPACE = Path(__file__).parent / "fixtures" / "openclaw"


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    return backend_settings


async def test_an_import_is_searchable_idempotent_and_later_writes_still_land(
    service: CortexService,
) -> None:
    first = await service.exchange.import_path(str(WORKSPACE))
    assert first.memories == 19 and first.relations == 2
    pages = [page async for page in service.stores.exports.memory_pages(None, 100)]
    imported = [memory for page in pages for memory in page]
    assert len(imported) == 19
    for memory in imported[:5]:  # each one's FTS row was written with it
        words = " ".join(memory["content"].split()[:3])
        found = await service.memories.search(SearchRequest(query=words, limit=50))
        assert memory["id"] in {m.id for m in found}, memory["content"]

    later = await service.memories.remember(
        RememberRequest(content="After the import: the user moved to Lisbon in May")
    )
    assert not later.deduplicated
    found = await service.memories.search(SearchRequest(query="moved to Lisbon", limit=5))
    assert [m.id for m in found][:1] == [later.id]

    again = await service.exchange.import_path(str(WORKSPACE))
    assert again.memories == 0 and again.existing == 19
    assert (await service.stores.memories.counts())["total"] == 20
