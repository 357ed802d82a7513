"""The text channel's bounded path on a real SQLite file: candidates come from the rarest terms
(or the newest rows of the rarest), and every candidate is scored by FTS5's BM25 of the whole
expression, so the candidates rank exactly as an unbounded search would rank them.

The reference is FTS5 itself: `bm25()` of the full OR expression over every matching row of
the agent, in the same file."""

from __future__ import annotations

import random

import pytest

from cortex_mcp.models import SearchFilters
from cortex_mcp.search.text import build_query, match_of, within_budget
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, RecallRequest, RememberRequest, UpdateRequest
from cortex_mcp.store.text import filter_sql

pytestmark = pytest.mark.anyio

NOW = "2030-01-01T00:00:00Z"
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def vocabulary(rng: random.Random, size: int = 40) -> list[str]:
    words: list[str] = []
    while len(words) < size:
        word = "".join(rng.sample(SYLLABLES, 3))
        if word not in words:
            words.append(word)
    return words


def zipf_text(rng: random.Random, words: list[str]) -> str:
    weights = [1 / (rank + 1) for rank in range(len(words))]
    return " ".join(rng.choices(words, weights, k=rng.randint(3, 12)))


@pytest.fixture
async def corpus(service: CortexService) -> list[str]:
    """Two agents' memories over one Zipf-distributed vocabulary, some shared, some forgotten."""
    rng = random.Random(16)
    words = vocabulary(rng)
    for i in range(260):
        agent = "default" if rng.random() < 0.6 else "other"
        memory = await service.memories.remember(
            RememberRequest(content=f"{zipf_text(rng, words)} n{i}", agent_id=agent)
        )
        if agent == "other" and rng.random() < 0.05:
            await service.memories.update_memory(
                memory.id, UpdateRequest(shared=True, agent_id="other")
            )
        elif rng.random() < 0.05:
            await service.memories.forget(ForgetRequest(memory_id=memory.id, agent_id=agent))
    for i in range(15):  # an agent with few memories among the others'
        await service.memories.remember(
            RememberRequest(content=f"{zipf_text(rng, words)} t{i}", agent_id="tiny")
        )
    return words


async def exact_scores(service: CortexService, match: str, filters: SearchFilters) -> dict:
    """id -> bm25 of `match` for every row the filters allow (the unbounded search)."""
    where, params = filter_sql(filters)
    rows = await service.stores.memories.db.fetchall(
        "SELECT m.id, bm25(memories_fts) FROM memories_fts CROSS JOIN memories m"
        f" ON m.seq = memories_fts.rowid WHERE memories_fts MATCH ? AND {where}",
        [match, *params],
    )
    return {str(row[0]): float(row[1]) for row in rows}


async def newest_rows(service: CortexService, match: str, count: int) -> set[str]:
    rows = await service.stores.memories.db.fetchall(
        "SELECT m.id FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
        " ORDER BY rowid DESC LIMIT ?) AS r JOIN memories m ON m.seq = r.rowid",
        [match, count],
    )
    return {str(row[0]) for row in rows}


def assert_ranked_as(hits: list[tuple[str, float]], scores: dict, candidates: set[str]) -> None:
    """`hits` are the best of `candidates` by the unbounded scores (ties in any order)."""
    expected = sorted((s for i, s in scores.items() if i in candidates))[: len(hits) or 10]
    assert [score for _, score in hits] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    for memory_id, score in hits:
        assert memory_id in candidates
        assert score == pytest.approx(scores[memory_id], rel=1e-9, abs=1e-12)


def random_query(rng: random.Random, words: list[str]) -> list[str]:
    picked = rng.sample(words, rng.randint(2, 5))
    text = " ".join(picked)
    return build_query(text).quoted


@pytest.mark.parametrize("include_shared", [False, True])
async def test_candidates_score_the_whole_expression_as_an_unbounded_search_does(
    service: CortexService, corpus: list[str], include_shared: bool
) -> None:
    rng = random.Random(1 if include_shared else 2)
    filters = SearchFilters(agent_id="default", now=NOW, include_shared=include_shared)
    checked = 0
    for _ in range(60):
        quoted = random_query(rng, corpus)
        cut = rng.randint(1, len(quoted) - 1)
        match, rest = match_of(quoted[:cut]), match_of(quoted[cut:])
        scores = await exact_scores(service, match_of(quoted), filters)
        candidates = set(await exact_scores(service, match, filters))
        hits = await service.stores.memories.text_search(match, filters, 10, rest=rest)
        assert_ranked_as(hits, scores, candidates)
        newest = rng.randint(5, 60)
        window = candidates & await newest_rows(service, match, newest)
        hits = await service.stores.memories.text_search(
            match, filters, 10, newest=newest, rest=rest
        )
        assert_ranked_as(hits, scores, window)
        hits = await service.stores.memories.text_search(match, filters, 10, newest=newest)
        assert_ranked_as(hits, await exact_scores(service, match, filters), window)
        checked += bool(hits)
    assert checked > 40  # the queries found something: the comparison was not vacuous


async def test_a_forced_small_budget_keeps_agents_apart_and_ranks_its_candidates_exactly(
    service: CortexService, corpus: list[str]
) -> None:
    searcher = service.engines.searcher
    searcher.text_channel.row_budget = 25  # 260 memories behave as a million do
    rng = random.Random(3)
    for agent in ("default", "other"):
        filters = SearchFilters(agent_id=agent, now=NOW)
        rows = await service.stores.memories.db.fetchall(
            "SELECT id FROM memories WHERE agent_id = ?", [agent]
        )
        own = {str(row[0]) for row in rows}
        for _ in range(30):
            query = build_query(" ".join(rng.sample(corpus, rng.randint(2, 5))))
            hits = await searcher.text_channel.hits(query, filters, 10, 10)
            scores = await exact_scores(service, query.match, filters)
            assert {memory_id for memory_id, _ in hits} <= set(scores)  # allowed rows only
            assert {memory_id for memory_id, _ in hits} <= own
            for memory_id, score in hits:
                assert score == pytest.approx(scores[memory_id], rel=1e-9, abs=1e-12)


async def test_terms_no_memory_holds_change_nothing_on_a_large_index(
    service: CortexService, corpus: list[str]
) -> None:
    """A term found nowhere adds nothing to any score: the bounded path leaves it out (it would
    cost a search of its own), and a query of such terms alone finds nothing."""
    service.engines.searcher.text_channel.row_budget = 25
    filters = SearchFilters(agent_id="default", now=NOW)
    rng = random.Random(4)
    for _ in range(10):
        words = rng.sample(corpus, 3)
        hits = await service.engines.searcher.text_channel.hits(
            build_query(" ".join(words)), filters, 10, 10
        )
        absent = build_query(" ".join([*words, "zzyzx", "quuxal"]))
        assert await service.engines.searcher.text_channel.hits(absent, filters, 10, 10) == hits
    nothing = build_query("zzyzx quuxal")
    assert await service.engines.searcher.text_channel.hits(nothing, filters, 10, 10) == []


def test_terms_left_out_of_the_candidates_still_score_them_while_cheap_to_count() -> None:
    rows = {'"pemuki"': 3, '"ana"': 900, '"like"': 5000, '"really"': 7000, '"the way"': 20}
    costs = {**rows, '"the way"': 12000}  # a rare phrase of common words costs its words
    bounded = within_budget(rows, 1000, costs, scan_budget=13000)
    assert bounded.match == '"pemuki" OR "the way" OR "ana"'
    assert bounded.rest == '"like" OR "really"' and bounded.dropped == 0
    tight = within_budget(rows, 1000, costs, scan_budget=6000)
    assert tight.rest == '"like"' and tight.dropped == 1
    assert within_budget(rows, 1000).rest == ""  # no scan budget: the old rule


@pytest.mark.parametrize(
    ("question", "target", "noise"),
    [
        (
            "Tom说过护照旅行的什么？",
            "Tom：我说过护照和旅行的事",
            ["Tom：说明{i}号保护环境", "Tom：过去{i}天在银行照相", "Tom：旅馆{i}号"],
        ),
        (
            "東京の会議はいつですか",
            "部長：東京で会議があります",
            ["部長：東{i}の京都", "部長：会社{i}の議題", "部長：東口{i}で会う"],
        ),
    ],
)
async def test_a_cjk_question_finds_its_memory_on_a_large_index(
    service: CortexService, question: str, target: str, noise: list[str]
) -> None:
    """Each character is common, the bigrams of the question are rare: the candidates come from
    the bigrams' own counts, not from their characters' (which once left no candidate)."""
    wanted = await service.memories.remember(RememberRequest(content=target))
    for i in range(30):
        for pattern in noise:
            await service.memories.remember(RememberRequest(content=pattern.format(i=i)))
    searcher = service.engines.searcher
    searcher.text_channel.row_budget = 20
    filters = SearchFilters(agent_id="default", now=NOW)
    hits = await searcher.text_channel.hits(build_query(question), filters, 10, 10)
    assert hits and hits[0][0] == wanted.id
    result = await service.memories.recall(RecallRequest(query=question))
    assert result.memories[0].id == wanted.id


@pytest.mark.parametrize("include_shared", [False, True])
async def test_an_agent_with_few_memories_in_a_large_file_is_searched_exactly(
    service: CortexService, corpus: list[str], include_shared: bool
) -> None:
    """Its own rows fit the budget, so all of them are scored, with every term: the top 10 is
    the unbounded search's, however common its terms are among the other agents' rows."""
    searcher = service.engines.searcher
    searcher.text_channel.row_budget = 25 if include_shared else 20
    filters = SearchFilters(agent_id="tiny", now=NOW, include_shared=include_shared)
    assert await service.stores.memories.own_rows(filters, 1000) < searcher.text_channel.row_budget
    rng = random.Random(4)
    found = 0
    for _ in range(40):
        query = build_query(" ".join(rng.sample(corpus, rng.randint(1, 4))))
        hits = await searcher.text_channel.hits(query, filters, 10, 10)
        scores = await exact_scores(service, query.match, filters)
        assert_ranked_as(hits, scores, set(scores))
        assert len(hits) == min(10, len(scores))
        found += bool(hits)
    assert found > 20
