"""A seeded database for the dashboard tests: two agents, memories of every layer (some dated
weeks back so the lifecycle has work to preview), a correction, a forgotten memory, relations
and ingested turns. Written through the service, as the server would."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    IngestRequest,
    RelationRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock

AGENT = "alice"
OTHER = "bob"
KNOWN_QUERY = "Oracle Cloud VPS"
RELATIONS = [
    ("Alice", "works_at", "Acme"),
    ("Alice", "lives_in", "Lisbon"),
    ("Acme", "builds", "Rockets"),
    ("Bob", "manages", "Alice"),
]


@dataclass
class Seeded:
    ids: dict[str, str] = field(default_factory=dict)
    other_ids: list[str] = field(default_factory=list)


async def _remember(service: CortexService, **fields: Any) -> str:
    """Remember one memory through the service, as a client would; its id."""
    return (await service.memories.remember(RememberRequest(**fields))).id


async def _seed(settings: Settings) -> Seeded:
    now = datetime.now(UTC)
    clock = FakeClock(now - timedelta(days=60))
    seeded = Seeded()
    async with open_cortex(settings, clock=clock) as service:
        # old, unimportant working notes: the lifecycle would archive them
        for n in range(4):
            seeded.ids[f"old{n}"] = await _remember(
                service,
                content=f"Old scratch note number {n} about a build log",
                category="context",
                importance=0.1,
                layer="core",
                agent_id=AGENT,
            )
        clock.moment = now - timedelta(days=3)
        seeded.ids["vps"] = await _remember(
            service,
            content="User's VPS runs on Oracle Cloud ARM in Frankfurt",
            category="fact",
            importance=0.8,
            agent_id=AGENT,
        )
        seeded.ids["editor"] = await _remember(
            service, content="Prefers Neovim over VS Code", category="preference", agent_id=AGENT
        )
        seeded.ids["todo"] = await _remember(
            service,
            content="Renew the TLS certificate before December",
            category="todo",
            layer="working",
            importance=0.6,
            agent_id=AGENT,
        )
        clock.moment = now - timedelta(days=1)
        seeded.ids["archived"] = await _remember(
            service,
            content="Used to host the blog on a Raspberry Pi",
            category="fact",
            layer="archive",
            importance=0.4,
            agent_id=AGENT,
        )
        seeded.ids["wrong"] = await _remember(
            service, content="Lives in Porto", category="identity", agent_id=AGENT
        )
        corrected = await service.memories.forget(
            ForgetRequest(
                memory_id=seeded.ids["wrong"],
                reason="moved",
                correction="Lives in Lisbon",
                agent_id=AGENT,
            )
        )
        assert corrected.new_id is not None
        seeded.ids["corrected"] = corrected.new_id
        seeded.ids["forgotten"] = await _remember(
            service, content="Dislikes olives", category="preference", agent_id=AGENT
        )
        await service.memories.forget(
            ForgetRequest(
                memory_id=seeded.ids["forgotten"], reason="changed their mind", agent_id=AGENT
            )
        )
        for subject, predicate, obj in RELATIONS:
            await service.relations.add(
                build(
                    RelationRequest,
                    subject=subject,
                    predicate=predicate,
                    object=obj,
                    agent_id=AGENT,
                )
            )
        clock.moment = now - timedelta(hours=2)
        await service.conversation.ingest(
            build(
                IngestRequest,
                user_message="Remember that I always deploy on Fridays at 5pm",
                assistant_message="Noted: Friday 5pm deploys.",
                agent_id=AGENT,
                session_id="s-1",
            )
        )
        for n in range(3):
            seeded.other_ids.append(
                await _remember(
                    service,
                    content=f"Bob's private note {n}: the vault code is 4{n}21",
                    agent_id=OTHER,
                )
            )
        await service.embed_pending()
    return seeded


def seed_database(settings: Settings) -> Seeded:
    """Seed on a thread of its own: Playwright's sync API keeps an event loop on this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _seed(settings)).result()
