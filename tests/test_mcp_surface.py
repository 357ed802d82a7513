"""What a client sees of the MCP surface: flat frozen schemas, strict arguments, ids in the text
a model reads, replies bounded by what the caller asked for. In-process, both protocol eras."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client, MCPError

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

ID = re.compile(r"id ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")

LAYERS = ["working", "core", "archive"]
CATEGORIES = [
    "identity",
    "preference",
    "decision",
    "fact",
    "insight",
    "todo",
    "correction",
    "skill",
    "relationship",
    "project_state",
    "context",
    "summary",
    "profile",
]

# name -> (type, required, limits or enum): what clients are promised.
FROZEN: dict[str, dict[str, tuple[Any, ...]]] = {
    "cortex_recall": {
        "query": ("string", True, 1, 2000),
        "max_results": ("integer", False, 1, 50),
        "layers": ("array", False, LAYERS),
        "categories": ("array", False, CATEGORIES),
        "max_tokens": ("integer", False, 50, 100_000),
        "agent_id": ("string", False, 1, 128),
        "include_history": ("boolean", False),
        "since": ("string", False, None, 40),
        "until": ("string", False, None, 40),
        "now": ("string", False, None, 40),
        "timezone": ("string", False, 1, 64),
        "about": ("string", False, 1, 200),
    },
    "cortex_remember": {
        "content": ("string", True, 1, 8000),
        "category": ("string", False, CATEGORIES),
        "importance": ("number", False, 0, 1),
        "layer": ("string", False, LAYERS),
        "supersedes": ("string", False, 1, 64),
        "source": ("string", False, None, 500),
        "agent_id": ("string", False, 1, 128),
        "occurred_at": ("string", False, None, 40),
        "timezone": ("string", False, 1, 64),
    },
    "cortex_forget": {
        "memory_id": ("string", True, 1, 64),
        "reason": ("string", False, None, 1000),
        "correction": ("string", False, 1, 8000),
        "purge": ("boolean", False),
        "agent_id": ("string", False, 1, 128),
    },
    "cortex_search_debug": {
        "query": ("string", True, 1, 2000),
        "max_results": ("integer", False, 1, 50),
        "agent_id": ("string", False, 1, 128),
        "since": ("string", False, None, 40),
        "until": ("string", False, None, 40),
        "now": ("string", False, None, 40),
        "timezone": ("string", False, 1, 64),
    },
}


def _shape(name: str, schema: dict[str, Any], required: list[str]) -> tuple[Any, ...]:
    kind = schema["type"]
    shape: tuple[Any, ...] = (kind, name in required)
    if kind == "array":
        return (*shape, schema["items"]["enum"])
    if "enum" in schema:
        return (*shape, schema["enum"])
    if kind == "string":
        return (*shape, schema.get("minLength"), schema["maxLength"])
    if kind in ("integer", "number"):
        return (*shape, schema["minimum"], schema["maximum"])
    return shape


@pytest.fixture(params=["auto", "legacy"])
async def client(
    request: pytest.FixtureRequest, settings: Settings, clock: FakeClock
) -> AsyncIterator[Client]:
    server = build_server(lambda: open_cortex(settings, clock=clock), settings)
    async with Client(server, mode=request.param) as c:
        yield c


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def _ok(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    return _text(result)


async def _count(client: Client) -> int:
    stats = await client.read_resource("cortex://stats")
    return int(json.loads(stats.contents[0].text)["memories"]["total"])


async def test_tool_schemas_are_flat_limited_titled_and_frozen(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    shapes = {}
    for name, tool in tools.items():
        schema = tool.input_schema
        dumped = json.dumps(schema)
        assert "$ref" not in dumped and "$defs" not in dumped and "anyOf" not in dumped, name
        assert schema["additionalProperties"] is False
        shapes[name] = {
            param: _shape(param, spec, schema["required"])
            for param, spec in schema["properties"].items()
        }
        for param, spec in schema["properties"].items():
            assert spec.get("description"), (name, param)
            if spec["type"] == "string":
                assert "maxLength" in spec or "enum" in spec, (name, param)
        assert tool.title
        hints = tool.annotations
        assert hints is not None
        for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            assert isinstance(getattr(hints, hint), bool), (name, hint)
    assert shapes == FROZEN
    assert tools["cortex_recall"].annotations.read_only_hint is True
    assert tools["cortex_remember"].annotations.destructive_hint is False
    assert tools["cortex_forget"].annotations.destructive_hint is True


async def test_the_published_content_limit_follows_the_setting(
    settings: Settings, clock: FakeClock
) -> None:
    small = settings.model_copy(update={"max_content_chars": 300})
    server = build_server(lambda: open_cortex(small, clock=clock), small)
    async with Client(server, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["cortex_remember"].input_schema["properties"]["content"]["maxLength"] == 300
        refused = await client.call_tool("cortex_remember", {"content": "x" * 301})
        assert refused.is_error and "300" in _text(refused)


async def test_an_agent_reading_only_text_content_can_forget_what_it_recalled(
    client: Client,
) -> None:
    stored = await _ok(client, "cortex_remember", content="The staging server runs Debian 12")
    assert ID.search(stored)
    await _ok(client, "cortex_remember", content="Lunch is at noon on Fridays")

    recalled = await _ok(client, "cortex_recall", query="which OS does the staging server run")
    assert "core" in recalled and "2026-11-01" in recalled and "score" in recalled
    found = ID.search(recalled)
    assert found is not None
    await _ok(client, "cortex_forget", memory_id=found.group(1), reason="migrated")

    again = await _ok(client, "cortex_recall", query="which OS does the staging server run")
    assert "Debian" not in again


async def test_skipped_and_degraded_recalls_say_so_in_the_text(client: Client) -> None:
    skipped = await _ok(client, "cortex_recall", query="thanks!")
    assert "small talk" in skipped
    nothing = await _ok(client, "cortex_recall", query="zebra migration patterns")
    assert "No memories matched" in nothing


async def test_core_memory_lists_ids(client: Client) -> None:
    text = await _ok(client, "cortex_remember", content="User is a vegetarian", category="identity")
    memory_id = ID.search(text).group(1)  # type: ignore[union-attr]
    core = (await client.read_resource("cortex://core")).contents[0].text
    assert memory_id in core


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("cortex_remember", {"content": "Stored under A", "agentId": "A"}, "agentId"),
        ("cortex_recall", {"query": "x", "max_result": 3}, "max_result"),
        ("cortex_remember", {"content": "fact", "importance": "high"}, "importance"),
        ("cortex_remember", {"content": 42}, "content"),
        ("cortex_remember", {"content": ["a", "b"]}, "content"),
        ("cortex_remember", {"content": "fact", "layer": ["core"]}, "layer"),
        ("cortex_recall", {"query": "x", "max_results": True}, "max_results"),
        ("cortex_recall", {"query": "x", "max_results": 2.5}, "max_results"),
        ("cortex_recall", {"query": "x", "layers": "core"}, "layers"),
        ("cortex_recall", {"query": "x", "layers": ["core", 3]}, "layers"),
        ("cortex_remember", {"content": "fact", "source": "s" * 501}, "source"),
        ("cortex_remember", {"content": "fact", "agent_id": "a" * 129}, "agent_id"),
        ("cortex_remember", {"category": "fact"}, "content"),
    ],
)
async def test_wrong_argument_names_and_types_are_refused_and_change_nothing(
    client: Client, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert expected in _text(result)
    assert await _count(client) == 0


async def test_an_unknown_argument_error_lists_the_valid_ones(client: Client) -> None:
    result = await client.call_tool("cortex_remember", {"content": "x", "agentId": "A"})
    text = _text(result)
    assert "unknown argument 'agentId'" in text
    assert "agent_id" in text and "supersedes" in text


@pytest.mark.parametrize("purge", ["yes", "true", 1, "1"])
async def test_purge_only_takes_a_real_boolean(client: Client, purge: Any) -> None:
    text = await _ok(client, "cortex_remember", content="Keep this one")
    memory_id = ID.search(text).group(1)  # type: ignore[union-attr]
    result = await client.call_tool("cortex_forget", {"memory_id": memory_id, "purge": purge})
    assert result.is_error and "purge" in _text(result)
    detail = json.loads(
        (await client.read_resource(f"cortex://memories/{memory_id}")).contents[0].text
    )
    assert detail["memory"]["content"] == "Keep this one"
    assert detail["memory"]["forgotten_at"] is None


async def test_explicit_nulls_count_as_not_given(client: Client) -> None:
    await _ok(client, "cortex_remember", content="Null-tolerant", source=None, supersedes=None)
    result = await client.call_tool("cortex_recall", {"query": "tolerant", "layers": None})
    assert not result.is_error
    assert "Null-tolerant" in _text(result)


async def test_arrays_sent_as_json_text_are_accepted(client: Client) -> None:
    await _ok(client, "cortex_remember", content="Working note about tofu", layer="working")
    text = await _ok(client, "cortex_recall", query="tofu", layers='["working"]')
    assert "tofu" in text


async def test_errors_quote_only_a_short_prefix_of_bad_input(client: Client) -> None:
    for arguments in (
        {"memory_id": "z" * 60},
        {"memory_id": "x" * 100_000},
        {"memory_id": "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51", "reason": "r" * 100_000},
    ):
        result = await client.call_tool("cortex_forget", arguments)
        assert result.is_error
        assert len(_text(result)) < 300, _text(result)[:400]
    wrong_type = await client.call_tool("cortex_recall", {"query": "x", "layers": "q" * 50_000})
    assert wrong_type.is_error and len(_text(wrong_type)) < 300


async def test_a_small_budget_bounds_every_returned_memory(client: Client) -> None:
    huge = "Quarterly budget review notes. " * 250  # about 7700 characters
    await _ok(client, "cortex_remember", content=huge, source="meeting " + "m" * 400)
    result = await client.call_tool(
        "cortex_recall", {"query": "quarterly budget", "max_tokens": 50}
    )
    assert not result.is_error
    reply = json.dumps(result.structured_content) + _text(result)
    assert len(reply) < 3000
    memory = result.structured_content["memories"][0]
    assert memory["truncated"] is True and memory["content"].endswith("…")
    assert "cut to fit max_tokens" in _text(result)

    full = await client.call_tool("cortex_recall", {"query": "quarterly budget"})
    assert full.structured_content["memories"][0]["content"] == huge.strip()
    assert full.structured_content["memories"][0]["truncated"] is False


async def test_oversized_tool_names_and_uris_are_not_echoed_back(client: Client) -> None:
    tool = await client.call_tool("t" * 100_000, {})
    assert tool.is_error and len(_text(tool)) < 300
    with pytest.raises(MCPError) as resource:
        await client.read_resource("cortex://memories/" + "x" * 100_000)
    assert len(str(resource.value)) + len(json.dumps(resource.value.data or {})) < 600
    with pytest.raises(MCPError) as prompt:
        await client.get_prompt("p" * 100_000, {})
    assert len(str(prompt.value)) < 600


async def test_a_crash_inside_a_tool_shows_only_a_generic_line(
    settings: Settings, clock: FakeClock
) -> None:
    opened = []

    @asynccontextmanager
    async def open_and_keep() -> AsyncIterator[Any]:
        async with open_cortex(settings, clock=clock) as service:
            opened.append(service)
            yield service

    async with Client(build_server(open_and_keep, settings), mode="legacy") as client:
        await _ok(client, "cortex_remember", content="Something to find later")
        await opened[0].stores.db.close()  # the connection is gone: every query now crashes
        result = await client.call_tool("cortex_recall", {"query": "something"})
        assert result.is_error
        assert _text(result) == "Error executing tool cortex_recall"


@pytest.mark.parametrize(
    "agent", ["\u0000", "a\u0000b", "tab\tagent", "\u009fx", "admin\u202ex", "a\u2066b", "\u200bz"]
)
async def test_an_agent_id_with_a_control_character_is_refused_by_every_tool(
    client: Client, settings: Settings, agent: str
) -> None:
    calls = {
        "cortex_recall": {"query": "anything"},
        "cortex_search_debug": {"query": "anything"},
        "cortex_remember": {"content": "A fact for a strange agent"},
        "cortex_forget": {"memory_id": "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51"},
    }
    assert set(calls) == {t.name for t in (await client.list_tools()).tools}
    for tool, arguments in calls.items():
        result = await client.call_tool(tool, {**arguments, "agent_id": agent})
        assert result.is_error, tool
        assert "agent_id" in _text(result) and "control characters" in _text(result), tool
    with contextlib.closing(sqlite_module().connect(settings.db_path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
