"""pgvector as the default vector search on PostgreSQL: each agent's own vectors, exactly while
the agent is small, through its own HNSW index once it is large; never crowded out by other
agents' vectors. A real PostgreSQL with pgvector (pgserver)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.models import Category, Layer, NewMemory, SearchFilters
from cortex_mcp.search.pgvector import PgVectorIndex
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.memories import LayerTtl
from cortex_mcp.store.postgres.vectors import hnsw_index_name
from cortex_mcp.store.vectors import PendingEmbedding

pytestmark = pytest.mark.anyio

NOW = "2026-11-01T00:00:00Z"
DIM = 16


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = vectors.astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


async def _store(memories: Any, vectors: Any, agent: str, rows: np.ndarray) -> list[str]:
    items = []
    for n, vector in enumerate(rows):
        new = NewMemory(
            agent_id=agent, content=f"{agent} memory {n}", layer=Layer.core, category=Category.fact
        )
        outcome = await memories.remember(new, NOW)
        items.append((PendingEmbedding(outcome.memory.id, new.content, "h"), vector.tobytes()))
    assert await vectors.save(items, "stub", DIM, NOW) == len(items)
    return [pending.memory_id for pending, _ in items]


def _exact_top(ids: list[str], rows: np.ndarray, query: np.ndarray, k: int = 10) -> list[str]:
    return [ids[i] for i in np.argsort(-(rows @ query), kind="stable")[:k]]


async def _plan(db: Any, agent: str, query: np.ndarray) -> str:
    """The plan of an agent's knn when scanning and sorting are made dear: whether the agent's
    HNSW index applies to its query (at a few hundred rows a scan is rightly cheaper)."""
    from cortex_mcp.store.postgres.vectors import VectorValue

    def explain(raw: Any) -> list[Any]:
        with raw.transaction():
            raw.execute("SET LOCAL enable_seqscan = off")
            raw.execute("SET LOCAL enable_sort = off")
            return list(
                raw.execute(
                    f"EXPLAIN SELECT memory_id FROM memory_vectors WHERE agent_id = %s"
                    f" AND model = %s AND dim = {DIM}"
                    f" ORDER BY (vector::vector({DIM})) <=> %s::vector({DIM}) LIMIT 10",
                    (agent, "stub", VectorValue(query.tobytes())),
                ).fetchall()
            )

    return "\n".join(str(row[0]) for row in await db.run(explain))


async def test_a_large_agent_gets_its_own_hnsw_index_and_a_small_one_keeps_its_top_10(
    pg_url: str,
) -> None:
    rng = np.random.default_rng(3)
    query = _unit(rng.normal(size=DIM))
    # the large agent's vectors all lie nearer the query than any of the small agent's: one
    # index over both, filtered afterwards, would hand the small agent nothing
    big_rows = _unit(query + rng.normal(size=(160, DIM)) * 0.3)
    small_rows = _unit(-query + rng.normal(size=(14, DIM)) * 0.8)
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    ttl = LayerTtl(working=timedelta(hours=24), archive=timedelta(days=30))
    async with open_database(settings) as db:
        stores = store_classes(db)
        memories, vectors = stores.memories(db, ttl), stores.vectors(db)
        big = await _store(memories, vectors, "big", big_rows)
        small = await _store(memories, vectors, "small", small_rows)
        await db.run(lambda raw: raw.execute("ANALYZE memory_vectors"))
        index = PgVectorIndex(vectors, memories, backend="auto", numpy_max_mb=256)
        index.hnsw_min_rows = 100

        for agent, ids, rows in (("big", big, big_rows), ("small", small, small_rows)):
            filters = SearchFilters(agent_id=agent, now=NOW)
            hits, backend = await index.search(query, "stub", 10, filters)
            await index.index_builds_done()
            assert backend == "pgvector"
            assert [memory_id for memory_id, _ in hits] == _exact_top(ids, rows, query)
            assert [round(s, 5) for _, s in hits] == sorted(
                (round(float(v @ query), 5) for v in rows), reverse=True
            )[:10]

        built = await db.fetchall(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'idx_memory_vectors_hnsw_a%'"
        )
        assert [row[0] for row in built] == [hnsw_index_name("big", "stub", DIM)]
        assert hnsw_index_name("big", "stub", DIM) in await _plan(db, "big", query)
        assert "hnsw" not in await _plan(db, "small", query)
        # through its index, the large agent still gets the exact top 10 (ef_search covers it)
        hits, _ = await index.search(query, "stub", 10, SearchFilters(agent_id="big", now=NOW))
        assert [memory_id for memory_id, _ in hits] == _exact_top(big, big_rows, query)


async def test_an_interrupted_hnsw_build_is_dropped_and_built_again(pg_url: str) -> None:
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    ttl = LayerTtl(working=timedelta(hours=24), archive=timedelta(days=30))
    name = hnsw_index_name("big", "stub", DIM)
    async with open_database(settings) as db:
        stores = store_classes(db)
        memories, vectors = stores.memories(db, ttl), stores.vectors(db)
        await _store(
            memories, vectors, "big", _unit(np.random.default_rng(1).normal(size=(30, DIM)))
        )

        def mark_invalid(raw: Any) -> None:  # what a build killed half way leaves behind
            raw.execute(f"CREATE INDEX {name} ON memory_vectors (memory_id)")
            raw.execute(
                "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", (name,)
            )

        await db.run(mark_invalid)
        assert await vectors.build_agent_hnsw("big", "stub", DIM)
        row = await db.fetchone(
            "SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = ?",
            (name,),
        )
        assert row is not None and row[0] is True and "hnsw" in row[1]


BUILD_SQL = "CREATE INDEX CONCURRENTLY%"


def _builds_in_server(url: str) -> list[tuple[Any, ...]]:
    """The wait event type of each index build the server is running for this database."""
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE datname = current_database()"
            " AND state = 'active' AND query LIKE %s",
            (BUILD_SQL,),
        ).fetchall()


async def test_closing_cancels_an_hnsw_build_under_way_and_the_next_check_builds_it(
    pg_url: str,
) -> None:
    """A shutdown does not wait for a build: closing the index and the database stops the
    CREATE INDEX in the server while the build still waits (on a transaction of another
    connection that it cannot finish before); its invalid index is rebuilt by the next check."""
    import asyncio

    import psycopg

    rows = _unit(np.random.default_rng(5).normal(size=(120, DIM)))
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    ttl = LayerTtl(working=timedelta(hours=24), archive=timedelta(days=30))
    name = hnsw_index_name("big", "stub", DIM)
    with psycopg.connect(pg_url) as writer:
        async with open_database(settings) as db:
            stores = store_classes(db)
            memories, vectors = stores.memories(db, ttl), stores.vectors(db)
            await _store(memories, vectors, "big", rows)
            # a writer's open transaction: a concurrent index build waits for it to end
            writer.execute("LOCK TABLE memory_vectors IN ROW EXCLUSIVE MODE")
            index = PgVectorIndex(vectors, memories, backend="auto", numpy_max_mb=256)
            index.hnsw_min_rows = 100
            await index.search(rows[0], "stub", 10, SearchFilters(agent_id="big", now=NOW))
            for _ in range(1200):  # a bound on a hang, not on speed
                if _builds_in_server(pg_url) == [("Lock",)]:
                    break
                await asyncio.sleep(0.1)
            assert _builds_in_server(pg_url) == [("Lock",)]  # under way, waiting on the writer
            await index.close()
        assert writer.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        assert _builds_in_server(pg_url) == []  # stopped in the server, not left to finish
        left = writer.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname = %s",
            (name,),
        ).fetchall()
        assert left == [(False,)]  # the interrupted build's index, not valid
        writer.rollback()

    async with open_database(settings) as db:
        stores = store_classes(db)
        memories, vectors = stores.memories(db, ttl), stores.vectors(db)
        index = PgVectorIndex(vectors, memories, backend="auto", numpy_max_mb=256)
        index.hnsw_min_rows = 100
        await index.search(rows[0], "stub", 10, SearchFilters(agent_id="big", now=NOW))
        await index.index_builds_done()
        valid = await db.fetchone(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname = ?",
            (name,),
        )
        assert valid is not None and valid[0] is True
        await index.close()
