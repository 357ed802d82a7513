"""The answer says which period it understood (issue 37, item 3): the context (plain and framed
for a prompt) and the tool's text start with "(read as: March 2026)" and mark the hits from
other periods; time words that were not understood are said to be; `cortex-mcp search` prints
the period and `search --json` carries `meta`. On SQLite and PostgreSQL, with a real MCP
session and the CLI."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from mcp import Client

from cortex_mcp import cli
from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.time_words import unread_time_words
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest, SearchRequest, build
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

NOW = "2026-05-20T15:00:00Z"
DIARY = [
    ("2026-03-12T10:00:00Z", "Signed the lease for the flat on Elm Street"),
    ("2026-03-25T10:00:00Z", "Painted the kitchen of the Elm Street flat green"),
    ("2026-02-02T10:00:00Z", "Viewed a flat on Elm Street with the agent"),
]


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        for when, content in DIARY:
            await svc.memories.remember(build(RememberRequest, content=content, occurred_at=when))
        yield svc


async def test_the_context_says_which_period_it_read_and_marks_hits_from_others(
    service: CortexService,
) -> None:
    recalled = await service.memories.recall(
        build(RecallRequest, query="what did I do at the Elm Street flat in March?", now=NOW)
    )
    assert recalled.context.startswith("(read as: March 2026)\n")
    assert recalled.meta.time is not None and recalled.meta.time["read_as"] == "March 2026"
    lines = {line for line in recalled.context.splitlines() if "Elm Street" in line}
    viewed = next(line for line in lines if "Viewed a flat" in line)
    assert "2026-02-02, 3 months ago, outside March 2026]" in viewed
    for line in lines - {viewed}:
        assert "outside" not in line
    framed = await service.memories.recall(
        build(
            RecallRequest,
            query="what did I do at the Elm Street flat in March?",
            now=NOW,
            format="prompt",
        )
    )
    assert "(read as: March 2026)" in framed.context.split("\n")[2]
    assert ", outside March 2026]" in framed.context
    assert framed.meta.tokens <= 2000


async def test_time_words_that_were_not_understood_are_said_to_be(service: CortexService) -> None:
    recalled = await service.memories.recall(
        build(RecallRequest, query="what happened at the Elm Street flat on 31/02?", now=NOW)
    )
    assert recalled.meta.time is None
    assert recalled.meta.time_unread == "31/02"
    assert recalled.context.startswith('(time words not understood: "31/02"')
    assert any("not understood" in note for note in recalled.meta.notes)
    plain = await service.memories.recall(
        build(RecallRequest, query="what happened at the Elm Street flat?", now=NOW)
    )
    assert plain.meta.time_unread is None and not plain.context.startswith("(")


async def test_a_period_that_holds_no_memory_says_so(service: CortexService) -> None:
    recalled = await service.memories.recall(
        build(RecallRequest, query="what did I do at the Elm Street flat in 2019?", now=NOW)
    )
    assert recalled.context.startswith("(read as: 2019; no memories are from then")
    assert "outside" not in recalled.context


async def test_the_tool_text_a_model_reads_says_the_period_and_marks_hits(
    backend_settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(backend_settings, clock=clock))
    async with Client(server, mode="legacy") as client:
        for when, content in DIARY:
            await client.call_tool("cortex_remember", {"content": content, "occurred_at": when})
        result = await client.call_tool(
            "cortex_recall",
            {"query": "what did I do at the Elm Street flat in March?", "now": NOW},
        )
        text = result.content[0].text
        assert text.startswith("(read as: March 2026)\n"), text
        block = next(b for b in text.split("\n\n") if "Viewed a flat" in b)
        assert "(outside March 2026)" in block
        signed = next(b for b in text.split("\n\n") if "Signed the lease" in b)
        assert "outside" not in signed
        unread = await client.call_tool(
            "cortex_recall", {"query": "what happened at the Elm Street flat on 31/02?"}
        )
        assert unread.content[0].text.startswith('(time words not understood: "31/02"')


async def test_rest_search_carries_what_it_understood(service: CortexService) -> None:
    answer = await service.memories.search_answer(
        build(SearchRequest, query="Elm Street flat in March", now=NOW, timezone="Asia/Tokyo")
    )
    assert answer.meta.time is not None and answer.meta.time["read_as"] == "March 2026"
    assert answer.meta.timezone == "Asia/Tokyo" and answer.meta.time_unread is None
    assert answer.meta.time["start"] == "2026-02-28T15:00:00.000000Z"  # Tokyo's 1 March


def _cli(args: list[str], monkeypatch: pytest.MonkeyPatch, db: Path) -> str:
    monkeypatch.setenv("CORTEX_DB_PATH", str(db))
    monkeypatch.setenv("CORTEX_EMBEDDING_PROVIDER", "none")
    monkeypatch.setenv("CORTEX_LLM_PROVIDER", "none")
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(args) == 0
    return out.getvalue()


def test_cortex_mcp_search_prints_the_period_and_its_json_the_meta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "brain.db"
    for when, content in DIARY:
        _cli(["add", content, "--occurred-at", when], monkeypatch, db)
    printed = _cli(["search", "Elm Street flat in March 2026"], monkeypatch, db)
    first, *rest = printed.splitlines()
    assert first.startswith('read as: March 2026 ("') and first.endswith('", UTC)'), printed
    assert "Signed the lease" in rest[0] or "Painted the kitchen" in rest[0]
    viewed = next(row for row in rest if "Viewed a flat" in row)
    assert viewed.endswith("(outside March 2026)")
    data = json.loads(_cli(["search", "Elm Street flat in March 2026", "--json"], monkeypatch, db))
    assert data["meta"]["time"]["read_as"] == "March 2026"
    assert data["meta"]["timezone"] == "UTC"
    assert {m["content"] for m in data["memories"]} >= {DIARY[0][1], DIARY[1][1]}
    unread = _cli(["search", "Elm Street flat on 31/02"], monkeypatch, db)
    assert unread.splitlines()[0] == 'time words not understood: "31/02" (ranked without a period)'


@pytest.mark.parametrize(
    "query", ["weekend plans", "Sunday school", "living quarters", "May said hi", "周末计划"]
)
def test_words_that_are_often_a_name_or_a_topic_are_not_called_time_words(query: str) -> None:
    assert unread_time_words(query) is None
