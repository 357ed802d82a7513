"""A raw JSON-RPC driver for the stdio server: sees every byte the server writes to stdout."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

LEGACY_PROTOCOL = "2025-11-25"


# Bounds a hang, never a speed: on a loaded 2-core machine a server takes tens of seconds to
# start, and a test that waits less fails for the load, not for the code.
HANG_S = 90.0


def server_command() -> list[str]:
    """The installed console script, as README tells users to run it."""
    script = Path(sys.executable).parent / "cortex-mcp"
    if script.exists():
        return [str(script)]
    found = shutil.which("cortex-mcp")
    return [found] if found else [sys.executable, "-m", "cortex_mcp"]


def server_env(db_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    env.update({"CORTEX_DB_PATH": str(db_path), "CORTEX_EMBEDDING_PROVIDER": "none"}, **extra)
    return env


def unprivileged() -> list[str] | None:
    """A command prefix that runs the server as a user file permissions apply to: as root
    (whom they do not bind) `setpriv` to the `nobody` user, otherwise nothing. None when
    there is no way to drop root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


class RawStdioServer:
    def __init__(self, db_path: Path, *, prefix: list[str] | None = None, **env: str) -> None:
        self.started = time.perf_counter()
        self.stderr: list[bytes] = []
        self.proc = subprocess.Popen(
            [*(prefix or []), *server_command()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(db_path, **env),
        )
        self.lines: list[bytes] = []
        self._queue: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._next_id = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            self._queue.put(line)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = HANG_S
    ) -> Any:
        self._next_id += 1
        wanted = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": wanted, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + timeout
        while True:
            line = self._queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            reply = json.loads(line)
            if reply.get("id") == wanted:
                return reply

    def initialize(self) -> Any:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": LEGACY_PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """The `result` of a tools/call (an error reply fails the test)."""
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"]

    def close(self) -> int:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
