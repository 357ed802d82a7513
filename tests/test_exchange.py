"""Ways in and out: OpenClaw workspaces, memory.jsonl, our JSON export, SQLite backups."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import Layer
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ExportRequest,
    ForgetRequest,
    ImportRequest,
    ListRequest,
    RecallRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).parent / "fixtures"


async def _counts(service: CortexService) -> tuple[int, int]:
    stats = await service.stores.memories.counts()
    relations = len(await service.stores.exports.relations(None))
    return stats["total"], relations


async def test_an_openclaw_workspace_imports_once_and_a_second_import_adds_nothing(
    service: CortexService,
) -> None:
    first = await service.exchange.import_path(str(FIXTURES / "openclaw"))
    assert len(first.files) == 4 and first.memories == 19 and first.relations == 2
    counts = await _counts(service)
    again = await service.exchange.import_path(str(FIXTURES / "openclaw"))
    assert again.memories == 0 and again.relations == 0 and again.existing == 19
    assert await _counts(service) == counts


async def test_retain_bullets_keep_their_type_entities_and_confidence(
    service: CortexService,
) -> None:
    await service.exchange.import_path(str(FIXTURES / "openclaw"))
    memories = await service.stores.exports.memories(None)
    opinion = next(m for m in memories if "low-risk investments" in m.content)
    assert opinion.layer is Layer.core and opinion.category.value == "preference"
    assert opinion.confidence == 0.9
    assert opinion.metadata["retain"] == "opinion" and opinion.metadata["entities"] == ["Harry"]
    assert opinion.created_at.startswith("2026-02-19T09:10")
    narrative = next(m for m in memories if "NTT HGW" in m.content)
    assert narrative.layer is Layer.archive
    decision = next(m for m in memories if "Chromebook 转换" in m.content)
    assert decision.category.value == "decision" and decision.created_at.startswith("2026-02-15")
    result = await service.memories.recall(RecallRequest(query="low-risk cash flow"))
    assert result.memories and result.memories[0].id == opinion.id


async def test_the_mcp_memory_servers_jsonl_imports_entities_and_relations_idempotently(
    service: CortexService,
) -> None:
    first = await service.exchange.import_path(str(FIXTURES / "memory.jsonl"))
    assert (first.memories, first.relations) == (4, 1)
    again = await service.exchange.import_path(str(FIXTURES / "memory.jsonl"))
    assert (again.memories, again.relations) == (0, 0)
    [relation] = await service.stores.exports.relations(None)
    assert (relation["subject"], relation["predicate"], relation["object"]) == (
        "Alice",
        "works_at",
        "Acme",
    )


async def test_a_bad_line_names_itself_and_nothing_of_the_import_is_written(
    service: CortexService, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES / "openclaw", workspace)
    bad = workspace / "memory" / "2026-02-19.md"
    bad.write_text(bad.read_text().replace("O(c=0.9)", "O(c=1.9)"))
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text('{"type":"entity","name":"Bob","observations":["Likes tea"]}\n{"type": "ent\n')
    with pytest.raises(InvalidInput) as refused:
        await service.exchange.import_path(str(workspace))
    assert refused.value.message == f"{bad}:6: confidence 1.9 is outside 0.0..1.0"
    with pytest.raises(InvalidInput) as broken:
        await service.exchange.import_path(str(jsonl))
    assert broken.value.message == f"{jsonl}:2: not JSON (Unterminated string starting at)"
    assert await service.stores.exports.memories(None) == []


async def test_secrets_in_imported_files_are_redacted_before_they_are_written(
    service: CortexService, tmp_path: Path
) -> None:
    note = tmp_path / "MEMORY.md"
    note.write_text("## Facts\n\n- The deploy key is sk-proj-abcdefghijklmnopqrstuvwx1234\n")
    await service.exchange.import_path(str(note))
    [memory] = await service.stores.exports.memories(None)
    assert "sk-proj" not in memory.content and "[REDACTED:openai_key]" in memory.content


async def test_json_export_imports_into_an_empty_database_and_exports_identically(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    await service.exchange.import_path(str(FIXTURES / "openclaw"))
    old = await service.memories.remember(
        RememberRequest(content="The user lives in Nagoya", category="identity")
    )
    await service.memories.forget(
        ForgetRequest(memory_id=old.id, correction="The user lives in Tokyo")
    )
    await service.memories.remember(RememberRequest(content="Forgotten later", category="fact"))
    clock.advance(days=120)
    await service.lifecycle.run()
    first = tmp_path / "first.json"
    await service.exchange.export_json(str(first))
    settings = load_settings(db_path=tmp_path / "other.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as other:
        report = await other.exchange.import_path(str(first))
        assert report.memories > 20
        second = tmp_path / "second.json"
        await other.exchange.export_json(str(second))
    assert second.read_text() == first.read_text()


async def test_the_sqlite_backup_is_consistent_while_a_writer_is_busy(
    service: CortexService, tmp_path: Path
) -> None:
    stop, writing = asyncio.Event(), asyncio.Event()

    async def writer() -> int:
        n = 0
        while not stop.is_set():
            await service.memories.remember(
                RememberRequest(content=f"Busy writer memory number {n}")
            )
            n += 1
            writing.set()
        return n

    task = asyncio.create_task(writer())
    await writing.wait()  # the writer is under way, however slowly this machine runs it
    copy = tmp_path / "copy.db"
    result = await service.exchange.export_sqlite(str(copy))
    stop.set()
    written = await task
    assert written > 0
    assert result["integrity"] == "ok" and result["memories"] > 0


async def test_inline_imports_and_exports_for_the_http_api(service: CortexService) -> None:
    note = (FIXTURES / "openclaw" / "memory" / "2026-02-19.md").read_text()
    done = await service.exchange.import_memories(
        build(ImportRequest, content="# 2026-02-19\n" + note, format="openclaw")
    )
    assert done["memories"] == 3
    page = await service.reading.list_memories(build(ListRequest, layer="core", limit=1))
    assert page["limit"] == 1 and len(page["memories"]) == 1
    exported = await service.exchange.export_memories(build(ExportRequest, format="json"))
    assert len(exported["document"]["memories"]) == 3
    markdown = await service.exchange.export_memories(build(ExportRequest, format="markdown"))
    assert "low-risk investments" in markdown["files"]["MEMORY.md"]
    again = await service.exchange.import_memories(
        build(ImportRequest, content=json.dumps(exported["document"]), format="json")
    )
    assert again["memories"] == 0 and again["existing"] == 3
    with pytest.raises(InvalidInput, match=r"content\.json:1: not JSON"):
        await service.exchange.import_memories(build(ImportRequest, content="{oops", format="json"))
