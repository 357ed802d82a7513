"""End to end over stdio: a real MCP client talking to the installed `cortex-mcp` subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.helpers.stdio_helpers import HANG_S, RawStdioServer, server_command, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _params(db: Path) -> StdioServerParameters:
    command, *args = server_command()
    return StdioServerParameters(command=command, args=args, env=server_env(db))


async def test_a_client_remembers_recalls_by_paraphrase_and_forgets(tmp_path: Path) -> None:
    with anyio.fail_after(HANG_S):
        async with Client(_params(tmp_path / "brain.db"), mode="legacy") as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {
                "cortex_recall",
                "cortex_remember",
                "cortex_forget",
                "cortex_search_debug",
            }

            facts = [
                "The production database runs PostgreSQL 16 on a Hetzner server",
                "Harry prefers green tea over coffee in the morning",
                "Our team decided to ship the mobile app in March",
            ]
            ids = []
            for fact in facts:
                result = await client.call_tool("cortex_remember", {"content": fact})
                assert not result.is_error
                ids.append(result.structured_content["id"])

            recall = await client.call_tool(
                "cortex_recall", {"query": "what drink does Harry like to have?"}
            )
            assert not recall.is_error
            found = [m["id"] for m in recall.structured_content["memories"]]
            assert found[0] == ids[1]
            assert "green tea" in recall.structured_content["context"]

            forget = await client.call_tool("cortex_forget", {"memory_id": ids[1]})
            assert forget.structured_content == {
                "id": ids[1],
                "status": "forgotten",
                "new_id": None,
            }

            again = await client.call_tool(
                "cortex_recall", {"query": "what drink does Harry like?"}
            )
            assert ids[1] not in [m["id"] for m in again.structured_content["memories"]]
            assert "green tea" not in again.structured_content["context"]


def test_nothing_but_json_rpc_reaches_stdout_even_through_errors(tmp_path: Path) -> None:
    server = RawStdioServer(tmp_path / "brain.db", CORTEX_LOG_LEVEL="DEBUG")
    try:
        assert "result" in server.initialize()
        assert len(server.request("tools/list")["result"]["tools"]) == 4
        calls = [
            ("cortex_remember", {"content": "   "}),
            ("cortex_remember", {"content": "Kyoto trip is booked for April"}),
            ("cortex_forget", {"memory_id": "not-an-id"}),
            ("cortex_recall", {"query": 'NEAR( "unbalanced * NOT'}),
            ("cortex_recall", {"query": "Kyoto trip"}),
            ("no_such_tool", {}),
        ]
        results = [
            server.request("tools/call", {"name": n, "arguments": a})["result"] for n, a in calls
        ]
        assert [r.get("isError", False) for r in results] == [True, False, True, False, False, True]
        server.request("resources/read", {"uri": "cortex://memories/zzz"})
        server.request("resources/read", {"uri": "cortex://stats"})
    finally:
        server.close()
    assert len(server.lines) >= 10
    for line in server.lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        assert "id" in message or "method" in message


def _sdk_import_floor() -> float:
    """Wall time of a bare interpreter importing the MCP SDK: what no server can start under."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
    return time.perf_counter() - started


def test_initialize_is_answered_quickly_after_spawn(tmp_path: Path) -> None:
    before = _sdk_import_floor()
    started = time.perf_counter()
    server = RawStdioServer(tmp_path / "brain.db")
    try:
        reply = server.initialize()
        elapsed = time.perf_counter() - started
    finally:
        server.close()
    assert reply["result"]["serverInfo"]["name"] == "cortex"
    # 5 s on an idle machine; on a loaded one the bound scales with what importing the SDK
    # costs right now (measured on both sides of the start, as the load comes and goes), so
    # only work added before `initialize` can fail this
    floor = max(before, _sdk_import_floor())
    bound = max(5.0, 3.0 * floor)
    assert elapsed < bound, f"initialize took {elapsed:.2f}s (SDK import alone {floor:.2f}s)"


def test_initialize_is_answered_before_the_engines_are_imported_and_a_tool_then_works(
    tmp_path: Path,
) -> None:
    # each module's import is reported on stderr when it completes (PYTHONPROFILEIMPORTTIME)
    server = RawStdioServer(tmp_path / "brain.db", PYTHONPROFILEIMPORTTIME="1")
    try:
        reply = server.initialize()
        before = b"".join(server.stderr)
        assert reply["result"]["serverInfo"]["name"] == "cortex"
        assert b"mcp.server.mcpserver" in before  # the probe sees what was imported
        assert b"cortex_mcp.runtime" not in before
        assert b"numpy" not in before
        done = server.call_tool("cortex_remember", {"content": "the user drinks green tea"})
        assert not done.get("isError"), done
        found = server.call_tool("cortex_recall", {"query": "green tea"})
        assert "green tea" in json.dumps(found)
    finally:
        server.close()
    assert b"cortex_mcp.runtime" in b"".join(server.stderr)


def test_initialize_is_answered_without_rich_or_the_tool_texts_and_a_recall_reads_its_text(
    tmp_path: Path,
) -> None:
    # MCPServer() imports rich for a log handler the entry point's logging makes unused, and
    # render.py brings the engines' text helpers: ~25 ms `initialize` need not wait for
    server = RawStdioServer(tmp_path / "brain.db", PYTHONPROFILEIMPORTTIME="1")
    try:
        server.initialize()
        before = b"".join(server.stderr)
        assert b"mcp.server.mcpserver" in before  # the probe sees what was imported
        assert not re.search(rb"\| +rich[.\s]", before)
        assert b"cortex_mcp.transports.render" not in before
        server.call_tool("cortex_remember", {"content": "the user drinks green tea"})
        found = server.call_tool("cortex_recall", {"query": "green tea"})
        assert "1 memory, most relevant first" in found["content"][0]["text"], found
    finally:
        server.close()
