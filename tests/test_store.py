"""The store on a real file: migrations, the path without sqlite-vec, FTS kept in step."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import new_id
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import ForgetRequest, RecallRequest, RememberRequest
from cortex_mcp.store import Database
from cortex_mcp.store.connection import connector_info, sqlite_module
from cortex_mcp.store.schema import SCHEMA_VERSION
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


async def test_everything_works_without_sqlite_vec(settings: Settings, clock: FakeClock) -> None:
    async with open_cortex(settings, clock=clock, allow_vec=False) as service:
        assert service.stores.db.vec_loaded is False
        made = await service.memories.remember(
            RememberRequest(content="Backups run nightly at 02:00 to S3")
        )
        found = await service.memories.recall(RecallRequest(query="when do backups run"))
        assert [m.id for m in found.memories] == [made.id]
        stats = await service.status.stats()
        assert stats["sqlite"]["sqlite_vec"] is False
        await service.memories.forget(ForgetRequest(memory_id=made.id, purge=True))
        assert (await service.memories.recall(RecallRequest(query="backups"))).memories == []


async def test_migrations_are_recorded_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    for _ in range(2):
        async with Database(path) as db:
            assert await db.schema_version() == SCHEMA_VERSION
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "memories",
        "memories_fts",
        "memory_vectors",
        "embedding_cache",
        "access_log",
        "lifecycle_log",
        "relations",
        "meta",
    } <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_ids_are_time_ordered_uuid7() -> None:
    ids = [new_id() for _ in range(50)]
    assert all(i[14] == "7" for i in ids)
    assert len(set(ids)) == 50


def test_an_id_is_written_as_uuid_writes_it_with_its_version_variant_and_random_bits() -> None:
    for random_bytes in (bytes(10), b"\xff" * 10, *(os.urandom(10) for _ in range(2_000))):
        made = new_id(random_bytes)
        parsed = uuid.UUID(made)
        assert made == str(parsed) and parsed.version == 7 and parsed.variant == uuid.RFC_4122
        rand = int.from_bytes(random_bytes, "big")
        assert parsed.int & ((1 << 62) - 1) == rand & ((1 << 62) - 1)
        assert (parsed.int >> 64) & 0xFFF == (rand >> 68) & 0xFFF


def test_connector_reports_what_it_loaded() -> None:
    info = connector_info()
    assert info.fts5
    assert info.module in {"sqlite3", "pysqlite3"}


async def test_purge_leaves_only_a_content_free_tombstone(
    settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(settings, clock=clock) as service:
        made = await service.memories.remember(
            RememberRequest(content="My passport number is X1234567")
        )
        await service.memories.recall(RecallRequest(query="passport number"))
        await service.memories.forget(
            ForgetRequest(memory_id=made.id, reason="contains passport X1234567")
        )
        await service.memories.forget(ForgetRequest(memory_id=made.id, purge=True))
        await service.drain()
    for path in settings.db_path.parent.glob("brain.db*"):
        assert b"X1234567" not in path.read_bytes(), f"content left in {path.name}"
    conn = sqlite3.connect(settings.db_path)
    rows = conn.execute("SELECT action, details FROM lifecycle_log ORDER BY id").fetchall()
    assert rows[-1][0] == "purge"
    # every entry about the purged memory says whose it was, and nothing more; the purge
    # itself also who purged it (issue 35)
    assert all(json.loads(details) == {"agent_id": "default"} for _, details in rows[:-1])
    assert json.loads(rows[-1][1]) == {"agent_id": "default", "actor": {"kind": "local"}}
    assert all("X1234567" not in details for _, details in rows)
    assert conn.execute("SELECT COUNT(*) FROM access_log").fetchone()[0] == 0


def test_none_bound_by_the_driver_in_use_is_stored_as_null_through_its_own_adapter(
    tmp_path: Path,
) -> None:
    """None has its own adapter (binding it no longer looks for __adapt__ and __conform__, the
    cost of an import's NULLs), and the value stored is still SQL NULL."""
    module = sqlite_module()
    assert (type(None), module.PrepareProtocol) in module.adapters
    conn = module.connect(str(tmp_path / "nulls.db"))
    conn.execute("CREATE TABLE t (a, b TEXT, c INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(None, None, None), (None, "x", 1)])
    rows = conn.execute("SELECT typeof(a), typeof(b), typeof(c), b IS NULL FROM t").fetchall()
    conn.close()
    assert rows == [("null", "null", "null", 1), ("null", "text", "integer", 0)]
