"""The MCP prompt templates: optional arguments are described, and defaults fill them in."""

from __future__ import annotations

import pytest
from mcp import Client

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
