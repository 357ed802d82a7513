"""The store on both backends: a real SQLite file and a real PostgreSQL with pgvector.

Each `backend` test runs twice; the PostgreSQL-only tests cover what only several processes
sharing one database can show (two handles stand for two servers)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import ConfigError, InvalidInput
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.pgvector import PgVectorIndex
from cortex_mcp.search.text import build_query
from cortex_mcp.service.requests import ForgetRequest, RecallRequest, RememberRequest
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.lease import Lease
from cortex_mcp.store.memories import LayerTtl
from cortex_mcp.store.postgres.database import PgDatabase, redact_url
from cortex_mcp.store.postgres.schema import SCHEMA_VERSION
from cortex_mcp.store.vectors import PendingEmbedding
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

HOSTILE = [
    "'",
    '"',
    "it's O'Brien's \"quote\"",
    "a & b | c ! d",
    "x:* & y:A",
    "(((",
    "))) & !(",
    "<-> <2> <->",
    "\\",
    "back\\slash\\\\ and \\' and \\\"",
    "nul\x00inside",
    "'; DROP TABLE memories; --",
    "%_% LIKE \\% _",
    "NEAR(a b) AND OR NOT *",
    "投资 & 股票 | !房地产",
    "word " * 3000,
    "é" * 5000,
]


def _ttl() -> LayerTtl:
    from datetime import timedelta

    return LayerTtl(working=timedelta(hours=24), archive=timedelta(days=30))


async def test_remember_dedup_forget_correct_and_purge(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as service:
        first = await service.memories.remember(
            RememberRequest(content="The staging database runs on port 5433")
        )
        again = await service.memories.remember(
            RememberRequest(content="the staging database runs on port 5433.")
        )
        assert again.deduplicated and again.id == first.id
        other = await service.memories.remember(
            RememberRequest(content="Deploys happen on Fridays after lunch")
        )
        await service.memories.forget(
            ForgetRequest(memory_id=other.id, correction="Deploys happen on Thursdays after lunch")
        )
        found = await service.memories.recall(RecallRequest(query="when are deploys"))
        assert [m.content for m in found.memories] == ["Deploys happen on Thursdays after lunch"]
        await service.memories.forget(ForgetRequest(memory_id=first.id))
        assert (
            await service.memories.recall(RecallRequest(query="staging database port"))
        ).memories == []
        await service.memories.forget(ForgetRequest(memory_id=found.memories[0].id, purge=True))
        assert (
            await service.memories.recall(RecallRequest(query="deploys Thursdays"))
        ).memories == []
        counts = (await service.status.stats())["memories"]
        assert counts["total"] == 2 and counts["forgotten"] == 1 and counts["superseded"] == 1
        assert counts["fts_rows"] == counts["total"]


async def test_a_failed_write_changes_nothing(backend_settings: Settings) -> None:
    async with open_database(backend_settings) as db:
        memories = store_classes(db).memories(db, _ttl())

        def half_then_fail(conn: Any) -> None:
            conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", ("half", "written"))
            raise InvalidInput("stop here", field="x")

        with pytest.raises(InvalidInput):
            await db.transact(half_then_fail)
        assert await db.get_meta("half") is None
        assert (await memories.counts())["total"] == 0


async def test_a_vector_written_after_the_top_one_was_deleted_is_above_every_row_seen(
    backend_settings: Settings,
) -> None:
    """In-process vector indexes apply the rows above the highest row number they saw
    (search/vector.py). SQLite numbers a new row the highest rowid + 1, so after the top row
    was deleted the next one took its number back, below what an index had seen."""
    now = "2026-11-01T00:00:00Z"
    async with open_database(backend_settings) as db:
        stores = store_classes(db)
        memories, vectors = stores.memories(db, _ttl()), stores.vectors(db)
        a, b, c = [(await memories.remember(_new(text), now)).memory for text in "abc"]
        pending = {m.id: PendingEmbedding(m.id, m.content, m.content) for m in (a, b, c)}
        blob = np.ones(4, dtype=np.float32).tobytes()
        await vectors.save([(pending[a.id], blob), (pending[b.id], blob)], "stub", 4, now)
        seen, _ = await vectors.watermark()

        await memories.purge(b.id, "default", now)  # b's vector was the top row
        await vectors.save([(pending[c.id], blob)], "stub", 4, now)

        assert [row[1] for row in await vectors.added_since("stub", 4, seen)] == [c.id]
        assert (await vectors.watermark())[0] > seen


async def test_hostile_text_is_searched_as_words_never_as_query_syntax(
    backend_settings: Settings,
) -> None:
    async with open_cortex(backend_settings) as service:
        plain = await service.memories.remember(
            RememberRequest(content="Brien quoted the backslash rule for drop tables")
        )
        for text in HOSTILE:
            if "\x00" in text:  # a query holding NUL is refused before any search (issue 32)
                with pytest.raises(InvalidInput):
                    RecallRequest(query=text)
            else:
                result = await service.memories.recall(
                    RecallRequest(query=text[:2000])
                )  # every query answers, none fails
                assert all(m.id == plain.id for m in result.memories)
            query = build_query(text)  # the store itself takes any length
            if not query.empty:
                hits = await service.stores.memories.text_search(query.match, _filters(service), 10)
                assert all(memory_id == plain.id for memory_id, _ in hits)
            if backend_settings.database_url is not None:  # even raw text is only words there
                await service.stores.memories.text_search(text, _filters(service), 10)
        query = build_query("O'Brien backslash DROP")
        hits = await service.stores.memories.text_search(query.match, _filters(service), 10)
        assert [memory_id for memory_id, _ in hits] == [plain.id]


async def test_the_same_data_ranks_the_same_on_both_stores(
    tmp_path: Path, pg_url: str, clock: FakeClock
) -> None:
    """BM25 on PostgreSQL is FTS5's: the same memories give the same order and scores."""
    corpus = [
        "Harry ran three marathons last year and trains on Sundays",
        "The marathon in Berlin was flat and fast",
        "Harry's sister prefers swimming to running",
        "Running shoes wear out after about 800 kilometres",
        "我喜欢投资股票和房地产",
        "股票市场今天下跌了",
        "Oracle Cloud 防火墙默认阻止 8080 端口",
        "東京で寿司を食べた",
        "E_CONN_REFUSED appears after deploys on port 8080",
        "Nate won the video game tournament; the video was long",
        # equal scores: both stores give them oldest first
        *(f"marathon notes page {n}" for n in ("one", "two", "three", "four", "five")),
    ]
    queries = [
        "marathon notes",
        "How many marathons did Harry run?",
        "running",
        "投资股票",
        "防火墙 8080",
        "寿司を食べたい",
        "video game",
        "E_CONN_REFUSED deploys",
    ]
    ranked: dict[str, list[list[tuple[str, float]]]] = {}
    for name, url in (("sqlite", None), ("postgres", pg_url)):
        overrides: dict[str, Any] = {"db_path": tmp_path / "brain.db"}
        if url:
            overrides["database_url"] = url
        settings = load_settings(embedding_provider="none", **overrides)
        async with open_cortex(settings, clock=clock) as service:
            ids = {}
            for content in corpus:
                ids[(await service.memories.remember(RememberRequest(content=content))).id] = (
                    content
                )
            ranked[name] = []
            for question in queries:
                hits = await service.stores.memories.text_search(
                    build_query(question).match, _filters(service), 10
                )
                ranked[name].append([(ids[i], round(score, 6)) for i, score in hits])
    assert ranked["postgres"] == ranked["sqlite"]


async def test_a_hybrid_recall_gives_the_same_top_10_on_both_stores(
    tmp_path: Path, pg_url: str, clock: FakeClock
) -> None:
    """Text and vector channels, fusion and ranking over the same memories and vectors."""
    from tests.helpers.embedding_stub import StubState, embedding_stub

    facts = [
        f"{who} {does} {what}"
        for who in ("Harry", "Maria", "The team")
        for does in ("likes", "bought", "wrote about")
        for what in ("rental apartments", "marathon training", "投资股票", "the firewall rules")
    ]
    questions = ["what does Harry like?", "investments", "marathon", "股票", "firewall", "Maria"]
    answers: dict[str, list[list[tuple[float, list[str]]]]] = {}
    with embedding_stub(StubState(meaning=True)) as (url, _):
        for name, database_url in (("sqlite", None), ("postgres", pg_url)):
            settings = load_settings(
                db_path=tmp_path / "hybrid.db",
                database_url=database_url,
                embedding_provider="openai",
                embedding_base_url=url,
                embedding_model="stub-embed",
                embedding_timeout_s=10.0,
                # each recall raises what it found: a tie cut at 10 differently would then
                # rank the next question differently, through no fault of the store
                search={"access_boost": 0},
            )
            async with open_cortex(settings, clock=clock, background=False) as service:
                # on PostgreSQL pgvector searches the table; on SQLite a per-agent matrix
                assert isinstance(service.engines.searcher.index, PgVectorIndex) == (
                    name == "postgres"
                )
                for fact in facts:
                    await service.memories.remember(RememberRequest(content=fact))
                    # another agent's near-copies: in no answer of this agent, on either store
                    await service.memories.remember(
                        RememberRequest(
                            content=f"{fact} (noted by the other agent)", agent_id="other"
                        )
                    )
                assert await service.embed_pending() == 2 * len(facts)
                answers[name] = []
                for question in questions:
                    found = await service.memories.recall(
                        RecallRequest(query=question, max_results=10)
                    )
                    assert "vector" in found.meta.channels
                    assert not any("other agent" in m.content for m in found.memories)
                    answers[name].append(_by_score((m.score, m.content) for m in found.memories))
    assert answers["postgres"] == answers["sqlite"]


def _by_score(ranked: Iterable[tuple[float, str]]) -> list[tuple[float, list[str]]]:
    """The ranking with ties grouped: equal scores may come in either order (and the last
    group may be cut at a different member, so only its score counts)."""
    groups: dict[float, list[str]] = {}
    for score, content in ranked:
        groups.setdefault(round(score, 6), []).append(content)
    ordered = [(score, sorted(contents)) for score, contents in groups.items()]
    return [*ordered[:-1], (ordered[-1][0], [])] if ordered else []


async def test_pgvector_knn_and_the_numpy_matrix_agree(pg_url: str) -> None:
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    rng = np.random.default_rng(7)
    async with open_database(settings) as db:
        stores = store_classes(db)
        memories, vectors = stores.memories(db, _ttl()), stores.vectors(db)
        items = []
        for n in range(60):
            outcome = await memories.remember(_new(f"memory number {n}"), "2026-11-01T00:00:00Z")
            vector = rng.normal(size=16).astype(np.float32)
            vector /= np.linalg.norm(vector)
            pending = PendingEmbedding(outcome.memory.id, outcome.memory.content, "h")
            items.append((pending, vector.tobytes()))
        assert await vectors.save(items, "stub", 16, "2026-11-01T00:00:00Z") == 60
        loaded = await vectors.added_since("stub", 16, 0)
        assert {row[1]: row[3] for row in loaded} == {p.memory_id: b for p, b in items}
        assert await vectors.ensure_vec_index("stub", 16)
        query = rng.normal(size=16).astype(np.float32)
        query /= np.linalg.norm(query)
        matrix = np.vstack([np.frombuffer(b, dtype=np.float32) for _, b in items])
        exact = [items[i][0].memory_id for i in np.argsort(-(matrix @ query))[:10]]
        found = await vectors.knn(query.tobytes(), 10)
        assert [memory_id for memory_id, _ in found] == exact
        # a replaced vector is new to the in-process index (a higher row number), a
        # deleted one counts
        before, deletions = await vectors.watermark()
        await vectors.save(items[:1], "stub", 16, "2026-11-02T00:00:00Z")
        await memories.purge(items[1][0].memory_id, "default", "2026-11-02T00:00:00Z")
        after, deleted = await vectors.watermark()
        assert after > before and deleted == deletions + 1


async def test_two_servers_remembering_the_same_content_store_one_row(pg_url: str) -> None:
    settings = load_settings(database_url=pg_url, embedding_provider="none", pool_max=4)
    content = "The office wifi password rotates every Monday"
    async with open_cortex(settings) as one, open_cortex(settings) as two:
        results = await asyncio.gather(
            *(
                server.memories.remember(RememberRequest(content=content))
                for server in [one, two] * 10
            )
        )
        assert len({r.id for r in results}) == 1
        assert sum(not r.deduplicated for r in results) == 1
        assert (await one.status.stats())["memories"]["total"] == 1


async def test_only_one_server_holds_the_lease(pg_url: str) -> None:
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    async with open_database(settings) as a, open_database(settings) as b:
        leases = [store_classes(a).lease(a), store_classes(b).lease(b)]

        def alive(_: Lease) -> bool:
            return False

        taken = await asyncio.gather(
            *(
                lease.acquire("lifecycle", f"holder-{i}", 60, is_stale=alive)
                for i, lease in enumerate(leases * 5)
            )
        )
        winners = [f"holder-{i}" for i, t in enumerate(taken) if t is None]
        assert len(winners) == 1, winners
        holder = await leases[0].holder("lifecycle")
        assert holder is not None and holder.holder in winners


async def test_two_servers_never_claim_the_same_memories_to_embed(pg_url: str) -> None:
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    async with open_database(settings) as a, open_database(settings) as b:
        memories = store_classes(a).memories(a, _ttl())
        for n in range(30):
            await memories.remember(_new(f"note {n}"), "2026-11-01T00:00:00Z")
        first, second = await asyncio.gather(
            store_classes(a).vectors(a).pending("stub", 20),
            store_classes(b).vectors(b).pending("stub", 20),
        )
        one, two = {p.memory_id for p in first}, {p.memory_id for p in second}
        assert not one & two and len(one | two) == 30


async def test_migrations_are_numbered_recorded_and_run_once(pg_server: Any) -> None:
    with pg_server.empty_database() as url:
        await asyncio.gather(*(_open_and_close(url) for _ in range(3)))
        async with PgDatabase(url) as db:
            assert await db.schema_version() == SCHEMA_VERSION
            rows = await db.fetchall("SELECT version FROM cortex_schema ORDER BY version")
            assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
            assert await db.integrity_check() == "ok"


def test_the_url_must_be_postgresql_and_its_password_stays_out_of_messages() -> None:
    with pytest.raises(ConfigError, match=r"CORTEX_DATABASE_URL: .*postgresql://"):
        load_settings(database_url="mysql://root@localhost/db")
    settings = load_settings(database_url="postgresql://me:s3cret@db.example:5432/cortex")
    assert "s3cret" not in repr(settings)
    assert redact_url("postgresql://me:s3cret@db.example:5432/cortex") == (
        "postgresql://me:***@db.example:5432/cortex"
    )


async def test_an_unreachable_server_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    from cortex_mcp.errors import StorageError

    url = f"postgresql://nobody@/cortex?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StorageError, match="CORTEX_DATABASE_URL") as caught:
        async with open_database(load_settings(database_url=url)):
            pass
    assert "\n" not in caught.value.message


async def _open_and_close(url: str) -> None:
    async with PgDatabase(url, pool_max=1):
        pass


def _new(content: str) -> Any:
    from cortex_mcp.models import Category, Layer, NewMemory

    return NewMemory(agent_id="default", content=content, layer=Layer.core, category=Category.fact)


def _filters(service: Any) -> Any:
    from cortex_mcp.models import SearchFilters

    return SearchFilters(agent_id=service.settings.agent_id, now="2100-01-01T00:00:00Z")
