"""One text split on both stores (issue 17). A memory the lifecycle rewrites (merge, compress, a summary's new text) is indexed as
remember indexes it, on both stores: on PostgreSQL its `tsv` and `doc_len` are the ones
remember stores for that content, never the `memories_fts` view's SQL split (which keeps
'ё' and Greek accents that the query split drops, so such words found nothing). The memory table's text filter is split in Python too, and
PostgreSQL refuses text written through the view."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import Layer, LifecycleAction, NewMemory, SearchFilters
from cortex_mcp.search.text import build_query, quote
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.browse import TableQuery
from cortex_mcp.store.lifecycle_phases import action_key
from cortex_mcp.store.memories import LayerTtl

pytestmark = pytest.mark.anyio

NOW = "2026-03-01T00:00:00+00:00"
# words whose SQL split differed from the Python split ('ё' kept, Greek accents kept)
REWRITTEN = "Ёж и йод: Ελληνικά μαθήματα την Τρίτη"
WORDS = ["ёж", "Ελληνικά", "μαθήματα", "йод"]


@pytest.fixture
async def stores(backend_settings: Settings) -> AsyncIterator[Any]:
    async with open_database(backend_settings) as db:
        classes = store_classes(db)
        memories = classes.memories(db, LayerTtl(timedelta(hours=24), timedelta(days=30)))
        yield db, memories, classes.lifecycle(db, memories)


async def _remember(
    memories: Any, content: str, layer: Layer = Layer.core, agent: str = "a"
) -> str:
    new = NewMemory(agent_id=agent, content=content, layer=layer)
    return str((await memories.remember(new, NOW)).memory.id)


async def _found_by_each_word(memories: Any, memory_id: str) -> list[str]:
    """The words of WORDS whose text search finds the memory."""
    filters = SearchFilters(agent_id="a", now=NOW, include_superseded=True)
    found = []
    for word in WORDS:
        hits = await memories.text_search(build_query(word).match, filters, 10)
        if memory_id in [hit_id for hit_id, _ in hits]:
            found.append(word)
    return found


async def _index_of(db: Any, memory_id: str) -> tuple[Any, ...]:
    if getattr(db, "url", None) is None:  # SQLite: the FTS5 row's text
        row = await db.fetchone(
            "SELECT f.text FROM memories_fts f JOIN memories m ON m.seq = f.rowid WHERE m.id = ?",
            (memory_id,),
        )
        return tuple(row) if row is not None else ()
    row = await db.fetchone("SELECT tsv::text, doc_len FROM memories WHERE id = ?", (memory_id,))
    return tuple(row)


async def _remembered_index(db: Any, memories: Any, content: str) -> tuple[Any, ...]:
    """The index remember stores for `content` (another agent's memory)."""
    return await _index_of(db, await _remember(memories, content, agent="b"))


async def _apply(lifecycle: Any, action: LifecycleAction, new: NewMemory | None) -> Any:
    run_id = await lifecycle.start_run("all", NOW, [action], NOW)
    news = {action_key(action): new} if new is not None else {}
    return await lifecycle.apply_phase(run_id, 0, [action], NOW, new_memories=news)


async def test_a_merged_memory_is_found_by_words_the_sql_split_kept_apart(stores: Any) -> None:
    db, memories, lifecycle = stores
    ids = [await _remember(memories, f"Hedgehog note {n}") for n in range(2)]
    action = LifecycleAction(phase="merge", kind="merge", agent_id="a", ids=ids, llm=True)
    result = await _apply(lifecycle, action, NewMemory(agent_id="a", content=REWRITTEN))
    merged = result.created[action_key(action)]
    assert await _found_by_each_word(memories, merged) == WORDS
    assert await _index_of(db, merged) == await _remembered_index(db, memories, REWRITTEN)


async def test_a_compressed_summary_is_indexed_as_remember_indexes_it(stores: Any) -> None:
    db, memories, lifecycle = stores
    summary = await _remember(memories, "Summary of February: nothing yet")
    olds = [await _remember(memories, f"Old note {n}", Layer.archive) for n in range(2)]
    action = LifecycleAction(
        phase="compress", kind="compress", agent_id="a", ids=olds, into=summary, period="2026-02"
    )
    result = await _apply(lifecycle, action, NewMemory(agent_id="a", content=REWRITTEN))
    assert result.created[action_key(action)] == summary
    assert await _found_by_each_word(memories, summary) == WORDS
    assert await _index_of(db, summary) == await _remembered_index(db, memories, REWRITTEN)


async def test_a_rewritten_summary_is_indexed_as_remember_indexes_it(stores: Any) -> None:
    db, memories, lifecycle = stores
    summary = await _remember(memories, "Summary: the staging database runs on port 5433")
    await lifecycle.rewrite_summary(summary, REWRITTEN, {"covers": []}, NOW)
    assert await _found_by_each_word(memories, summary) == WORDS
    staging = SearchFilters(agent_id="a", now=NOW)
    assert await memories.text_search(build_query("staging").match, staging, 10) == []
    assert await _index_of(db, summary) == await _remembered_index(db, memories, REWRITTEN)


async def test_the_memory_table_filter_splits_words_as_the_index_does(stores: Any) -> None:
    db, memories, _ = stores
    wanted = await _remember(memories, REWRITTEN)
    await _remember(memories, "Hedgehogs and iodine, in English")
    browse = store_classes(db).browse(db)
    for word in [*WORDS, "ЁЖ ЙОД"]:
        match = " AND ".join(quote(term) for term in build_query(word).terms)
        page = await browse.page(TableQuery(agent_id="a", match=match), count=True)
        assert [m.id for m in page.memories] == [wanted], word
        assert page.total == 1


async def test_postgresql_refuses_text_written_through_the_fts_view(
    backend_settings: Settings,
) -> None:
    if backend_settings.database_url is None:
        pytest.skip("SQLite's FTS5 table takes text: it is SQLite's index")
    async with open_database(backend_settings) as db:
        memories = store_classes(db).memories(db, LayerTtl(timedelta(hours=24), timedelta(days=30)))
        seq = await db.scalar(
            "SELECT seq FROM memories WHERE id = ?", (await _remember(memories, "x y"),)
        )

        def via_view(conn: Any) -> None:
            conn.execute("INSERT INTO memories_fts(rowid, text) VALUES (?, ?)", (seq, "ёж"))

        with pytest.raises(Exception, match="memories_fts takes no text"):
            await db.transact(via_view)
        assert await db.fetchone(
            "SELECT tsv::text, doc_len FROM memories WHERE seq = ?", (seq,)
        ) == ("'x':1 'y':2", 2)
