"""Two servers on one database file, running as agents A and B: B sees nothing of A through any
tool or resource (and cannot change A's memories), in both protocol eras."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client, MCPError

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

SECRET = "Agent A's launch codename is Bluefinch 7"
CORRECTION = "Agent A's launch codename is Redwing 9"


@asynccontextmanager
async def _server(
    settings: Settings, agent: str, clock: FakeClock, mode: str
) -> AsyncIterator[Client]:
    own = settings.model_copy(update={"agent_id": agent})
    async with Client(build_server(lambda: open_cortex(own, clock=clock), own), mode=mode) as c:
        yield c


def _dump(result: Any) -> str:
    """Everything a reply carries, as text, to search for A's content."""
    if hasattr(result, "contents"):
        return json.dumps([c.model_dump(mode="json") for c in result.contents], ensure_ascii=False)
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_agent_b_sees_and_changes_nothing_of_agent_a(
    settings: Settings, clock: FakeClock, mode: str
) -> None:
    async with _server(settings, "A", clock, mode) as a:
        made = await a.call_tool("cortex_remember", {"content": SECRET, "source": "chat-A"})
        a_id = made.structured_content["id"]
        await a.call_tool("cortex_recall", {"query": "launch codename Bluefinch"})
        old = await a.call_tool("cortex_remember", {"content": "Agent A's old codename was Heron"})
        corrected = await a.call_tool(
            "cortex_forget",
            {"memory_id": old.structured_content["id"], "correction": CORRECTION},
        )
        assert not corrected.is_error

    replies: list[str] = []
    async with _server(settings, "B", clock, mode) as b:
        for query in ("launch codename Bluefinch", "Bluefinch", "codename", "Redwing 9", a_id):
            recall = await b.call_tool("cortex_recall", {"query": query})
            assert not recall.is_error and recall.structured_content["memories"] == []
            replies.append(_dump(recall))
            debug = await b.call_tool("cortex_search_debug", {"query": query})
            assert not debug.is_error and debug.structured_content["hits"] == []
            replies.append(_dump(debug))

        for arguments in (
            {"memory_id": a_id},
            {"memory_id": a_id, "purge": True},
            {"memory_id": a_id, "correction": "B rewrites A's memory"},
        ):
            refused = await b.call_tool("cortex_forget", arguments)
            assert refused.is_error and "no memory" in refused.content[0].text
            replies.append(_dump(refused))
        superseding = await b.call_tool(
            "cortex_remember", {"content": "B's own fact", "supersedes": a_id}
        )
        assert superseding.is_error
        replies.append(_dump(superseding))

        with pytest.raises(MCPError) as missing:
            await b.read_resource(f"cortex://memories/{a_id}")
        replies.append(str(missing.value))
        # Every resource there is (a later one too), read as B; templates get A's id.
        for resource in (await b.list_resources()).resources:
            replies.append(_dump(await b.read_resource(resource.uri)))
        for template in (await b.list_resource_templates()).resource_templates:
            uri = re.sub(r"\{[^}]+\}", a_id, template.uri_template)
            try:
                replies.append(_dump(await b.read_resource(uri)))
            except MCPError as exc:
                replies.append(str(exc))
        covered = {"cortex_recall", "cortex_search_debug", "cortex_forget", "cortex_remember"}
        assert {t.name for t in (await b.list_tools()).tools} == covered, (
            "a new tool: show here that agent B sees none of A through it"
        )
        stats = json.loads((await b.read_resource("cortex://stats")).contents[0].text)
        assert stats["agent_id"] == "B"
        assert stats["memories"]["total"] == 0
        assert "all_agents" not in stats  # not even how many memories others hold
        assert stats["ingest"]["relations"] == 0 and stats["ingest"]["turns"]["done"] == {}
        replies.append(json.dumps(stats))

        # The same text stored by B is B's own memory, not a duplicate of A's.
        mine = await b.call_tool("cortex_remember", {"content": SECRET})
        assert mine.structured_content["id"] != a_id
        assert mine.structured_content["deduplicated"] is False

    everything = "\n".join(replies)
    for fragment in ("codename is", "codename was", "Heron", "chat-A"):  # never in B's queries
        assert fragment not in everything

    async with _server(settings, "A", clock, mode) as a:
        detail = json.loads((await a.read_resource(f"cortex://memories/{a_id}")).contents[0].text)
        assert detail["memory"]["content"] == SECRET
        assert (
            detail["memory"]["forgotten_at"] is None and detail["memory"]["superseded_by"] is None
        )
        assert [h["query_hash"] for h in detail["access_history"]]
