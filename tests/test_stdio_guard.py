"""Over real stdio, every line that carries a request is answered, whatever its bytes: parse
errors, invalid requests and text that is not valid Unicode get JSON-RPC errors under the
request's own id, and the server keeps serving."""

from __future__ import annotations

import json
import queue
from pathlib import Path

import pytest

from tests.helpers.stdio_helpers import HANG_S, RawStdioServer

pytestmark = pytest.mark.slow

CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"cortex_remember","arguments":{"content":%s}}}'

# raw line -> (expected error code, expected id)
CASES: list[tuple[bytes, int, int | None]] = [
    (b"not json at all", -32700, None),
    (b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{', -32700, 41),
    (CALL % (42, b'"x \\udfff y"'), -32602, 42),
    (CALL % (43, b'"\\ud800"'), -32602, 43),
    (CALL % (44, b'"bad \xff\xfe bytes"'), -32602, 44),
    (b'[{"jsonrpc":"2.0","id":45,"method":"ping"}]', -32600, None),
    (b'{"jsonrpc":"2.0","id":46,"method":123}', -32600, 46),
    (b'{"id":47,"method":"ping"}', -32600, 47),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    (b'"just a string"', -32600, None),
    (b"[" * 100_000, -32700, None),
]


def _next_reply(server: RawStdioServer, timeout: float = HANG_S) -> dict:
    line = server._queue.get(timeout=timeout)
    return json.loads(line)


def test_every_malformed_line_gets_an_error_and_the_server_keeps_serving(tmp_path: Path) -> None:
    server = RawStdioServer(tmp_path / "brain.db")
    try:
        server.initialize()
        assert server.proc.stdin is not None
        for line, code, request_id in CASES:
            server.proc.stdin.write(line + b"\n")
            server.proc.stdin.flush()
            reply = _next_reply(server)  # the SDK answered none of these: clients waited
            assert reply["error"]["code"] == code, (line[:60], reply)
            assert reply["id"] == request_id, (line[:60], reply)
            assert len(json.dumps(reply)) < 300
            assert server.request("ping")["result"] == {}

        emoji = server.request(
            "tools/call",
            {"name": "cortex_remember", "arguments": {"content": "paired \U0001f600 is fine"}},
        )
        assert emoji["result"]["isError"] is False
        with pytest.raises(queue.Empty):
            server._queue.get(timeout=0.3)  # nothing unanswered or doubled is left over
    finally:
        server.close()
    assert server.proc.returncode == 0


def test_an_oversized_line_is_refused_and_skipped(tmp_path: Path) -> None:
    server = RawStdioServer(tmp_path / "brain.db")
    try:
        server.initialize()
        assert server.proc.stdin is not None
        huge = b'{"jsonrpc":"2.0","id":77,"method":"ping","params":{"pad":"' + b"x" * (5 << 20)
        server.proc.stdin.write(huge + b'"}}\n')
        server.proc.stdin.flush()
        reply = _next_reply(server)
        assert reply["id"] == 77 and reply["error"]["code"] == -32600
        assert server.request("ping")["result"] == {}
    finally:
        server.close()
