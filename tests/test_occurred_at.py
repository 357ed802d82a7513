"""A memory's own time (`occurred_at`, issue 25): stored on every write (the stored time unless
the writer names it), given to rows written before by the migration, bounding searches
(`since`/`until`) and listing a period's memories (`occurred_within`), on SQLite and
PostgreSQL; the request rules for the dates a caller gives."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from starlette.testclient import TestClient

from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import Category, SearchFilters
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    FlushRequest,
    ForgetRequest,
    IngestRequest,
    ListRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
    build,
)
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.schema import SCHEMA_VERSION
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client
from tests.helpers.older_schema import postgres_back_to, sqlite_back_to

pytestmark = pytest.mark.anyio

STORED = "2026-11-01T12:00:00.000000Z"  # the FakeClock's time: when every test remembers
DIARY = {
    "2026-05-02T09:30:00Z": "Visited the science museum and saw the dinosaur exhibition",
    "2026-05-06": "Read a book called The Quiet Harbour about the museum keeper",
    "2026-05-06T21:00:00+02:00": "Watched a film about the museum night guard",
    "2026-06-14": "Went hiking near the museum of mountain life",
}


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _diary(service: CortexService, agent_id: str | None = None) -> dict[str, str]:
    """The diary remembered with its dates; content -> id."""
    ids = {}
    for when, content in DIARY.items():
        request = build(RememberRequest, content=content, occurred_at=when, agent_id=agent_id)
        ids[content] = (await service.memories.remember(request)).id
    return ids


async def _search(service: CortexService, query: str, **period: str) -> list[str]:
    found = await service.memories.search(build(SearchRequest, query=query, **period))
    return [m.content for m in found]


# ---- writes ------------------------------------------------------------------------------


async def test_a_memory_keeps_the_time_it_names_and_defaults_to_when_it_was_stored(
    service: CortexService,
) -> None:
    ids = await _diary(service)
    plain = await service.memories.remember(build(RememberRequest, content="Likes green tea"))
    store = service.memories.memories
    stored = await store.get_many([*ids.values(), plain.id])
    assert {stored[i].content: stored[i].occurred_at for i in ids.values()} == {
        DIARY["2026-05-02T09:30:00Z"]: "2026-05-02T09:30:00.000000Z",
        DIARY["2026-05-06"]: "2026-05-06T00:00:00.000000Z",
        DIARY["2026-05-06T21:00:00+02:00"]: "2026-05-06T19:00:00.000000Z",  # in UTC
        DIARY["2026-06-14"]: "2026-06-14T00:00:00.000000Z",
    }
    assert all(stored[i].created_at == STORED for i in ids.values())
    assert stored[plain.id].occurred_at == stored[plain.id].created_at == STORED


async def test_the_same_content_again_keeps_its_first_time_and_a_correction_its_own(
    service: CortexService,
) -> None:
    request = build(RememberRequest, content="Moved to Lisbon", occurred_at="2025-03-01")
    first = await service.memories.remember(request)
    again = await service.memories.remember(
        build(RememberRequest, content="Moved to Lisbon", occurred_at="2026-01-01")
    )
    assert again.deduplicated and again.id == first.id
    memory = await service.memories.memories.get(first.id)
    assert memory is not None and memory.occurred_at == "2025-03-01T00:00:00.000000Z"
    corrected = await service.memories.forget(
        ForgetRequest(memory_id=first.id, correction="Moved to Porto")
    )
    assert corrected.new_id is not None
    new = await service.memories.memories.get(corrected.new_id)
    assert new is not None and new.occurred_at == STORED


# ---- searches bounded by a period --------------------------------------------------------


async def test_since_and_until_bound_search_and_recall_on_the_memories_own_time(
    service: CortexService,
) -> None:
    await _diary(service)
    everything = await _search(service, "museum")
    assert len(everything) == 4
    may_6 = await _search(service, "museum", since="2026-05-06", until="2026-05-06")
    assert sorted(may_6) == sorted([DIARY["2026-05-06"], DIARY["2026-05-06T21:00:00+02:00"]])
    # a date-time until is exclusive; a date since is that day's first moment
    before_evening = await _search(
        service, "museum", since="2026-05-06", until="2026-05-06T19:00:00Z"
    )
    assert before_evening == [DIARY["2026-05-06"]]
    assert await _search(service, "museum", since="2026-06-01") == [DIARY["2026-06-14"]]
    assert await _search(service, "museum", until="2026-05-05") == [DIARY["2026-05-02T09:30:00Z"]]
    assert await _search(service, "museum", since="2027-01-01") == []

    recalled = await service.memories.recall(
        build(RecallRequest, query="museum", since="2026-05-01", until="2026-05-31")
    )
    assert len(recalled.memories) == 3
    assert all(m.occurred_at.startswith("2026-05-") for m in recalled.memories)
    debug = await service.memories.search_debug(
        build(SearchDebugRequest, query="museum", since="2026-06-01")
    )
    assert [hit["occurred_at"] for hit in debug["hits"]] == ["2026-06-14T00:00:00.000000Z"]


async def test_every_store_read_that_takes_filters_applies_the_period(
    service: CortexService,
) -> None:
    ids = await _diary(service)
    store = service.memories.memories
    may = SearchFilters(
        agent_id="default",
        now=STORED,
        since="2026-05-01T00:00:00.000000Z",
        until="2026-06-01T00:00:00.000000Z",
    )
    in_may = {ids[c] for w, c in DIARY.items() if w.startswith("2026-05")}
    assert await store.eligible(list(ids.values()), may) == in_may
    found = await store.text_search('"museum"', may, 10)
    assert {memory_id for memory_id, _ in found} == in_may
    found = await store.own_text_search('"museum"', may, 10)
    assert {memory_id for memory_id, _ in found} == in_may
    found = await store.text_search('"museum"', may, 10, newest=100, rest='"book"')
    assert {memory_id for memory_id, _ in found} == in_may
    assert set(await store.like_search(["museum"], may, 10)) == in_may


async def test_occurred_within_lists_a_periods_memories_most_recent_first(
    service: CortexService,
) -> None:
    ids = await _diary(service)
    other = await _diary(service, agent_id="someone-else")
    forgotten = await service.memories.remember(
        build(RememberRequest, content="Lost a museum ticket", occurred_at="2026-05-04")
    )
    await service.memories.forget(ForgetRequest(memory_id=forgotten.id))
    store = service.memories.memories
    filters = SearchFilters(agent_id="default", now=STORED)
    window = ("2026-05-01T00:00:00.000000Z", "2026-06-01T00:00:00.000000Z")
    assert await store.occurred_within(filters, *window, 10) == [
        ids[DIARY["2026-05-06T21:00:00+02:00"]],
        ids[DIARY["2026-05-06"]],
        ids[DIARY["2026-05-02T09:30:00Z"]],
    ]
    assert await store.occurred_within(filters, *window, 1) == [
        ids[DIARY["2026-05-06T21:00:00+02:00"]]
    ]
    # the end is exclusive, the start inclusive
    day = ("2026-05-06T00:00:00.000000Z", "2026-05-06T19:00:00.000000Z")
    assert await store.occurred_within(filters, *day, 10) == [ids[DIARY["2026-05-06"]]]
    assert set(await store.occurred_within(filters, *window, 10)).isdisjoint(other.values())
    # the filters still apply: categories, and a period of their own
    facts_only = filters.model_copy(update={"categories": [Category.decision]})
    assert await store.occurred_within(facts_only, *window, 10) == []
    bounded = filters.model_copy(update={"since": "2026-05-03T00:00:00.000000Z"})
    assert len(await store.occurred_within(bounded, *window, 10)) == 2


# ---- the migration -----------------------------------------------------------------------


async def test_rows_written_before_the_migration_get_their_stored_time(
    backend: str, backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        written = await svc.memories.remember(build(RememberRequest, content="An older memory"))
    _undo_migration(backend, backend_settings)
    clock.advance(days=3)
    async with open_cortex(backend_settings, clock=clock) as svc:
        memory = await svc.memories.memories.get(written.id)
        assert memory is not None and memory.occurred_at == memory.created_at == STORED
        # a writer that does not name the column still gets a time (the stored one)
        await svc.memories.memories.db.transact(
            lambda conn: conn.execute(
                "INSERT INTO memories (id, agent_id, layer, category, content, content_hash,"
                " created_at, updated_at) VALUES ('legacy-1', 'default', 'core', 'fact',"
                " 'written by hand', 'h-legacy', '2020-01-02T00:00:00.000000Z',"
                " '2020-01-02T00:00:00.000000Z')"
            )
        )
        legacy = await svc.memories.memories.get("legacy-1")
        assert legacy is not None and legacy.occurred_at == "2020-01-02T00:00:00.000000Z"


def _undo_migration(backend: str, settings: Settings) -> None:
    """The store as the build before `occurred_at` left it: no column (nor a turn's
    `said_at`, nor what later migrations add), the version before."""
    if backend == "sqlite":
        with contextlib.closing(sqlite_module().connect(settings.db_path)) as conn:
            sqlite_back_to(conn, SCHEMA_VERSION, 11)
            conn.execute("PRAGMA user_version = 11")
            conn.commit()
        return
    import psycopg

    from cortex_mcp.store.postgres.schema import SCHEMA_VERSION as PG_SCHEMA_VERSION

    assert settings.database_url is not None
    with psycopg.connect(settings.database_url.get_secret_value(), autocommit=True) as conn:
        postgres_back_to(conn, PG_SCHEMA_VERSION, 8)


# ---- request rules -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"since": "last tuesday"}, "since", "ISO-8601 date or date-time"),
        ({"until": "2026-02-30"}, "until", "ISO-8601 date or date-time"),
        ({"now": "20260506"}, "now", "ISO-8601 date or date-time"),
        ({"since": "2026-05-07", "until": "2026-05-06"}, "until", "later than since"),
        ({"since": "2026-05-06T10:00Z", "until": "2026-05-06T10:00Z"}, "until", "later than"),
    ],
)
def test_a_bad_date_is_refused_naming_the_field(
    fields: dict[str, str], field: str, words: str
) -> None:
    for request in (RecallRequest, SearchRequest, SearchDebugRequest):
        with pytest.raises(InvalidInput) as refused:
            build(request, query="museum", **fields)
        assert refused.value.field == field and words in str(refused.value)
    with pytest.raises(InvalidInput) as refused:
        build(RememberRequest, content="x", occurred_at="yesterday")
    assert refused.value.field == "occurred_at"


def test_a_date_until_takes_in_its_whole_day() -> None:
    request = build(RecallRequest, query="museum", since="2026-05-06", until="2026-05-06")
    assert request.until == "2026-05-06"


async def test_now_is_the_searchs_reference_time(service: CortexService) -> None:
    """`now` replaces the clock for the ranking (its recency signal reckons ages from it)."""
    seen: list[Any] = []
    run = service.memories.searcher.run  # every search's stages run over its state

    async def spy(state: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(state.now)
        return await run(state, *args, **kwargs)

    service.memories.searcher.run = spy  # type: ignore[method-assign]
    await service.memories.recall(build(RecallRequest, query="museum", now="2026-05-08"))
    await service.memories.search(build(SearchRequest, query="museum"))
    assert [moment.isoformat() for moment in seen] == [
        "2026-05-08T00:00:00+00:00",
        "2026-11-01T12:00:00+00:00",
    ]


# ---- over the transports -----------------------------------------------------------------


@pytest.fixture
def rest(tmp_path: Path, clock: FakeClock) -> Iterator[TestClient]:
    with authed_rest_client(tmp_path, clock) as client:
        yield client


def test_rest_takes_occurred_at_and_a_period_and_refuses_a_bad_one(rest: TestClient) -> None:
    api = "/api/v1"
    for when, content in DIARY.items():
        reply = rest.post(f"{api}/memories", json={"content": content, "occurred_at": when})
        assert reply.status_code == 201, reply.text
    reply = rest.post(
        f"{api}/recall", json={"query": "museum", "since": "2026-05-06", "until": "2026-05-06"}
    )
    assert reply.status_code == 200, reply.text
    times = sorted(m["occurred_at"] for m in reply.json()["memories"])
    assert times == ["2026-05-06T00:00:00.000000Z", "2026-05-06T19:00:00.000000Z"]
    reply = rest.post(f"{api}/search", json={"query": "museum", "since": "2026-06-01"})
    assert [m["content"] for m in reply.json()["results"]] == [DIARY["2026-06-14"]]
    before = rest.post(f"{api}/search", json={"query": "museum"}).json()
    reply = rest.post(f"{api}/recall", json={"query": "museum", "since": "May 6th"})
    assert reply.status_code == 422
    error = reply.json()["error"]
    assert error["field"] == "since" and "ISO-8601" in error["message"]
    reply = rest.post(f"{api}/memories", json={"content": "Another", "occurred_at": "soon"})
    assert reply.status_code == 422 and reply.json()["error"]["field"] == "occurred_at"
    assert rest.post(f"{api}/search", json={"query": "museum"}).json() == before


async def test_the_mcp_tools_take_occurred_at_and_a_period(
    settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock), settings)
    async with Client(server) as client:
        for when, content in DIARY.items():
            result = await client.call_tool(
                "cortex_remember", {"content": content, "occurred_at": when}
            )
            assert not result.is_error
        result = await client.call_tool(
            "cortex_recall", {"query": "museum", "since": "2026-06-01", "until": "2026-06-30"}
        )
        assert not result.is_error
        structured = result.structured_content
        assert structured is not None
        assert [m["occurred_at"] for m in structured["memories"]] == ["2026-06-14T00:00:00.000000Z"]
        refused = await client.call_tool("cortex_recall", {"query": "museum", "until": "June"})
        assert refused.is_error
        text = "\n".join(block.text for block in refused.content)  # type: ignore[union-attr]
        assert "until" in text and "ISO-8601" in text
        assert json.dumps(structured)  # structured content stays JSON


# ---- recall says when --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "phrase"),
    [
        ("2026-05-27T23:59:00Z", "today"),
        ("2026-05-26T00:00:00Z", "yesterday"),
        ("2026-05-28T08:00:00Z", "tomorrow"),
        ("2026-05-22T12:00:00Z", "5 days ago"),
        ("2026-05-14T12:00:00Z", "13 days ago"),
        ("2026-05-06T12:00:00Z", "3 weeks ago"),
        ("2026-05-20T12:00:00Z", "7 days ago"),
        ("2026-05-13T12:00:00Z", "2 weeks ago"),
        ("2026-03-01T12:00:00Z", "2 months ago"),
        ("2025-06-01T12:00:00Z", "11 months ago"),
        ("2024-05-01T12:00:00Z", "2 years ago"),
        ("2026-06-10T12:00:00Z", "in 2 weeks"),
        ("2027-09-01T12:00:00Z", "in 15 months"),
        ("2028-06-01T12:00:00Z", "in 2 years"),
    ],
)
def test_relative_phrases_count_calendar_days_before_now(moment: str, phrase: str) -> None:
    from cortex_mcp.engine.recall.when import relative_phrase
    from cortex_mcp.models import from_iso

    assert relative_phrase(from_iso(moment), from_iso("2026-05-27T12:00:00Z")) == phrase


async def test_the_context_shows_each_hits_date_and_how_long_before_now_it_was(
    service: CortexService,
) -> None:
    await _diary(service)
    for form in ("plain", "prompt"):
        recalled = await service.memories.recall(
            build(RecallRequest, query="book museum keeper", now="2026-05-27", format=form)
        )
        assert recalled.meta.now == "2026-05-27T00:00:00.000000Z"
        line = next(x for x in recalled.context.splitlines() if "Quiet Harbour" in x)
        assert line.startswith(
            "- [core 2026-05-06, 3 weeks ago] (fact, world; about The Quiet Harbour) Read a book"
        ), form
    # without `now`, ages are counted from the clock (2026-11-01)
    recalled = await service.memories.recall(build(RecallRequest, query="dinosaur exhibition"))
    assert "[core 2026-05-02, 5 months ago] (fact, world) Visited" in recalled.context


async def test_the_mcp_recall_text_a_model_reads_dates_every_hit(
    settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock), settings)
    async with Client(server) as client:
        await client.call_tool(
            "cortex_remember",
            {"content": "Read a book called The Quiet Harbour", "occurred_at": "2026-05-06"},
        )
        result = await client.call_tool(
            "cortex_recall", {"query": "which book did I read", "now": "2026-05-27T10:00:00Z"}
        )
        text = "\n".join(block.text for block in result.content)  # type: ignore[union-attr]
        assert "| 2026-05-06, 3 weeks ago | score" in text
        assert result.structured_content is not None
        (memory,) = result.structured_content["memories"]
        assert memory["occurred_at"] == "2026-05-06T00:00:00.000000Z"
        assert "2026-05-06, 3 weeks ago" in result.structured_content["context"]


# ---- the lifecycle keeps it --------------------------------------------------------------


async def test_a_merge_keeps_the_earliest_time_of_the_memories_it_merges(
    service: CortexService, clock: FakeClock
) -> None:
    old = await service.memories.remember(
        build(RememberRequest, content="The user lives in Tokyo", occurred_at="2024-02-01")
    )
    clock.advance(minutes=5)
    new = await service.memories.remember(
        build(RememberRequest, content="User lives in Tokyo.", occurred_at="2025-07-01")
    )
    report = await service.lifecycle.run()
    assert [(a.ids, a.into) for a in report.actions if a.kind == "merge"] == [
        ([old.id, new.id], new.id)
    ]
    kept = await service.memories.memories.get(new.id)
    assert kept is not None and kept.occurred_at == "2024-02-01T00:00:00.000000Z"


async def test_a_summary_is_dated_by_the_period_it_covers_and_grows_with_late_arrivals(
    service: CortexService, clock: FakeClock
) -> None:
    """Archived memories are summarised by the month they happened in, whenever stored."""
    ids = []
    for when, text in (
        ("2026-03-02T08:00:00Z", "Repaired the bike chain"),
        ("2026-03-20T18:30:00Z", "Replaced the bike brake pads"),
    ):
        request = build(RememberRequest, content=text, layer="archive", occurred_at=when)
        ids.append((await service.memories.remember(request)).id)
    clock.advance(days=91)
    report = await service.lifecycle.run()
    [compress] = [a for a in report.actions if a.kind == "compress"]
    assert compress.period == "2026-03" and sorted(compress.ids) == sorted(ids)
    summary = await service.memories.memories.get(report.created[next(iter(report.created))])
    assert summary is not None and summary.content.startswith("[2026-03] 2 archived")
    assert summary.occurred_at == "2026-03-02T08:00:00.000000Z"
    assert summary.metadata["period_range"] == {
        "start": "2026-03-02T08:00:00.000000Z",
        "end": "2026-03-20T18:30:00.000000Z",
    }
    late = await service.memories.remember(
        build(
            RememberRequest,
            content="Fitted a new bike saddle",
            layer="archive",
            occurred_at="2026-03-01T07:00:00Z",
        )
    )
    clock.advance(days=95)
    folded = await service.lifecycle.run()
    [compress] = [a for a in folded.actions if a.kind == "compress"]
    assert compress.into == summary.id and compress.ids == [late.id]
    summary = await service.memories.memories.get(summary.id)
    assert summary is not None and summary.occurred_at == "2026-03-01T07:00:00.000000Z"
    assert summary.metadata["period_range"] == {
        "start": "2026-03-01T07:00:00.000000Z",
        "end": "2026-03-20T18:30:00.000000Z",
    }


# ---- export and import carry it ----------------------------------------------------------

DATED = [  # (layer, category, occurred_at, content)
    ("core", "fact", "2023-05-08T14:00:00Z", "Melanie painted a lake at sunrise"),
    ("core", "decision", "2025-12-24", "Chose Lisbon for the spring trip"),
    ("working", "context", "2026-10-31T09:45:00Z", "Debugging the gateway crash"),
    ("archive", "fact", "2024-07-04T20:00:00Z", "Watched fireworks by the river"),
]


async def _dated_store(service: CortexService) -> None:
    for layer, category, when, content in DATED:
        await service.memories.remember(
            build(
                RememberRequest, content=content, layer=layer, category=category, occurred_at=when
            )
        )


async def _occurred(service: CortexService) -> dict[str, str]:
    return {m.content: m.occurred_at for m in await service.stores.exports.memories(None)}


async def test_a_json_export_gives_back_every_memorys_own_time(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    await _dated_store(service)
    out = tmp_path / "export.json"
    await service.exchange.export_json(str(out))
    assert '"occurred_at": "2023-05-08T14:00:00.000000Z"' in out.read_text()
    clock.advance(days=30)
    settings = Settings.model_validate(
        {**service.settings.model_dump(), "db_path": tmp_path / "other.db", "database_url": None}
    )
    async with open_cortex(settings, clock=clock) as other:
        assert (await other.exchange.import_path(str(out))).memories == len(DATED)
        assert await _occurred(other) == await _occurred(service)


async def test_a_markdown_export_gives_back_each_memorys_day_and_a_working_notes_minute(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    await _dated_store(service)
    folder = tmp_path / "export"
    await service.exchange.export_markdown(str(folder))
    memory_md = (folder / "MEMORY.md").read_text()
    assert "- [2023-05-08] Melanie painted" in memory_md
    assert (folder / "memory" / "working" / "2026-10-31.md").exists()
    assert (folder / "memory" / "archive" / "2024-07.md").exists()
    clock.advance(days=30)
    settings = Settings.model_validate(
        {**service.settings.model_dump(), "db_path": tmp_path / "other.db", "database_url": None}
    )
    async with open_cortex(settings, clock=clock) as other:
        assert (await other.exchange.import_path(str(folder))).memories == len(DATED)
        back = await _occurred(other)
    assert back == {
        "Melanie painted a lake at sunrise": "2023-05-08T00:00:00.000000Z",
        "Chose Lisbon for the spring trip": "2025-12-24T00:00:00.000000Z",
        "Debugging the gateway crash": "2026-10-31T09:45:00.000000Z",
        "Watched fireworks by the river": "2024-07-04T00:00:00.000000Z",
    }


async def test_imported_notes_take_their_time_from_the_file(
    service: CortexService, tmp_path: Path
) -> None:
    """A `[YYYY-MM-DD]` prefix, a daily note's name and `## HH:MM` heading, JSON `occurred_at`
    (or `created_at` when it has none)."""
    (tmp_path / "MEMORY.md").write_text(
        "# Memory\n\n## Decisions\n\n- [2025-03-14] Moved the blog to a VPS\n- Undated fact\n"
    )
    await service.exchange.import_path(str(tmp_path / "MEMORY.md"))
    notes = tmp_path / "ws" / "memory"
    notes.mkdir(parents=True)
    (notes / "2026-03-07.md").write_text("## 08:15 Morning\n\n- Walked to the station\n")
    await service.exchange.import_path(str(tmp_path / "ws"))
    document = {
        "format": "cortex-mcp-export",
        "version": 1,
        "memories": [
            {
                "content": "Said at a party",
                "layer": "core",
                "category": "fact",
                "occurred_at": "2022-12-31T23:00:00+01:00",
            },
            {
                "content": "Known since then",
                "layer": "core",
                "category": "fact",
                "created_at": "2021-06-01T10:00:00Z",
            },
        ],
    }
    (tmp_path / "other.json").write_text(json.dumps(document))
    await service.exchange.import_path(str(tmp_path / "other.json"))
    times = await _occurred(service)
    assert times["Moved the blog to a VPS"] == "2025-03-14T00:00:00.000000Z"
    assert times["Undated fact"] == STORED
    assert times["Walked to the station"] == "2026-03-07T08:15:00.000000Z"
    assert times["Said at a party"] == "2022-12-31T22:00:00.000000Z"
    assert times["Known since then"] == "2021-06-01T10:00:00.000000Z"


# ---- ingest and flush take it from the conversation --------------------------------------

MAY_8_MS = 1683554400000  # 2023-05-08T14:00:00Z in epoch milliseconds, as OpenClaw writes it
SAID = "I prefer green tea over coffee. We took the ferry to the island museum with Anna."


async def _by_content(service: CortexService) -> dict[str, Any]:
    return {m.content: m for m in await service.stores.exports.memories(None)}


async def test_an_ingested_turn_dates_its_memories_by_when_it_was_said(
    service: CortexService,
) -> None:
    turn = [
        {"role": "user", "content": "an earlier question", "timestamp": MAY_8_MS - 60_000},
        {"role": "assistant", "content": "an earlier answer"},
        {
            "role": "user",
            "content": [{"type": "text", "text": SAID}],
            "timestamp": MAY_8_MS,
        },
        {"role": "assistant", "content": "Noted."},
    ]
    result = await service.conversation.ingest(
        build(IngestRequest, user_message=None, messages=turn, session_id="s1")
    )
    assert result.status == "done"
    rows = await _by_content(service)
    may_8 = "2023-05-08T14:00:00.000000Z"
    assert rows["I prefer green tea over coffee."].occurred_at == may_8  # the high signal
    history = [m for m in rows.values() if m.metadata.get("unextracted")]  # the turn itself
    assert [(m.occurred_at, m.metadata["said_at"]) for m in history] == [(may_8, may_8)]
    # the same words another day are another turn, whose memories are those already known
    # (stored once, keeping their first time); a session's date given with a turn wins
    again = await service.conversation.ingest(
        build(
            IngestRequest,
            user_message=SAID,
            assistant_message="Noted.",
            session_id="s1",
            said_at="2024-01-02",
        )
    )
    assert not again.duplicate
    rows = await _by_content(service)
    assert [m.occurred_at for m in rows.values() if m.metadata.get("unextracted")] == [may_8]
    await service.conversation.ingest(
        build(IngestRequest, user_message="We flew to Oslo for the fjords.", said_at="2024-01-02")
    )
    rows = await _by_content(service)
    assert rows["We flew to Oslo for the fjords."].occurred_at == "2024-01-02T00:00:00.000000Z"


async def test_a_turn_without_a_readable_time_is_dated_when_it_arrives(
    service: CortexService,
) -> None:
    for stamp in (1, "soon", None, True):  # a sequence number, text, nothing: no time
        turn = [{"role": "user", "content": f"My phone is a Pixel {stamp}", "timestamp": stamp}]
        await service.conversation.ingest(build(IngestRequest, user_message=None, messages=turn))
    assert {m.occurred_at for m in (await _by_content(service)).values()} == {STORED}
    with pytest.raises(InvalidInput) as refused:
        await service.conversation.ingest(
            build(IngestRequest, user_message="My laptop is a ThinkPad", said_at="last week")
        )
    assert refused.value.field == "said_at"


async def test_a_flush_dates_each_message_by_its_own_time_else_the_sessions(
    service: CortexService,
) -> None:
    session = [
        {"role": "user", "content": "My name is Harry.", "timestamp": MAY_8_MS},
        {"role": "assistant", "content": "Hello Harry."},
        {"role": "user", "content": "I prefer green tea over coffee."},
    ]
    await service.conversation.flush(
        build(FlushRequest, messages=session, session_id="s2", said_at="2023-05-09")
    )
    rows = await _by_content(service)
    assert rows["My name is Harry."].occurred_at == "2023-05-08T14:00:00.000000Z"
    assert rows["I prefer green tea over coffee."].occurred_at == "2023-05-09T00:00:00.000000Z"
    summary = next(m for m in rows.values() if m.category.value == "summary")
    assert summary.occurred_at == "2023-05-09T00:00:00.000000Z"  # the last user message's


def test_rest_ingest_takes_message_timestamps_and_said_at(rest: TestClient) -> None:
    api = "/api/v1"
    body = {
        "messages": [{"role": "user", "content": "My name is Harry.", "timestamp": MAY_8_MS}],
        "session_id": "s1",
    }
    assert rest.post(f"{api}/ingest", json=body).status_code == 202
    reply = rest.post(f"{api}/ingest", json={"user_message": "Hi there", "said_at": "May 8"})
    assert reply.status_code == 422 and reply.json()["error"]["field"] == "said_at"
    reply = rest.post(
        f"{api}/flush",
        json={"messages": [{"role": "user", "content": "I prefer tea."}], "said_at": "2023-05-09"},
    )
    assert reply.status_code == 200, reply.text
    found = {}
    for _ in range(200):  # the ingest's extraction runs in the background
        listed = rest.get(f"{api}/memories", params={"limit": 50}).json()["memories"]
        found = {m["content"]: m["occurred_at"] for m in listed}
        if "My name is Harry." in found:
            break
        time.sleep(0.05)
    assert found["My name is Harry."] == "2023-05-08T14:00:00.000000Z"
    assert found["I prefer tea."] == "2023-05-09T00:00:00.000000Z"


# ---- the command line --------------------------------------------------------------------


def test_the_cli_adds_searches_shows_and_ingests_by_a_memorys_own_time(tmp_path: Path) -> None:
    import subprocess

    from tests.helpers.stdio_helpers import server_command, server_env

    env = server_env(tmp_path / "cli.db")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*server_command(), *args], capture_output=True, text=True, env=env, timeout=60
        )

    added = cli("add", "Read The Quiet Harbour", "--occurred-at", "2026-05-06", "--json")
    assert added.returncode == 0, added.stderr
    memory_id = json.loads(added.stdout)["id"]
    assert cli("add", "Read a cookbook").returncode == 0
    said = cli("ingest", "--user", "We hiked up Mount Tam.", "--said-at", "2025-09-14T08:00Z")
    assert said.returncode == 0, said.stderr
    found = cli("search", "read", "--since", "2026-05-01", "--until", "2026-05-31")
    assert found.returncode == 0 and "2026-05-06  Read The Quiet Harbour" in found.stdout
    assert "cookbook" not in found.stdout
    shown = cli("show", memory_id)
    assert "occurred_at: 2026-05-06\n" in shown.stdout  # a day, without a time never said
    hiked = json.loads(cli("search", "hiked", "--json").stdout)["memories"]
    assert [m["occurred_at"] for m in hiked] == ["2025-09-14T08:00:00.000000Z"]
    for bad in (
        ("add", "x y z", "--occurred-at", "tomorrowish"),
        ("search", "read", "--since", "2026-06-01", "--until", "2026-05-01"),
        ("ingest", "--user", "hello there friend", "--said-at", "noon"),
    ):
        refused = cli(*bad)
        assert refused.returncode == 2, bad
        assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr


async def test_listing_takes_a_period_of_the_memories_own_time(service: CortexService) -> None:
    await _diary(service)
    page = await service.reading.list_memories(
        build(ListRequest, since="2026-05-06", until="2026-05-06")
    )
    assert sorted(m["content"] for m in page["memories"]) == sorted(
        [DIARY["2026-05-06"], DIARY["2026-05-06T21:00:00+02:00"]]
    )
    page = await service.reading.list_memories(build(ListRequest, since="2026-06-01"))
    assert [m["content"] for m in page["memories"]] == [DIARY["2026-06-14"]]
    with pytest.raises(InvalidInput) as refused:
        await service.reading.list_memories(build(ListRequest, until="June"))
    assert refused.value.field == "until"
    with pytest.raises(InvalidInput, match="later than since") as refused:
        build(ListRequest, since="2026-06-02", until="2026-06-01")
    assert refused.value.field == "until"


def test_rest_lists_a_period_and_refuses_a_bad_date(rest: TestClient) -> None:
    api = "/api/v1"
    for when, content in DIARY.items():
        rest.post(f"{api}/memories", json={"content": content, "occurred_at": when})
    listed = rest.get(f"{api}/memories", params={"since": "2026-05-01", "until": "2026-05-31"})
    assert listed.status_code == 200, listed.text
    assert len(listed.json()["memories"]) == 3
    bad = rest.get(f"{api}/memories", params={"since": "yesterday"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "since"
    # an empty period is a mistake to name, not an empty page (as recall and search say it)
    backwards = rest.get(f"{api}/memories", params={"since": "2026-05-31", "until": "2026-05-01"})
    assert backwards.status_code == 422, backwards.text
    error = backwards.json()["error"]
    assert error["field"] == "until" and "later than since" in error["message"]


async def test_a_period_holding_few_of_a_words_best_matches_still_finds_them(
    service: CortexService,
) -> None:
    """The best text matches are all outside the period: the search goes on inside it."""
    for day in range(1, 9):
        await service.memories.remember(
            build(
                RememberRequest,
                content=f"Museum museum museum trip number {day}",
                occurred_at=f"2026-03-{day:02d}",
            )
        )
    inside = await service.memories.remember(
        build(
            RememberRequest,
            content="A long afternoon at the harbour, then the maritime museum",
            occurred_at="2026-04-10",
        )
    )
    shared = await service.memories.remember(
        build(
            RememberRequest,
            content="The museum is closed on Mondays",
            occurred_at="2026-04-11",
            agent_id="other",
            shared=True,
        )
    )
    store = service.memories.memories
    april = SearchFilters(
        agent_id="default",
        now=STORED,
        since="2026-04-01T00:00:00.000000Z",
        until="2026-05-01T00:00:00.000000Z",
    )
    assert [i for i, _ in await store.text_search('"museum"', april, 1)] == [inside.id]
    with_shared = april.model_copy(update={"include_shared": True})
    found = {i for i, _ in await store.text_search('"museum"', with_shared, 2)}
    assert found == {inside.id, shared.id}
