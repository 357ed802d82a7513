"""Start-up cost of ways to launch cortex-mcp: `--version`, a fresh stdio server that answers
`initialize` and exits, and the people's commands `list` and `show ID` on a small database.
Prints medians of wall time, of CPU time (user + sys of the command's process) and of peak
RSS, runs round-robin so load drifts hit every way alike, and ends with the issue's "today"
figures and target beside each way's `list` and `show`.

    python bench/startup.py -n 5 .venv/bin/cortex-mcp
    git archive main cortex_mcp prompts | tar -x -C /tmp/before     # an older version
    python bench/startup.py -n 7 .venv/bin/cortex-mcp \\
        "env PYTHONPATH=/tmp/before .venv/bin/python -P -m cortex_mcp"
    python bench/startup.py -n 5 "uvx --from . cortex-mcp"

Commands run with byte-code caching on (as an installed package has its .pyc files), even
when this script's environment sets PYTHONDONTWRITEBYTECODE. On a busy machine wall times
inflate; CPU seconds are the figures to compare.
"""

from __future__ import annotations

import argparse
import json
import os
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


# issue 16: `list` 0.86 s and `show` 0.80 s of CPU on a quiet machine; target 0.35 s
TODAY = {"list": 0.86, "show ID": 0.80}
TARGET_CPU_S = 0.35


def _environment(db_path: str) -> dict[str, str]:
    env = dict(os.environ, CORTEX_EMBEDDING_PROVIDER="none", CORTEX_DB_PATH=db_path)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _fresh_db() -> str:
    return os.path.join(tempfile.mkdtemp(), "brain.db")


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak RSS (MB) of one child process run to its end."""
    wall = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed")
    return time.perf_counter() - wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _version(command: list[str]) -> tuple[float, float, float]:
    return _timed([*command, "--version"], _environment(_fresh_db()))


def _command(command: list[str], arguments: list[str], db_path: str) -> tuple[float, float, float]:
    """One CLI command on `db_path`."""
    return _timed([*command, *arguments], _environment(db_path))


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


def _initialize(command: list[str]) -> tuple[float, float, float]:
    """Time to the `initialize` answer; CPU and RSS of the whole server run."""
    env = _environment(_fresh_db())
    wall = time.perf_counter()
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
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="+", help="each a quoted command line")
    parser.add_argument("-n", type=int, default=5, help="runs per way (default 5)")
    args = parser.parse_args()
    ways = {text: shlex.split(text) for text in args.commands}
    samples = {text: _sample_db(command) for text, command in ways.items()}
    columns = ("--version", "initialize+exit", "list", "show ID")
    figures: dict[str, dict[str, tuple[list[float], list[float], list[float]]]] = {
        text: {column: ([], [], []) for column in columns} for text in ways
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
                for series, value in zip(figures[text][column], measure(), strict=True):
                    series.append(value)
    median = statistics.median
    print(f"medians of {args.n} runs, load average {os.getloadavg()[0]:.1f}")
    print("| way | " + " | ".join(f"CPU {c}" for c in columns) + " | wall list | RSS list |")
    print("| --- " * (len(columns) + 3) + "|")
    for text, by_column in figures.items():
        cpu = " | ".join(f"{median(by_column[c][1]):.2f} s" for c in columns)
        wall, rss = median(by_column["list"][0]), median(by_column["list"][2])
        print(f"| `{text}` | {cpu} | {wall:.2f} s | {rss:.0f} MB |")
    print(f"\nCPU of `list` and `show` against issue 16 (target {TARGET_CPU_S} s):")
    print("| command | issue's today | " + " | ".join(f"`{t}`" for t in ways) + " |")
    print("| --- " * (len(ways) + 2) + "|")
    for column, today in TODAY.items():
        cells = " | ".join(f"{median(figures[t][column][1]):.2f} s" for t in ways)
        print(f"| {column} | {today:.2f} s | {cells} |")


if __name__ == "__main__":
    main()
