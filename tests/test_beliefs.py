"""Beliefs with their evidence (issue 34): an opinion is a belief of its holder, later memories
that say much the same are evidence for it or, with a negation or contrast cue, against it; the
confidence follows `confidence.update` over the stored evidence (monotone, at most 0.15 a
piece, one contradiction never turns a belief over, repeated ones do), the trend follows the
evidence's times, and recall shows each belief with its standing; on SQLite and PostgreSQL, in
English, Chinese and Japanese."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.engine.beliefs.confidence import MAX_STEP
from cortex_mcp.engine.beliefs.evidence import holder_of, negated
from cortex_mcp.models import BeliefSummary, Category, Layer, Memory
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.stages.belief import holder_asked
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    LifecycleLogRequest,
    RecallRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

# (the belief, three memories for it, two against it, what recall is asked)
SCRIPTS = {
    "en": (
        "I prefer dark mode in the code editor",
        (
            "I asked for dark mode in the code editor again",
            "I switched the code editor back to dark mode",
            "dark mode in the code editor is easier on my eyes",
        ),
        (
            "I no longer want dark mode in the code editor",
            "I stopped using dark mode in the code editor",
        ),
        "dark mode code editor",
    ),
    "zh": (
        "我喜欢在编辑器里用深色模式",
        ("我还是喜欢编辑器的深色模式", "编辑器又换回了深色模式", "编辑器的深色模式看着舒服"),
        ("我不再喜欢编辑器的深色模式了", "我再也不想用编辑器的深色模式"),
        "编辑器深色模式",
    ),
    "ja": (
        "エディタはダークモードが好きです",
        (
            "やっぱりエディタはダークモードが好き",
            "エディタをダークモードに戻した",
            "エディタのダークモードは目に優しい",
        ),
        ("もうエディタのダークモードは好きじゃない", "エディタのダークモードはもう使わない"),
        "エディタ ダークモード",
    ),
}
DISTRACTORS = [
    "The team offsite is planned for the spring",
    "I bought a new bike helmet",
    "Peter said the weather in the north is rainy",
]


@pytest.fixture
async def cortex(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _remember(cortex: CortexService, content: str, when: str, category: str) -> str:
    result = await cortex.memories.remember(
        build(RememberRequest, content=content, category=category, occurred_at=when)
    )
    return result.id


async def _belief(cortex: CortexService, query: str, now: str) -> BeliefSummary:
    result = await cortex.memories.recall(
        build(RecallRequest, query=query, max_results=10, now=now)
    )
    held = [m.belief for m in result.memories if m.belief is not None]
    assert len(held) == 1, [m.content for m in result.memories]
    return held[0]


@pytest.mark.parametrize("language", sorted(SCRIPTS))
async def test_support_raises_confidence_a_little_each_time_and_one_contradiction_never_reverses(
    cortex: CortexService, language: str
) -> None:
    belief, pros, cons, query = SCRIPTS[language]
    for i, text in enumerate(DISTRACTORS):
        await _remember(cortex, text, f"2026-09-0{i + 1}", "fact")
    await _remember(cortex, belief, "2026-10-01", "preference")
    seen = [await _belief(cortex, query, "2026-10-02")]
    for day, pro in zip(("05", "09", "13"), pros, strict=True):
        await _remember(cortex, pro, f"2026-10-{day}", "context")
        seen.append(await _belief(cortex, query, f"2026-10-{day}"))
    steps = [b.confidence - a.confidence for a, b in itertools.pairwise(seen)]
    assert all(0 < step <= MAX_STEP for step in steps), steps
    assert [b.for_ for b in seen] == [1, 2, 3, 4]
    await _remember(cortex, cons[0], "2026-10-20", "preference")
    after = await _belief(cortex, query, "2026-10-21")
    assert 0 < seen[-1].confidence - after.confidence <= MAX_STEP
    assert after.statement == belief and after.against == 1 and after.revisions == 0


@pytest.mark.parametrize("language", sorted(SCRIPTS))
async def test_repeated_contradiction_turns_a_belief_over_and_keeps_the_old_statement(
    cortex: CortexService, language: str
) -> None:
    belief, _, cons, query = SCRIPTS[language]
    await _remember(cortex, belief, "2026-10-01", "preference")
    first = await _belief(cortex, query, "2026-10-02")
    await _remember(cortex, cons[0], "2026-10-10", "preference")
    once = await _belief(cortex, query, "2026-10-11")
    assert once.statement == belief and once.confidence < first.confidence
    await _remember(cortex, cons[1], "2026-10-20", "preference")
    twice = await _belief(cortex, query, "2026-10-21")
    assert twice.revisions == 1
    assert twice.statement == cons[1]
    assert twice.confidence > 0.5
    log = await cortex.lifecycle.log(build(LifecycleLogRequest, limit=100))
    assert any(e["action"] == "belief" and e["details"].get("revised") for e in log)


@pytest.mark.parametrize("language", sorted(SCRIPTS))
async def test_the_trend_follows_the_times_of_the_evidence(
    cortex: CortexService, language: str
) -> None:
    belief, pros, cons, query = SCRIPTS[language]
    await _remember(cortex, belief, "2026-06-01", "preference")
    assert (await _belief(cortex, query, "2026-06-05")).trend == "new"
    await _remember(cortex, pros[0], "2026-07-20", "context")
    assert (await _belief(cortex, query, "2026-07-25")).trend == "strengthening"
    await _remember(cortex, cons[0], "2026-07-28", "context")
    assert (await _belief(cortex, query, "2026-07-29")).trend == "stable"
    await _remember(cortex, cons[1], "2026-08-10", "context")
    assert (await _belief(cortex, query, "2026-08-12")).trend == "weakening"
    assert (await _belief(cortex, query, "2027-02-01")).trend == "stale"


async def test_recall_shows_a_belief_with_its_standing_in_the_structure_and_the_context(
    cortex: CortexService,
) -> None:
    await _remember(
        cortex, "The user prefers light mode in the evening", "2026-11-01", "preference"
    )
    for day, end in (("05", ""), ("12", " again"), ("20", " once more")):
        await _remember(
            cortex, "asked for light mode in the evening" + end, f"2026-11-{day}", "context"
        )
    result = await cortex.memories.recall(
        build(RecallRequest, query="light mode evening", max_results=10, now="2026-11-21")
    )
    held = [m for m in result.memories if m.belief is not None]
    assert len(held) == 1
    top = held[0]
    assert top.belief is not None
    dumped = top.model_dump(mode="json")["belief"]
    assert {"confidence", "for", "against", "last_evidence_at", "trend"} <= set(dumped)
    assert dumped["for"] == 4 and dumped["against"] == 0
    line = f"The user prefers light mode in the evening ({top.belief.confidence:.2f}; 4 for, 0 against; last 2026-11-20)"
    assert line in result.context
    others = [m for m in result.memories if m.id != top.id]
    assert others and all(m.belief is None for m in others)


async def test_what_does_peter_prefer_answers_from_peters_beliefs_first(
    cortex: CortexService,
) -> None:
    for i, text in enumerate(DISTRACTORS):
        await _remember(cortex, text, f"2026-09-0{i + 1}", "fact")
    await _remember(cortex, "I prefer window seats on long flights", "2026-10-01", "preference")
    peter = await _remember(
        cortex, "Peter prefers green tea over coffee", "2026-10-02", "preference"
    )
    await _remember(cortex, "Peter had green tea at the meeting", "2026-10-09", "context")
    for query in ("What does Peter prefer?", "What does Peter like?", "Peter's favourite?"):
        result = await cortex.memories.recall(
            build(RecallRequest, query=query, max_results=5, now="2026-10-10")
        )
        assert result.memories[0].id == peter, query
        assert result.memories[0].belief is not None
        assert result.memories[0].belief.for_ == 2
    hits = await cortex.memories.search(build(SearchRequest, query="What do I prefer?", limit=3))
    assert hits[0].content == "I prefer window seats on long flights"


async def test_reading_the_same_memories_again_changes_no_belief(cortex: CortexService) -> None:
    belief, pros, cons, query = SCRIPTS["en"]
    await _remember(cortex, belief, "2026-10-01", "preference")
    await _remember(cortex, pros[0], "2026-10-05", "context")
    await _remember(cortex, cons[0], "2026-10-06", "context")
    before = await _belief(cortex, query, "2026-10-07")
    agent = cortex.settings.agent_id
    assert await cortex.memories.beliefs.settle(agent, batches=None) == 0
    assert await _belief(cortex, query, "2026-10-07") == before


def _memory(content: str, **metadata: object) -> Memory:
    return Memory(
        id="m",
        agent_id="a",
        layer=Layer.core,
        category=Category.preference,
        content=content,
        importance=0.5,
        confidence=0.8,
        decay_score=1.0,
        access_count=0,
        created_at="2026-01-01T00:00:00.000000Z",
        updated_at="2026-01-01T00:00:00.000000Z",
        metadata=dict(metadata),
    )


def test_the_holder_is_the_tag_the_speaker_the_subject_or_the_user() -> None:
    assert holder_of(_memory("likes tea", entities=["Peter"])).key == "peter"
    assert holder_of(_memory("Anna: I love hiking")).key == "anna"
    assert holder_of(_memory("Peter prefers green tea")).key == "peter"
    assert holder_of(_memory("张伟喜欢喝咖啡")).key == "张伟"
    assert holder_of(_memory("田中さんはコーヒーが好きです")).key == "田中"
    for own in ("I prefer tea", "我不再喜欢咖啡了", "私はコーヒーが好きです", "The user likes tea"):
        assert holder_of(_memory(own)).key == "user", own


def test_the_negation_and_contrast_cues_in_three_languages() -> None:
    for text in (
        "I no longer like tea",
        "she stopped drinking coffee",
        "tea instead",
        "我不再喜欢咖啡",
        "我不喜欢咖啡",
        "もうコーヒーは飲まない",
        "コーヒーじゃなくて紅茶",
    ):
        assert negated(text), text
    for text in ("I like tea", "我喜欢咖啡", "コーヒーが好きです"):
        assert not negated(text), text


def test_a_preference_question_names_its_holder() -> None:
    assert holder_asked("What does Peter prefer?") == "peter"
    assert holder_asked("what do I like?") == "user"
    assert holder_asked("张伟喜欢什么") == "张伟"
    assert holder_asked("田中さんの好きなものは?") == "田中"
    assert holder_asked("Where does Peter live?") is None


async def test_forgetting_a_contradiction_gives_the_belief_back_its_standing(
    cortex: CortexService,
) -> None:
    belief, pros, cons, query = SCRIPTS["en"]
    await _remember(cortex, belief, "2026-10-01", "preference")
    await _remember(cortex, pros[0], "2026-10-05", "context")
    before = await _belief(cortex, query, "2026-10-06")
    wrong = await _remember(cortex, cons[0], "2026-10-07", "context")
    assert (await _belief(cortex, query, "2026-10-08")).against == 1
    await cortex.memories.forget(build(ForgetRequest, memory_id=wrong, reason="misheard"))
    after = await _belief(cortex, query, "2026-10-08")
    assert after.against == 0 and after.confidence == before.confidence
    [stored] = await cortex.stores.beliefs.beliefs(cortex.settings.agent_id)
    assert stored.against_count == 0 and abs(stored.confidence - before.confidence) < 1e-4


async def test_the_mirror_writes_each_belief_with_its_evidence_to_bank_opinions_md(
    tmp_path: Path, clock: FakeClock
) -> None:
    export = tmp_path / "workspace"
    settings = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        export_dir=export,
        mirrors={"debounce_s": 0.05},
    )
    belief, pros, cons, query = SCRIPTS["en"]
    async with open_cortex(settings, clock=clock) as service:
        first = await _remember(service, belief, "2026-10-01", "preference")
        pro = await _remember(service, pros[0], "2026-10-05", "context")
        con = await _remember(service, cons[0], "2026-10-06", "context")
        standing = await _belief(service, query, "2026-10-07")
        assert service.engines.mirrors is not None
        await service.engines.mirrors.flush()
        text = (export / "bank/opinions.md").read_text()
    assert f"## {belief}" in text and "holder: user" in text
    assert f"confidence: {standing.confidence:.2f} (2 for, 1 against;" in text
    assert f"- for: memory:{first}" in text and f"- for: memory:{pro}" in text
    assert f"- against: memory:{con}" in text


@pytest.mark.parametrize(
    ("belief", "other", "question"),
    [
        ("张伟喜欢喝乌龙茶", "李娜喜欢看电影", "张伟喜欢什么"),
        ("田中さんはコーヒーが好きです", "佐藤さんは映画が好きです", "田中さんの好きなものは?"),
    ],
)
async def test_a_preference_question_in_chinese_or_japanese_answers_from_its_holders_beliefs(
    cortex: CortexService, belief: str, other: str, question: str
) -> None:
    for i, text in enumerate(DISTRACTORS):
        await _remember(cortex, text, f"2026-09-0{i + 1}", "fact")
    await _remember(cortex, other, "2026-10-01", "preference")
    held = await _remember(cortex, belief, "2026-10-02", "preference")
    result = await cortex.memories.recall(
        build(RecallRequest, query=question, max_results=5, now="2026-10-10")
    )
    assert result.memories[0].id == held
    assert result.memories[0].belief is not None


def test_a_sentence_that_merely_says_like_or_think_asks_for_no_ones_beliefs() -> None:
    for query in ("What did I want to eat?", "Do you think it will rain?", "I like pizza, where?"):
        assert holder_asked(query) is None, query


async def test_recall_reads_its_memories_names_and_beliefs_in_one_trip_to_the_store(
    cortex: CortexService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The names linked to the memories a recall returns and the beliefs they state are two
    reads that need nothing of each other: one trip to a reader, not one each (a trip's
    thread hand-overs cost a recall more CPU than these small reads); on SQLite no trip at
    all, both read on the event loop's own connection."""
    anna = await _remember(
        cortex, "My sister Anna prefers green tea over coffee", "2026-10-02", "preference"
    )
    await _remember(cortex, "Anna had green tea at the meeting", "2026-10-09", "context")
    await cortex.drain()  # linked and settled before the reads are counted
    await cortex.memories.recall(build(RecallRequest, query="warm up", now="2026-10-10"))
    db = cortex.stores.db
    trips: list[list[str]] = []
    on_loop: list[str] = []
    fetchall, fetch_each, fetch_small = db.fetchall, db.fetch_each, db.fetch_small

    async def one(sql: str, params: Any = ()) -> list[Any]:
        trips.append([sql])
        return await fetchall(sql, params)

    async def several(statements: Any) -> list[list[Any]]:
        trips.append([sql for sql, _ in statements])
        return await fetch_each(statements)

    async def small(sql: str, params: Any = ()) -> list[Any]:
        on_loop.append(sql)
        return await fetch_small(sql, params)

    monkeypatch.setattr(db, "fetchall", one)
    monkeypatch.setattr(db, "fetch_each", several)
    if cortex.settings.database_url is None:
        monkeypatch.setattr(db, "fetch_small", small)
    result = await cortex.memories.recall(
        build(RecallRequest, query="What does Anna prefer?", max_results=5, now="2026-10-10")
    )
    monkeypatch.undo()
    top, other = result.memories
    linked = await cortex.stores.entities.entities_of("default", [top.id, other.id])
    assert top.id == anna and top.entities == linked[anna] and "Anna" in top.entities
    assert other.entities == linked[other.id] and "Anna" in other.entities
    assert top.belief is not None and top.belief.for_ == 2 and other.belief is None
    names_sql, beliefs_sql = "FROM memory_entities l JOIN entities e", "FROM beliefs WHERE"
    names = [t for t in trips if any(names_sql in s for s in t)]
    beliefs = [
        t for t in trips if any(f"{beliefs_sql} agent_id = ? AND memory_id IN" in s for s in t)
    ]
    if cortex.settings.database_url is None:  # SQLite: read where they are asked
        assert names == beliefs == [], trips
        assert any(names_sql in s for s in on_loop) and any(beliefs_sql in s for s in on_loop)
    else:
        assert len(names) == 1 and names == beliefs, trips
