"""The text channel in English, Chinese, Japanese, mixed text, and exact identifiers."""

from __future__ import annotations

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.search.text import build_query
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, RecallRequest, RememberRequest

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    """Every search test here runs on SQLite and on PostgreSQL."""
    return backend_settings


MEMORIES = [
    "我喜欢投资股票和房地产",
    "他每天早上跑步",
    "品川区の1LDKは利回り4.28%だった",
    "東京で寿司を食べた",
    "Oracle Cloud 防火墙默认阻止 8080 端口",
    "Harry was running three marathons last year",
    "The studies showed the policies worked",
    "Server 10.0.0.12 answers on port 5432",
    "Login fails with ORA-12154 when the TNS alias is wrong",
    "Nginx logs live in /var/log/nginx/error.log",
    "Crash code E_CONN_REFUSED appears after deploys",
    "Our budget for Q3 is 40k USD",
]


@pytest.fixture
async def filled(service: CortexService) -> CortexService:
    for content in MEMORIES:
        await service.memories.remember(RememberRequest(content=content))
    return service


async def _top(service: CortexService, query: str) -> str:
    result = await service.memories.recall(RecallRequest(query=query, max_results=3))
    assert result.memories, f"nothing found for {query!r}"
    return result.memories[0].content


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("投资", "我喜欢投资股票和房地产"),
        ("跑步", "他每天早上跑步"),
        ("品川", "品川区の1LDKは利回り4.28%だった"),
        ("利回り", "品川区の1LDKは利回り4.28%だった"),
        ("食べ", "東京で寿司を食べた"),
        ("寿司を食べたい", "東京で寿司を食べた"),
        ("防火墙", "Oracle Cloud 防火墙默认阻止 8080 端口"),
        ("Oracle Cloud 防火墙", "Oracle Cloud 防火墙默认阻止 8080 端口"),
        ("我在哪里投资了股票?", "我喜欢投资股票和房地产"),
    ],
)
async def test_cjk_terms_of_any_length_find_their_memory(
    filled: CortexService, query: str, expected: str
) -> None:
    assert await _top(filled, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("run marathon", "Harry was running three marathons last year"),
        ("How many marathons did Harry run?", "Harry was running three marathons last year"),
        ("study policy", "The studies showed the policies worked"),
    ],
)
async def test_english_matches_inflected_forms(
    filled: CortexService, query: str, expected: str
) -> None:
    assert await _top(filled, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("10.0.0.12", "Server 10.0.0.12 answers on port 5432"),
        ("ORA-12154", "Login fails with ORA-12154 when the TNS alias is wrong"),
        ("/var/log/nginx/error.log", "Nginx logs live in /var/log/nginx/error.log"),
        ("E_CONN_REFUSED", "Crash code E_CONN_REFUSED appears after deploys"),
        ("what is wrong with 12154?", "Login fails with ORA-12154 when the TNS alias is wrong"),
    ],
)
async def test_exact_identifiers_find_their_memory(
    filled: CortexService, query: str, expected: str
) -> None:
    assert await _top(filled, query) == expected


async def test_an_identifier_fragment_falls_back_to_a_substring_match(
    filled: CortexService,
) -> None:
    # FTS tokens are whole words; "CONN_REF" is only a substring, which LIKE still finds.
    assert await _top(filled, "CONN_REF") == "Crash code E_CONN_REFUSED appears after deploys"


def test_user_text_never_becomes_fts_syntax() -> None:
    for text in ['"', "NOT", "NEAR(a b)", 'x" OR "y', "a*", "col:val", "^x"]:
        for term in build_query(text).terms:
            assert '"' not in term or term.count('"') % 2 == 0
        assert build_query(text).match == "" or build_query(text).match.startswith('"')


def test_long_questions_drop_noise_words() -> None:
    query = build_query("What did Caroline say about the adoption agencies she was researching?")
    assert query.terms == ["caroline", "say", "adoption", "agencies", "researching"]


def test_a_compound_word_also_matches_its_parts_said_apart() -> None:
    query = build_query("What transgender-specific events has Caroline attended?")
    assert query.terms[0] == "transgender-specific"  # the exact compound still counts
    assert {"transgender", "specific", "events", "caroline", "attended"} <= set(query.terms)


async def test_a_compound_query_finds_a_memory_that_spells_it_apart(
    filled: CortexService,
) -> None:
    await filled.memories.remember(
        RememberRequest(content="Caroline spoke at two events this spring")
    )
    await filled.memories.remember(
        RememberRequest(content="She found a support group specific to transgender youth")
    )
    assert await _top(filled, "transgender-specific events") == (
        "She found a support group specific to transgender youth"
    )


def test_adjacent_content_words_also_count_as_a_phrase() -> None:
    query = build_query("How many video game tournaments has Nate won?")
    assert query.phrases == ["many video", "video game", "game tournaments", "nate won"]
    assert '"video game"' in query.match


async def test_a_memory_that_says_the_words_together_ranks_first(filled: CortexService) -> None:
    await filled.memories.remember(RememberRequest(content="Game night, then a video"))
    await filled.memories.remember(
        RememberRequest(content="Nate won the video game tournament in Boston last spring")
    )
    assert await _top(filled, "video game") == (
        "Nate won the video game tournament in Boston last spring"
    )


def test_likes_and_thoughts_are_topics_not_noise() -> None:
    assert build_query("What does Melanie like?").terms == ["melanie", "like"]
    assert build_query("What did John think of Paris?").terms == ["john", "think", "paris"]


def test_a_curly_apostrophe_reads_as_a_straight_one() -> None:
    assert build_query("don’t forget Caroline’s dog").terms == ["forget", "caroline", "dog"]


async def test_the_first_hits_the_filters_allow_are_those_of_an_exact_search(
    service: CortexService,
) -> None:
    """The index ranks its top rows before they are filtered: whether another agent's,
    forgotten or superseded memories fill them or not, an agent gets what the search of all
    its own rows would, in the same order (equal scores oldest first)."""
    for n in range(60):
        await service.memories.remember(
            RememberRequest(content=f"budget review notes {n}", agent_id="another")
        )
    own = [f"budget review page {n}" for n in range(12)]  # equal scores: oldest first
    for content in own:
        await service.memories.remember(RememberRequest(content=content))
    gone = await service.memories.remember(RememberRequest(content="budget review scrap"))
    await service.memories.forget(ForgetRequest(memory_id=gone.id))
    store = service.stores.memories
    filters = service.memories.filters(None, None, None, None)
    match = build_query("budget review").match
    for limit in (3, 10, 12, 20):  # fewer than, as many as and more than the agent has
        found = await store.text_search(match, filters, limit)
        contents = {m.id: m.content for m in (await store.get_many([i for i, _ in found])).values()}
        assert [contents[i] for i, _ in found] == own[: min(limit, 12)]
