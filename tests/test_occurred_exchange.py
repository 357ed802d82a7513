"""A memory's own time (`occurred_at`, issue 25) through export and import, on SQLite and
PostgreSQL: the JSON export writes it and an import reads it back to the second (a file of
another tool that has only `created_at` means that); the Markdown export dates every note by
it and an import gives each memory back its day, also from notes under a heading that is a
date. (`migrate` carries the column: tests/helpers/store_fill.py gives one memory its own
time, and the migrate tests compare every row.)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ImportRequest, RememberRequest, build
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

STORED = "2026-11-01T12:00:00.000000Z"  # the FakeClock's time
# content -> (layer, category, occurred_at given, occurred_at stored)
WRITTEN = {
    "Read The Quiet Harbour": (
        "core",
        "fact",
        "2023-05-06T09:30:15Z",
        "2023-05-06T09:30:15.000000Z",
    ),
    "Chose the night train to Kyoto": (
        "core",
        "decision",
        "2023-05-07T22:10:00+02:00",
        "2023-05-07T20:10:00.000000Z",
    ),
    "Debugging the gateway\nafter lunch": (
        "working",
        "context",
        "2026-10-30T13:45:59Z",
        "2026-10-30T13:45:59.000000Z",
    ),
    "Old trip notes from Hakone": ("archive", "fact", "2019-08-14", "2019-08-14T00:00:00.000000Z"),
    "Prefers oolong tea": ("core", "preference", None, STORED),
}


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


async def _remember_all(service: CortexService) -> None:
    for content, (layer, category, occurred, _) in WRITTEN.items():
        request = build(
            RememberRequest,
            content=content,
            layer=layer,
            category=category,
            occurred_at=occurred,
            agent_id="alice",
        )
        await service.memories.remember(request)


async def _own_times(service: CortexService, agent_id: str) -> dict[str, str]:
    return {m.content: m.occurred_at for m in await service.stores.exports.memories(agent_id)}


async def test_a_json_export_writes_each_memorys_own_time_and_an_import_reads_it_back(
    service: CortexService, tmp_path: Path
) -> None:
    await _remember_all(service)
    out = tmp_path / "export.json"
    await service.exchange.export_json(str(out), agent_id="alice")
    items = json.loads(out.read_text())["memories"]
    written = {item["content"]: item["occurred_at"] for item in items}
    assert written == {content: stored for content, (*_, stored) in WRITTEN.items()}
    report = await service.exchange.import_path(str(out), agent_id="bob")
    assert report.memories == len(WRITTEN)
    assert await _own_times(service, "bob") == written
    again = tmp_path / "again.json"
    await service.exchange.export_json(str(again), agent_id="bob")
    items_again = json.loads(again.read_text())["memories"]
    assert [m["occurred_at"] for m in items_again] == [m["occurred_at"] for m in items]


def _document(*memories: dict[str, Any]) -> dict[str, Any]:
    base = {"layer": "core", "category": "fact"}
    return {"format": "cortex-mcp-export", "memories": [{**base, **m} for m in memories]}


async def test_a_document_of_another_tool_with_only_created_at_takes_it_as_the_memorys_own_time(
    service: CortexService,
) -> None:
    document = _document(
        {"content": "Met Aiko at the pottery class", "created_at": "2023-07-02T18:00:00Z"},
        {
            "content": "Grandfather was born in Osaka",
            "created_at": "2024-01-05T08:00:00Z",
            "occurred_at": "1931-04-12",
        },
        {"content": "Nothing dated here"},
    )
    await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id="carol")
    )
    times = await _own_times(service, "carol")
    assert times == {
        "Met Aiko at the pottery class": "2023-07-02T18:00:00.000000Z",
        "Grandfather was born in Osaka": "1931-04-12T00:00:00.000000Z",
        "Nothing dated here": STORED,
    }
    rows = {m.content: m for m in await service.stores.exports.memories("carol")}
    assert rows["Grandfather was born in Osaka"].created_at == "2024-01-05T08:00:00.000000Z"


@pytest.mark.parametrize(
    ("occurred", "says"),
    [
        ("yesterday", "is not an ISO 8601 time"),
        ("0999-12-31T00:00:00Z", "outside 1000-01-01"),
        (20230506, "must be an ISO 8601 time"),
    ],
)
async def test_an_occurred_at_that_is_not_a_time_refuses_the_import_naming_the_field(
    service: CortexService, occurred: Any, says: str
) -> None:
    document = _document(
        {"content": "A fine memory"}, {"content": "A bad one", "occurred_at": occurred}
    )
    with pytest.raises(InvalidInput) as caught:
        await service.exchange.import_memories(
            build(ImportRequest, document=document, agent_id="dave")
        )
    assert "memories[1]" in str(caught.value) and "occurred_at" in str(caught.value)
    assert says in str(caught.value)
    assert await service.stores.exports.memories("dave") == []


async def test_a_markdown_export_dates_each_note_by_its_own_day_and_an_import_gives_it_back(
    service: CortexService, tmp_path: Path
) -> None:
    await _remember_all(service)
    folder = tmp_path / "md"
    await service.exchange.export_markdown(str(folder), agent_id="alice")
    memory_md = (folder / "MEMORY.md").read_text()
    assert "- [2023-05-06] Read The Quiet Harbour" in memory_md
    assert "- [2023-05-07] Chose the night train to Kyoto" in memory_md
    assert (folder / "memory" / "working" / "2026-10-30.md").is_file()
    assert (
        "- 13:45 [context] Debugging the gateway"
        in (folder / "memory" / "working" / "2026-10-30.md").read_text()
    )
    assert (
        "- [2019-08-14] [fact] Old trip notes from Hakone"
        in (folder / "memory" / "archive" / "2019-08.md").read_text()
    )
    report = await service.exchange.import_path(str(folder), agent_id="bob")
    assert report.memories == len(WRITTEN)
    back = {c: t[:10] for c, t in (await _own_times(service, "bob")).items()}
    assert back == {content: stored[:10] for content, (*_, stored) in WRITTEN.items()}
    working = await _own_times(service, "bob")
    assert working["Debugging the gateway\nafter lunch"] == "2026-10-30T13:45:00.000000Z"


DIARY_MD = """# Memory

## Decisions

- [2023-04-30] Moved the blog to a static site

### 2023-05-02

- Chose the blue bike

## 2023-05-06

- Read a book called The Quiet Harbour
- [2023-05-05] Borrowed it from the library the day before
  and returned it late

### Preferences

- Likes reading in the park

## 2023年5月8日

- 去了博物馆，看了恐龙展

## Facts

- Lives in Lisbon
"""


async def test_a_markdown_file_of_dated_notes_and_date_headings_gives_each_note_its_day(
    service: CortexService, clock: FakeClock
) -> None:
    await service.exchange.import_memories(
        build(ImportRequest, format="markdown", content=DIARY_MD, agent_id="erin")
    )
    rows = {m.content: m for m in await service.stores.exports.memories("erin")}
    assert {c: (m.occurred_at, m.category.value) for c, m in rows.items()} == {
        "Moved the blog to a static site": ("2023-04-30T00:00:00.000000Z", "decision"),
        "Chose the blue bike": ("2023-05-02T00:00:00.000000Z", "decision"),
        "Read a book called The Quiet Harbour": ("2023-05-06T00:00:00.000000Z", "fact"),
        "Borrowed it from the library the day before\nand returned it late": (
            "2023-05-05T00:00:00.000000Z",
            "fact",
        ),
        "Likes reading in the park": ("2023-05-06T00:00:00.000000Z", "preference"),
        "去了博物馆，看了恐龙展": ("2023-05-08T00:00:00.000000Z", "fact"),
        "Lives in Lisbon": (STORED, "fact"),
    }


async def test_a_date_heading_that_is_no_real_day_refuses_the_file_naming_its_line(
    service: CortexService,
) -> None:
    with pytest.raises(InvalidInput) as caught:
        await service.exchange.import_memories(
            build(
                ImportRequest,
                format="markdown",
                content="# Diary\n\n## 2023-02-30\n\n- A day that never was\n",
                agent_id="frank",
            )
        )
    assert ":3" in str(caught.value) and "not a real date" in str(caught.value)
    assert await service.stores.exports.memories("frank") == []
