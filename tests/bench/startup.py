"""Start-up cost of ways to launch cortex-mcp: `--version`, a fresh stdio server that answers
`initialize` and exits, and the people's commands `list` and `show ID` on a small database.
Prints medians of wall time and of CPU time (user + sys of the whole process tree), runs
round-robin so load drifts hit every way alike.

    python tests/bench/startup.py -n 5 .venv/bin/cortex-mcp
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


def _environment(db_path: str) -> dict[str, str]:
    return dict(os.environ, CORTEX_EMBEDDING_PROVIDER="none", CORTEX_DB_PATH=db_path)


def _fresh_db() -> str:
    return os.path.join(tempfile.mkdtemp(), "brain.db")


def _command(command: list[str], arguments: list[str], db_path: str) -> tuple[float, float]:
    """One CLI command on `db_path`: wall and CPU seconds of the child process."""
    cpu, wall = _cpu(), time.perf_counter()
    subprocess.run(
        [*command, *arguments], capture_output=True, check=True, env=_environment(db_path)
    )
    return time.perf_counter() - wall, _cpu() - cpu


def _sample_db(command: list[str], memories: int = 20) -> tuple[str, str]:
    """A database with a few memories, and the id of one of them (to `show`)."""
    db_path = _fresh_db()
    for i in range(memories):
        subprocess.run(
            [*command, "add", f"sample memory {i}: the user likes tea number {i}"],
            capture_output=True,
            check=True,
            env=_environment(db_path),
        )
    listed = subprocess.run(
        [*command, "list", "--json"],
        capture_output=True,
        check=True,
        env=_environment(db_path),
        text=True,
    )
    return db_path, json.loads(listed.stdout)[0]["id"]


def _initialize(command: list[str]) -> tuple[float, float]:
    env = _environment(_fresh_db())
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
    samples = {text: _sample_db(command) for text, command in ways.items()}
    columns = ("--version", "initialize+exit", "list", "show ID")
    figures: dict[str, dict[str, tuple[list[float], list[float]]]] = {
        text: {column: ([], []) for column in columns} for text in ways
    }
    for _ in range(args.n):
        for text, command in ways.items():
            db_path, memory_id = samples[text]
            measures = {
                "--version": lambda c=command: _version(c),
                "initialize+exit": lambda c=command: _initialize(c),
                "list": lambda c=command, d=db_path: _command(c, ["list"], d),
                "show ID": lambda c=command, d=db_path, i=memory_id: _command(c, ["show", i], d),
            }
            for column, measure in measures.items():
                wall, cpu = measure()
                figures[text][column][0].append(wall)
                figures[text][column][1].append(cpu)
    median = statistics.median
    print(f"medians of {args.n} runs, load average {os.getloadavg()[0]:.1f}")
    print("| way | " + " | ".join(f"CPU {c}" for c in columns) + " | wall list |")
    print("| --- " * (len(columns) + 2) + "|")
    for text, by_column in figures.items():
        cpu = " | ".join(f"{median(by_column[c][1]):.2f} s" for c in columns)
        print(f"| `{text}` | {cpu} | {median(by_column['list'][0]):.2f} s |")


if __name__ == "__main__":
    main()
