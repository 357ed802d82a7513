"""The people's reading commands' database (`list`, `show`: `cortex_mcp.reader.open_reader`):
one SQLite connection, whose reads wait for a lock as a reader connection's do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.reader import open_reader, open_stores
from cortex_mcp.store.connection import BUSY_TIMEOUT_MS

pytestmark = pytest.mark.anyio


def _open_files(path: Path) -> int:
    """How many of this process's file descriptors are `path` (one per SQLite connection)."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in os.listdir(fds) if os.path.realpath(fds / fd) == str(path))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts files in /proc")
async def test_list_and_show_read_over_one_connection_where_the_service_opens_four(
    tmp_path: Path,
) -> None:
    settings = load_settings(db_path=tmp_path / "brain.db")
    async with open_stores(settings):  # creates the file; the writer, two readers, the loop's
        assert _open_files(settings.db_path) == 4
    async with open_reader(settings) as reader:
        assert _open_files(settings.db_path) == 1
        assert (await reader.list_memories())["memories"] == []


async def test_the_one_connection_waits_for_a_lock_as_a_reader_does(tmp_path: Path) -> None:
    settings = load_settings(db_path=tmp_path / "brain.db")
    async with open_stores(settings) as stores:
        assert await stores.db.scalar("PRAGMA busy_timeout") == BUSY_TIMEOUT_MS
    async with open_reader(settings) as reader:
        assert await reader.memories.db.scalar("PRAGMA busy_timeout") == BUSY_TIMEOUT_MS
