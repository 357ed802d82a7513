"""Markdown mirrors: the exact text for a fixed store, budgets, atomic files, purges."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.engine.exchange.markdown import (
    Relation,
    count_words,
    render_memory_md,
    render_mirrors,
    sync_folder,
)
from cortex_mcp.models import Category, Layer, Memory
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import ForgetRequest, RememberRequest
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


def _m(n: int, content: str, category: str, layer: str = "core", **extra: object) -> Memory:
    fields = {
        "id": f"0000000{n}",
        "agent_id": "default",
        "layer": Layer(layer),
        "category": Category(category),
        "content": content,
        "importance": 0.7,
        "confidence": 0.8,
        "decay_score": 1.0,
        "access_count": 0,
        "created_at": f"2026-02-{10 + n:02d}T14:30:00.000000Z",
        "updated_at": f"2026-02-{10 + n:02d}T14:30:00.000000Z",
        **extra,
    }
    return Memory(**fields)  # type: ignore[arg-type]


STORE = [
    _m(1, "Harry, Tokyo resident, property investor", "identity", importance=1.0),
    _m(2, "Prefers low-risk investments with stable cash flow", "preference", importance=0.9),
    _m(3, "Chose Oracle Cloud ARM as the main VPS", "decision"),
    _m(4, "The budget is not confirmed (50M yen was wrong)", "correction"),
    _m(
        5,
        "[2026-01] 3 archived memories: BNCT clinics; NTT router IPv6",
        "summary",
        metadata={"period": "2026-01", "covers": ["a", "b", "c"]},
    ),
    _m(6, "Asked about yields of a 1LDK in Shinagawa", "context", layer="working"),
    _m(7, "NTT HGW router needs IPv6 port forwarding", "fact", layer="archive", access_count=2),
    _m(8, "Gross yields in Shinagawa are around 5%", "fact"),
]
RELATIONS = [Relation("Harry", "invests in", "Shinagawa property")]

GOLDEN_MEMORY_MD = """\
---
exported_at: 2026-02-20T03:00:00.000000Z
total_entries: 6
shown_entries: 6
words: 60
word_budget: 500
source: cortex-mcp
---

## Profile

- Harry, Tokyo resident, property investor

## Preferences

- Prefers low-risk investments with stable cash flow

## Decisions

- [2026-02-13] Chose Oracle Cloud ARM as the main VPS

## Facts

- Gross yields in Shinagawa are around 5%

## Entities and relations

- Harry ──invests in──▶ Shinagawa property

## Corrections

- [2026-02-14] The budget is not confirmed (50M yen was wrong)

## History summaries

- [2026-01] 3 archived memories: BNCT clinics; NTT router IPv6
"""


def test_memory_md_renders_the_seed_sections_in_order_with_frontmatter() -> None:
    files = render_mirrors(STORE, RELATIONS, "2026-02-20T03:00:00.000000Z", 500)
    assert files["MEMORY.md"] == GOLDEN_MEMORY_MD
    assert set(files) == {
        "MEMORY.md",
        "memory/working/2026-02-16.md",
        "memory/archive/2026-02.md",
        "memory/relations.md",
    }
    assert files["memory/working/2026-02-16.md"].endswith(
        "## 2026-02-16\n\n- 14:30 [context] Asked about yields of a 1LDK in Shinagawa\n"
    )
    assert "- NTT HGW router needs IPv6 port forwarding" in files["memory/archive/2026-02.md"]
    assert "- Harry ──invests in──▶ Shinagawa property" in files["memory/relations.md"]


def test_memory_md_keeps_the_most_important_memories_within_the_word_budget() -> None:
    core = [
        _m(1, "word " * 30, "fact", importance=0.2),
        _m(2, "an identity line of six words", "identity", importance=1.0),
    ]
    text = render_memory_md(core, [], "t", 20)
    assert "identity line" in text and "word word" not in text
    body = text.split("---", 2)[2]
    assert count_words(body) <= 20 + 10  # the headings are outside the budget
    assert count_words("我喜欢投资 stocks") == 6


def test_the_mirror_leaves_files_it_did_not_write_alone(tmp_path: Path) -> None:
    (tmp_path / "memory" / "working").mkdir(parents=True)
    mine = tmp_path / "memory" / "working" / "2020-01-01.md"
    mine.write_text("my own notes\n")
    files = render_mirrors(STORE, RELATIONS, "t", 500)
    sync_folder(tmp_path, files)
    assert mine.read_text() == "my own notes\n"
    assert (tmp_path / "MEMORY.md").read_text() == files["MEMORY.md"]
    assert not list(tmp_path.rglob("*.tmp"))


async def test_mirrors_follow_writes_in_the_background_and_a_purge_leaves_them(
    tmp_path: Path, clock: FakeClock
) -> None:
    export = tmp_path / "workspace"
    settings = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        export_dir=export,
        mirrors={"debounce_s": 0.05},
    )
    async with open_cortex(settings, clock=clock) as service:
        kept = await service.memories.remember(
            RememberRequest(content="Harry lives in Tokyo", category="identity")
        )
        secret = await service.memories.remember(
            RememberRequest(content="The garage door was repainted in shade 4711", category="fact")
        )
        note = await service.memories.remember(
            RememberRequest(
                content="Talked about garage doors", category="context", layer="working"
            )
        )
        assert service.engines.mirrors is not None
        await service.engines.mirrors.flush()
        memory_md = (export / "MEMORY.md").read_text()
        assert "Harry lives in Tokyo" in memory_md and "4711" in memory_md
        assert any(
            "garage doors" in p.read_text() for p in (export / "memory/working").glob("*.md")
        )
        await service.memories.forget(ForgetRequest(memory_id=secret.id, purge=True))
        await service.memories.forget(ForgetRequest(memory_id=note.id, purge=True))
        await service.engines.mirrors.flush()
        everything = "".join(p.read_text() for p in export.rglob("*.md"))
        assert "4711" not in everything and "garage doors" not in everything
        assert "Harry lives in Tokyo" in everything
        assert kept.id
