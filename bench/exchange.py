"""Import and export at scale (issue 16): memories per second and peak RSS of the real CLI.

Each case runs `cortex-mcp import` / `export` as a subprocess on a fresh database in a temp
folder and reads that child's own peak RSS from `os.wait4` (ru_maxrss), so the figures are
the command's, not this script's. Text only (no embedding provider), as the issue measures.
Rates are given per wall second and per CPU second of the command (user + sys, both of its
threads): on a shared machine the second is the one to compare.

    python bench/exchange.py                 # the sizes of issue 16 (takes a while)
    python bench/exchange.py --scale 0.05    # a quick look
    python bench/exchange.py --cases md-200k,json-100k
    git archive main cortex_mcp prompts | tar -x -C /tmp/before   # an older version...
    python bench/exchange.py --baseline /tmp/before          # ...on the same files

Prints one line per run (items, seconds, memories/s, peak RSS in MB), then a table of every
case beside the issue's "today" figure and the baseline's (same files, same run). The
baseline imports only files of at most --baseline-max items (the version before streaming
needed 2 GB and more than 300 s for a million lines).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.stdio_helpers import server_command, server_env  # noqa: E402

TOPICS = [
    "green tea", "the Oracle Cloud VPS", "the router in IPv6 mode", "a trip to Kyoto",
    "the quarterly report", "Rust lifetimes", "the gateway crash", "a 1LDK in Shinagawa",
    "the dentist on Friday", "the new keyboard", "Harry's birthday", "the backup script",
]  # fmt: skip
SECTIONS = ["Profile", "Preferences", "Decisions", "Facts", "Corrections"]


def _sentence(n: int, rng: random.Random) -> str:
    topic = rng.choice(TOPICS)
    return f"Note {n}: the user said something about {topic} (detail {rng.randrange(10**6)})"


def write_memory_md(path: Path, lines: int, rng: random.Random) -> int:
    """A MEMORY.md of `lines` lines: sections of bullets, some dated."""
    bullets = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("# Memory\n")
        written = 1
        while written < lines:
            out.write(f"\n## {SECTIONS[written % len(SECTIONS)]}\n\n")
            written += 3
            for _ in range(min(500, lines - written)):
                dated = f"[2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}] "
                out.write(f"- {dated if bullets % 3 == 0 else ''}{_sentence(bullets, rng)}\n")
                bullets += 1
                written += 1
    return bullets


def write_json_export(path: Path, count: int, rng: random.Random) -> int:
    """Our export layout with `count` memories (every layer; a few correction chains)."""
    layers = ["core", "working", "archive"]
    categories = ["fact", "preference", "decision", "todo", "insight", "context"]
    with path.open("w", encoding="utf-8") as out:
        head = {"format": "cortex-mcp-export", "version": 1, "agent_id": None}
        head["exported_at"] = "2026-01-01T00:00:00.000000Z"
        out.write(json.dumps(head)[:-1] + '\n, "memories": [\n')
        previous = None
        for n in range(count):
            moment = f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T10:00:00.000000Z"
            memory_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            item = {
                "id": memory_id,
                "agent_id": "default",
                "layer": layers[n % 3],
                "category": categories[n % len(categories)],
                "content": _sentence(n, rng),
                "source": None,
                "importance": round(rng.random(), 3),
                "confidence": 0.8,
                "decay_score": 1.0,
                "access_count": rng.randrange(5),
                "last_accessed": None,
                "created_at": moment,
                "updated_at": moment,
                "expires_at": None,
                "superseded_by": previous if n % 50 == 1 else None,
                "forgotten_at": None,
                "metadata": {},
                "shared": False,
            }
            previous = memory_id
            out.write(("" if n == 0 else ",\n") + "  " + json.dumps(item, sort_keys=True))
        out.write('\n]\n, "relations": []\n, "lifecycle_log": []\n}\n')
    return count


def run(args: list[str], db: Path, baseline: str | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB) of one CLI run (the child's own usage);
    `baseline`: the package from that folder instead of this checkout's. The package runs
    from cached byte code, as an installed one does (pip writes its .pyc files), even when
    this script's environment sets PYTHONDONTWRITEBYTECODE: compiling every module from
    source is no part of an import's cost (`warm` writes the cache before a measured run)."""
    command = [*server_command(), *args]
    env = server_env(db)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if baseline:  # -P: the current folder (a checkout of this version) is not on sys.path
        command = [sys.executable, "-P", "-c", "from cortex_mcp.cli import main; main()", *args]
        env["PYTHONPATH"] = baseline
    started = time.perf_counter()
    child = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    stderr = child.stderr.read() if child.stderr else ""
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({child.returncode}): {stderr[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def warm(root: Path, baseline: str | None = None) -> None:
    """Run an import once (a file with no memories) so the package's byte code is cached
    before the runs that are measured."""
    empty, db = root / "warm.json", root / "warm.db"
    head = {"format": "cortex-mcp-export", "version": 1, "agent_id": None}
    empty.write_text(json.dumps(head)[:-1] + '\n, "memories": [\n]\n}\n', encoding="utf-8")
    _fresh(db)
    run(["import", str(empty)], db, baseline)
    _fresh(db)
    empty.unlink()


def report(name: str, items: int, seconds: float, cpu: float, rss_mb: float) -> str:
    """Print one run: the wall rate, and the rate per CPU second (what a machine not shared
    with others gets at most: the command is one process whose SQLite work runs on a helper
    thread). Returns the figure for the closing table."""
    print(
        f"{name:<20} {items:>9,} items  wall {seconds:7.1f} s {items / seconds:8,.0f}/s"
        f"  cpu {cpu:7.1f} s {items / cpu:8,.0f}/s  peak RSS {rss_mb:5.0f} MB"
    )
    sys.stdout.flush()
    return f"{items / cpu:,.0f}/s per CPU s ({items / seconds:,.0f}/s wall), {rss_mb:.0f} MB"


CASES = {
    "md-200k": ("md", 200_000),
    "json-100k": ("json", 100_000),
    "md-1m-lines": ("md", 1_000_000),
    "json-1m": ("json", 1_000_000),
}
# issue 16's "today" (main before the streaming work, same 2-core machine)
TODAY = {
    "import md-200k": "57 s (3,500/s), 459 MB",
    "import json-100k": "53 s (1,900/s), 387 MB",
    "import md-1m-lines": "not finished after 300 s, 2.0 GB",
    "import json-1m": "(not measured; target 5,000/s, 300 MB)",
    "export json-1m": "(not measured; target 5,000/s, 300 MB)",
}
DESCRIPTIONS = {
    "md-200k": "a 200K-bullet `MEMORY.md`",
    "json-100k": "a 100K-memory JSON export",
    "md-1m-lines": "a 1M-line `MEMORY.md`",
    "json-1m": "a 1M-memory JSON export",
}


def _exported(path: Path) -> int:
    """Memories in an export file in our line layout (one per line)."""
    with path.open(encoding="utf-8") as lines:
        return sum(1 for line in lines if line.startswith('  {"access_count"'))


def _fresh(db: Path) -> None:
    for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        stale.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated")
    parser.add_argument("--keep", help="a folder to keep the files in (else a temp folder)")
    parser.add_argument(
        "--baseline", help="also run each case with the cortex_mcp package in this folder"
    )
    parser.add_argument(
        "--baseline-max",
        type=int,
        default=200_000,
        help="the baseline imports files of at most this many items (default 200000)",
    )
    options = parser.parse_args()
    rng = random.Random(16)
    root = Path(options.keep or tempfile.mkdtemp(prefix="cortex-bench-exchange-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    warm(root)
    if options.baseline:
        warm(root, options.baseline)
    rows: list[tuple[str, int, str, str]] = []  # (what, items, this version, baseline)
    for name in options.cases.split(","):
        kind, size = CASES[name]
        size = max(1, int(size * options.scale))
        source = root / (f"{name}.json" if kind == "json" else f"{name}/MEMORY.md")
        source.parent.mkdir(parents=True, exist_ok=True)
        items = (write_json_export if kind == "json" else write_memory_md)(source, size, rng)
        db = root / f"{name}.db"
        _fresh(db)
        ours = report(f"import {name}", items, *run(["import", str(source)], db))
        before = ""
        if options.baseline and items <= options.baseline_max:
            _fresh(db)
            before = report(
                "  baseline", items, *run(["import", str(source)], db, options.baseline)
            )
            _fresh(db)
            run(["import", str(source)], db)  # the database the export reads
        rows.append((f"import {name}", items, ours, before))
        if name.startswith("json-1m") or (options.scale < 1 and kind == "json"):
            out = root / f"{name}-export.json"
            export = ["export", "--format", "json", "--out", str(out)]
            out.unlink(missing_ok=True)
            ours = report(f"export {name}", items, *run(export, db))
            before = ""
            if options.baseline:  # an older version may refuse a database of a newer schema
                out.unlink(missing_ok=True)
                figures = run(export, db, options.baseline)
                written = out.exists() and _exported(out) == items
                before = report("  baseline", items, *figures) if written else ""
                if not written:
                    print("  baseline            wrote no full export of this database")
            out.unlink(missing_ok=True)
            rows.append((f"export {name}", items, ours, before))
        _fresh(db)
        source.unlink(missing_ok=True)
    print(f"\nload average now {os.getloadavg()[0]:.1f}")
    print("| case | issue's today | before (same run) | this version |\n| --- | --- | --- | --- |")
    for what, items, ours, before in rows:
        verb, case = what.split()
        label = f"{verb} {DESCRIPTIONS[case]}" if verb == "import" else "export as JSON"
        today = TODAY.get(what, "") if options.scale == 1 else ""
        print(f"| {label} ({items:,} items) | {today} | {before or '-'} | {ours} |")


if __name__ == "__main__":
    main()
