"""The bank/ folder round-trips through import, on SQLite and PostgreSQL (issue 34): a Markdown
export (a folder on disk, or the files a REST export returns) imported into an empty store
gives back each memory's id and kind, each entity's kind, summary, aliases and links, and each
fact's validity (a superseded fact with the period it held), so that exporting again gives the
same bank/."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from cortex_mcp.config import Settings
from cortex_mcp.models import AliasOrigin, EntityKind, EntityRef, LinkPlan, LinkRole, PlannedLink
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ExportRequest,
    ImportRequest,
    RecallRequest,
    ReflectRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

FACTS = [  # (content, when, who it is about, layer)
    ("Marco lives in Turin", "2025-01-10T09:00:00Z", "Marco", "core"),
    ("Marco moved to Milan", "2025-06-01T09:00:00Z", "Marco", "core"),
    ("Marco cycles to work every day", "2025-06-10T09:00:00Z", "Marco", "core"),
    ("张伟住在北京", "2025-02-01T08:00:00Z", "张伟", "core"),
    ("张伟搬到了上海", "2025-09-01T08:00:00Z", "张伟", "core"),
    ("I met Marco and Ana at the station", "2025-06-12T18:30:00Z", None, "working"),
]
PREFERENCES = [  # a belief with evidence for and against it (bank/opinions.md)
    ("I prefer dark mode", "2025-01-01T08:00:00Z"),
    ("I prefer dark mode everywhere", "2025-02-01T08:00:00Z"),
    ("I don't like dark mode in the evening", "2025-03-01T08:00:00Z"),
]


@contextlib.contextmanager
def _empty_store(
    settings: Settings, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Settings]:
    """Settings for an empty store of the same backend (a new file, or a new database)."""
    if settings.database_url is None:
        yield settings.model_copy(update={"db_path": tmp_path / "copy.db"})
        return
    with request.getfixturevalue("pg_server").fresh_database() as url:
        yield settings.model_copy(update={"database_url": SecretStr(url)})


async def _fill(svc: CortexService) -> dict[str, str]:
    ids = {}
    for content, when, about, layer in FACTS:
        result = await svc.memories.remember(
            build(
                RememberRequest,
                content=content,
                category="fact",
                occurred_at=when,
                importance=0.8,
                layer=layer,
            )
        )
        ids[content] = result.id
        await svc.drain()
        names = await svc.stores.entities.entities_of("default", [result.id])
        if about is not None and about not in names.get(result.id, []):
            link = PlannedLink(EntityRef(about, EntityKind.person), LinkRole.subject)
            await svc.stores.entities.link("default", [LinkPlan(result.id, (link,))], when)
    for content, when in PREFERENCES:
        await svc.memories.remember(
            build(RememberRequest, content=content, category="preference", occurred_at=when)
        )
    (marco,) = await svc.stores.entities.entity_named("default", "Marco")
    await svc.stores.entities.add_alias(
        "default", marco.id, "Marc", AliasOrigin.user, "2025-07-01T00:00:00.000000Z"
    )
    await svc.lifecycle.reflect(build(ReflectRequest))  # summaries, superseded slots closed
    return ids


def _bank(files: dict[str, str]) -> dict[str, str]:
    """The bank/ files without the moment they were written (and each belief's last update,
    which is when the import found it again)."""
    return {
        path: re.sub(r"^(?:exported_at|updated): .*\n", "", text, flags=re.MULTILINE)
        for path, text in files.items()
        if path.startswith("bank/")
    }


def _folder(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text("utf-8") for p in root.rglob("*.md")}


async def test_a_markdown_export_folder_imported_into_an_empty_store_exports_the_same_bank(
    backend_settings: Settings,
    clock: FakeClock,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = await _fill(svc)
        await svc.exchange.export_markdown(str(first))
    before = _bank(_folder(first))
    assert "- against: memory:" in before["bank/opinions.md"]
    page = before["bank/entities/marco.md"]
    assert "## History" in page and "- Marc (user)" in page
    assert (
        f"Marco lives in Turin (2025-01-10 to 2025-06-01; memory:{ids['Marco lives in Turin']})"
        in page
    )
    with _empty_store(backend_settings, tmp_path, request) as target:
        async with open_cortex(target, clock=clock) as copy:
            report = await copy.exchange.import_path(str(first))
            assert report.memories == len(FACTS) + len(PREFERENCES)
            await copy.memories.recall(build(RecallRequest, query="what do I prefer?"))
            turin = (await copy.stores.memories.get_many([ids["Marco lives in Turin"]]))[
                ids["Marco lives in Turin"]
            ]
            assert turin.status.value == "superseded"
            assert (turin.valid_to or "")[:10] == "2025-06-01"
            (marco,) = await copy.stores.entities.entity_named("default", "Marco")
            assert "Marco moved to Milan" in marco.summary and "Marc" in marco.aliases
            await copy.exchange.export_markdown(str(second))
    assert _bank(_folder(second)) == before


async def test_the_files_of_a_rest_markdown_export_posted_back_give_the_same_bank(
    backend_settings: Settings,
    clock: FakeClock,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _fill(svc)
        exported: dict[str, Any] = await svc.exchange.export_memories(
            build(ExportRequest, format="markdown")
        )
    files = exported["files"]
    assert {"bank/world.md", "bank/experience.md", "bank/entities/张伟.md"} <= set(files)
    with _empty_store(backend_settings, tmp_path, request) as target:
        async with open_cortex(target, clock=clock) as copy:
            await copy.exchange.import_memories(
                build(ImportRequest, format="markdown", files=files)
            )
            await copy.memories.recall(build(RecallRequest, query="what do I prefer?"))
            again = await copy.exchange.export_memories(build(ExportRequest, format="markdown"))
    assert _bank(again["files"]) == _bank(files)


@pytest.mark.parametrize("words", [3000, 12])
async def test_a_mirror_folder_whose_memory_md_has_no_dates_gives_the_same_bank_back(
    backend_settings: Settings,
    clock: FakeClock,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    words: int,
) -> None:
    """The mirror's MEMORY.md writes no day for a fact, and keeps only what fits its word
    budget (12 words: a fact or two): the bank gives the days back, and the memories it
    lists that MEMORY.md left out."""
    mirror = tmp_path / "mirror"
    limits = {"debounce_s": 0.05, "memory_md_words": words}
    settings = backend_settings.model_copy(
        update={
            "export_dir": mirror,
            "mirrors": backend_settings.mirrors.model_copy(update=limits),
        }
    )
    async with open_cortex(settings, clock=clock) as svc:
        ids = await _fill(svc)
        assert svc.engines.mirrors is not None
        await svc.engines.mirrors.flush()
    before = _bank(_folder(mirror))
    memory_md = (mirror / "MEMORY.md").read_text("utf-8")
    assert "[2025-" not in memory_md
    left_out = [c for c, _, _, layer in FACTS if layer == "core" and c not in memory_md]
    assert bool(left_out) == (words == 12)
    with _empty_store(backend_settings, tmp_path, request) as target:
        async with open_cortex(target, clock=clock) as copy:
            await copy.exchange.import_path(str(mirror))
            await copy.memories.recall(build(RecallRequest, query="what do I prefer?"))
            milan = (await copy.stores.memories.get_many([ids["Marco moved to Milan"]]))[
                ids["Marco moved to Milan"]
            ]
            assert milan.occurred_at.startswith("2025-06-01")
            again = await copy.exchange.export_memories(build(ExportRequest, format="markdown"))
    assert _bank(again["files"]) == before
