"""The MCP surface in-process, in both protocol eras: tools, errors, resources, prompts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client, MCPError

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import IngestRequest, build
from cortex_mcp.tokenize import query_key
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    """Every test here runs on SQLite and on PostgreSQL."""
    return backend_settings


@pytest.fixture(params=["auto", "legacy"])
async def client(
    request: pytest.FixtureRequest, settings: Settings, clock: FakeClock
) -> AsyncIterator[Client]:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode=request.param) as c:
        yield c


async def _call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def _count(client: Client) -> int:
    stats = await client.read_resource("cortex://stats")
    return int(json.loads(stats.contents[0].text)["memories"]["total"])


async def test_the_tool_names_and_parameters_are_frozen(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    params = {name: set(t.input_schema["properties"]) for name, t in tools.items()}
    assert params == {
        "cortex_recall": {
            "query",
            "max_results",
            "layers",
            "categories",
            "max_tokens",
            "agent_id",
            "since",
            "until",
            "now",
            "timezone",
            "about",
            "include_history",
        },
        "cortex_remember": {
            "content",
            "category",
            "importance",
            "layer",
            "supersedes",
            "source",
            "agent_id",
            "occurred_at",
            "timezone",
        },
        "cortex_forget": {"memory_id", "reason", "correction", "purge", "agent_id"},
        "cortex_search_debug": {
            "query",
            "max_results",
            "agent_id",
            "since",
            "until",
            "now",
            "timezone",
        },
    }
    for tool in tools.values():
        assert "Example:" in (tool.description or "")


async def test_a_retried_remember_leaves_one_memory(client: Client) -> None:
    first = await _call(client, "cortex_remember", content="User lives in Shinagawa, Tokyo")
    retry = await _call(client, "cortex_remember", content="User lives in Shinagawa, Tokyo")
    spaced = await _call(client, "cortex_remember", content="  user lives in  shinagawa, tokyo. ")
    assert first["deduplicated"] is False
    assert retry == {**first, "deduplicated": True}
    assert spaced["id"] == first["id"]
    assert await _count(client) == 1


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"content": ""}, "content"),
        ({"content": "   \n\t "}, "content"),
        ({"content": "x" * 8001}, "8000"),
        ({"content": "fact", "importance": 1.5}, "importance"),
        ({"content": "fact", "importance": -0.1}, "importance"),
        ({"content": "fact", "category": "gossip"}, "category"),
        ({"content": "fact", "layer": "attic"}, "layer"),
        ({"content": "fact", "supersedes": "nope"}, "supersedes"),
        ({"content": "fact", "supersedes": "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51"}, "supersedes"),
    ],
)
async def test_bad_remember_input_is_refused_and_changes_nothing(
    client: Client, arguments: dict[str, Any], expected: str
) -> None:
    result = await client.call_tool("cortex_remember", arguments)
    assert result.is_error
    assert expected in result.content[0].text
    assert await _count(client) == 0


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"memory_id": "12345"}, "memory_id"),
        ({"memory_id": "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51"}, "no memory"),
        ({"memory_id": "'; DROP TABLE memories; --"}, "memory_id"),
    ],
)
async def test_forgetting_an_unknown_or_malformed_id_says_so(
    client: Client, arguments: dict[str, Any], expected: str
) -> None:
    await _call(client, "cortex_remember", content="A fact that must survive")
    result = await client.call_tool("cortex_forget", arguments)
    assert result.is_error and expected in result.content[0].text
    assert await _count(client) == 1


@pytest.mark.parametrize(
    "query",
    ['"', "*", "NOT", "NEAR(", 'say "hello', "a AND OR b", "col:value", "^start", "(((", "-x"],
)
async def test_fts_syntax_in_a_query_is_searched_as_text(client: Client, query: str) -> None:
    await _call(
        client, "cortex_remember", content='He said "hello" and NOT goodbye (NEAR the door)'
    )
    result = await client.call_tool("cortex_recall", {"query": query})
    assert not result.is_error, result.content


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x", "max_results": 0}, "max_results"),
        ({"query": "x", "max_results": 51}, "max_results"),
        ({"query": "x", "layers": ["attic"]}, "layers"),
        ({"query": "x", "categories": ["gossip"]}, "categories"),
        ({"query": "x" * 2001}, "query"),
    ],
)
async def test_bad_recall_input_names_the_field(
    client: Client, arguments: dict[str, Any], expected: str
) -> None:
    result = await client.call_tool("cortex_recall", arguments)
    assert result.is_error and expected in result.content[0].text


async def test_a_one_character_cjk_query_is_answered_not_crashed(client: Client) -> None:
    await _call(client, "cortex_remember", content="我喜欢猫")
    await _call(client, "cortex_remember", content="東京タワーに行った")
    found = await _call(client, "cortex_recall", query="猫")
    assert [m["content"] for m in found["memories"]] == ["我喜欢猫"]
    assert found["meta"]["notes"]
    nothing = await _call(client, "cortex_recall", query="犬")
    assert nothing["memories"] == []


async def test_small_talk_is_skipped_with_a_reason(client: Client) -> None:
    await _call(client, "cortex_remember", content="Thanks to Bob the build is green")
    for message in ["thanks!", "好的", "ありがとうございます", "hi there"]:
        result = await _call(client, "cortex_recall", query=message)
        assert result["memories"] == []
        assert result["meta"]["skipped_reason"] == "small talk"


async def test_forget_variants_soft_correct_and_purge(client: Client) -> None:
    soft = await _call(client, "cortex_remember", content="Office wifi password is hunter2")
    moved = await _call(client, "cortex_remember", content="User lives in Osaka")
    secret = await _call(client, "cortex_remember", content="Bank PIN is 4321")

    await _call(client, "cortex_forget", memory_id=soft["id"], reason="rotated")
    detail = json.loads(
        (await client.read_resource(f"cortex://memories/{soft['id']}")).contents[0].text
    )
    assert detail["memory"]["layer"] == "archive" and detail["memory"]["forgotten_at"]

    corrected = await _call(
        client, "cortex_forget", memory_id=moved["id"], correction="User lives in Kyoto since 2026"
    )
    assert corrected["status"] == "corrected" and corrected["new_id"]
    recall = await _call(client, "cortex_recall", query="where does the user live")
    assert [m["content"] for m in recall["memories"]] == ["User lives in Kyoto since 2026"]
    chain = json.loads(
        (await client.read_resource(f"cortex://memories/{corrected['new_id']}")).contents[0].text
    )
    assert [m["id"] for m in chain["correction_chain"]] == [moved["id"]]

    purged = await _call(client, "cortex_forget", memory_id=secret["id"], purge=True)
    assert purged["status"] == "purged"
    with pytest.raises(MCPError):
        await client.read_resource(f"cortex://memories/{secret['id']}")
    assert (await _call(client, "cortex_recall", query="bank PIN"))["memories"] == []


async def test_supersedes_chains_an_old_memory_out_of_recall(client: Client) -> None:
    old = await _call(client, "cortex_remember", content="Deploy target is Heroku")
    new = await _call(
        client, "cortex_remember", content="Deploy target is Fly.io", supersedes=old["id"]
    )
    assert new["superseded"] == [old["id"]]
    recall = await _call(client, "cortex_recall", query="deploy target")
    assert [m["id"] for m in recall["memories"]] == [new["id"]]


async def test_recall_counts_access_and_tags_context_lines(client: Client) -> None:
    made = await _call(
        client, "cortex_remember", content="Sprint review is every Friday", layer="working"
    )
    recall = await _call(client, "cortex_recall", query="sprint review")
    assert recall["context"].splitlines()[1].startswith("- [working 2026-11-01, today]")
    detail = json.loads(
        (await client.read_resource(f"cortex://memories/{made['id']}")).contents[0].text
    )
    assert detail["memory"]["access_count"] == 1
    assert detail["access_history"][0]["query_hash"] == query_key("sprint review")
    assert "sprint review" not in json.dumps(detail["access_history"])


async def test_context_respects_the_token_budget(client: Client) -> None:
    for i in range(30):
        await _call(client, "cortex_remember", content=f"Budget note {i}: " + "项目预算 " * 40)
    recall = await _call(client, "cortex_recall", query="项目预算", max_results=30, max_tokens=300)
    assert 0 < recall["meta"]["tokens"] <= 300
    assert len(recall["memories"]) == len(recall["context"].splitlines()) - 1


async def test_resources_and_prompts_are_listed(client: Client) -> None:
    await _call(
        client, "cortex_remember", content="User is a real-estate investor", category="identity"
    )
    uris = {r.uri for r in (await client.list_resources()).resources}
    assert {"cortex://core", "cortex://stats"} <= uris
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert "cortex://memories/{id}" in templates
    core = (await client.read_resource("cortex://core")).contents[0].text
    assert "## User profile" in core and "real-estate investor" in core
    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"recall_topic", "remember_conversation", "review_core"} <= prompts
    rendered = await client.get_prompt("recall_topic", {"topic": "投资"})
    assert "投资" in rendered.messages[0].content.text


async def test_search_debug_shows_every_stage(client: Client) -> None:
    await _call(client, "cortex_remember", content="The firewall blocks port 8080 on the VPS")
    report = await _call(client, "cortex_search_debug", query="firewall port")
    assert report["query"]["fts_expression"] == '"firewall" OR "port" OR "firewall port"'
    hit = report["hits"][0]
    for key in ("text", "vector", "fused", "layer_weight", "recency", "access", "decay", "final"):
        assert key in hit
    stages = [
        "parse",
        "channels",
        "fuse",
        "signals",
        "time",
        "entity",
        "validity",
        "belief",
        "rerank",
        "diversity",
        "budget",
    ]
    assert [stage["name"] for stage in report["stages"]] == stages
    assert all(stage["ms"] >= 0 for stage in report["stages"])
    assert {"parse", "text", "fuse"} <= set(report["timings_ms"])
    assert list(hit["stages"]) == stages[2:]  # its score after each stage, once it has one
    assert hit["stages"]["budget"] == hit["final"]
    assert hit["rerank_score"] is None  # no reranker configured
    assert report["query"]["time_window"] is None


async def test_search_debug_shows_each_hits_fused_score_before_the_signals_stage_not_zero(
    client: Client,
) -> None:
    await _call(client, "cortex_remember", content="The firewall blocks port 8080 on the VPS")
    report = await _call(client, "cortex_search_debug", query="firewall port")
    hit = report["hits"][0]
    assert hit["fused"] > 0
    assert "channels" not in hit["stages"]  # no score exists before the channels are fused
    assert hit["stages"]["fuse"] == hit["fused"]
    assert hit["stages"]["signals"] > 0 and all(score > 0 for score in hit["stages"].values())


async def test_search_debug_shows_the_window_and_searches_the_other_words(client: Client) -> None:
    # said yesterday by the clock of these tests (a window holding no memory gives its words back)
    await _call(
        client,
        "cortex_remember",
        content="The firewall blocks port 8080 on the VPS",
        occurred_at="2026-10-31T09:00:00Z",
    )
    report = await _call(client, "cortex_search_debug", query="firewall port yesterday")
    assert report["query"]["raw"] == "firewall port yesterday"
    assert report["query"]["time_window"]["expression"] == "yesterday"
    assert report["query"]["time_window"]["granularity"] == "day"
    assert report["query"]["searched_text"] == "firewall port"
    assert "yesterday" not in report["query"]["fts_expression"]
    assert report["hits"][0]["content"] == "The firewall blocks port 8080 on the VPS"
    assert report["hits"][0]["time_boost"] == 1.0 and report["facts"]["time"]["boosted"]


async def test_recall_text_marks_raw_turns_as_conversation_history(
    client: Client, settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(settings, clock=clock) as service:  # no LLM: the raw turn is kept
        await service.conversation.ingest(
            build(
                IngestRequest,
                user_message="The staging database moved to db2.internal.",
                assistant_message="Noted, db2 it is.",
            )
        )
    result = await client.call_tool("cortex_recall", {"query": "staging database"})
    text = result.content[0].text
    assert "conversation history: what user said, not a verified fact" in text
    assert "db2.internal" in text and "Noted" not in text
