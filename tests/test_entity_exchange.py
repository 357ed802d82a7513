"""Entities, aliases and links round-trip through the JSON export and import (a file and a
REST document) and the Markdown export, on SQLite and PostgreSQL: what a person mended (a
merge, a rename, an alias added or removed) comes back as it was, not as the rules would find
it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import AliasOrigin
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ExportRequest,
    ImportRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

TEXTS = [
    "My sister Anna is a doctor in Lyon",
    "Andrea: I moved my clinic to the old town",
    "Tom: my cousin Kate plays the sax",
    "I went sailing with Kate and Anna",
]


async def _seed_and_mend(svc: CortexService) -> None:
    for text in TEXTS:
        await svc.memories.remember(build(RememberRequest, content=text, category="fact"))
    await svc.drain()
    store, agent, now = svc.stores.entities, "default", "2026-11-01T12:00:00.000000Z"
    (andrea,), (anna,) = (
        await store.entity_named(agent, "Andrea"),
        await store.entity_named(agent, "Anna"),
    )
    await store.merge(agent, andrea.id, anna.id, now, dry_run=False)
    (kate,) = await store.entity_named(agent, "Kate")
    await store.rename(agent, kate.id, "Kate Bell", now)
    await store.add_alias(agent, anna.id, "Doc", AliasOrigin.user, now)
    await store.remove_alias(agent, anna.id, "My sister", now)


async def _state(svc: CortexService, agent: str = "default") -> dict[str, Any]:
    """Every entity of `agent`: kind, aliases (origin, whose words by name) and the contents of
    the memories linked to it, with their roles."""
    store = svc.stores.entities
    entities, _ = await store.list_entities(agent, "", 500, 0)
    names = {e.id: e.name for e in entities}
    state = {}
    for entity in entities:
        linked = await store.linked_memories(agent, [entity.id], 500)
        memories = await svc.stores.memories.get_many([m for m, _, _ in linked])
        state[entity.name] = {
            "kind": entity.kind,
            "aliases": sorted(
                (a.alias, a.origin, names.get(a.speaker_id or "")) for a in entity.alias_details
            ),
            "links": sorted((memories[m].content, role) for m, _, role in linked),
        }
    return state


def _fresh(settings: Settings, tmp_path: Path, name: str) -> Settings:
    if settings.database_url is None:
        return settings.model_copy(update={"db_path": tmp_path / name})
    return settings  # PostgreSQL: the test imports into another agent of the same database


async def test_entities_aliases_and_links_round_trip_through_a_json_document(
    backend_settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _seed_and_mend(svc)
        before = await _state(svc)
        exported = await svc.exchange.export_memories(build(ExportRequest, format="json"))
    assert "Andrea" not in before and before["Anna"]["aliases"] == [
        ("Andrea", "name", None),
        ("Doc", "user", None),
    ]
    document = exported["document"]
    assert {e["name"] for e in document["entities"]} == set(before)
    target = _fresh(backend_settings, tmp_path, "copy.db").model_copy(update={"agent_id": "copy"})
    async with open_cortex(target, clock=clock) as copy:
        report = await copy.exchange.import_memories(
            build(ImportRequest, format="json", document=document, agent_id="copy")
        )
        await copy.drain()
        assert report["entities"] == len(before)
        after = await _state(copy, "copy")
    assert after == before


async def test_a_json_export_file_imported_again_gives_the_same_entities(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = load_settings(db_path=tmp_path / "a.db", embedding_provider="none")
    out = tmp_path / "export.json"
    async with open_cortex(settings, clock=clock) as svc:
        await _seed_and_mend(svc)
        before = await _state(svc)
        await svc.exchange.export_json(str(out))
    copy_settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none")
    async with open_cortex(copy_settings, clock=clock) as copy:
        await copy.exchange.import_path(str(out))
        await copy.drain()
        assert await _state(copy) == before
        # an entity item that breaks a rule is refused, naming it, and nothing is imported
        bad = out.read_text().replace('"origin": "user"', '"origin": "guess"')
        (tmp_path / "bad.json").write_text(bad)
        with pytest.raises(InvalidInput, match=r"entities\[\d+\]\.aliases"):
            await copy.exchange.import_path(str(tmp_path / "bad.json"))


async def test_a_markdown_export_keeps_entities_and_aliases_and_the_import_links_with_them(
    backend_settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        for text in TEXTS:
            await svc.memories.remember(build(RememberRequest, content=text, category="fact"))
        await svc.drain()
        store, now = svc.stores.entities, "2026-11-01T12:00:00.000000Z"
        (andrea,), (anna,) = (
            await store.entity_named("default", "Andrea"),
            await store.entity_named("default", "Anna"),
        )
        await store.merge("default", andrea.id, anna.id, now, dry_run=False)
        await store.add_alias("default", anna.id, "Doc (the GP)", AliasOrigin.user, now)
        before = await _state(svc)
        exported = await svc.exchange.export_memories(build(ExportRequest, format="markdown"))
    text = exported["files"]["memory/entities.md"]
    assert "## Anna\n\nkind: person\n\n" in text
    assert "- My sister (rule)\n" in text and "- Andrea (name)\n" in text
    assert "- Doc (the GP) (user)" in text and "- my cousin (rule, said by Tom)" in text
    target = _fresh(backend_settings, tmp_path, "md.db")
    async with open_cortex(target, clock=clock) as copy:
        await copy.exchange.import_memories(
            build(ImportRequest, format="markdown", files=exported["files"], agent_id="md")
        )
        await copy.drain()
        after = await _state(copy, "md")
    assert after == before


def _many_texts(count: int) -> list[str]:
    """Memories that name the same few people and places again and again: a speaker who also
    names herself (the stronger role kept), names made entities in one memory and linked in
    later ones, family words that become aliases and, once several share one, are left
    unresolved."""
    names = ["Anna", "Kate", "Tom", "Maya", "Derek", "Lena", "Omar", "Priya"]
    places = ["Lyon", "Porto", "Kyoto"]
    texts = []
    for i in range(count):
        a, b, place = names[i % 8], names[(i * 3 + 1) % 8], places[i % 3]
        texts.append(
            [
                f"{a}: I met {b} at the market in {place} (note {i})",
                f"I went sailing with {a} and {b} near {place} (note {i})",
                f"My cousin {b} works in {place} now (note {i})",
                f"{a}: {a} and {b} cooked dinner together (note {i})",
            ][i % 4]
        )
    return texts


async def _links_state(svc: CortexService, agent: str) -> dict[str, Any]:
    """`_state` with each entity's mention count, and its first/last seen checked against the
    moments of the memories linked to it; the references left unresolved, by content."""
    state = await _state(svc, agent)
    store = svc.stores.entities
    entities, _ = await store.list_entities(agent, "", 500, 0)
    for entity in entities:
        linked = await store.linked_moments(agent, [entity.id], 5000)
        moments = [at for _, _, _, at in linked]
        assert (entity.first_seen, entity.last_seen) == (min(moments), max(moments)), entity.name
        state[entity.name]["mention_count"] = entity.mention_count
    unresolved = await store.unresolved(agent, 5000)
    memories = await svc.stores.memories.get_many([u["memory_id"] for u in unresolved])
    state["(unresolved)"] = sorted(
        (memories[u["memory_id"]].content, u["phrase"], u["role"]) for u in unresolved
    )
    return state


async def test_a_large_import_links_as_remembering_each_memory_one_by_one_would(
    backend_settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    texts = _many_texts(400)
    seeded = 6  # entities both agents have before: the import finds them, not makes them
    one = _fresh(backend_settings, tmp_path, "one.db").model_copy(update={"agent_id": "one"})
    async with open_cortex(one, clock=clock) as svc:
        for text in texts:
            await svc.memories.remember(build(RememberRequest, content=text, category="fact"))
            await svc.drain()
        by_one = await _links_state(svc, "one")
    batch = _fresh(backend_settings, tmp_path, "batch.db").model_copy(update={"agent_id": "batch"})
    async with open_cortex(batch, clock=clock) as svc:
        for text in texts[:seeded]:
            await svc.memories.remember(build(RememberRequest, content=text, category="fact"))
            await svc.drain()
        document = "# Memory\n\n" + "".join(f"- {text}\n" for text in texts[seeded:])
        report = await svc.exchange.import_memories(
            build(ImportRequest, format="markdown", content=document, agent_id="batch")
        )
        await svc.drain()
        assert report["agents"] == {"batch": len(texts) - seeded}
        imported = await _links_state(svc, "batch")
    assert sum(len(e["links"]) for n, e in by_one.items() if n != "(unresolved)") > len(texts)
    assert imported == by_one
