"""The text channel on a large index: the rarest terms first, within a budget of FTS rows.

The budget is lowered on a real database so that a few dozen memories behave as a million
do; the rule itself (`within_budget`) is checked on counts."""

from __future__ import annotations

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import SearchFilters
from cortex_mcp.search.text import build_query, quote, term_costs, within_budget, words_of
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    """The service test here runs on SQLite and on PostgreSQL."""
    return backend_settings


def test_the_rarest_terms_are_kept_while_their_rows_fit() -> None:
    counts = {'"ana"': 900, '"pemuki"': 3, '"tournament"': 40, '"like"': 5000}
    bounded = within_budget(counts, 1000)
    assert bounded.match == '"pemuki" OR "tournament" OR "ana"'
    assert bounded.newest is None and bounded.dropped == 1


def test_every_term_within_the_budget_keeps_the_expression_as_written() -> None:
    counts = {'"video"': 10, '"game"': 20, '"video game"': 5}
    assert within_budget(counts, 1000).match == '"video" OR "game" OR "video game"'
    assert within_budget(counts, 1000).match == build_query("video game").match


def test_when_even_the_rarest_term_is_common_only_the_newest_rows_are_scored() -> None:
    bounded = within_budget({'"like"': 9000, '"really"': 8000}, 1000)
    assert bounded.match == '"really"' and bounded.newest == 1000


def test_user_text_never_becomes_query_syntax() -> None:
    query = build_query('alpha" OR NEAR(beta) "gamma')
    bounded = within_budget(dict.fromkeys(query.quoted, 1), 10)
    for term in query.quoted:
        assert term.startswith('"') and term.endswith('"')
        assert quote(term[1:-1].replace('""', '"')) == term
    assert bounded.match == query.match


async def test_a_large_index_ranks_by_its_rare_terms_and_stays_per_agent(
    service: CortexService,
) -> None:
    for i in range(40):
        await service.memories.remember(
            RememberRequest(content=f"note {i}: the weekly report was sent on time")
        )
    target = await service.memories.remember(
        RememberRequest(content="the weekly report mentions the zeppelin budget")
    )
    other = await service.memories.remember(
        RememberRequest(content="zeppelin budget review", agent_id="someone-else")
    )
    searcher = service.engines.searcher
    filters = SearchFilters(agent_id="default", now="2030-01-01T00:00:00Z")
    query = build_query("weekly report zeppelin")
    exact = await searcher.text_channel.hits(query, filters, 10, 10)
    searcher.text_channel.row_budget = (
        5  # 42 memories are now "large"; "zeppelin" fits, the rest not
    )
    bounded = await searcher.text_channel.hits(query, filters, 10, 10)
    assert bounded[0][0] == exact[0][0] == target.id
    assert [memory_id for memory_id, _ in bounded] == [target.id]
    assert other.id not in {memory_id for memory_id, _ in bounded}

    common = build_query("weekly report")  # every term matches more rows than the budget
    newest = await searcher.text_channel.hits(common, filters, 10, 10)
    assert 0 < len(newest) <= 5 and target.id in {memory_id for memory_id, _ in newest}
    result = await service.memories.recall(RecallRequest(query="weekly report zeppelin"))
    assert result.memories[0].id == target.id


def test_a_phrase_costs_what_its_words_cost() -> None:
    """A rare phrase of common words still makes FTS5 read both words' lists."""
    assert words_of('"video game"') == ['"video"', '"game"']
    assert words_of('"投 资"') == ['"投"', '"资"']
    costs = term_costs(['"video"', '"video game"'], {'"video"': 30, '"game"': 900})
    assert costs == {'"video"': 30, '"video game"': 930}
    assert within_budget(costs, 100).match == '"video"'
