"""Broken disks and foreign files: one line naming the path, the cause and what to do.

At start the stdio server exits 2 with that line (and nothing on stdout); at run time a tool
error names "disk full" or "read-only"; a database this process may only read still serves
recall. Every fault is real: real files, a real read-only mount where the machine allows one,
SQLite's own page limit for a full disk, and an unprivileged user for permissions."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from cortex_mcp.store import files
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.schema import SCHEMA_VERSION
from cortex_mcp.transports.mcp import build_server
from tests.helpers.embedding_stub import StubState, embedding_stub
from tests.helpers.stdio_helpers import (
    HANG_S,
    RawStdioServer,
    server_command,
    server_env,
    unprivileged,
)

pytestmark = pytest.mark.anyio

FACTS = [
    "The staging server lives in the Frankfurt region",
    "Harry prefers green tea over coffee in the morning",
    "Backups run every night at 02:00 UTC",
]


def start(db: Path, prefix: list[str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Start the stdio server the way an MCP client does; it must refuse before serving."""
    return subprocess.run(
        [*(prefix or []), *server_command()],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=server_env(db),
        timeout=60,
        check=False,
    )


def as_unprivileged() -> list[str]:
    prefix = unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: file permissions cannot be tested")
    return prefix


def assert_refused(result: subprocess.CompletedProcess[bytes], path: Path, *phrases: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr naming the path and the cause."""
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert result.stdout == b""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert err.startswith("cortex-mcp: ") and str(path) in err, err
    for phrase in phrases:
        assert phrase in err, err
    return err


async def make_database(path: Path, facts: list[str] = FACTS) -> list[str]:
    settings = load_settings(db_path=path, embedding_provider="none")
    async with open_cortex(settings) as service:
        return [
            (await service.memories.remember(RememberRequest(content=fact))).id for fact in facts
        ]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(path: Path) -> tuple[str, int, list[str]]:
    """The file's bytes, its modification time and what lies beside it."""
    return digest(path), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the unprivileged server user can reach (pytest's tmp_path is private)."""
    folder = Path(tempfile.mkdtemp(prefix="cortex-faults-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for each in folder.rglob("*"):
            if each.is_dir():
                each.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "4m") -> Iterator[Path]:
    """A real, size-limited file system (root only; elsewhere the test is skipped)."""
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if os.geteuid() != 0 or mounted.returncode != 0:
        pytest.skip("mounting a file system needs root (CAP_SYS_ADMIN)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount_read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


# ---- refused at start: exit 2 and one line ----------------------------------------------------


def test_a_directory_as_database_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    assert_refused(start(folder), folder, "is a directory", "--db or CORTEX_DB_PATH")


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    before = digest(path)
    assert_refused(start(path), path, "is not a SQLite database", "move this one away")
    assert digest(path) == before


async def test_a_truncated_database_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    await make_database(path, [f"fact {n}: " + "x" * 3000 for n in range(20)])
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    assert_refused(start(path), path, "is truncated", "restore it from a backup")


async def test_a_corrupt_schema_page_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    await make_database(path)
    with path.open("r+b") as handle:  # garbage over the schema table on page 1
        handle.seek(100)
        handle.write(os.urandom(3900))
    assert_refused(start(path), path, "corrupt", "restore it from a backup")


async def test_corruption_inside_a_table_is_found_before_serving(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    await make_database(path, [f"fact {n}: " + "y" * 2000 for n in range(40)])
    page_size = int.from_bytes(path.read_bytes()[16:18], "big")
    pages = path.stat().st_size // page_size
    with path.open("r+b") as handle:  # a page in the middle: only a check of the file sees it
        for page in range(pages // 2, pages // 2 + 3):
            handle.seek(page * page_size)
            handle.write(b"\xff" * page_size)
    assert_refused(start(path), path, "corrupt", "restore it from a backup")


def test_an_unwritable_location_is_refused_in_one_line(shared_dir: Path) -> None:
    locked = shared_dir / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    path = locked / "cortex" / "brain.db"
    assert_refused(
        start(path, as_unprivileged()), path, "cannot create", "permission denied", "writable"
    )
    assert not (locked / "cortex").exists()


async def test_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    await make_database(path)
    conn = sqlite_module().connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = snapshot(path)
    assert_refused(start(path), path, f"schema version {SCHEMA_VERSION + 1}", "upgrade cortex-mcp")
    assert snapshot(path) == before


def test_a_missing_database_on_a_read_only_mount_is_refused(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "mnt") as mount:
        remount_read_only(mount)
        path = mount / "brain.db"
        assert_refused(start(path), path, "cannot create", "read-only", "writable location")


# ---- read-only: recall works, writes are refused clearly ---------------------------------------


def _serve_read_only(path: Path, ids: list[str], prefix: list[str] | None = None) -> None:
    server = RawStdioServer(path, prefix=prefix)
    try:
        assert "result" in server.initialize()
        found = server.call_tool("cortex_recall", {"query": "green tea"})
        assert not found["isError"]
        assert [m["id"] for m in found["structuredContent"]["memories"]] == [ids[1]]
        for name, arguments in [
            ("cortex_remember", {"content": "A new fact that cannot be stored"}),
            ("cortex_forget", {"memory_id": ids[0]}),
            ("cortex_forget", {"memory_id": ids[0], "purge": True}),
        ]:
            refused = server.call_tool(name, arguments)
            assert refused["isError"], (name, refused)
            text = refused["content"][0]["text"]
            assert "read-only: database" in text and str(path) in text, text
            assert "recall still works" in text
    finally:
        exit_code = server.close()
    assert exit_code == 0
    err = b"".join(server.stderr).decode()
    assert "Traceback" not in err
    assert err.count("is read-only") == 1, err


async def test_a_database_this_process_may_only_read_serves_recall(shared_dir: Path) -> None:
    folder = shared_dir / "data"
    folder.mkdir()
    folder.chmod(0o777)  # the server may create SQLite's -shm beside it, not write the file
    path = folder / "brain.db"
    ids = await make_database(path)
    path.chmod(0o444)
    before = digest(path)
    _serve_read_only(path, ids, as_unprivileged())
    assert digest(path) == before


async def test_a_database_on_a_read_only_mount_serves_recall(tmp_path: Path) -> None:
    source = tmp_path / "brain.db"
    ids = await make_database(source)
    with tmpfs(tmp_path / "mnt") as mount:
        shutil.copy(source, mount / "brain.db")
        remount_read_only(mount)
        _serve_read_only(mount / "brain.db", ids)


# ---- at run time: a tool error naming the fault, nothing changed ------------------------------


@contextlib.asynccontextmanager
async def client_on(path: Path) -> AsyncIterator[tuple[Client, object]]:
    settings = load_settings(db_path=path, embedding_provider="none")
    services: list[object] = []

    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[object]:
        async with open_cortex(settings) as service:
            services.append(service)
            yield service

    async with Client(build_server(opened)) as client:  # type: ignore[arg-type]
        yield client, services[0]


async def test_a_full_disk_is_a_tool_error_naming_disk_full(tmp_path: Path) -> None:
    path = tmp_path / "brain.db"
    ids = await make_database(path)
    async with client_on(path) as (client, service):
        db = service.stores.db  # type: ignore[attr-defined]
        async with db.conn.execute("PRAGMA page_count") as cursor:
            (pages,) = await cursor.fetchone()
        await db.conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is now full

        full = await client.call_tool("cortex_remember", {"content": "long fact " * 800})
        assert full.is_error
        text = full.content[0].text
        assert "disk full: database" in text and str(path) in text, text
        assert "nothing was changed" in text and "Free space" in text

        found = await client.call_tool("cortex_recall", {"query": "green tea"})
        assert not found.is_error
        assert [m["id"] for m in found.structured_content["memories"]] == [ids[1]]

        await db.conn.execute("PRAGMA max_page_count = 1073741823")  # space freed
        stored = await client.call_tool("cortex_remember", {"content": "long fact " * 800})
        assert not stored.is_error, stored.content
    conn = sqlite_module().connect(path)
    assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == len(FACTS) + 1
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


async def test_a_full_file_system_is_a_tool_error_over_stdio(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "mnt", size="1m") as mount:
        server = RawStdioServer(mount / "brain.db")
        try:
            server.initialize()
            messages = []
            for n in range(200):
                result = server.call_tool("cortex_remember", {"content": f"{n} " + "z" * 7000})
                if result["isError"]:
                    messages.append(result["content"][0]["text"])
                    break
            assert messages and "disk full: database" in messages[0], messages
            found = server.call_tool("cortex_recall", {"query": "zzzz"})
            assert not found["isError"]
        finally:
            exit_code = server.close()
        assert exit_code == 0
        assert "Traceback" not in b"".join(server.stderr).decode()


async def test_a_database_that_turns_read_only_gives_a_read_only_tool_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "brain.db"
    ids = await make_database(path)
    async with client_on(path) as (client, service):
        await service.stores.db.conn.execute("PRAGMA query_only = ON")  # type: ignore[attr-defined]
        refused = await client.call_tool("cortex_forget", {"memory_id": ids[0]})
        assert refused.is_error
        assert "read-only: database" in refused.content[0].text, refused.content
        found = await client.call_tool("cortex_recall", {"query": "Frankfurt"})
        assert [m["id"] for m in found.structured_content["memories"]] == [ids[0]]
    await asyncio.sleep(0)


async def test_a_read_only_database_still_recalls_by_meaning(shared_dir: Path) -> None:
    """Vectors stored earlier still serve recall: the vec0 index cannot be built in a
    read-only file, so the numpy search over the stored vectors takes over."""
    prefix = as_unprivileged()
    folder = shared_dir / "data"
    folder.mkdir()
    folder.chmod(0o777)
    path = folder / "brain.db"
    with embedding_stub(StubState(meaning=True)) as (url, _):
        env = {
            "CORTEX_EMBEDDING_PROVIDER": "openai",
            "CORTEX_EMBEDDING_BASE_URL": url,
            "CORTEX_EMBEDDING_MODEL": "stub-embed",
        }
        settings = load_settings(db_path=path, **{k[7:].lower(): v for k, v in env.items()})
        async with open_cortex(settings, background=False) as service:
            ids = [
                (await service.memories.remember(RememberRequest(content=fact))).id
                for fact in FACTS
            ]
            ids.append(
                (
                    await service.memories.remember(
                        RememberRequest(content="User has a golden retriever named Max")
                    )
                ).id
            )
            assert await service.embed_pending() == len(ids)
        path.chmod(0o444)
        server = RawStdioServer(path, prefix=prefix, CORTEX_SEARCH__VECTOR_BACKEND="vec0", **env)
        try:
            server.initialize()
            found = server.call_tool("cortex_recall", {"query": "does the user own a pet?"})
            assert not found["isError"], found
            meta = found["structuredContent"]["meta"]
            assert "vector" in meta["channels"], meta
            assert found["structuredContent"]["memories"][0]["id"] == ids[-1]
        finally:
            assert server.close() == 0
        assert "Traceback" not in b"".join(server.stderr).decode()


async def test_the_start_check_gives_up_on_a_large_file_instead_of_delaying_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "brain.db"
    await make_database(path, [f"fact {n}: " + "w" * 500 for n in range(200)])
    monkeypatch.setattr(files, "QUICK_CHECK_BUDGET_S", 0.0)
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="cortex_mcp.store.files"):
        assert files.check_database(path, thorough=True).writable
    assert time.monotonic() - started < 1.0
    assert any("quick_check" in r.getMessage() for r in caplog.records)


async def test_a_full_disk_stops_the_indexer_with_one_line_and_stats_say_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with embedding_stub() as (url, _):
        settings = load_settings(
            db_path=tmp_path / "brain.db",
            embedding_provider="openai",
            embedding_base_url=url,
            embedding_model="stub-embed",
        )
        async with open_cortex(settings, background=False) as service:
            for n in range(60):
                await service.memories.remember(
                    RememberRequest(content=f"Pending fact {n} waiting for its vector")
                )
            db = service.stores.db
            async with db.conn.execute("PRAGMA page_count") as cursor:
                (pages,) = await cursor.fetchone()
            await db.conn.execute(f"PRAGMA max_page_count = {pages}")
            indexer = service.engines.indexer
            assert indexer is not None
            with caplog.at_level(logging.WARNING):
                indexer.start()
                indexer.go()
                for _ in range(int(HANG_S / 0.05)):  # bounds a hang, not the indexer's speed
                    if indexer.last_error:
                        break
                    await asyncio.sleep(0.05)
            assert indexer.last_error and indexer.last_error.startswith("disk full: database")
            assert not [r for r in caplog.records if r.exc_info], "a traceback reached the log"
            stats = await service.status.stats()
            assert "disk full" in json.dumps(stats)
            found = await service.memories.recall(RecallRequest(query="pending fact 7"))
            assert found.memories


def test_any_command_on_an_unusable_database_says_why_without_a_traceback(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    result = subprocess.run(
        [*server_command(), "doctor", "--db", str(folder)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=server_env(tmp_path / "unused.db"),
        timeout=60,
        check=False,
    )
    output = (result.stdout + result.stderr).decode()
    assert result.returncode != 0
    assert "Traceback" not in output
    # doctor reports it as one of its per-part lines; every other command as its one line
    assert str(folder) in output and "is a directory" in output
