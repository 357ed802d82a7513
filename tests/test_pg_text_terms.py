"""PostgreSQL keeps each lexeme's document count in `text_terms` and each adjacent pair's in
`text_pairs` (schema 6, 7): BM25's document frequency of a word or a two-word phrase is read,
not counted over every row holding it. Every writer keeps the
counts equal to what the rows hold: remember, forget, purge, import, the lifecycle's rewrites,
a bulk copy by migrate, and the migration that adds the table to an existing database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.engine.exchange.migrate import migrate
from cortex_mcp.models import LifecycleAction, NewMemory
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, ImportRequest, RememberRequest, build
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.lifecycle_phases import action_key
from cortex_mcp.store.memories import LayerTtl
from cortex_mcp.store.postgres.database import PgDatabase
from cortex_mcp.store.postgres.schema import SCHEMA_VERSION
from tests.conftest import FakeClock
from tests.helpers.older_schema import postgres_back_to

pytestmark = pytest.mark.anyio

NOW = "2026-11-01T12:00:00+00:00"
HEDGEHOG = '"hedgehog"'
PAIR = '"the hedgehog"'


@pytest.fixture
def pg_settings(pg_url: str, tmp_path: Path) -> Settings:
    return load_settings(
        db_path=tmp_path / "unused.db", database_url=pg_url, embedding_provider="none"
    )


@pytest.fixture
async def service(pg_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(pg_settings, clock=clock, background=False) as svc:
        yield svc


def kept_and_counted(url: str) -> tuple[dict[Any, int], dict[Any, int]]:
    """(what `text_terms` and `text_pairs` say, what the rows' indexes hold): per lexeme, and
    per pair of lexemes next to each other, counted as `tsv @@ 'a <-> b'` counts them."""
    with psycopg.connect(url) as conn:
        kept = conn.execute(
            "SELECT lexeme, SUM(docs) FROM text_terms GROUP BY 1 HAVING SUM(docs) <> 0"
        ).fetchall()
        kept += conn.execute(
            "SELECT (lexeme, following)::text, SUM(docs) FROM text_pairs GROUP BY 1"
            " HAVING SUM(docs) <> 0"
        ).fetchall()
        counted = conn.execute(
            "SELECT lexeme, COUNT(*) FROM memories, unnest(tsvector_to_array(tsv)) AS lexeme"
            " GROUP BY 1"
        ).fetchall()
        lexemes = [row[0] for row in counted]
        for first in lexemes:  # every ordered pair, by the phrase search itself
            for second in lexemes:
                phrase = f"'{first}' <-> '{second}'"
                n = conn.execute(
                    "SELECT COUNT(*) FROM memories WHERE tsv @@ %s::tsquery", (phrase,)
                ).fetchone()
                if n is not None and n[0]:
                    counted.append((f"({first},{second})", n[0]))
    return {str(k): int(n) for k, n in kept}, {str(k): int(n) for k, n in counted}


def assert_counts_match_rows(url: str) -> dict[str, int]:
    kept, counted = kept_and_counted(url)
    assert kept == counted
    return kept


async def hedgehogs(service: CortexService) -> int:
    """The document count the text channel reads for 'hedgehog' (and 'the hedgehog': the
    same here, a count of pairs)."""
    _, counts = await service.stores.memories.term_counts([HEDGEHOG, PAIR], 1000)
    assert counts[PAIR] == counts[HEDGEHOG]
    return counts[HEDGEHOG]


async def test_remember_forget_and_purge_keep_the_counts(
    service: CortexService, pg_url: str
) -> None:
    ids = [
        (
            await service.memories.remember(
                RememberRequest(content=f"The hedgehog {n} sleeps in the garden shed")
            )
        ).id
        for n in range(3)
    ]
    await service.memories.remember(
        RememberRequest(content="The hedgehog 0 sleeps in the garden shed")
    )  # deduplicated
    await service.memories.remember(RememberRequest(content="Foxes visit the garden at night"))
    assert await hedgehogs(service) == 3
    assert assert_counts_match_rows(pg_url)["garden"] == 4

    await service.memories.forget(
        ForgetRequest(memory_id=ids[0])
    )  # forgotten rows stay in the index, as on SQLite
    assert await hedgehogs(service) == 3
    await service.memories.forget(ForgetRequest(memory_id=ids[1], purge=True))
    assert await hedgehogs(service) == 2
    assert assert_counts_match_rows(pg_url)["garden"] == 3


async def test_a_correction_and_an_import_keep_the_counts(
    service: CortexService, pg_url: str
) -> None:
    old = await service.memories.remember(
        RememberRequest(content="The hedgehog lives under the porch")
    )
    await service.memories.forget(
        ForgetRequest(memory_id=old.id, correction="The hedgehog lives under the old oak tree")
    )
    await service.exchange.import_memories(
        build(
            ImportRequest,
            content="- The hedgehog crossed the road\n- Ёж и йод\n",
            format="markdown",
        )
    )
    assert await hedgehogs(service) == 3
    counts = assert_counts_match_rows(pg_url)
    assert counts["oak"] == 1 and counts["еж"] == 1 and counts["(еж,и)"] == 1


@pytest.fixture
async def stores(pg_settings: Settings) -> AsyncIterator[Any]:
    async with open_database(pg_settings) as db:
        classes = store_classes(db)
        memories = classes.memories(db, LayerTtl(timedelta(hours=24), timedelta(days=30)))
        yield memories, classes.lifecycle(db, memories)


async def test_the_lifecycle_rewrites_keep_the_counts(stores: Any, pg_url: str) -> None:
    memories, lifecycle = stores
    ids = [
        str(
            (
                await memories.remember(NewMemory(agent_id="a", content=f"Hedgehog note {n}"), NOW)
            ).memory.id
        )
        for n in range(2)
    ]
    action = LifecycleAction(phase="merge", kind="merge", agent_id="a", ids=ids, llm=True)
    run_id = await lifecycle.start_run("all", NOW, [action], NOW)
    merged = NewMemory(agent_id="a", content="Two notes about a sleepy hedgehog")
    await lifecycle.apply_phase(run_id, 0, [action], NOW, new_memories={action_key(action): merged})
    counts = assert_counts_match_rows(pg_url)
    assert counts["sleepi"] == 1 and counts["hedgehog"] == 3

    summary = await memories.remember(NewMemory(agent_id="a", content="Summary: nothing"), NOW)
    await lifecycle.rewrite_summary(summary.memory.id, "Summary: owls", {"covers": []}, NOW)
    counts = assert_counts_match_rows(pg_url)
    assert "noth" not in counts and counts["owl"] == 1


async def test_a_copy_by_migrate_and_the_schema_migration_fill_the_counts(
    tmp_path: Path, pg_url: str, clock: FakeClock
) -> None:
    source = load_settings(db_path=tmp_path / "brain.db", embedding_provider="none")
    async with open_cortex(source, clock=clock, background=False) as sqlite_service:
        for n in range(5):
            await sqlite_service.memories.remember(
                RememberRequest(content=f"Hedgehog {n} and the badger share a burrow")
            )
    await migrate(str(tmp_path / "brain.db"), pg_url)
    assert assert_counts_match_rows(pg_url)["badger"] == 5

    # a database of schema 5, with memories, gets the counts when it is opened
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for name in ("terms", "pairs"):
            conn.execute(f"DROP TRIGGER memories_text_{name} ON memories")
            conn.execute(f"DROP FUNCTION cortex_text_{name}()")
            conn.execute(f"DROP TABLE text_{name}")
        conn.execute("DROP FUNCTION cortex_pairs(tsvector)")
        postgres_back_to(conn, SCHEMA_VERSION, 5)
    async with PgDatabase(pg_url) as db:
        assert await db.schema_version() == SCHEMA_VERSION
    assert assert_counts_match_rows(pg_url)["hedgehog"] == 5
