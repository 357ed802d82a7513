"""`cortex-mcp migrate` between SQLite and a real PostgreSQL with pgvector (issue 17, line 4 at a
small size; `bench/migrate.py` runs it at 100K memories)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.engine.exchange.migrate import migrate
from cortex_mcp.errors import Conflict, StorageError
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest, SearchRequest
from tests.conftest import FakeClock, stub_settings
from tests.helpers.store_fill import filled_store, table_rows

pytestmark = pytest.mark.anyio

CLI = str(Path(sys.executable).with_name("cortex-mcp"))
QUERIES = ("green tea", "小笼包", "品川", "gateway crash", "coffee", "Berlin")


def _settings(url: str, path: Path | None = None, database_url: str | None = None) -> Settings:
    return stub_settings(path or Path("unused.db"), url, database_url=database_url)


@pytest.fixture
async def filled(tmp_path: Path, embeddings_url: str, clock: FakeClock) -> Path:
    return await filled_store(tmp_path / "source.db", embeddings_url, clock)


def _cli(*args: str, database_url: str | None = None) -> subprocess.CompletedProcess[str]:
    env_args = ["--db", args[0]] if database_url is None else []
    rest = args[1:] if database_url is None else args
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("CORTEX_")}
    if database_url is not None:
        env["CORTEX_DATABASE_URL"] = database_url
    return subprocess.run(
        [CLI, *env_args, "migrate", *rest],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


async def test_a_round_trip_through_postgres_gives_back_every_row_of_every_table(
    filled: Path, tmp_path: Path, pg_url: str
) -> None:
    there = _cli(str(filled), "--to", pg_url, "--json")
    assert there.returncode == 0, there.stderr
    report = json.loads(there.stdout)
    assert report["verified"] and report["rows"] > 30
    assert "@" not in report["target"] or ":" not in report["target"].split("@")[0][13:]
    back = tmp_path / "back.db"
    home = _cli("--to", f"sqlite:///{back}", "--json", database_url=pg_url)
    assert home.returncode == 0, home.stderr
    assert json.loads(home.stdout)["tables"] == report["tables"]  # same counts and checksums
    assert table_rows(back) == table_rows(filled)


async def test_the_postgres_copy_recalls_what_the_sqlite_store_recalls(
    filled: Path, pg_url: str, embeddings_url: str, clock: FakeClock
) -> None:
    await migrate(str(filled), pg_url)
    found, embedded = [], []
    for settings in (_settings(embeddings_url, filled), _settings(embeddings_url, None, pg_url)):
        async with open_cortex(settings, clock=clock, background=False) as svc:
            embedded.append(await svc.embed_pending())  # what the source lacked too
            answers = []
            for query in QUERIES:
                hits = await svc.memories.search(
                    SearchRequest(query=query, limit=10)
                )  # no access counted: same state
                answers.append(sorted((-round(h.score, 4), h.id) for h in hits))
            found.append(answers)
    assert embedded[0] == embedded[1] < 3  # the vectors came with the copy
    assert found[0] == found[1]
    assert all(found[0][:3])


async def test_a_postgres_store_that_holds_memories_is_refused_unless_forced(
    filled: Path, pg_url: str, clock: FakeClock
) -> None:
    settings = load_settings(database_url=pg_url, embedding_provider="none")
    async with open_cortex(settings, clock=clock) as svc:
        kept = (
            await svc.memories.remember(RememberRequest(content="A memory already in PostgreSQL"))
        ).id
    with pytest.raises(Conflict, match="already holds"):
        await migrate(str(filled), pg_url)
    async with open_cortex(settings, clock=clock) as svc:
        assert (await svc.reading.memory_detail(kept))["memory"]["id"] == kept
    report = await migrate(str(filled), pg_url, replace=True)
    assert report.replaced >= 1
    assert _pg_count(pg_url, "memories") == _count(filled, "memories")
    async with open_cortex(settings, clock=clock) as svc:
        fresh = await svc.memories.remember(
            RememberRequest(content="Written after the copy: its seq follows the copied ones")
        )
        assert not fresh.deduplicated
        assert [
            m.id for m in await svc.memories.search(SearchRequest(query="written after the copy"))
        ][:1] == [fresh.id]
    assert _pg_count(pg_url, "memories") == _count(filled, "memories") + 1


def _pg_count(url: str, table: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _count(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


async def test_a_row_postgres_cannot_hold_stops_the_copy_with_one_line_and_marks_it_unfinished(
    filled: Path, tmp_path: Path, pg_url: str
) -> None:
    conn = sqlite3.connect(filled)
    conn.execute("UPDATE memories SET source = ? WHERE rowid = 2", ("a NUL \x00 inside",))
    conn.commit()
    conn.close()
    refused = _cli(str(filled), "--to", pg_url)
    assert refused.returncode == 1
    assert "memories" in refused.stderr and "run migrate again" in refused.stderr
    assert "Traceback" not in refused.stderr and refused.stderr.count("\n") == 1
    with pytest.raises(StorageError):
        await migrate(str(filled), pg_url)
    assert _pg_count(pg_url, "memories") == 0  # the batch holding the row was not committed
    with pytest.raises(StorageError, match="unfinished copy"):  # nor is the store whole
        await migrate(pg_url, str(tmp_path / "empty.db"))
