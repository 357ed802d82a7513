"""Our speed targets (issue 37, item 14 and acceptance 4), each figure printed beside its target.

    python bench/speed.py                       # everything (the imports take a few minutes)
    python bench/speed.py --skip imports -n 9   # start-up and recall only
    python bench/speed.py --scale 0.1           # imports of a tenth of the sizes

- import: `cortex-mcp import` of a 200K-bullet MEMORY.md and of a 100K-memory JSON export
  (bench/exchange.py writes both), each a subprocess on a fresh database, text only: memories
  per wall second and per CPU second of the command (user + sys of all its threads) and its
  peak RSS, the package run from cached byte code as an installed one is (like start-up's).
  Target >= 5,000/s (judged per CPU second, what a quiet machine's wall rate is at least) and
  < 200 MB.
- start-up, in rounds (one of each per round, so load drifts hit every figure alike): a bare
  interpreter importing the MCP SDK (`import mcp.server.mcpserver`, wall and CPU to the import done,
  not to the exit), a fresh
  stdio server answering `initialize` (wall from spawn to the answer, and the CPU the server
  had used when it answered), and `cortex-mcp list` and `show ID` on a small database (CPU).
  Targets: `list` and `show` <= 0.35 s of CPU, `initialize` <= 1.3x the SDK import.
- recall over stdio against the floor: 1,000 memories (vectors from the hashing stub of
  tests/helpers/embedding_stub.py, served by its own process), `cortex_recall` returning 10,
  and the echo tool of the shared echo server (`--echo`, an `MCPServer` of the same SDK run by
  the same interpreter) with the same query texts, both through the SDK's `Client` over
  stdio, called alternately in one run. Target: recall p50 <= 2.5x echo p50.

Medians throughout; the load average is printed at the start and the end: on a loaded
machine wall times stretch (CPU seconds much less), so compare the CPU figures then.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.exchange import run as run_cli  # noqa: E402
from bench.exchange import warm, write_json_export, write_memory_md  # noqa: E402
from bench.latency import _child_cpu_s as child_cpu_s  # noqa: E402
from bench.latency import _vocabulary as vocabulary  # noqa: E402
from bench.latency import synthetic_memory, synthetic_query  # noqa: E402
from tests.helpers.stdio_helpers import server_command, server_env  # noqa: E402

IMPORT_RATE = 5_000  # memories per second
IMPORT_RSS_MB = 200
COMMAND_CPU_S = 0.35  # `list`, `show`
INITIALIZE_RATIO = 1.3  # initialize / SDK import
RECALL_RATIO = 2.5  # stdio recall p50 / echo p50
SHARED_ECHO = ROOT.parent / "shared" / "bench" / "echo_server.py"
IMPORTS = {"md-200k": ("md", 200_000), "json-100k": ("json", 100_000)}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "speed-bench", "version": "1"},
    },
}
TICKS = os.sysconf("SC_CLK_TCK")
median = statistics.median


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


# ---- imports -----------------------------------------------------------------------------


def bench_imports(scale: float, root: Path) -> list[str]:
    rows = []
    rng = random.Random(16)
    warm(root)  # byte code cached, as an installed package runs
    for name, (kind, size) in IMPORTS.items():
        size = max(1, int(size * scale))
        source = root / (f"{name}.json" if kind == "json" else f"{name}/MEMORY.md")
        source.parent.mkdir(parents=True, exist_ok=True)
        items = (write_json_export if kind == "json" else write_memory_md)(source, size, rng)
        db = root / f"{name}.db"
        wall, cpu, rss = run_cli(["import", str(source)], db)
        print(
            f"import {name}: {items:,} memories, {wall:.1f} s wall, {cpu:.1f} s CPU,"
            f" peak RSS {rss:.0f} MB",
            flush=True,
        )
        # judged per CPU second: a quiet machine's wall rate is at least that (the command
        # keeps one core busy or more), a loaded one's is anything lower
        ok = items / cpu >= IMPORT_RATE and rss < IMPORT_RSS_MB
        rows.append(
            f"| import {name} ({items:,}) | {items / wall:,.0f}/s wall, {items / cpu:,.0f}/s"
            f" per CPU s, {rss:.0f} MB | >= {IMPORT_RATE:,}/s, < {IMPORT_RSS_MB} MB"
            f" | {_verdict(ok)} |"
        )
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), source):
            leftover.unlink(missing_ok=True)
    return rows


# ---- start-up ----------------------------------------------------------------------------


def _environment(db_path: Path) -> dict[str, str]:
    """As an installed package runs: byte-code caching on, no embedding provider."""
    env = server_env(db_path)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _child(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one command run to its end."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        stderr = child.stderr.read().decode() if child.stderr else ""
        raise SystemExit(f"{shlex.join(command)} failed: {stderr[-1000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def _cpu_so_far(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


# the baseline is timed as the server is: to its first line on stdout, not to its exit (an
# interpreter's shutdown would make the SDK import look slower than it is)
SDK_IMPORT = "import sys, mcp.server.mcpserver; print('imported', flush=True); sys.stdin.read()"


def _first_line(command: list[str], env: dict[str, str], send: bytes) -> tuple[float, float, bytes]:
    """Wall seconds from spawn to the process's first line on stdout, its CPU by then, and
    the line; `send` is written to its stdin first."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(send)
    child.stdin.flush()
    line = child.stdout.readline()
    wall = time.perf_counter() - started
    cpu = _cpu_so_far(child.pid)
    child.stdin.close()
    child.wait()
    return wall, cpu, line


def _sdk_import(env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds from spawn to `import mcp.server.mcpserver` done, and the CPU by then."""
    wall, cpu, line = _first_line([sys.executable, "-c", SDK_IMPORT], env, b"")
    assert line == b"imported\n", line
    return wall, cpu


def _initialize(db_path: Path) -> tuple[float, float]:
    """Wall seconds from spawn to the `initialize` answer, and the server's CPU by then."""
    send = json.dumps(INITIALIZE).encode() + b"\n"
    wall, cpu, reply = _first_line(server_command(), _environment(db_path), send)
    assert b'"serverInfo"' in reply, reply
    return wall, cpu


def _sample_database(root: Path) -> tuple[Path, str]:
    db_path = root / "startup.db"
    env = _environment(db_path)
    for i in range(20):
        subprocess.run(
            [*server_command(), "add", f"sample memory {i}: the user likes tea number {i}"],
            env=env,
            check=True,
            capture_output=True,
        )
    listed = subprocess.run(
        [*server_command(), "list", "--json"], env=env, check=True, capture_output=True
    )
    return db_path, json.loads(listed.stdout)[0]["id"]


def bench_startup(runs: int, root: Path) -> list[str]:
    db_path, memory_id = _sample_database(root)
    figures: dict[str, list[tuple[float, float]]] = {
        "sdk": [],
        "initialize": [],
        "list": [],
        "show": [],
    }
    for n in range(runs):
        figures["sdk"].append(_sdk_import(_environment(db_path)))
        figures["initialize"].append(_initialize(root / f"fresh-{n}.db"))
        env = _environment(db_path)
        figures["list"].append(_child([*server_command(), "list"], env))
        figures["show"].append(_child([*server_command(), "show", memory_id], env))
    wall = {k: median(w for w, _ in v) for k, v in figures.items()}
    cpu = {k: median(c for _, c in v) for k, v in figures.items()}
    ratios = [i[0] / s[0] for s, i in zip(figures["sdk"], figures["initialize"], strict=True)]
    ratio = wall["initialize"] / wall["sdk"]
    print(
        f"start-up, medians of {runs} rounds: SDK import {wall['sdk']:.2f} s wall"
        f" {cpu['sdk']:.2f} s CPU; initialize {wall['initialize']:.2f} s wall"
        f" {cpu['initialize']:.2f} s CPU; list {cpu['list']:.2f} s CPU; show"
        f" {cpu['show']:.2f} s CPU; initialize/SDK per round:"
        f" {', '.join(f'{r:.2f}' for r in ratios)}",
        flush=True,
    )
    rows = [
        f"| `cortex-mcp {name}` CPU | {cpu[name]:.2f} s ({wall[name]:.2f} s wall)"
        f" | <= {COMMAND_CPU_S} s | {_verdict(cpu[name] <= COMMAND_CPU_S)} |"
        for name in ("list", "show")
    ]
    rows.append(
        f"| stdio `initialize` / SDK import | {ratio:.2f}x wall ({wall['initialize']:.2f} s /"
        f" {wall['sdk']:.2f} s), {cpu['initialize'] / cpu['sdk']:.2f}x CPU"
        f" | <= {INITIALIZE_RATIO}x | {_verdict(ratio <= INITIALIZE_RATIO)} |"
    )
    return rows


# ---- recall against the echo floor -------------------------------------------------------


def _start_embedding_stub() -> tuple[subprocess.Popen[str], str]:
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.embedding_stub", "--dim", "384"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stub.stdout is not None
    port = stub.stdout.readline().split()[1]
    return stub, f"http://127.0.0.1:{port}/v1"


def _fill(db_path: Path, url: str, memories: int, rng: random.Random, words: list[str]) -> None:
    """`memories` memories written and embedded in process, as bench/latency.py fills."""
    from cortex_mcp.config import load_settings
    from cortex_mcp.runtime import open_cortex
    from cortex_mcp.service.requests import RememberRequest

    settings = load_settings(
        db_path=db_path,
        embedding_provider="openai",
        embedding_base_url=url,
        embedding_model="stub-384",
        embedding_batch_size=256,
    )

    async def fill() -> None:
        async with open_cortex(settings, background=False) as service:
            for i in range(memories):
                content = synthetic_memory(rng, words, i)
                await service.memories.remember(RememberRequest(content=content, importance=0.5))
            await service.embed_pending()

    asyncio.run(fill())


async def _alternate(
    db_path: Path, url: str, echo: Path, queries: list[str]
) -> tuple[list[float], list[float], int, dict[str, float]]:
    """Wall ms of each call (the first ten left out), memories returned, and each server's CPU
    ms per measured call."""
    from mcp import Client, StdioServerParameters

    env = server_env(
        db_path,
        CORTEX_EMBEDDING_PROVIDER="openai",
        CORTEX_EMBEDDING_BASE_URL=url,
        CORTEX_EMBEDDING_MODEL="stub-384",
        CORTEX_LOG_LEVEL="WARNING",
    )
    command, *args = server_command()
    cortex = StdioServerParameters(command=command, args=args, env=env)
    floor = StdioServerParameters(command=sys.executable, args=[str(echo)])
    recall_ms: list[float] = []
    echo_ms: list[float] = []
    returned = 0
    async with Client(cortex, mode="legacy") as ours, Client(floor, mode="legacy") as bare:

        async def timed(client: Any, tool: str, arguments: dict[str, Any]) -> tuple[float, Any]:
            started = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            took = (time.perf_counter() - started) * 1000
            assert not result.is_error, result.content
            return took, result

        markers = {"cortex_recall": "cortex-mcp", "echo": echo.name}
        cpu_before: dict[str, float] = {}
        for n, query in enumerate(queries):
            if n == 10:
                cpu_before = {tool: child_cpu_s(marker) for tool, marker in markers.items()}
            calls = [
                (ours, "cortex_recall", {"query": query, "max_results": 10}, recall_ms),
                (bare, "echo", {"text": query}, echo_ms),
            ]
            for client, tool, arguments, into in calls if n % 2 else reversed(calls):
                took, result = await timed(client, tool, arguments)
                if n >= 10:  # the first ten warm both up
                    into.append(took)
                if tool == "cortex_recall":
                    returned = len(result.structured_content["memories"])
        measured = max(len(queries) - 10, 1)
        cpu_ms = {
            tool: (child_cpu_s(marker) - cpu_before[tool]) * 1000 / measured
            for tool, marker in markers.items()
        }
    return recall_ms, echo_ms, returned, cpu_ms


def bench_recall(memories: int, calls: int, echo: Path, root: Path) -> list[str]:
    rng = random.Random(memories)
    words = vocabulary(rng)
    db_path = root / "recall.db"
    stub, url = _start_embedding_stub()
    try:
        _fill(db_path, url, memories, rng, words)
        queries = [synthetic_query(rng, words) for _ in range(calls + 10)]
        recall_ms, echo_ms, returned, cpu_ms = asyncio.run(_alternate(db_path, url, echo, queries))
    finally:
        if stub.stdin is not None:
            stub.stdin.close()
        stub.wait()
    recall, floor = median(recall_ms), median(echo_ms)
    print(
        f"stdio over {len(recall_ms)} alternating calls: recall p50 {recall:.2f} ms"
        f" ({returned} memories returned of {memories:,}), echo p50 {floor:.2f} ms ({echo.name});"
        f" server CPU per call: recall {cpu_ms['cortex_recall']:.2f} ms, echo"
        f" {cpu_ms['echo']:.2f} ms",
        flush=True,
    )
    return [
        f"| stdio recall p50 / echo p50 | {recall / floor:.2f}x ({recall:.2f} ms / {floor:.2f} ms)"
        f" | <= {RECALL_RATIO}x | {_verdict(recall / floor <= RECALL_RATIO)} |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=7, help="start-up rounds (default 7)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the import sizes")
    parser.add_argument("--calls", type=int, default=300, help="recall/echo calls (default 300)")
    parser.add_argument("--memories", type=int, default=1000, help="memories recalled from")
    parser.add_argument("--echo", type=Path, default=SHARED_ECHO, help="the echo server script")
    parser.add_argument("--skip", default="", help="comma list of: imports, startup, recall")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    echo = args.echo if args.echo.exists() else Path(__file__).with_name("echo_server.py")
    print(f"python {sys.version.split()[0]}; at the start: {_load()}", flush=True)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cortex-bench-speed-") as folder:
        root = Path(folder)
        if "startup" not in skip:
            rows += bench_startup(args.n, root)
        if "recall" not in skip:
            rows += bench_recall(args.memories, args.calls, echo, root)
        if "imports" not in skip:
            rows += bench_imports(args.scale, root)
    print(f"\nat the end: {_load()}")
    print("| figure | this run | target | |\n| --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
