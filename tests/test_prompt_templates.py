"""The MCP prompt templates: optional arguments are described, and defaults fill them in."""

from __future__ import annotations

import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


async def test_templates_describe_their_arguments_and_mark_optional_ones(
    settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        remember = {a.name: a for a in prompts["remember_conversation"].arguments or []}
        assert remember["focus"].required is False and "decisions" in (
            remember["focus"].description or ""
        )
        recall = {a.name: a for a in prompts["recall_topic"].arguments or []}
        assert recall["topic"].required is True and recall["max_results"].required is False
        assert "cortex_remember" in (prompts["remember_conversation"].description or "")

        plain = await client.get_prompt("remember_conversation", {})
        text = plain.messages[0].content.text
        assert "everything that will still matter" in text and "$focus" not in text
        focused = await client.get_prompt("recall_topic", {"topic": "the VPS"})
        assert '"the VPS" and max_results 5' in focused.messages[0].content.text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_missing_or_out_of_range_prompt_argument_is_invalid_params_naming_it(
    settings: Settings, clock: FakeClock, mode: str
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("recall_topic", {})
        assert missing.value.error.code == INVALID_PARAMS
        assert "topic: is required" in missing.value.error.message

        for bad, rule in (("999", "between 1 and 50, got 999"), ("many", "whole number")):
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("recall_topic", {"topic": "tea", "max_results": bad})
            assert refused.value.error.code == INVALID_PARAMS
            assert "max_results" in refused.value.error.message
            assert rule in refused.value.error.message

        with pytest.raises(MCPError) as unknown_argument:
            await client.get_prompt("recall_topic", {"topic": "tea", "depth": "3"})
        assert unknown_argument.value.error.code == INVALID_PARAMS
        assert "depth" in unknown_argument.value.error.message

        with pytest.raises(MCPError) as unknown_prompt:
            await client.get_prompt("recall_everything", {})
        assert unknown_prompt.value.error.code == INVALID_PARAMS
        assert "review_core" in unknown_prompt.value.error.message

        within = await client.get_prompt("recall_topic", {"topic": "tea", "max_results": " 7 "})
        assert "max_results 7" in within.messages[0].content.text


async def test_review_core_area_is_optional_and_described(
    settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode="legacy") as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        (area,) = prompts["review_core"].arguments or []
        assert area.name == "area" and area.required is False
        assert area.description and len(area.description) > len("area") + 10
        whole = await client.get_prompt("review_core", {})
        assert "Area to focus on: all of core memory" in whole.messages[0].content.text
        focused = await client.get_prompt("review_core", {"area": "food"})
        assert "Area to focus on: food" in focused.messages[0].content.text
