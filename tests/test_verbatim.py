"""What users give us is theirs: content comes back exactly as given, over the real stdio server.

Normalisation (NFKC, case, spacing) applies only to the dedup key and to the FTS index."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from cortex_mcp.service.requests import RecallRequest, RememberRequest
from cortex_mcp.store import Database
from cortex_mcp.store.schema import MIGRATIONS
from tests.helpers.stdio_helpers import HANG_S, server_command, server_env

pytestmark = pytest.mark.anyio

PARAGRAPH = " ".join(
    f"Sentence {n} of a long design note about the ingestion queue, retries and back-off."
    for n in range(70)
)[:5000]

SAMPLES = {
    "multi-line": "Deploy checklist:\n  1. run migrations\n  2. restart workers\n\n  3. smoke test",
    "full-width": "东京，喜欢拉面（特别是豚骨）！",
    "superscript": "Einstein wrote E = mc² in 1905",
    "emoji": "Harry's cat 🐈‍⬛ is called Miso 🍜 and hates baths 🛁",
    "tabs": "name\tport\tstatus\napi\t8080\tup",
    "paragraph": PARAGRAPH,
}

# A query per sample that shares only normalised forms with it (full-width comma, ² -> 2 ...).
QUERIES = {
    "multi-line": "restart workers",
    "full-width": "拉面",
    "superscript": "mc2",
    "emoji": "Miso cat",
    "tabs": "api 8080",
    "paragraph": "ingestion queue retries",
}


def _params(db: Path) -> StdioServerParameters:
    command, *args = server_command()
    return StdioServerParameters(command=command, args=args, env=server_env(db))


def test_the_long_sample_is_a_5000_character_paragraph() -> None:
    assert len(PARAGRAPH) == 5000 and "\n" not in PARAGRAPH


@pytest.mark.slow
async def test_content_comes_back_byte_identical_over_stdio(tmp_path: Path) -> None:
    with anyio.fail_after(HANG_S):
        async with Client(_params(tmp_path / "brain.db"), mode="legacy") as client:
            ids = {}
            for name, content in SAMPLES.items():
                stored = await client.call_tool("cortex_remember", {"content": content})
                assert not stored.is_error, stored.content
                ids[name] = stored.structured_content["id"]
            assert len(set(ids.values())) == len(SAMPLES)

            for name, content in SAMPLES.items():
                recall = await client.call_tool(
                    "cortex_recall", {"query": QUERIES[name], "max_tokens": 5000}
                )
                assert not recall.is_error, recall.content
                found = {m["id"]: m["content"] for m in recall.structured_content["memories"]}
                assert ids[name] in found, (name, QUERIES[name])
                assert found[ids[name]].encode() == content.encode(), name

                resource = await client.read_resource(f"cortex://memories/{ids[name]}")
                detail = json.loads(resource.contents[0].text)
                assert detail["memory"]["content"].encode() == content.encode(), name


async def test_surrounding_whitespace_is_trimmed_and_inner_whitespace_kept(service) -> None:
    made = await service.memories.remember(
        RememberRequest(content="  \n\tline one\n\n  line two\t \n ")
    )
    memory = await service.stores.memories.get(made.id)
    assert memory is not None and memory.content == "line one\n\n  line two"


async def test_the_same_fact_in_another_width_or_spacing_is_deduplicated(service) -> None:
    first = await service.memories.remember(RememberRequest(content="东京，喜欢拉面"))
    again = await service.memories.remember(RememberRequest(content="  东京,喜欢拉面 "))
    assert again.deduplicated and again.id == first.id
    memory = await service.stores.memories.get(first.id)
    assert memory is not None and memory.content == "东京，喜欢拉面"
    spaced = await service.memories.remember(RememberRequest(content="User likes\n\tgreen  tea"))
    assert (
        await service.memories.remember(RememberRequest(content="user likes green tea"))
    ).id == spaced.id


async def test_a_normalised_query_finds_the_verbatim_memory(service) -> None:
    made = await service.memories.remember(
        RememberRequest(content="Einstein wrote E = mc² in 1905")
    )
    for query in ("mc²", "mc2", "MC2"):
        found = await service.memories.recall(RecallRequest(query=query))
        assert [m.id for m in found.memories] == [made.id], query


async def test_migrating_an_old_database_keeps_its_rows_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:  # a database from before verbatim storage
        conn.execute(statement)
    conn.execute(
        "INSERT INTO memories (id, agent_id, layer, category, content, content_hash,"
        " created_at, updated_at) VALUES ('m1', 'default', 'core', 'fact', '东京,喜欢拉面',"
        " 'h1', '2026-01-01', '2026-01-01')"
    )
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()

    with caplog.at_level(logging.INFO, logger="cortex_mcp.store.database"):
        async with Database(path) as db:
            assert (
                await db.scalar("SELECT content FROM memories WHERE id = 'm1'") == "东京,喜欢拉面"
            )
    lines = [r.getMessage() for r in caplog.records if "migration 2" in r.getMessage()]
    assert len(lines) == 1
    assert "1 memories written before" in lines[0] and "originals are gone" in lines[0]
