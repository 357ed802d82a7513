"""`cortex-mcp doctor` on a PostgreSQL store: the same one line per part as on SQLite, one
action per fault, and nothing changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

CLI = str(Path(sys.executable).with_name("cortex-mcp"))


def _doctor(database_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    clean |= {"CORTEX_DATABASE_URL": database_url, "CORTEX_EMBEDDING_PROVIDER": "none", **env}
    return subprocess.run(
        [CLI, "doctor"], capture_output=True, text=True, env=clean, timeout=120, check=False
    )


def _lines(output: str) -> dict[str, tuple[str, str]]:
    """part -> (status, detail) of each health line."""
    found = {}
    for line in output.splitlines()[1:]:
        part, status, detail = line[:12].strip(), line[12:22].strip(), line[22:]
        if status in ("ok", "degraded", "failed"):
            found[part] = (status, detail)
    return found


async def _remember(url: str, *contents: str) -> None:
    settings = load_settings(database_url=url, embedding_provider="none")
    async with open_cortex(settings, clock=FakeClock()) as service:
        for content in contents:
            await service.memories.remember(RememberRequest(content=content))


async def test_a_healthy_postgres_store_gets_a_line_per_part_and_exit_0(pg_url: str) -> None:
    await _remember(pg_url, "Prefers green tea", "Works at Acme")
    done = _doctor(pg_url)
    assert done.returncode == 0, done.stdout + done.stderr
    parts = _lines(done.stdout)
    assert parts["postgres"][0] == "ok" and "PostgreSQL 1" in parts["postgres"][1]
    assert ":@" not in done.stdout and "password" not in done.stdout
    assert parts["pgvector"][0] == "ok"
    assert parts["database"][0] == "ok" and "2 memories (0 forgotten)" in parts["database"][1]
    assert parts["indexes"][0] == "ok"
    assert parts["pool"][0] == "ok" and "at most 10 connections" in parts["pool"][1]
    assert "sqlite" not in parts
    assert done.stdout.rstrip().endswith("cortex-mcp can serve")


async def test_a_missing_index_is_one_degraded_line_that_names_it(pg_url: str) -> None:
    await _remember(pg_url, "Prefers green tea")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP INDEX idx_memories_agent_layer")
    done = _doctor(pg_url)
    assert done.returncode == 0
    status, detail = _lines(done.stdout)["indexes"]
    assert status == "degraded" and "missing: idx_memories_agent_layer" in detail


def test_a_pool_larger_than_the_server_allows_is_degraded(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        (limit,) = conn.execute("SHOW max_connections").fetchone()
    done = _doctor(pg_url, CORTEX_POOL_MAX=str(min(int(limit), 200)))
    status, detail = _lines(done.stdout)["pool"]
    assert status == "degraded" and "lower CORTEX_POOL_MAX" in detail


def test_an_unreachable_server_is_one_failed_line_and_exit_1() -> None:
    done = _doctor("postgresql://cortex:secret-pw@127.0.0.1:9/cortex")
    assert done.returncode == 1
    status, detail = _lines(done.stdout)["postgres"]
    assert status == "failed" and "check CORTEX_DATABASE_URL" in detail
    assert "secret-pw" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_an_empty_database_is_fine_and_doctor_creates_nothing(pg_server: Any) -> None:
    with pg_server.empty_database() as url:
        done = _doctor(url)
        assert done.returncode == 0, done.stdout
        assert "no memory store yet" in _lines(done.stdout)["database"][1]
        with psycopg.connect(url) as conn:
            tables = conn.execute(
                "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchone()
        assert tables == (0,)
