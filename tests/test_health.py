"""Health as users see it: `meta.degraded`, `cortex-mcp doctor` and `cortex://stats`."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cortex_mcp.config import load_settings
from cortex_mcp.engine.health import IntegrityWatch
from cortex_mcp.providers.embeddings import LocalEmbedder
from cortex_mcp.runtime import open_cortex, resolve_embedding_providers
from cortex_mcp.service.requests import RecallRequest, RememberRequest, SearchDebugRequest
from cortex_mcp.store import Database
from cortex_mcp.transports.mcp import build_server
from tests.helpers.embedding_stub import embedding_stub
from tests.helpers.http_helpers import AUTH, ServeProcess
from tests.helpers.llm_stub import llm_stub
from tests.helpers.stdio_helpers import server_command, server_env


@pytest.mark.skipif(LocalEmbedder.available(), reason="auto picks the local model here")
@pytest.mark.anyio
async def test_zero_config_recall_says_once_that_search_is_text_only(tmp_path: Path) -> None:
    settings = load_settings(db_path=tmp_path / "b.db")  # auto: no key, no URL, no fastembed
    async with open_cortex(settings, background=False) as service:
        await service.memories.remember(RememberRequest(content="The user keeps bees on the roof"))
        recall = await service.memories.recall(RecallRequest(query="bees"))
        debug = await service.memories.search_debug(SearchDebugRequest(query="bees"))
        stats = await service.status.stats()
    for degraded in (recall.meta.degraded, debug["degraded"]):
        assert degraded == ["no embedding provider: text search only"]
    # what to set is for the person running the server: stats (and doctor) say it
    assert any("OPENAI_API_KEY" in note for note in stats["degraded"])


@pytest.mark.skipif(LocalEmbedder.available(), reason="auto picks the local model here")
@pytest.mark.anyio
async def test_a_model_reads_the_setup_hint_once_in_the_instructions_not_in_every_recall(
    tmp_path: Path,
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db")
    notes = resolve_embedding_providers(settings)[1]
    server = build_server(lambda: open_cortex(settings), settings, setup_notes=notes)
    async with Client(server, mode="legacy") as client:
        assert "OPENAI_API_KEY" in (client.instructions or "")
        await client.call_tool("cortex_remember", {"content": "The user keeps bees"})
        for query in ("bees", "roof", "honey"):
            recall = await client.call_tool("cortex_recall", {"query": query})
            text = recall.content[0].text  # type: ignore[union-attr]
            assert "OPENAI_API_KEY" not in text and "CORTEX_EMBEDDING_BASE_URL" not in text
            assert "text search only" in text


def _doctor(db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), "doctor", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(db, **env),
    )


def _line(stdout: str, part: str) -> str:
    (line,) = [ln for ln in stdout.splitlines() if ln.startswith(f"{part} ")]
    return line


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_doctor_against_a_dead_embedding_url_fails_and_names_it(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    done = _doctor(
        tmp_path / "b.db", CORTEX_EMBEDDING_PROVIDER="auto", CORTEX_EMBEDDING_BASE_URL=url
    )
    assert done.returncode == 1, done.stdout + done.stderr
    line = _line(done.stdout, "embeddings")
    assert " failed " in line and url in line and "timeout 5 s" in line
    assert "{" not in done.stdout  # no Python dict reprs
    assert done.stdout.rstrip().endswith("failed: embeddings (see above)")


def test_doctor_against_a_working_embedding_server_says_ok(tmp_path: Path) -> None:
    with embedding_stub() as (url, state):
        done = _doctor(
            tmp_path / "b.db", CORTEX_EMBEDDING_PROVIDER="openai", CORTEX_EMBEDDING_BASE_URL=url
        )
    assert done.returncode == 0, done.stdout + done.stderr
    line = _line(done.stdout, "embeddings")
    assert " ok " in line and "64 dimensions" in line and url in line
    assert state.requests, "doctor made no real call to the provider"


def test_a_provider_named_but_not_configured_fails_the_doctor(tmp_path: Path) -> None:
    done = _doctor(tmp_path / "b.db", CORTEX_EMBEDDING_PROVIDER="openai")
    assert done.returncode == 1
    assert "OPENAI_API_KEY" in _line(done.stdout, "embeddings")


def test_doctor_creates_no_database(tmp_path: Path) -> None:
    db = tmp_path / "not" / "yet" / "brain.db"
    done = _doctor(db)
    assert done.returncode == 0, done.stdout + done.stderr
    line = _line(done.stdout, "database")
    assert " ok " in line and "does not exist yet" in line
    assert not (tmp_path / "not").exists()


async def _database_with_memories(db: Path) -> None:
    async with open_cortex(load_settings(db_path=db, embedding_provider="none")) as service:
        for n in range(20):
            await service.memories.remember(
                RememberRequest(content=f"fact number {n} about the project", agent_id="default")
            )


def _corrupt_an_index_entry(db: Path) -> None:
    """Rewrite one agent id inside an index page: every page still parses (quick_check is
    content), but the index no longer matches its table, which only integrity_check sees."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'idx_memories_agent_layer'"
        ).fetchone()[0]
    raw = bytearray(db.read_bytes())
    start = (root - 1) * page_size
    at = raw.index(b"default", start, start + page_size)
    raw[at : at + 7] = b"defaulx"
    db.write_bytes(bytes(raw))


def _files(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, but SQLite's shared-memory index (-shm), which any reader updates."""
    return {
        p.name: p.read_bytes() if not p.name.endswith("-shm") else b"" for p in folder.iterdir()
    }


def test_doctor_runs_the_full_integrity_check_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    anyio.run(_database_with_memories, db)
    healthy = _doctor(db)
    assert " ok " in _line(healthy.stdout, "database") and "20 memories" in healthy.stdout
    _corrupt_an_index_entry(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"  # too weak to notice
    before = _files(tmp_path)
    done = _doctor(db)
    assert done.returncode == 1
    line = _line(done.stdout, "database")
    assert " failed " in line and "corrupt" in line and "idx_memories_agent_layer" in line
    assert _files(tmp_path) == before


@pytest.mark.anyio
async def test_stats_carries_the_same_health_as_doctor(tmp_path: Path) -> None:
    with embedding_stub() as (url, _):
        settings = load_settings(
            db_path=tmp_path / "b.db",
            embedding_provider="openai",
            embedding_base_url=url,
            llm_provider="none",
        )
        async with open_cortex(settings, background=False) as service:
            healthy = (await service.status.stats())["health"]
        dead = f"http://127.0.0.1:{_closed_port()}/v1"
        settings = load_settings(
            db_path=tmp_path / "b.db", embedding_provider="openai", embedding_base_url=dead
        )
        async with open_cortex(settings, background=False) as service:
            broken = (await service.status.stats())["health"]
    parts = {p["part"]: p for p in healthy["parts"]}
    assert healthy["status"] == "ok"
    assert parts["database"]["status"] == "ok" and "integrity ok" in parts["database"]["detail"]
    assert parts["embeddings"]["status"] == "ok" and url in parts["embeddings"]["detail"]
    failing = {p["part"]: p for p in broken["parts"]}["embeddings"]
    assert broken["status"] == "failed" and dead in failing["detail"]


class _CountingDatabase(Database):
    """A real database file that counts the integrity checks run on it."""

    checks = 0

    async def integrity_check(self) -> str:
        self.checks += 1
        return await super().integrity_check()


@pytest.mark.anyio
async def test_the_integrity_check_of_a_running_server_is_rerun_only_after_its_interval(
    tmp_path: Path,
) -> None:
    async with _CountingDatabase(tmp_path / "b.db") as db:
        watch = IntegrityWatch(interval_s=3600)
        first = await watch.health(db)
        await watch.health(db)
        assert first.status == "ok" and "integrity ok" in first.detail and db.checks == 1
        await IntegrityWatch(interval_s=0).health(db)
        assert db.checks == 2


def test_doctor_makes_one_real_llm_call_and_names_a_dead_endpoint(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    with llm_stub() as stub:
        done = _doctor(db, CORTEX_LLM_PROVIDER="openai", CORTEX_LLM_BASE_URL=stub.openai_url)
        calls = len(stub.received)
    assert done.returncode == 0, done.stdout + done.stderr
    line = _line(done.stdout, "llm")
    assert " ok " in line and "answered in" in line and stub.openai_url in line
    assert calls == 1
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    done = _doctor(db, CORTEX_LLM_PROVIDER="openai", CORTEX_LLM_BASE_URL=dead)
    assert done.returncode == 1
    line = _line(done.stdout, "llm")
    assert " failed " in line and dead in line


@pytest.mark.slow
@pytest.mark.skipif(LocalEmbedder.available(), reason="auto picks the local model here")
@pytest.mark.anyio
async def test_the_http_server_says_the_setup_hint_once_in_its_instructions(
    tmp_path: Path,
) -> None:
    with ServeProcess(tmp_path / "brain.db", CORTEX_EMBEDDING_PROVIDER="auto") as server:
        http = httpx2.AsyncClient(headers=AUTH, timeout=httpx2.Timeout(30, read=60))
        async with http, Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
            assert "OPENAI_API_KEY" in (c.instructions or "")
            await c.call_tool("cortex_remember", {"content": "The user keeps bees"})
            recall = await c.call_tool("cortex_recall", {"query": "bees"})
            assert "OPENAI_API_KEY" not in recall.content[0].text  # type: ignore[union-attr]
