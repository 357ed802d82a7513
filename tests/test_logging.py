"""Logs never carry what users remember or ask, unless CORTEX_LOG_CONTENT asks for it."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from cortex_mcp.store.postgres.schema import SCHEMA_VERSION as PG_SCHEMA_VERSION
from cortex_mcp.store.schema import SCHEMA_VERSION
from tests.helpers.embedding_stub import embedding_stub
from tests.helpers.stdio_helpers import RawStdioServer

pytestmark = pytest.mark.slow

CONTENT = "Grandmother's spare house key hides under the blue ceramic frog"
QUERY = "where does grandmother hide the spare key"


def _session_log(tmp_path: Path, **env: str) -> str:
    """Remember and recall over stdio at DEBUG with an embedding provider; return the log."""
    log_file = tmp_path / "cortex.log"
    with embedding_stub() as (url, _):
        server = RawStdioServer(
            tmp_path / "brain.db",
            CORTEX_LOG_LEVEL="DEBUG",
            CORTEX_LOG_FILE=str(log_file),
            CORTEX_EMBEDDING_PROVIDER="openai",
            CORTEX_EMBEDDING_BASE_URL=url,
            **env,
        )
        try:
            server.initialize()
            remember = server.request(
                "tools/call", {"name": "cortex_remember", "arguments": {"content": CONTENT}}
            )
            assert not remember["result"]["isError"], remember
            recall = server.request(
                "tools/call", {"name": "cortex_recall", "arguments": {"query": QUERY}}
            )
            assert "ceramic frog" in str(recall["result"]), recall
        finally:
            server.close()
    return log_file.read_text("utf-8")


def test_debug_logs_carry_no_memory_content_and_no_query(tmp_path: Path) -> None:
    log = _session_log(tmp_path)
    assert " DEBUG " in log and " INFO " in log  # the log was written at DEBUG
    for secret in ("ceramic frog", "Grandmother", "grandmother hide"):
        assert secret not in log, f"{secret!r} reached the log"


def test_the_content_switch_lets_statements_and_parameters_into_debug_logs(
    tmp_path: Path,
) -> None:
    log = _session_log(tmp_path, CORTEX_LOG_CONTENT="true")
    assert "ceramic frog" in log


def _started_log(db: Path, **env: str) -> list[str]:
    """The stderr lines of a stdio server started at the default level, asked to list its
    tools and closed."""
    server = RawStdioServer(db, **env)
    try:
        server.initialize()
        server.request("tools/list")
    finally:
        server.close()
    return [line.decode("utf-8", "replace").rstrip() for line in server.stderr]


def _schema_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "migration" in line or "schema" in line]


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_new_database_logs_one_schema_line_under_the_banner_not_one_per_migration(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = tmp_path / "new.db"
    with ExitStack() as stack:
        env, expected = {}, f"created the database {db} (schema version {SCHEMA_VERSION})"
        if store == "postgres":
            url = stack.enter_context(request.getfixturevalue("pg_server").empty_database())
            env = {"CORTEX_DATABASE_URL": url}
            expected = f"created the PostgreSQL schema (version {PG_SCHEMA_VERSION})"
        lines = _schema_lines(_started_log(db, **env))
        assert len(lines) == 1 and " INFO " in lines[0] and expected in lines[0], lines
        again = _schema_lines(_started_log(db, **env))  # up to date: nothing to say
        assert not again, again
