"""`cortex-mcp migrate`: a whole store copied row for row, verified, into an empty target only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.engine.exchange.migrate import migrate
from cortex_mcp.errors import Conflict, InvalidInput, StorageError
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from cortex_mcp.store.tables import TableDigest, table
from tests.conftest import FakeClock, stub_settings
from tests.helpers.store_fill import filled_store, table_rows

pytestmark = pytest.mark.anyio

CLI = str(Path(sys.executable).with_name("cortex-mcp"))


@pytest.fixture
async def filled(tmp_path: Path, embeddings_url: str, clock: FakeClock) -> Path:
    return await filled_store(tmp_path / "source.db", embeddings_url, clock)


def _sealed(path: Path) -> bool:
    """One private, self-contained file."""
    return path.stat().st_mode & 0o777 == 0o600 and not Path(f"{path}-wal").exists()


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if ".migrating" in p.name]


def _migrate(source: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "--db", str(source), "migrate", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_a_sqlite_copy_has_every_row_of_every_table_and_the_same_text_index(
    filled: Path, tmp_path: Path
) -> None:
    original = table_rows(filled)
    assert all(original[name] for name in original), [n for n in original if not original[n]]
    target = tmp_path / "copy.db"
    done = _migrate(filled, "--to", f"sqlite:///{target}", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verified"] is True
    counts = {t["table"]: t["rows"] for t in report["tables"]}
    assert counts == {name: len(rows) for name, rows in original.items() if name != "memories_fts"}
    assert table_rows(target) == original
    assert _sealed(target)
    assert _leftovers(tmp_path) == []


async def test_the_copy_serves_the_same_recall_as_the_source(
    filled: Path, tmp_path: Path, embeddings_url: str, clock: FakeClock
) -> None:
    target = tmp_path / "copy.db"
    await migrate(str(filled), str(target))
    results = []
    for path in (filled, target):
        settings = stub_settings(path, embeddings_url)
        async with open_cortex(settings, clock=clock, background=False) as svc:
            found = []
            for query in ("green tea", "小笼包", "品川", "gateway", "coffee"):
                recall = await svc.memories.recall(RecallRequest(query=query, max_results=10))
                assert not recall.meta.degraded
                found.append(sorted((-round(m.score, 6), m.id) for m in recall.memories))
            results.append(found)
    assert results[0] == results[1]  # ties may come in another order
    assert all(results[0][:3])


async def test_a_target_that_holds_rows_is_refused_unless_forced(
    filled: Path, tmp_path: Path, embeddings_url: str, clock: FakeClock
) -> None:
    target = tmp_path / "busy.db"
    async with open_cortex(stub_settings(target, embeddings_url), clock=clock) as svc:
        await svc.memories.remember(
            RememberRequest(content="A memory that must not be lost by accident")
        )
    before = table_rows(target)
    refused = _migrate(filled, "--to", str(target))
    assert refused.returncode == 2
    assert "already holds" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert table_rows(target) == before
    with pytest.raises(Conflict):
        await migrate(str(filled), str(target))
    forced = _migrate(filled, "--to", str(target), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "replaced" in forced.stdout
    assert table_rows(target) == table_rows(filled)


async def test_an_empty_target_file_is_not_refused(filled: Path, tmp_path: Path) -> None:
    target = tmp_path / "empty.db"
    async with open_cortex(load_settings(db_path=target, embedding_provider="none")):
        pass
    report = await migrate(str(filled), str(target))
    assert report.replaced == 0 and report.rows > 0


async def test_copying_a_store_onto_itself_or_from_nothing_is_refused_in_one_line(
    filled: Path, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput, match="names the store being copied"):
        await migrate(str(filled), f"sqlite:///{filled}")
    with pytest.raises(StorageError, match="does not exist"):
        await migrate(str(tmp_path / "none.db"), str(tmp_path / "other.db"))
    assert not (tmp_path / "other.db").exists()
    same = _migrate(filled, "--to", str(filled))
    assert same.returncode == 2 and same.stderr.count("\n") == 1


def test_a_table_digest_ignores_row_order_and_json_key_order_but_nothing_else() -> None:
    spec = table("lifecycle_log")
    rows = [(1, "merge", '["a","b"]', '{"x": 1, "y": [2]}', "t1"), (2, "archive", "[]", "{}", "t2")]

    def digest(batch: list[tuple[object, ...]]) -> tuple[int, str]:
        d = TableDigest(spec)
        d.add(batch)
        return d.count, d.checksum

    same = digest(rows)
    assert digest(rows[::-1]) == same
    assert digest([(1, "merge", '["a", "b"]', '{"y":[2],"x":1}', "t1"), rows[1]]) == same
    assert digest([(1, "merge", '["b","a"]', rows[0][3], "t1"), rows[1]]) != same
    assert digest([(1, "merge", rows[0][2], rows[0][3], "t1 "), rows[1]]) != same
    assert digest(rows[:1])[0] == 1
