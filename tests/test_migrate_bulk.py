"""`cortex-mcp migrate` into PostgreSQL by COPY, on a real PostgreSQL with pgvector (issue 17):
the text index it computes is the one remember stores, byte for byte, so search answers the
same; each batch commits, so a copy that fails keeps what it wrote and a second run goes on
from there; progress is reported through every phase."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.engine.exchange.migrate import migrate
from cortex_mcp.errors import Conflict, StorageError
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import (
    RecallRequest,
    RelationRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from cortex_mcp.store.postgres.inspect import inspect_postgres
from cortex_mcp.store.tables import TABLE_NAMES
from tests.conftest import FakeClock
from tests.helpers.store_fill import table_rows

pytestmark = pytest.mark.anyio

# Texts whose index is easy to get wrong: CJK one character per term, accents folded, quotes
# and backslashes inside terms, terms longer than the index keeps, more terms than tsvector
# positions, a word repeated past tsvector's 256 positions per lexeme, digits, other scripts.
CONTENTS = [
    "Prefers green tea in the morning, running and runs",
    "我喜欢投资股票和房产，周末去上海",
    "東京の品川でミーティング、カレーライスが好き",
    "Café crème at the naïve résumé workshop in Zürich",
    "O'Brien said \"don't\" and wrote C:\\path\\to\\file's \\\\ backslashes",
    "An identifier " + "x" * 600 + " then ordinary words after it",
    "Count: " + "x " * 17_000 + "finalword",
    "echo " * 300 + "and the last word",
    "Версия 2.4.1 of the Ελληνικά parser shipped; ünïcödé & emoji 🎉 in 2026",
    "!!! ??? ...",
]
QUERIES = [
    "green tea running",
    "投资",
    "品川",
    "cafe resume",
    "O'Brien",
    "finalword",
    "echo",
    "parser",
]


@pytest.fixture
def second_pg_url(pg_server: Any) -> Iterator[str]:
    with pg_server.fresh_database() as url:
        yield url


def _pg_settings(url: str) -> Any:
    return load_settings(database_url=url, embedding_provider="none", max_content_chars=100_000)


def _pg(url: str, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql, params).fetchall()]


async def _remember_all(url: str, clock: FakeClock) -> None:
    async with open_cortex(_pg_settings(url), clock=clock, background=False) as svc:
        for content in CONTENTS:
            await svc.memories.remember(RememberRequest(content=content))
            clock.advance(seconds=1)


async def test_the_bulk_text_index_is_the_one_remember_stores_byte_for_byte(
    pg_url: str, second_pg_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    await _remember_all(pg_url, clock)  # remember's own path: cortex_tsvector per row
    middle = tmp_path / "middle.db"
    await migrate(pg_url, str(middle))
    await migrate(str(middle), second_pg_url)  # COPY with the index computed in Python
    index = (
        "SELECT id, encode(tsvectorsend(tsv), 'hex'), tsv::text, doc_len FROM memories ORDER BY id"
    )
    per_row, bulk = _pg(pg_url, index), _pg(second_pg_url, index)
    assert len(per_row) == len(CONTENTS)
    assert bulk == per_row
    assert all(row[3] > 0 for row in per_row[:-1])  # every text but the last has terms
    for derived in ("SELECT * FROM text_stats ORDER BY slot", "SELECT * FROM embedding_queue"):
        assert sorted(_pg(second_pg_url, derived)) == sorted(_pg(pg_url, derived))


async def test_an_import_into_postgres_indexes_each_memory_as_remember_does(
    pg_url: str, second_pg_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    await _remember_all(pg_url, clock)
    exported = tmp_path / "memories.json"
    async with open_cortex(_pg_settings(pg_url), clock=clock, background=False) as svc:
        await svc.exchange.export_json(str(exported))
    async with open_cortex(_pg_settings(second_pg_url), clock=clock, background=False) as svc:
        report = await svc.exchange.import_path(str(exported))
    assert report.memories == len(CONTENTS)
    index = "SELECT content, encode(tsvectorsend(tsv), 'hex'), doc_len FROM memories ORDER BY 1"
    assert _pg(second_pg_url, index) == _pg(pg_url, index)
    for derived in (
        "SELECT * FROM text_stats ORDER BY slot",
        "SELECT COUNT(*) FROM embedding_queue",
    ):
        assert _pg(second_pg_url, derived) == _pg(pg_url, derived)


async def test_search_answers_the_same_on_the_bulk_copy_as_on_the_store_it_came_from(
    pg_url: str, second_pg_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    await _remember_all(pg_url, clock)
    middle = tmp_path / "middle.db"
    await migrate(pg_url, str(middle))
    await migrate(str(middle), second_pg_url)
    answers = []
    for url in (pg_url, second_pg_url):
        async with open_cortex(_pg_settings(url), clock=clock, background=False) as svc:
            found = []
            for query in QUERIES:
                hits = await svc.memories.search(SearchRequest(query=query, limit=10))
                found.append([(h.id, round(h.score, 6)) for h in hits])
            answers.append(found)
    assert answers[0] == answers[1]
    assert sum(1 for hits in answers[0] if hits) >= len(QUERIES) - 1


async def _source(path: Path, clock: FakeClock, memories: int) -> Path:
    settings = load_settings(db_path=path, embedding_provider="none")
    async with open_cortex(settings, clock=clock, background=False) as svc:
        ids = []
        for n in range(memories):
            ids.append(
                (
                    await svc.memories.remember(
                        RememberRequest(content=f"Fact number {n} about the garden in Lyon")
                    )
                ).id
            )
            clock.advance(seconds=1)
        for n in range(7):
            await svc.relations.add(
                build(RelationRequest, subject="garden", predicate="holds", object=f"plant {n}")
            )
        await svc.memories.recall(RecallRequest(query="garden Lyon"))
    return path


def _break_row(path: Path, seq: int, value: str | None) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET source = ? WHERE seq = ?", (value, seq))
    conn.commit()
    conn.close()


def _index_names(url: str) -> list[str]:
    return sorted(
        str(row[0])
        for row in _pg(url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
    )


async def test_a_copy_that_fails_in_a_batch_keeps_the_batches_before_and_a_rerun_completes(
    pg_url: str, second_pg_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    source = await _source(tmp_path / "source.db", clock, memories=23)
    indexes = _index_names(pg_url)
    _break_row(source, 13, "a NUL \x00 inside")  # in the third batch of five
    with pytest.raises(StorageError, match="rows copied before its batch are kept"):
        await migrate(str(source), pg_url, batch=5)
    assert _pg(pg_url, "SELECT seq FROM memories ORDER BY seq") == [(n,) for n in range(1, 11)]
    with pytest.raises(StorageError, match="unfinished copy"):  # not a source yet
        await migrate(pg_url, str(tmp_path / "partial.db"))
    other = await _source(tmp_path / "other.db", clock, memories=2)
    with pytest.raises(Conflict, match="unfinished copy of"):
        await migrate(str(other), pg_url)

    checks = await inspect_postgres(pg_url, pool_max=2)
    assert [c.status for c in checks if c.part == "copy"] == ["failed"]
    assert "run the same migrate again" in next(c.detail for c in checks if c.part == "copy")

    _break_row(source, 13, None)
    report = await migrate(str(source), pg_url, batch=5)
    assert report.resumed == 10
    back = tmp_path / "back.db"
    await migrate(pg_url, str(back))
    assert table_rows(back) == table_rows(source)
    assert _index_names(pg_url) == indexes  # dropped for the load, built again at the end
    assert not _pg(pg_url, "SELECT 1 FROM meta WHERE key = 'copy_unfinished'")
    analyzed = "SELECT reltuples FROM pg_class WHERE relname = 'memories'"  # -1: never
    assert _pg(pg_url, analyzed) == [(23.0,)]  # the planner knows the copy's size
    checks = await inspect_postgres(pg_url, pool_max=2)
    assert {c.part: c.status for c in checks}["indexes"] == "ok"
    assert "copy" not in {c.part for c in checks}

    await migrate(str(source), second_pg_url, batch=5)  # the same copy in one go
    for name in TABLE_NAMES:
        if name not in ("memory_vectors", "meta"):
            assert _pg(pg_url, f"SELECT * FROM {name}") == _pg(
                second_pg_url, f"SELECT * FROM {name}"
            )


class _Stop(Exception):
    """Stands for a copy stopped from outside (Ctrl-C, a lost connection)."""


async def test_a_copy_stopped_midway_goes_on_where_it_stopped_and_loses_nothing(
    pg_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    source = await _source(tmp_path / "source.db", clock, memories=12)

    def stop_in_relations(phase: str, done: int, total: int | None) -> None:
        if phase == "relations" and done >= 4:
            raise _Stop

    with pytest.raises(_Stop):
        await migrate(str(source), pg_url, batch=4, progress=stop_in_relations)
    assert _pg(pg_url, "SELECT COUNT(*) FROM memories") == [(12,)]
    assert _pg(pg_url, "SELECT COUNT(*) FROM relations") == [(4,)]

    report = await migrate(str(source), pg_url, batch=4)
    assert report.resumed == 12 + 4
    settings = _pg_settings(pg_url)
    async with open_cortex(settings, clock=clock, background=False) as svc:
        later = await svc.memories.remember(
            RememberRequest(content="Written after the copy: its seq follows the copied ones")
        )
        assert [
            m.id for m in await svc.memories.search(SearchRequest(query="written after the copy"))
        ][:1] == [later.id]
        assert len(await svc.memories.search(SearchRequest(query="garden Lyon", limit=20))) == 12
    assert _pg(pg_url, "SELECT MAX(seq) FROM memories") == [(13,)]


async def test_a_copy_reports_progress_through_every_table_check_and_index(
    pg_url: str, tmp_path: Path, clock: FakeClock
) -> None:
    source = await _source(tmp_path / "source.db", clock, memories=9)
    seen: list[tuple[str, int, int | None]] = []
    await migrate(str(source), pg_url, batch=4, progress=lambda *step: seen.append(step))
    phases = list(dict.fromkeys(phase for phase, _, _ in seen))
    assert phases[0] == "memories" and phases[-1] == "indexing"
    assert phases.index("deriving") < phases.index("verify memories") < phases.index("indexing")
    memories = [(done, total) for phase, done, total in seen if phase == "memories"]
    assert memories == [(0, 9), (4, 9), (8, 9), (9, 9)]
    assert set(TABLE_NAMES) <= set(phases)
