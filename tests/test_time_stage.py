"""The time stage (issue 25): a window the query names lifts its memories before the cut, as a
boost and not a filter; `since`/`until` filter; a query without time ranks as before. On
SQLite and PostgreSQL, through the service; the window's arithmetic on its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.stages.time import IN_WINDOW, NEAR, Reach
from cortex_mcp.search.time_expressions import TimeWindow, parse_time
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
    build,
)
from tests.conftest import FakeClock, stub_settings

pytestmark = pytest.mark.anyio

NOW = "2026-05-10T12:00:00Z"  # the recall's reference time in these tests
DIARY = [
    # a close match for "book" questions, but on another day
    ("2026-05-02T10:00:00Z", "Bought a book about books: a book lover's guide to book shops"),
    ("2026-05-06T10:00:00Z", "Read a novel called The Quiet Harbour on the train"),
    ("2026-05-06T10:05:00Z", "Cooked a mushroom risotto for dinner"),
    ("2026-05-09T10:00:00Z", "Went swimming at the lake with Tom"),
    ("2026-04-20T10:00:00Z", "Planted tomatoes in the garden"),
]


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        for when, content in DIARY:
            await svc.memories.remember(build(RememberRequest, content=content, occurred_at=when))
        await svc.memories.linker.drain()  # linked before the tests search: no link lands between
        yield svc


async def _search(service: CortexService, query: str, **fields: str) -> list[str]:
    request = build(SearchRequest, query=query, now=fields.pop("now", NOW), **fields)
    return [hit.content for hit in await service.memories.search(request)]


async def test_a_memory_of_the_named_day_outranks_a_better_match_of_another_day(
    service: CortexService,
) -> None:
    found = await _search(service, "What book did I read on May 6th?")
    assert found[0] == "Read a novel called The Quiet Harbour on the train"
    # a boost, not a filter: the strong match of another day is still found, below
    assert DIARY[0][1] in found
    # without the date the better text match wins, as it did before
    assert (await _search(service, "What book did I read?"))[0] == DIARY[0][1]


async def test_in_chinese_the_named_day_decides_too(service: CortexService) -> None:
    await service.memories.remember(
        build(RememberRequest, content="读了一本书叫《海边》", occurred_at="2026-05-08T09:00:00Z")
    )
    await service.memories.remember(
        build(RememberRequest, content="买了一本书和一本书签", occurred_at="2026-05-01T09:00:00Z")
    )
    assert (await _search(service, "在5月8号我读了一本书，它的名字是？"))[
        0
    ] == "读了一本书叫《海边》"


async def test_since_and_until_are_filters(service: CortexService) -> None:
    found = await _search(service, "book", since="2026-05-05", until="2026-05-06")
    assert found == []  # the only book memory is of 2 May: filtered out, not ranked low
    found = await _search(service, "book novel", since="2026-05-03")
    assert found == ["Read a novel called The Quiet Harbour on the train"]
    # a window in the query outside the filter: still only the filter's memories
    assert await _search(service, "book or novel on May 2", since="2026-05-03") == [
        "Read a novel called The Quiet Harbour on the train"
    ]


async def test_a_query_that_is_only_a_time_returns_the_window_by_its_own_signals(
    service: CortexService,
) -> None:
    found = await _search(service, "what happened on May 6?")
    assert sorted(found) == sorted(content for when, content in DIARY if "05-06" in when)
    # 10 May 2026 is a Sunday: last week is Monday 27 April to Sunday 3 May
    assert await _search(service, "what happened last week?") == [DIARY[0][1]]


PHRASED = [
    # 10 May 2026 is a Sunday: the weekend before last is 25-26 April
    ("2026-04-25T11:00:00Z", "Repaired the bike chain in the garage"),
    ("2025-12-25T18:00:00Z", "Roast goose with the family"),
    ("2026-02-10T09:00:00Z", "Signed the office lease"),
    ("2025-07-14T10:00:00Z", "Hiked the ridge trail"),  # last year, not at Christmas
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I do the weekend before last", PHRASED[0][1]),
        ("over the weekend before last?", PHRASED[0][1]),
        ("上上周末", PHRASED[0][1]),
        ("Christmas last year", PHRASED[1][1]),
        ("去年圣诞节", PHRASED[1][1]),
        ("昨年のクリスマス", PHRASED[1][1]),
        ("Q1", PHRASED[2][1]),
        ("第一季度", PHRASED[2][1]),
        ("what happened at the start of the year", PHRASED[2][1]),
    ],
)
async def test_a_query_that_is_only_a_phrase_of_time_answers_that_windows_memories(
    service: CortexService, query: str, expected: str
) -> None:
    for when, content in PHRASED:
        await service.memories.remember(build(RememberRequest, content=content, occurred_at=when))
    found = await _search(service, query)
    assert found == [expected]


async def test_earlier_this_month_asked_on_the_first_answers_that_days_memories(
    service: CortexService,
) -> None:
    await service.memories.remember(
        build(RememberRequest, content="Paid the rent", occurred_at="2026-06-01T08:00:00Z")
    )
    found = await _search(service, "what did I do earlier this month", now="2026-06-01T15:00:00Z")
    assert found == ["Paid the rent"]


async def test_a_loose_window_lifts_the_days_next_to_it(service: CortexService) -> None:
    # "around May 2" is 29 April - 5 May; the swim of 9 May is near, the garden of 20 April is not
    debug = await service.memories.search_debug(
        build(SearchDebugRequest, query="swimming or garden around May 2", now=NOW)
    )
    boosts = {hit["content"]: hit["time_boost"] for hit in debug["hits"]}
    assert 0 < boosts["Went swimming at the lake with Tom"] < NEAR
    assert boosts["Planted tomatoes in the garden"] == 0.0
    exact = await service.memories.search_debug(
        build(SearchDebugRequest, query="swimming or garden on May 2", now=NOW)
    )
    assert all(hit["time_boost"] in (0.0, IN_WINDOW) for hit in exact["hits"])


async def test_the_debug_view_and_the_recall_say_which_window(service: CortexService) -> None:
    debug = await service.memories.search_debug(
        build(SearchDebugRequest, query="What book did I read on May 6th?", now=NOW)
    )
    window = debug["facts"]["time"]
    assert window["start"].startswith("2026-05-06T00:00:00") and window["expression"]
    assert window["end"].startswith("2026-05-07T00:00:00")
    assert "may" not in debug["query"]["terms"]  # the window's words are not search words
    boosts = {hit["content"]: hit["time_boost"] for hit in debug["hits"]}
    assert boosts["Read a novel called The Quiet Harbour on the train"] == IN_WINDOW
    assert boosts[DIARY[0][1]] == 0.0
    assert "time" in [stage["name"] for stage in debug["stages"]]
    result = await service.memories.recall(
        build(RecallRequest, query="What book did I read on May 6th?", now=NOW)
    )
    assert result.meta.time is not None and result.meta.time["expression"] == window["expression"]
    plain = await service.memories.recall(build(RecallRequest, query="book", now=NOW))
    assert plain.meta.time is None


async def test_a_query_without_time_ranks_exactly_as_without_the_stage(
    service: CortexService,
) -> None:
    searcher = service.memories.searcher
    now = datetime(2026, 5, 10, 12, tzinfo=UTC)
    filters = service.memories.filters(None, None, None)
    for query in ("book", "risotto dinner", "lake swimming Tom", "May the force"):
        with_time = await searcher.search(query, filters, 5, now)
        stages = searcher.stages
        searcher.stages = [stage for stage in stages if stage.name != "time"]
        try:
            without = await searcher.search(query, filters, 5, now)
        finally:
            searcher.stages = stages
        assert [(c.memory_id, c.final) for c in with_time.ranked] == [
            (c.memory_id, c.final) for c in without.ranked
        ]


async def test_a_window_that_holds_no_memory_gives_its_words_back_to_the_search(
    service: CortexService,
) -> None:
    await service.memories.remember(
        build(RememberRequest, content="We moved to Lisbon in 2019", occurred_at="2026-03-01")
    )
    debug = await service.memories.search_debug(
        build(SearchDebugRequest, query="where did we move in 2019?", now=NOW)
    )
    assert debug["facts"]["time"]["boosted"] is False  # nothing of this agent is from 2019
    assert "2019" in debug["query"]["terms"]
    assert debug["hits"][0]["content"] == "We moved to Lisbon in 2019"


async def test_the_window_memories_the_channels_missed_get_their_cosine(
    tmp_path: Path, embeddings_url: str, clock: FakeClock
) -> None:
    async with open_cortex(stub_settings(tmp_path / "v.db", embeddings_url), clock=clock) as svc:
        for when, content in DIARY:
            await svc.memories.remember(build(RememberRequest, content=content, occurred_at=when))
        for day in range(1, 21):  # more dinners than one search's pool, all in April
            content = f"Cooked dinner number {day} at home"
            await svc.memories.remember(
                build(RememberRequest, content=content, occurred_at=f"2026-04-{day:02d}")
            )
        await svc.embed_pending()
        debug = await svc.memories.search_debug(
            build(SearchDebugRequest, query="dinner on May 6", now=NOW, max_results=2)
        )
    assert debug["pool"] == 8 and debug["facts"]["time"]["candidates_added"] >= 1
    hits = [hit["content"] for hit in debug["hits"]]
    assert hits[0] == "Cooked a mushroom risotto for dinner"
    novel = next(h for h in debug["hits"] if h["content"].startswith("Read a novel"))
    assert novel["time_boost"] == IN_WINDOW and novel["vector"]["rank"] is None
    assert novel["vector"]["cosine_distance"] is not None  # filled, not taken as 0


def _window(start: str, end: str, expression: str) -> TimeWindow:
    return TimeWindow(
        datetime.fromisoformat(start), datetime.fromisoformat(end), expression, "range"
    )


def test_an_exact_window_lifts_only_itself() -> None:
    reach = Reach.of(_window("2026-05-06T00:00+00:00", "2026-05-07T00:00+00:00", "May 6"))
    assert reach.near == timedelta(0)
    assert reach.score(datetime(2026, 5, 6, 23, 59, tzinfo=UTC)) == IN_WINDOW
    assert reach.score(datetime(2026, 5, 7, tzinfo=UTC)) == 0.0  # the end is exclusive
    assert reach.score(datetime(2026, 5, 5, 23, 59, tzinfo=UTC)) == 0.0


def test_a_loose_window_reaches_one_width_beyond_each_edge_within_1_to_30_days() -> None:
    now = datetime(2026, 5, 10, 12, tzinfo=UTC)
    around = Reach.of(parse_time("around May 2", now).window)  # 7 days wide
    assert around.near == timedelta(days=7)
    edge = around.end
    assert around.score(edge) == NEAR
    assert 0 < around.score(edge + timedelta(days=3)) < NEAR
    assert around.score(edge + timedelta(days=7)) == 0.0
    recently = Reach.of(parse_time("最近去了哪里", now).window)
    assert recently.near == recently.end - recently.start == timedelta(days=15)  # today too
    year = Reach.of(_window("2025-01-01T00:00+00:00", "2026-01-01T00:00+00:00", "around 2025"))
    assert year.near == timedelta(days=30)
    before = Reach.of(parse_time("before May 2", now).window)  # an open start
    assert before.near == timedelta(0) and before.score(datetime(1999, 1, 1, tzinfo=UTC)) == 1.0
