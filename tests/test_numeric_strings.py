"""Numbers sent as numeric strings, as models often send them: accepted where the reading is
unambiguous, on the MCP tools (both protocol eras) and over REST; booleans stay strict."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["auto", "legacy"])
async def client(
    request: pytest.FixtureRequest, settings: Settings, clock: FakeClock
) -> AsyncIterator[Client]:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode=request.param) as c:
        yield c


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def test_importance_and_max_results_as_numeric_strings_are_read_as_numbers(
    client: Client,
) -> None:
    stored = await _call(
        client, "cortex_remember", {"content": "The user lives in Lisbon", "importance": "0.9"}
    )
    detail = await client.read_resource(f"cortex://memories/{stored['id']}")
    assert '"importance": 0.9' in detail.contents[0].text
    for i in range(3):
        await _call(client, "cortex_remember", {"content": f"Lisbon fact number {i}"})
    found = await _call(client, "cortex_recall", {"query": "Lisbon", "max_results": " 2 "})
    assert len(found["memories"]) == 2
    whole = await _call(client, "cortex_recall", {"query": "Lisbon", "max_results": "3.0"})
    assert len(whole["memories"]) == 3


@pytest.mark.parametrize(
    ("tool", "arguments", "rule"),
    [
        ("cortex_remember", {"content": "x", "importance": "1.5"}, "between 0 and 1"),
        ("cortex_remember", {"content": "x", "importance": "high"}, "must be a number"),
        ("cortex_remember", {"content": "x", "importance": "nan"}, "must be a number"),
        ("cortex_remember", {"content": "x", "importance": "0x1"}, "must be a number"),
        ("cortex_recall", {"query": "x", "max_results": "2.5"}, "must be an integer"),
        ("cortex_recall", {"query": "x", "max_results": "1_0"}, "must be an integer"),
        ("cortex_recall", {"query": "x", "max_results": "99"}, "between 1 and 50"),
        ("cortex_recall", {"query": "x", "max_results": ""}, "must be an integer"),
    ],
)
async def test_ambiguous_or_out_of_range_numeric_strings_are_refused_naming_the_field(
    client: Client, tool: str, arguments: dict[str, Any], rule: str
) -> None:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and rule in text
    field = next(name for name in arguments if name not in ("content", "query"))
    assert field in text


async def test_the_schema_still_says_number_and_purge_still_wants_a_real_boolean(
    client: Client,
) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["cortex_remember"].input_schema["properties"]["importance"]["type"] == "number"
    assert tools["cortex_recall"].input_schema["properties"]["max_results"]["type"] == "integer"
    stored = await _call(client, "cortex_remember", {"content": "Keep me"})
    refused = await client.call_tool("cortex_forget", {"memory_id": stored["id"], "purge": "1"})
    assert refused.is_error and "purge" in refused.content[0].text  # type: ignore[union-attr]


def test_rest_accepts_numeric_strings_for_importance_and_max_results(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none", api_token=TOKEN)
    with rest_client(settings, clock) as rest:
        rest.headers.update(AUTH)
        for i in range(3):
            stored = rest.post(
                "/api/v1/memories", json={"content": f"Porto fact {i}", "importance": "0.9"}
            )
            assert stored.status_code == 201, stored.text
        shown = rest.get(f"/api/v1/memories/{stored.json()['id']}").json()
        assert shown["memory"]["importance"] == 0.9
        found = rest.post("/api/v1/recall", json={"query": "Porto", "max_results": "2"})
        assert found.status_code == 200 and len(found.json()["memories"]) == 2
        refused = rest.post("/api/v1/recall", json={"query": "Porto", "max_results": "99"})
        assert refused.status_code == 422 and "max_results" in refused.text
