"""`cortex-mcp migrate` round trip at size (issue 17, acceptance 4): SQLite -> PostgreSQL ->
SQLite of a store of `--memories` memories, each with a vector, plus relations, access-log
and lifecycle-log entries, then every table of the two SQLite files compared row for row.

    python bench/migrate.py                        # 100K memories, embedded PostgreSQL
    python bench/migrate.py --memories 10000 --database-url postgresql://u:p@host/postgres
    python bench/migrate.py --baseline /tmp/before  # also an older version, same run

The copies run the real command (`cortex-mcp migrate --to ...`) as a subprocess; the times
are its wall-clock and CPU times on the machine as it is (a shared 2-core machine here, its
load average printed). `--baseline DIR` copies the same file into PostgreSQL with the
cortex_mcp package in DIR too (a checkout of an older version), before this version's copy."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.pg import postgres_databases  # noqa: E402
from cortex_mcp.models import new_id, to_iso  # noqa: E402
from cortex_mcp.store.copy import SqliteTarget  # noqa: E402
from cortex_mcp.store.tables import TABLES, table  # noqa: E402
from cortex_mcp.tokenize import content_hash  # noqa: E402
from tests.helpers.embedding_stub import stub_vector  # noqa: E402

CLI = str(Path(sys.executable).with_name("cortex-mcp"))
MODEL = "stub-embed"
AGENT = "bench"
BATCH = 5000
SUBJECTS = (
    "Harry Alice Bob Mei Kenji Sofia Omar Lena Priya Tomas Yuki Chen Grace Ivan Nadia Pablo"
    " the-team the-landlord our-client the-dentist the-bank the-school"
).split()
VERBS = (
    "prefers bought deployed fixed reviewed scheduled moved cancelled planned visited sold"
    " painted booked repaired renewed returned ordered shipped audited upgraded"
).split()
TOPICS = (
    "budget firewall vps apartment meeting invoice kubernetes travel cat dentist garden"
    " router laptop lease insurance passport concert recipe bicycle piano backup printer"
    " contract mortgage holiday wedding newsletter database certificate subscription"
).split()
PLACES = "Berlin Tokyo Lisbon Osaka Austin Nairobi Oslo Lyon Seoul Quito".split()


def fact(rng: random.Random, n: int) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} in"
        f" {rng.choice(PLACES)} (note {n}) on day {rng.randint(1, 28)}"
    )


def memory_pages(size: int, dim: int) -> Iterator[tuple[list[Any], list[Any]]]:
    """Memory rows and vector rows, in pages, as `store.tables` describes them."""
    rng = random.Random(size)
    first = datetime(2025, 11, 1, tzinfo=UTC)
    layers = ["core"] * 6 + ["archive"] * 3 + ["working"]
    for offset in range(0, size, BATCH):
        memories, vectors = [], []
        for n in range(offset, min(size, offset + BATCH)):
            content = fact(rng, n)
            moment = to_iso(first + timedelta(minutes=n * 525_600 // size))
            memory_id = new_id()
            memories.append(
                (
                    n + 1,
                    memory_id,
                    AGENT,
                    rng.choice(layers),
                    "fact",
                    content,
                    content_hash(content),
                    None,
                    0.5,
                    0.8,
                    1.0,
                    0,
                    None,
                    moment,
                    moment,
                    None,
                    None,
                    None,
                    "{}",
                    0,
                )
            )
            blob = stub_vector(content, dim).astype("<f4").tobytes()
            vectors.append((memory_id, MODEL, dim, blob, moment))
        yield memories, vectors


async def build(path: Path, memories: int, dim: int) -> None:
    """Memories with vectors, then relations, access and lifecycle logs naming them."""
    rng = random.Random(17)
    target = SqliteTarget(path)
    await target.open()
    try:
        ids: list[str] = []
        for rows, vectors in memory_pages(memories, dim):
            await target.write(table("memories"), rows)
            await target.write(table("memory_vectors"), vectors)
            ids += [row[1] for row in rows]
        moment = "2026-06-01T12:00:00.000000Z"
        relations = [
            (f"rel-{n}", "bench", rng.choice(SUBJECTS), "works on", f"{rng.choice(TOPICS)} {n}",
             0.8, rng.choice(ids), moment, moment)
            for n in range(memories // 5)
        ]  # fmt: skip
        accesses = [
            (n + 1, rng.choice(ids), None, hashlib.sha256(str(n).encode()).hexdigest()[:16],
             rng.randint(1, 10), None, moment)
            for n in range(memories // 2)
        ]  # fmt: skip
        logs = [
            (n + 1, rng.choice(["archive", "merge", "promote"]), json.dumps(rng.sample(ids, 2)),
             json.dumps({"reason": "bench", "score": rng.random()}), moment)
            for n in range(memories // 10)
        ]  # fmt: skip
        for name, rows in (("relations", relations), ("access_log", accesses),
                           ("lifecycle_log", logs)):  # fmt: skip
            for start in range(0, len(rows), BATCH):
                await target.write(table(name), rows[start : start + BATCH])
        await target.commit()
    except BaseException:
        await target.abort()
        raise


def digest_tables(path: Path) -> dict[str, tuple[int, str]]:
    """Each table's row count and a hash of all its rows in key order (this script's own SQL)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = {}
        for spec in TABLES:
            h, count = hashlib.sha256(), 0
            where = " WHERE key NOT LIKE 'vec_index%'" if spec.name == "meta" else ""
            for row in conn.execute(
                f"SELECT * FROM {spec.name}{where} ORDER BY {', '.join(spec.key)}"
            ):
                h.update(repr(row).encode())
                count += 1
            found[spec.name] = (count, h.hexdigest()[:16])
        return found
    finally:
        conn.close()


def run_migrate(
    *args: str, database_url: str | None = None, baseline: str | None = None
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command itself) of one `cortex-mcp` run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    if database_url:
        env["CORTEX_DATABASE_URL"] = database_url
    command = [CLI, *args]
    if baseline:  # -P: this checkout is not on sys.path, the baseline's package is
        command = [sys.executable, "-P", "-c", "from cortex_mcp.cli import main; main()", *args]
        env["PYTHONPATH"] = baseline
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(args)} failed (status {status})")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def to(source: Path, url: str) -> list[str]:
    return ["--db", str(source), "migrate", "--to", url]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--database-url", help="a PostgreSQL server (default: embedded)")
    parser.add_argument("--baseline", help="a folder holding an older cortex_mcp package")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, postgres_databases(args.database_url) as fresh:
        source, back = Path(tmp) / "source.db", Path(tmp) / "back.db"
        started = time.perf_counter()
        asyncio.run(build(source, args.memories, args.dim))
        print(f"built {args.memories:,} memories in {time.perf_counter() - started:.0f} s")
        copies = []
        if args.baseline:
            url = fresh("cortex_migrate_baseline")
            copies.append(
                (
                    "baseline SQLite -> PostgreSQL",
                    run_migrate(*to(source, url), baseline=args.baseline),
                )
            )
            fresh("cortex_migrate_baseline")  # dropped again: only one copy on disk at a time
        url = fresh("cortex_migrate_bench")
        copies.append(("SQLite -> PostgreSQL", run_migrate(*to(source, url))))
        copies.append(
            ("PostgreSQL -> SQLite", run_migrate("migrate", "--to", str(back), database_url=url))
        )
        before, after = digest_tables(source), digest_tables(back)
    rows = sum(count for count, _ in before.values())
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) at the end, {os.cpu_count()} CPUs")
    print("| copy | wall s | memories/s | rows/s | CPU s of the command |")
    print("|---|---|---|---|---|")
    for what, (wall, cpu) in copies:
        print(
            f"| {what} | {wall:.1f} | {args.memories / wall:,.0f} | {rows / wall:,.0f}"
            f" | {cpu:.1f} |"
        )
    print("| table | rows | identical after the round trip |")
    print("|---|---|---|")
    for name, (count, digest) in before.items():
        print(f"| {name} | {count:,} | {'yes' if after[name] == (count, digest) else 'NO'} |")
    identical = before == after
    print(
        f"round trip {'identical' if identical else 'DIFFERS'}: {rows:,} rows in {len(before)} tables"
    )
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
