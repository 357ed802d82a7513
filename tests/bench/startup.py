"""Start-up cost of ways to launch cortex-mcp: `--version`, and a fresh stdio server that
answers `initialize` and exits. Prints medians of wall time and of CPU time (user + sys of the
whole process tree), runs round-robin so load drifts hit every way alike.

    python tests/bench/startup.py -n 5 \\
        "cortex-mcp" \\
        "uvx --from . cortex-mcp" \\
        "uvx --from dist/cortex_mcp-0.1.0-py3-none-any.whl cortex-mcp"

On a busy machine wall times inflate; CPU seconds are the figures to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import tempfile
import time

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "startup-bench", "version": "1"},
    },
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _version(command: list[str]) -> tuple[float, float]:
    cpu, wall = _cpu(), time.perf_counter()
    subprocess.run([*command, "--version"], capture_output=True, check=True)
    return time.perf_counter() - wall, _cpu() - cpu


def _initialize(command: list[str]) -> tuple[float, float]:
    env = dict(os.environ, CORTEX_EMBEDDING_PROVIDER="none")
    env["CORTEX_DB_PATH"] = os.path.join(tempfile.mkdtemp(), "brain.db")
    cpu, wall = _cpu(), time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE) + "\n")
    proc.stdin.flush()
    reply = proc.stdout.readline()
    took = time.perf_counter() - wall
    assert '"serverInfo"' in reply, reply
    proc.stdin.close()
    proc.wait()
    return took, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="+", help="each a quoted command line")
    parser.add_argument("-n", type=int, default=5, help="runs per way (default 5)")
    args = parser.parse_args()
    ways = {text: shlex.split(text) for text in args.commands}
    figures: dict[str, list[list[float]]] = {text: [[], [], [], []] for text in ways}
    for _ in range(args.n):
        for text, command in ways.items():
            for offset, measure in ((0, _version), (2, _initialize)):
                wall, cpu = measure(command)
                figures[text][offset].append(wall)
                figures[text][offset + 1].append(cpu)
    median = statistics.median
    print(f"medians of {args.n} runs, load average {os.getloadavg()[0]:.1f}")
    print("| way | CPU --version | CPU initialize+exit | wall --version | wall initialize |")
    print("| --- | --- | --- | --- | --- |")
    for text, (vw, vc, iw, ic) in figures.items():
        print(
            f"| `{text}` | {median(vc):.2f} s | {median(ic):.2f} s"
            f" | {median(vw):.2f} s | {median(iw):.2f} s |"
        )


if __name__ == "__main__":
    main()
