"""Facts that know when they stopped being true (issue 34): a newer fact of the same slot closes
the older one, recall answers what is true now first and the history on request, a period
question keeps what was valid then, disagreeing statements of equal standing are contested,
and forgetting a wrong update reopens the fact it closed; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import ValidityStatus
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    LifecycleLogRequest,
    RecallRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

DISTRACTORS = [
    "Marco likes espresso more than cappuccino",
    "The team offsite is planned for the spring",
    "Marco's favourite football club is Juventus",
    "I bought a new bike helmet",
    "We watched a documentary about Turin's history",
    "Marco said the weather in the north is rainy",
]


@pytest.fixture
async def cortex(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _remember(cortex: CortexService, content: str, when: str) -> str:
    result = await cortex.memories.remember(
        build(RememberRequest, content=content, category="fact", occurred_at=when)
    )
    return result.id


async def _recall(cortex: CortexService, query: str, **extra: object):
    return await cortex.memories.recall(build(RecallRequest, query=query, max_results=5, **extra))


async def _moves(cortex: CortexService) -> tuple[str, str, str]:
    turin = await _remember(cortex, "Marco lives in Turin, near the river", "2025-01-10")
    milan = await _remember(cortex, "Marco moved to Milan for the new job", "2025-06-01")
    rome = await _remember(cortex, "Marco relocated to Rome this winter", "2025-12-05")
    for i, text in enumerate(DISTRACTORS):
        await _remember(cortex, text, f"2025-0{i + 2}-15")
    return turin, milan, rome


async def test_the_current_fact_answers_a_now_question_first_though_it_shares_no_word(
    cortex: CortexService,
) -> None:
    turin, milan, rome = await _moves(cortex)
    result = await _recall(cortex, "Where does Marco live now?")
    assert result.memories[0].id == rome
    by_id = {m.id: m for m in result.memories}
    assert rome in by_id and by_id[rome].status is ValidityStatus.current
    for old in (turin, milan):
        if old in by_id:
            assert by_id[old].status is ValidityStatus.superseded


async def test_the_history_comes_oldest_first_with_the_dates_each_fact_held(
    cortex: CortexService,
) -> None:
    turin, milan, rome = await _moves(cortex)
    result = await _recall(cortex, "Where did Marco live before?")
    order = [m.id for m in result.memories if m.id in {turin, milan, rome}]
    assert order == [turin, milan, rome]
    by_id = {m.id: m for m in result.memories}
    assert by_id[turin].valid_to is not None and by_id[turin].valid_to.startswith("2025-06-01")
    assert by_id[milan].valid_to is not None and by_id[milan].valid_to.startswith("2025-12-05")
    assert by_id[rome].valid_to is None
    assert "superseded" in result.context


async def test_include_history_ranks_the_superseded_facts_with_the_current_one(
    cortex: CortexService,
) -> None:
    turin, milan, rome = await _moves(cortex)
    result = await _recall(cortex, "Where does Marco live?", include_history=True)
    assert {turin, milan, rome} <= {m.id for m in result.memories[:3]}


async def test_a_period_question_answers_the_fact_valid_then_not_the_one_said_then(
    cortex: CortexService,
) -> None:
    _turin, milan, _rome = await _moves(cortex)
    result = await _recall(cortex, "Where did Marco live in September 2025?")
    assert result.memories[0].id == milan


async def test_restating_the_same_value_closes_nothing(cortex: CortexService) -> None:
    first = await _remember(cortex, "I live in Oslo", "2025-01-01")
    again = await _remember(cortex, "I still live in Oslo, by the fjord", "2025-05-01")
    result = await _recall(cortex, "where do I live?")
    by_id = {m.id: m for m in result.memories}
    assert by_id[first].status is ValidityStatus.current
    assert by_id[again].status is ValidityStatus.current


async def test_two_speakers_disagreeing_the_same_day_are_both_contested_and_marked(
    cortex: CortexService,
) -> None:
    paris = await _remember(cortex, "Bob: Anna lives in Paris", "2025-03-03T10:00:00Z")
    lyon = await _remember(cortex, "Carol: Anna lives in Lyon", "2025-03-03T18:00:00Z")
    result = await _recall(cortex, "Where does Anna live?")
    by_id = {m.id: m for m in result.memories}
    assert by_id[paris].status is ValidityStatus.contested
    assert by_id[lyon].status is ValidityStatus.contested
    assert result.context.count("contested") >= 2


async def test_forgetting_a_wrong_update_reopens_the_fact_it_closed_and_logs_both(
    cortex: CortexService,
) -> None:
    turin = await _remember(cortex, "Marco lives in Turin", "2025-01-10")
    wrong = await _remember(cortex, "Marco moved to Milan", "2025-06-01")
    before = await _recall(cortex, "Where does Marco live?", include_history=True)
    assert {m.id: m for m in before.memories}[turin].status is ValidityStatus.superseded
    await cortex.memories.forget(build(ForgetRequest, memory_id=wrong, reason="wrong slot"))
    after = await _recall(cortex, "Where does Marco live?")
    reopened = {m.id: m for m in after.memories}[turin]
    assert reopened.status is ValidityStatus.current and reopened.valid_to is None
    log = await cortex.lifecycle.log(build(LifecycleLogRequest, limit=50))
    changes = [e for e in log if e["action"] == "validity" and turin in e["memory_ids"]]
    assert [e["details"]["status"] for e in changes] == ["current", "superseded"]


async def test_an_old_fact_imported_after_the_new_one_lands_behind_it(
    cortex: CortexService,
) -> None:
    milan = await _remember(cortex, "Marco moved to Milan", "2025-06-01")
    await _recall(cortex, "anything")  # the chain is settled with Milan alone
    turin = await _remember(cortex, "Marco lives in Turin", "2025-01-10")
    result = await _recall(cortex, "Where does Marco live now?")
    assert result.memories[0].id == milan
    by_id = {m.id: m for m in result.memories}
    if turin in by_id:
        assert by_id[turin].status is ValidityStatus.superseded


async def test_another_agents_slot_facts_never_close_or_reach_this_agents(
    cortex: CortexService,
) -> None:
    mine = await _remember(cortex, "Marco lives in Turin", "2025-01-10")
    await cortex.memories.remember(
        build(
            RememberRequest,
            content="Marco moved to Milan",
            occurred_at="2025-06-01",
            agent_id="other",
        )
    )
    result = await _recall(cortex, "Where does Marco live now?")
    assert [m.id for m in result.memories] == [mine]
    assert result.memories[0].status is ValidityStatus.current


CONTESTED = {  # two speakers, the same day, disagreeing about one slot: no silent winner
    "en": ("Bob: Anna lives in Paris", "Carol: Anna lives in Lyon", "Where does Anna live now?"),
    "zh": ("小李：张伟住在北京", "小王：张伟住在上海", "张伟现在住在哪里？"),
    "ja": (
        "佐藤：田中さんは東京に住んでいます",
        "鈴木：田中さんは大阪に住んでいます",
        "田中さんは今どこに住んでいますか？",
    ),
}


@pytest.mark.parametrize("language", sorted(CONTESTED))
async def test_a_contested_pair_is_never_silently_resolved_in_any_language(
    cortex: CortexService, language: str
) -> None:
    first_text, second_text, question = CONTESTED[language]
    first = await _remember(cortex, first_text, "2025-03-03T09:00:00Z")
    second = await _remember(cortex, second_text, "2025-03-03T17:00:00Z")
    for asked in (question, "anything else"):  # a now question, then any
        result = await _recall(cortex, asked)
        by_id = {m.id: m for m in result.memories}
        if asked == question:
            assert {first, second} <= set(by_id)  # shown together
        for memory_id in {first, second} & set(by_id):
            assert by_id[memory_id].status is ValidityStatus.contested
            assert by_id[memory_id].valid_to is None
    shown = await _recall(cortex, question)
    assert shown.context.count("contested") >= 2


async def test_a_wrong_update_forgotten_with_a_correction_closes_the_old_fact_by_the_right_one(
    cortex: CortexService,
) -> None:
    turin = await _remember(cortex, "Marco lives in Turin", "2025-01-10")
    wrong = await _remember(cortex, "Marco moved to Milan", "2025-06-01")
    await _recall(cortex, "Where does Marco live?")
    await cortex.memories.forget(
        build(ForgetRequest, memory_id=wrong, correction="Marco moved to Rome")
    )
    now = await _recall(cortex, "Where does Marco live now?")
    assert now.memories[0].content == "Marco moved to Rome"
    history = await _recall(cortex, "Where does Marco live?", include_history=True)
    by_id = {m.id: m for m in history.memories}
    assert wrong not in by_id
    assert by_id[turin].status is ValidityStatus.superseded
    log = await cortex.lifecycle.log(build(LifecycleLogRequest, limit=50))
    changes = [e for e in log if e["action"] == "validity" and turin in e["memory_ids"]]
    assert len(changes) >= 2  # closed by the wrong update, then by the correction (each logged)


TRIP_THEN_MOVE = {
    "en": (
        ("Nina lives in Seattle", "Nina works at Boeing"),
        "Nina went to Chicago last week for a game, it was awesome",
        "Nina moved to Chicago",
        ("Where does Nina live now?", "Where does Nina work now?"),
    ),
    "zh": (
        ("小周住在成都", "小周在腾讯工作"),
        "小周去了北京出差，上周才回来",
        "小周搬到了北京",
        ("小周现在住在哪里？", "小周现在在哪工作？"),
    ),
    "ja": (
        ("小野さんは札幌に住んでいます", "小野さんはソニーで働いています"),
        "小野さんは先週、出張で福岡に行きました",
        "小野さんは福岡に引っ越しました",
        ("小野さんは今どこに住んでいますか？", "小野さんは今どこで働いていますか？"),
    ),
}


@pytest.mark.parametrize("language", sorted(TRIP_THEN_MOVE))
async def test_a_trip_never_closes_where_someone_lives_or_works_and_a_move_does(
    cortex: CortexService, language: str
) -> None:
    (lives, works), trip, move, (where, work) = TRIP_THEN_MOVE[language]
    home = await _remember(cortex, lives, "2025-01-10")
    job = await _remember(cortex, works, "2025-01-11")
    await _remember(cortex, trip, "2025-03-10")
    for question, fact in ((where, home), (work, job)):
        after_trip = await _recall(cortex, question)
        assert after_trip.memories[0].id == fact
        assert after_trip.memories[0].status is ValidityStatus.current
    moved = await _remember(cortex, move, "2025-06-01")
    assert (await _recall(cortex, where)).memories[0].id == moved
    history = await _recall(cortex, where, include_history=True)
    by_id = {m.id: m for m in history.memories}
    assert by_id[home].status is ValidityStatus.superseded
    assert by_id[home].valid_to is not None and by_id[home].valid_to.startswith("2025-06-01")


async def test_a_job_lost_at_a_lower_case_employer_is_closed_by_the_job_found_after_it(
    cortex: CortexService,
) -> None:
    old = await _remember(
        cortex, "John: I lost my job at the mechanical engineering company.", "2023-08-05T10:00Z"
    )
    new = await _remember(
        cortex, "John: I found a job at a tech company that needs my skills.", "2023-08-20T10:00Z"
    )
    history = await _recall(cortex, "Where did John work before?", include_history=True)
    by_id = {m.id: m for m in history.memories}
    assert by_id[old].status is ValidityStatus.superseded and by_id[old].valid_to is not None
    now = await _recall(cortex, "Where does John work now?")
    assert now.memories[0].id == new


async def test_a_recall_with_nothing_new_reads_no_memories_to_settle_and_the_next_fact_is_settled(
    cortex: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New memories are read for slots and beliefs before a recall searches; once they are
    read, a recall finds nothing new in one look and reads none of them again, and a fact
    remembered after that is still settled by the next recall."""
    await _moves(cortex)
    await _recall(cortex, "Where does Marco live now?")  # reads what is new
    reads: list[str] = []
    for name, store in (("validity", cortex.stores.validity), ("beliefs", cortex.stores.beliefs)):
        monkeypatch.setattr(store, "unread", _counted(reads, name, store.unread))
    await _recall(cortex, "Where does Marco live now?")
    assert reads == []
    naples = await _remember(cortex, "Marco moved to Naples last month", "2026-02-01")
    found = await _recall(cortex, "Where does Marco live now?")
    assert reads == ["validity", "beliefs"]
    assert found.memories[0].id == naples


def _counted(reads: list[str], name: str, unread: Any) -> Any:
    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(name)
        return await unread(*args, **kwargs)

    return counted
