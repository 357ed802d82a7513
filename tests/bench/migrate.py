"""`cortex-mcp migrate` round trip at size (issue 17, acceptance 4): SQLite -> PostgreSQL ->
SQLite of a store of `--memories` memories, each with a vector, plus relations, access-log
and lifecycle-log entries, then every table of the two SQLite files compared row for row.

    python tests/bench/migrate.py                        # 100K memories, embedded PostgreSQL
    python tests/bench/migrate.py --memories 10000 --database-url postgresql://u:p@host/postgres

The copies run the real command (`cortex-mcp migrate --to ...`) as a subprocess; the times
are its wall-clock times on the machine as it is (a shared 2-core machine here)."""

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cortex_mcp.store.copy import SqliteTarget  # noqa: E402
from cortex_mcp.store.tables import TABLES, table  # noqa: E402
from tests.bench.pg import postgres_databases  # noqa: E402
from tests.bench.stores import BATCH, SUBJECTS, TOPICS, memory_pages  # noqa: E402

CLI = str(Path(sys.executable).with_name("cortex-mcp"))


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


def run_migrate(*args: str, database_url: str | None = None) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    if database_url:
        env["CORTEX_DATABASE_URL"] = database_url
    started = time.perf_counter()
    subprocess.run([CLI, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--database-url", help="a PostgreSQL server (default: embedded)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, postgres_databases(args.database_url) as fresh:
        source, back = Path(tmp) / "source.db", Path(tmp) / "back.db"
        started = time.perf_counter()
        asyncio.run(build(source, args.memories, args.dim))
        print(f"built {args.memories:,} memories in {time.perf_counter() - started:.0f} s")
        url = fresh("cortex_migrate_bench")
        there = run_migrate("--db", str(source), "migrate", "--to", url)
        home = run_migrate("migrate", "--to", str(back), database_url=url)
        before, after = digest_tables(source), digest_tables(back)
    rows = sum(count for count, _ in before.values())
    print(f"SQLite -> PostgreSQL: {there:.1f} s ({rows / there:,.0f} rows/s)")
    print(f"PostgreSQL -> SQLite: {home:.1f} s ({rows / home:,.0f} rows/s)")
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
