"""Privacy on disk: private file modes, purge that leaves no copy even past a concurrent
reader, and an access log that keeps no query text."""

from __future__ import annotations

import asyncio
import json
import logging
import stat
from pathlib import Path

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import ForgetRequest, RecallRequest, RememberRequest
from cortex_mcp.store import Database
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.schema import MIGRATIONS
from cortex_mcp.tokenize import query_key
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

SECRET = "Quentin's locker code is 4471-Zebra-Quasar"
SECRET_BYTES = [b"4471-Zebra-Quasar", b"Quentin", "4471-Zebra-Quasar".encode("utf-16-le")]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _files(db_path: Path) -> list[Path]:
    return [p for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)]


def _chmod(path: Path, mode: int) -> None:
    path.chmod(mode)


def _leaks(db_path: Path) -> list[str]:
    found = []
    for path in _files(db_path):
        data = path.read_bytes()
        found += [f"{path.name}: {needle!r}" for needle in SECRET_BYTES if needle in data]
    return found


async def test_cortex_creates_its_folders_0700_and_its_files_0600(
    tmp_path: Path, clock: FakeClock
) -> None:
    _chmod(tmp_path, 0o755)
    path = tmp_path / "home" / ".cortex" / "brain.db"
    settings = load_settings(db_path=path, embedding_provider="none")
    async with open_cortex(settings, clock=clock) as service:
        await service.memories.remember(
            RememberRequest(content="Files written by cortex are private")
        )
        names = {p.name for p in _files(path)}
        assert {"brain.db", "brain.db-wal", "brain.db-shm"} <= names
        assert {p.name: _mode(p) for p in _files(path)} == dict.fromkeys(names, 0o600)
    assert _mode(tmp_path / "home") == 0o700
    assert _mode(tmp_path / "home" / ".cortex") == 0o700
    assert _mode(tmp_path) == 0o755  # a folder the user already had is left as it was


async def test_an_existing_folder_keeps_its_mode_and_a_shared_database_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _chmod(tmp_path, 0o751)
    path = tmp_path / "brain.db"
    path.touch(mode=0o644)
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        async with Database(path):
            pass
    assert _mode(tmp_path) == 0o751 and _mode(path) == 0o644  # never chmod what was there
    warnings = [r.getMessage() for r in caplog.records if "other users" in r.getMessage()]
    assert warnings == [
        f"database {path} can be read by other users (mode 644); run `chmod 600 {path}`"
        " to keep memories private"
    ]


async def test_purge_past_a_concurrent_reader_leaves_no_copy_once_it_closes(
    settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(settings, clock=clock) as service:
        for n in range(30):
            await service.memories.remember(
                RememberRequest(content=f"Unrelated fact number {n} about the garden shed")
            )
        made = await service.memories.remember(RememberRequest(content=SECRET))
        await service.memories.recall(RecallRequest(query="locker code"))
        await service.drain()

        reader = sqlite_module().connect(settings.db_path, isolation_level=None)
        reader.execute("BEGIN")
        assert reader.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 31

        await service.memories.forget(ForgetRequest(memory_id=made.id, purge=True))
        assert _leaks(settings.db_path), "the reader's snapshot should still pin the old pages"
        reader.execute("COMMIT")
        reader.close()

        for _ in range(200):  # the background checkpoint follows the reader within ~1 s
            if not _leaks(settings.db_path):
                break
            await asyncio.sleep(0.05)
        assert _leaks(settings.db_path) == []
        assert settings.db_path.with_name("brain.db-wal").stat().st_size == 0
        assert (
            await service.memories.recall(RecallRequest(query="locker code Quentin"))
        ).memories == []


async def test_the_access_log_keeps_a_hash_of_each_query_and_never_its_text(
    service, settings: Settings
) -> None:
    made = await service.memories.remember(
        RememberRequest(content="The VPN config lives in the ops vault")
    )
    await service.memories.recall(RecallRequest(query="where is the VPN config"))
    await service.memories.recall(
        RecallRequest(query="Where is the   VPN config")
    )  # same query up to case and spacing
    await service.drain()
    rows = (
        sqlite_module()
        .connect(settings.db_path)
        .execute("SELECT memory_id, query, query_hash FROM access_log")
        .fetchall()
    )
    assert rows == [(made.id, None, query_key("where is the VPN config"))] * 2
    detail = await service.reading.memory_detail(made.id)
    assert "VPN" not in json.dumps(detail["access_history"])
    assert b"where is the" not in settings.db_path.read_bytes()


async def test_migrating_blanks_query_text_already_in_the_access_log(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite_module().connect(path, isolation_level=None)
    for statement in [*MIGRATIONS[0], *MIGRATIONS[1]]:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO memories (id, agent_id, layer, category, content, content_hash,"
        " created_at, updated_at) VALUES ('m1', 'default', 'core', 'fact', 'x', 'h', 'd', 'd')"
    )
    conn.executemany(
        "INSERT INTO access_log (memory_id, query, rank, accessed_at) VALUES ('m1', ?, 0, 'd')",
        [("my bank pin reminder",), ("My  bank PIN reminder",), ("another question",)],
    )
    conn.execute("PRAGMA user_version = 2")
    conn.close()

    async with Database(path) as db:
        rows = await db.fetchall("SELECT query, query_hash FROM access_log ORDER BY id")
        assert [tuple(r) for r in rows] == [
            (None, query_key("my bank pin reminder")),
            (None, query_key("my bank pin reminder")),
            (None, query_key("another question")),
        ]
    for each in _files(path):
        assert b"bank pin" not in each.read_bytes().lower(), each.name
