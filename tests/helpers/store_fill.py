"""A memory store with a row in every table, and every row of a SQLite file, for the tests of
`cortex-mcp migrate` (what a copy must carry: vectors and their cache, relations, access and
lifecycle logs, lifecycle runs, turns, profiles, agent tokens, counters, forgotten and superseded rows)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from cortex_mcp.models import (
    AliasOrigin,
    EntityRef,
    LinkPlan,
    LinkRole,
    PlannedAlias,
    PlannedLink,
    UnresolvedRef,
)
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    IngestRequest,
    RecallRequest,
    RelationRequest,
    RememberRequest,
    TokenRequest,
    build,
)
from cortex_mcp.store.reflect import Proposal
from tests.conftest import FakeClock, stub_settings

# What a copy carries, read with this test's own SQL (not the code under test).
TABLE_KEYS = {
    "memories": "seq",
    "memory_vectors": "memory_id",
    "embedding_cache": "content_hash, model",
    "relations": "id",
    "access_log": "id",
    "lifecycle_log": "id",
    "lifecycle_runs": "id",
    "turns": "seq",
    "profiles": "agent_id",
    "agent_tokens": "id",
    "entities": "id",
    "entity_aliases": "entity_id, alias_key",
    "memory_entities": "memory_id, entity_id",
    "entity_unresolved": "memory_id, alias_key",
    "entity_log": "id",
    "memory_slots": "memory_id, holder, slot",
    "validity_progress": "agent_id",
    "beliefs": "id",
    "belief_evidence": "belief_id, memory_id",
    "belief_progress": "agent_id",
    "reflect_runs": "id",
    "core_proposals": "id",
    "meta": "key",
}


async def filled_store(path: Path, embeddings_url: str, clock: FakeClock) -> Path:
    """A SQLite store at `path` with a row in every table (`fill_every_table`), embedded by
    the stub at `embeddings_url`."""
    settings = stub_settings(path, embeddings_url)
    async with open_cortex(settings, clock=clock, background=False) as service:
        await fill_every_table(service, clock)
    return path


async def fill_every_table(service: CortexService, clock: FakeClock) -> dict[str, str]:
    """Two agents' memories of every layer, text in three scripts, metadata, a memory's own
    time (`occurred_at`) apart from its stored time, a secret (a redaction counter), vectors,
    recalls (access log), a forget, a correction, a relation, a turn, a profile edit and a
    lifecycle run. Returns a few ids by name."""
    ids = {}
    ids["tea"] = (
        await service.memories.remember(
            RememberRequest(
                content="Prefers green tea in the morning",
                category="preference",
                importance=0.9,
            ),
            metadata={"b": 1, "a": [1, 2.5, "x"], "nested": {"z": None, "y": True}},
        )
    ).id
    ids["zh"] = (
        await service.memories.remember(
            RememberRequest(
                content="用户住在上海浦东，喜欢吃小笼包",
                category="fact",
                occurred_at="2023-05-06T09:30:15Z",  # its own time, apart from the stored one
            )
        )
    ).id
    ids["ja"] = (
        await service.memories.remember(
            RememberRequest(content="ユーザーは東京の品川に住んでいる", category="fact")
        )
    ).id
    await service.memories.remember(
        RememberRequest(content="My GitHub token is ghp_" + "a1B2c3D4e5" * 4, category="fact")
    )
    await service.memories.remember(
        RememberRequest(content="Harry works at Acme on the gateway", category="relationship")
    )
    clock.advance(hours=3)
    await service.memories.remember(
        RememberRequest(content="Debugging the gateway crash", category="context", layer="working")
    )
    await service.memories.remember(
        RememberRequest(content="Old trip notes from Kyoto", category="fact", layer="archive")
    )
    await service.memories.remember(
        RememberRequest(
            content="Bob prefers black coffee", category="preference", agent_id="bob", shared=True
        )
    )
    ids["old"] = (
        await service.memories.remember(RememberRequest(content="The build server runs Debian 11"))
    ).id
    await service.memories.forget(
        ForgetRequest(
            memory_id=ids["old"], reason="moved", correction="The build server runs Debian 12"
        )
    )
    await service.relations.add(
        build(RelationRequest, subject="Harry", predicate="works at", object="Acme")
    )
    await _entities(service, ids["tea"], ids["zh"])
    await service.tokens.create(
        build(TokenRequest, agent="harry", name="harry's laptop")
    )  # a copy keeps the agents' tokens
    await service.embed_pending()
    clock.advance(minutes=5)
    for query in ("green tea", "gateway crash", "上海"):
        await service.memories.recall(RecallRequest(query=query))
    await service.conversation.ingest(
        build(
            IngestRequest,
            user_message="I moved to Berlin last week",
            assistant_message="Noted, Berlin it is.",
            session_id="s1",
        )
    )
    await service.conversation.edit_profile(
        {"summary": "Harry, lives in Berlin", "domains": ["networking"]}
    )
    clock.advance(days=2)
    await service.lifecycle.run()  # and reflect after it
    await _proposal(service, ids["old"])
    return ids


async def _proposal(service: CortexService, memory_id: str) -> None:
    """A proposal to core, as a reflect run stores it."""
    proposal = Proposal(
        "p1", service.settings.agent_id, memory_id, "archive", "superseded", "pending", "2026-01-02"
    )
    store = service.stores.reflect
    await store.apply(
        service.settings.agent_id, "r1", 0, {}, {}, [proposal], "2026-01-02", "2026-01-02"
    )


async def _entities(service: CortexService, linked: str, ambiguous: str) -> None:
    """Entities, an alias, a link, an unresolved reference and a logged verb."""
    store, agent, now = (
        service.stores.entities,
        service.settings.agent_id,
        "2026-01-01T00:00:00.000000Z",
    )
    sister = PlannedAlias(EntityRef("Anna"), "my sister", AliasOrigin.rule)
    plans = [LinkPlan(linked, (PlannedLink(EntityRef("Anna"), LinkRole.subject),), (sister,))]
    await store.link(agent, plans, now)
    refs = (UnresolvedRef("my cousin", "my cousin", LinkRole.mentioned, ("Bo", "Cy")),)
    await store.link(agent, [LinkPlan(ambiguous, unresolved=refs)], now)
    (anna,) = await store.entity_named(agent, "Anna")
    await store.rename(agent, anna.id, "Anna Lee", now)


def table_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every copied table's rows in key order (all columns), and the text index's rows."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = {
            name: conn.execute(f"SELECT * FROM {name} ORDER BY {key}").fetchall()
            for name, key in TABLE_KEYS.items()
        }
        rows["meta"] = [row for row in rows["meta"] if row[0] != "vec_index"]
        rows["memories_fts"] = conn.execute(
            "SELECT rowid, text FROM memories_fts ORDER BY rowid"
        ).fetchall()
        return rows
    finally:
        conn.close()
