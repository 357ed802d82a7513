"""stdio on the event loop: the relay's pipe is read, and the wire written, without a worker
thread per line, with the line contract of a blocking reader and the wire's blocking mode given
back at exit."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import subprocess
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from cortex_mcp.transports.stdio import GuardedLines, LoopLines
from tests.helpers.stdio_helpers import HANG_S, LEGACY_PROTOCOL, server_command, server_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the loop's pipe transports are asyncio's


def _stream(rng: random.Random) -> bytes:
    """Lines of every length around a limit of 64, a long one, and no newline at the end."""
    parts = [b"x" * rng.choice([0, 1, 5, 63, 64, 65, 130, 70_000]) for _ in range(40)]
    return b"\n".join(parts) + b"tail without newline"


async def _loop_lines_of(data: bytes, limit: int, writes: int, rng: random.Random) -> list[bytes]:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as source:
        lines = await LoopLines.open(source)
        got: list[bytes] = []

        async def feed() -> None:
            view, cuts = memoryview(data), sorted(rng.sample(range(1, len(data)), writes))
            for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
                await anyio.to_thread.run_sync(os.write, write_fd, bytes(view[start:end]))
            os.close(write_fd)

        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            while line := await lines.readline(limit):
                got.append(line)
        return got


async def test_lines_read_on_the_loop_are_those_a_blocking_reader_returns() -> None:
    rng = random.Random(7)
    for _ in range(4):
        data = _stream(rng)
        expected, source = [], io.BufferedReader(io.BytesIO(data))
        while line := source.readline(64):
            expected.append(line)
        assert await _loop_lines_of(data, 64, writes=25, rng=rng) == expected


async def test_a_private_pipe_is_read_without_a_thread_per_line(monkeypatch) -> None:
    read_fd, write_fd = os.pipe()
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'  # nothing left in flight
    os.write(write_fd, note * 3 + b"\n")
    os.close(write_fd)

    async def no_threads(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker thread read a line")

    with os.fdopen(read_fd, "rb") as source:
        guarded = GuardedLines(source, private=True)
        monkeypatch.setattr(anyio.to_thread, "run_sync", no_threads)
        received = [line async for line in guarded]
    assert received == [note.decode()] * 3


def _initialize() -> bytes:
    params = {
        "protocolVersion": LEGACY_PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "loop-io-test", "version": "1"},
    }
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def test_the_wire_is_blocking_again_when_the_server_exits(tmp_path: Path) -> None:
    """The output pipe's description is shared with whoever else holds it (here this test,
    as a wrapper that started the server would): served non-blocking, given back blocking."""
    read_fd, write_fd = os.pipe()
    try:
        done = subprocess.run(
            server_command(),
            input=_initialize(),
            stdout=write_fd,
            stderr=subprocess.PIPE,
            env=server_env(tmp_path / "brain.db"),
            timeout=HANG_S,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
        assert os.get_blocking(write_fd)
        os.close(write_fd)
        with open(read_fd, "rb") as wire:
            replies = [json.loads(line) for line in wire]
    finally:
        for fd in (read_fd, write_fd):
            with contextlib.suppress(OSError):  # already closed on the way
                os.close(fd)
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[1]["result"] == {}
