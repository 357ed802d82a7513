"""The dashboard's memory table at 100K memories: how long the server takes to answer the first
view and each page turn (keyset cursor), against OFFSET paging (the existing
`GET /api/v1/memories?offset=`) at the same depth, measured in the same run.

    python bench/dashboard.py                   # 100K memories (one agent), 2K for another
    python bench/dashboard.py --size 10000      # quicker

"server" is the time inside the running server for the request (the facade call a route
makes, same process, same database file); "http" is a full request to `cortex-mcp serve` on
loopback (httpx, one connection), which adds parsing, JSON and the transport. Each figure is
the median (and p95) over the repeats; "page N" walks N pages by cursor first and times the
next turn.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.service.requests import ListRequest, build  # noqa: E402
from tests.helpers.http_helpers import ServeProcess  # noqa: E402

AGENT = "bench"
LAYERS = ["working", "core", "archive"]
CATEGORIES = ["fact", "preference", "decision", "todo", "context", "insight"]
WORDS = (
    "server deploy backup invoice garden travel budget meeting python kernel"
    " coffee tokyo lisbon contract release database holiday report cluster music"
).split()
PAGE = 50


class StepClock:
    """Moves forward a few minutes per memory, so created_at spans months."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> datetime:
        self.moment += timedelta(seconds=97)
        return self.moment


async def fill(db: Path, size: int, other: int) -> float:
    rng = random.Random(7)
    settings = load_settings(db_path=db, embedding_provider="none", llm_provider="none")
    clock = StepClock(datetime.now(UTC) - timedelta(seconds=97 * (size + other + 10)))
    started = time.perf_counter()
    async with open_cortex(settings, clock=clock) as service:
        for i in range(size + other):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12)))
            await service.memories.remember(
                RememberRequest(
                    content=f"note {i}: {words}",
                    category=rng.choice(CATEGORIES),
                    importance=round(rng.random(), 2),
                    layer=rng.choice(LAYERS),
                    agent_id=AGENT if i % (size + other) < size else "someone-else",
                )
            )
    return time.perf_counter() - started


def stats(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"{statistics.median(values):8.1f} {p95:8.1f}"


async def server_side(db: Path, repeats: int, depth: int) -> list[tuple[str, list[float]]]:
    settings = load_settings(db_path=db, embedding_provider="none", llm_provider="none")
    rows: list[tuple[str, list[float]]] = []
    async with open_cortex(settings) as service:

        async def timed(label: str, call: Any) -> None:
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                await call()
                times.append((time.perf_counter() - started) * 1000)
            rows.append((label, times))

        async def cursor_at(pages: int, **query: Any) -> str | None:
            cursor = None
            for _ in range(pages):
                page = await service.browse.browse_memories(
                    AGENT, limit=PAGE, cursor=cursor, **query
                )
                cursor = page["next_cursor"]
            return cursor

        async def first(**query: Any) -> None:
            await service.browse.browse_memories(AGENT, limit=PAGE, **query)

        await first()  # warm the page cache once, as a running server is
        await timed("first view (newest, with total)", lambda: first())
        for pages in (1, 20, depth):
            cursor = await cursor_at(pages)
            await timed(
                f"page turn after page {pages}",
                lambda c=cursor: service.browse.browse_memories(AGENT, limit=PAGE, cursor=c),
            )
            await timed(
                f"  baseline OFFSET {pages * PAGE}",
                lambda p=pages: _offset(service, p * PAGE),
            )
        for label, query in (
            ("first view, layer=working", {"layer": "working"}),
            ("first view, category=todo", {"category": "todo"}),
            ("first view, sort=importance", {"sort": "importance"}),
            ("first view, sort=access_count", {"sort": "access_count"}),
            ("first view, sort=occurred_at", {"sort": "occurred_at"}),
            ("first view, q=lisbon", {"q": "lisbon"}),
            ("first view, q=lisbon kernel", {"q": "lisbon kernel"}),
        ):
            await timed(label, lambda q=query: first(**q))
            cursor = await cursor_at(20, **query)
            await timed(
                f"  page turn after page 20, {label.split(', ')[1]}",
                lambda c=cursor, q=query: service.browse.browse_memories(
                    AGENT, limit=PAGE, cursor=c, **q
                ),
            )
        await timed("agents list", lambda: service.browse.agents())
        await timed("timeline (every memory, axis fitted)", lambda: service.browse.timeline(AGENT))
        await timed("timeline (last 90 days)", lambda: service.browse.timeline(AGENT, 90))
    return rows


async def _offset(service: CortexService, offset: int) -> None:
    await service.reading.list_memories(
        build(ListRequest, agent_id=AGENT, limit=PAGE, offset=offset)
    )


def over_http(db: Path, repeats: int) -> list[tuple[str, list[float]]]:
    rows = []
    with ServeProcess(db, token=None, CORTEX_LIFECYCLE__SCHEDULE="off") as server:
        client = httpx2.Client(base_url=server.url, headers={"X-Cortex-Agent": AGENT}, timeout=60)
        client.get("/api/v1/browse")
        times, turns = [], []
        cursor = None
        for _ in range(repeats):
            started = time.perf_counter()
            page = client.get("/api/v1/browse", params={"limit": PAGE}).json()
            times.append((time.perf_counter() - started) * 1000)
            cursor = page["next_cursor"]
        for _ in range(repeats):
            started = time.perf_counter()
            page = client.get("/api/v1/browse", params={"limit": PAGE, "cursor": cursor}).json()
            turns.append((time.perf_counter() - started) * 1000)
            cursor = page["next_cursor"]
        client.close()
    rows.append(("http: first view", times))
    rows.append(("http: successive page turns", turns))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--other", type=int, default=2_000, help="memories of another agent")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--depth", type=int, default=1000, help="deepest page turned to")
    parser.add_argument("--db", type=Path, help="reuse (or create) this database file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "brain.db"
        if not db.exists():
            took = asyncio.run(fill(db, args.size, args.other))
            print(f"filled {args.size} + {args.other} memories in {took:.0f} s")
        depth = min(args.depth, max(1, args.size // PAGE - 1))
        rows = asyncio.run(server_side(db, args.repeats, depth))
        rows += over_http(db, args.repeats)
    print(f"\nmemory table at {args.size} memories, {PAGE} per page, ms ({args.repeats} repeats)")
    print(f"{'what':52} {'median':>8} {'p95':>8}")
    for label, times in rows:
        print(f"{label:52} {stats(times)}")
    worst = max(statistics.median(t) for label, t in rows if "baseline" not in label)
    print(f"\nslowest median outside the baseline: {worst:.1f} ms (target: under 300 ms)")


if __name__ == "__main__":
    main()
