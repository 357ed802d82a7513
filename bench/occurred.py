"""What a memory's own time costs to read: `occurred_within` (a time window's candidates) and a
text search bounded by `since`/`until`, beside the same text search unbounded, on one SQLite
store of N memories spread over three years (one agent holding most, another the rest).

    python bench/occurred.py [--size 100000] [--runs 200]

Prints p50/p95 in milliseconds per read."""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cortex_mcp.models import SearchFilters, new_id, to_iso  # noqa: E402
from cortex_mcp.store.database import Database  # noqa: E402
from cortex_mcp.store.memories import LayerTtl, MemoryStore  # noqa: E402
from cortex_mcp.tokenize import content_hash, index_text  # noqa: E402

START = datetime(2023, 1, 1, tzinfo=UTC)
WORDS = "museum book film hike tea coffee train river garden concert dinner market".split()
NOW = "2026-01-01T00:00:00.000000Z"


def rows(size: int, rng: random.Random) -> list[tuple[object, ...]]:
    out = []
    for i in range(size):
        when = to_iso(START + timedelta(minutes=rng.randrange(3 * 365 * 24 * 60)))
        agent = "main" if rng.random() < 0.8 else "other"
        text = f"note {i}: {' '.join(rng.choices(WORDS, k=6))} with friend {rng.randrange(500)}"
        out.append((i + 1, new_id(), agent, text, content_hash(text), NOW, when))
    return out


async def fill(db: Database, size: int) -> None:
    data = rows(size, random.Random(7))

    def txn(conn: object) -> None:
        conn.executemany(  # type: ignore[attr-defined]
            "INSERT INTO memories (seq, id, agent_id, layer, category, content, content_hash,"
            " created_at, updated_at, occurred_at) VALUES (?, ?, ?, 'core', 'fact', ?, ?, ?, ?, ?)",
            [(s, i, a, t, h, c, c, w) for s, i, a, t, h, c, w in data],
        )
        conn.executemany(  # type: ignore[attr-defined]
            "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)",
            [(row[0], index_text(str(row[3]))) for row in data],
        )

    await db.transact(txn)


async def timed(work: Callable[[], Awaitable[object]], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await work()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        async with Database(Path(folder) / "occurred.db") as db:
            await fill(db, args.size)
            store = MemoryStore(db, LayerTtl(timedelta(hours=48), timedelta(days=90)))
            plain = SearchFilters(agent_id="main", now=NOW)
            may = plain.model_copy(
                update={
                    "since": "2024-05-01T00:00:00.000000Z",
                    "until": "2024-06-01T00:00:00.000000Z",
                }
            )
            day = ("2024-05-06T00:00:00.000000Z", "2024-05-07T00:00:00.000000Z")
            month = (may.since or "", may.until or "")
            cases: list[tuple[str, Callable[[], Awaitable[object]]]] = [
                ("occurred_within, one day", lambda: store.occurred_within(plain, *day, 50)),
                ("occurred_within, one month", lambda: store.occurred_within(plain, *month, 50)),
                (
                    "text_search 'museum' (baseline)",
                    lambda: store.text_search('"museum"', plain, 50),
                ),
                (
                    "text_search 'museum', since/until a month",
                    lambda: store.text_search('"museum"', may, 50),
                ),
            ]
            print(f"{args.size} memories, {args.runs} runs each")
            print(f"{'read':<44} {'p50 ms':>8} {'p95 ms':>8}")
            for name, work in cases:
                p50, p95 = await timed(work, args.runs)
                print(f"{name:<44} {p50:>8.3f} {p95:>8.3f}")


if __name__ == "__main__":
    asyncio.run(main())
