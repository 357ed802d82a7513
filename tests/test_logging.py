"""Logs never carry what users remember or ask, unless CORTEX_LOG_CONTENT asks for it."""

from __future__ import annotations

from pathlib import Path

import pytest

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
