"""Property-based fuzzing of the tools over a real stdio MCP session (the installed server in a
subprocess, raw JSON-RPC so any bytes can be sent): wrong types, unknown argument names, huge
strings, control characters, lone surrogates, FTS syntax, NaN and infinities, garbage lines.

Every request is answered within 2 s, no error reply ever comes with a changed database, the
server never dies. Bounded (FUZZ_EXAMPLES, default 400 examples of 1-3 calls each) so CI
stays fast; the number of calls made is printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.stdio_helpers import HANG_S, RawStdioServer

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "400"))
ANSWER_WITHIN_S = (
    HANG_S  # every call is answered: bounds a hang, not speed (the slowest is printed)
)

PARAMS = {
    "cortex_recall": ["query", "max_results", "layers", "categories", "max_tokens", "agent_id"],
    "cortex_remember": [
        "content",
        "category",
        "importance",
        "layer",
        "supersedes",
        "source",
        "agent_id",
    ],
    "cortex_forget": ["memory_id", "reason", "correction", "purge", "agent_id"],
    "cortex_search_debug": ["query", "max_results", "agent_id"],
}
FTS_SYNTAX = ['"', '""', "*", "NOT", "a OR b", "NEAR(a b)", "col:value", "^x", "(((", "-x", "a AND"]

wrong_types = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
hostile_strings = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec=None, categories=["Cs", "Cc", "Cf", "Zs", "Lo"]), max_size=12),
    st.sampled_from(FTS_SYNTAX),
    st.builds(
        lambda n, unit: unit * n,
        st.integers(min_value=1, max_value=120_000),
        st.sampled_from(["a", "界", "\x00", " ", '"', "\U0001f600", "\ud800", "\\"]),
    ),
    st.sampled_from(["yes", "true", "0", "working", "core", "fact", "NaN"]),
)
plausible_text = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=120
)


@st.composite
def tool_calls(draw: st.DrawFn) -> dict[str, Any]:
    tool = draw(st.sampled_from([*PARAMS, "cortex_nope"]))
    names = PARAMS.get(tool, ["query"])
    arguments: dict[str, Any] = {}
    if tool in ("cortex_recall", "cortex_search_debug", "cortex_nope"):
        arguments["query"] = draw(st.one_of(plausible_text, st.sampled_from(FTS_SYNTAX)))
    elif tool == "cortex_remember":
        arguments["content"] = draw(plausible_text)
    else:
        arguments["memory_id"] = draw(st.one_of(st.just("<known>"), st.uuids().map(str)))
    overlay = draw(
        st.dictionaries(
            st.one_of(
                st.sampled_from(names), st.sampled_from(["agentId", "id", ""]), st.text(max_size=8)
            ),
            st.one_of(hostile_strings, wrong_types),
            max_size=3,
        )
    )
    arguments.update(overlay)
    return {"tool": tool, "arguments": arguments, "ascii": draw(st.booleans())}


garbage_lines = st.binary(min_size=1, max_size=200).map(lambda b: b.replace(b"\n", b" "))


class Session:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.server = RawStdioServer(db)
        self.server.initialize()
        # the server answers initialize before it opens the file: a read waits for it, so the
        # first fingerprint sees the created database
        self.server.request("resources/read", {"uri": "cortex://stats"})
        self.next_id = 1000
        self.known_ids: list[str] = []
        self.calls = 0
        self.errors = 0
        self.slowest = 0.0

    def fingerprint(self) -> str:
        """What a failed call must not change: every memory's identity, text and state."""
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "SELECT id, agent_id, layer, category, content, source, importance,"
                " forgotten_at, superseded_by FROM memories ORDER BY id"
            ).fetchall()
        finally:
            conn.close()
        return hashlib.sha256(repr(rows).encode("utf-8", "surrogatepass")).hexdigest()

    def send(self, line: bytes) -> dict[str, Any]:
        assert self.server.proc.stdin is not None
        self.server.proc.stdin.write(line + b"\n")
        self.server.proc.stdin.flush()

    def await_reply(self, request_id: int | None, started: float) -> dict[str, Any]:
        while True:
            left = started + ANSWER_WITHIN_S - time.monotonic()
            try:
                reply = json.loads(self.server._queue.get(timeout=max(left, 0.001)))
            except queue.Empty:
                raise AssertionError(f"no answer within {ANSWER_WITHIN_S} s") from None
            if reply.get("id") == request_id:
                self.slowest = max(self.slowest, time.monotonic() - started)
                return reply

    def call(self, call: dict[str, Any]) -> None:
        arguments = dict(call["arguments"])
        if arguments.get("memory_id") == "<known>":
            arguments["memory_id"] = self.known_ids[-1] if self.known_ids else str(uuid.uuid4())
        self.next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {"name": call["tool"], "arguments": arguments},
        }
        text = json.dumps(message, ensure_ascii=call["ascii"], allow_nan=True)
        before = self.fingerprint()
        started = time.monotonic()
        self.send(text.encode("utf-8", "surrogatepass"))
        reply = self.await_reply(self.next_id, started)
        self.calls += 1
        failed = "error" in reply or reply["result"].get("isError")
        if failed:
            self.errors += 1
            assert self.fingerprint() == before, (call["tool"], str(arguments)[:300], reply)
            message_text = json.dumps(reply)
            assert len(message_text) < 2000, message_text[:300]
        elif call["tool"] == "cortex_remember":
            self.known_ids.append(reply["result"]["structuredContent"]["id"])
        assert self.server.proc.poll() is None, "the server died"

    def garbage(self, line: bytes) -> None:
        if not line.strip():
            return
        before = self.fingerprint()
        started = time.monotonic()
        self.send(line)
        reply = self.await_reply(None, started)
        self.calls += 1
        self.errors += 1
        assert "error" in reply
        assert self.fingerprint() == before


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Any:
    live = Session(tmp_path_factory.mktemp("fuzz") / "brain.db")
    yield live
    live.server.close()
    print(
        f"\nfuzz: {live.calls} calls ({live.errors} refused), slowest answer "
        f"{live.slowest * 1000:.0f} ms, {len(live.known_ids)} memories stored; "
        f"server exit code {live.server.proc.returncode}"
    )
    assert live.server.proc.returncode == 0


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
@given(calls=st.lists(tool_calls(), min_size=1, max_size=3), junk=st.none() | garbage_lines)
def test_hostile_tool_calls_are_answered_and_failed_ones_change_nothing(
    session: Session, calls: list[dict[str, Any]], junk: bytes | None
) -> None:
    for call in calls:
        session.call(call)
    if junk is not None:
        session.garbage(junk)
