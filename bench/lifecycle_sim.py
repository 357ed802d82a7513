"""A simulated year of memory: turns every day, random recalls, the lifecycle every night.

    nice python bench/lifecycle_sim.py [--days 365] [--turns 50] [--scale 10000,100000]

Every day: `--turns` conversation turns through `ingest` when the service has it (else
`remember` into the working layer), a few explicit core facts (some near-duplicates), random
recalls, and identity/preference memories recalled once a month. Every night at 03:00 the
lifecycle runs (no LLM: the rule-based path). At the end it checks the invariants of issue 8
and prints counts per layer per month, the last night's run time, and the run time over
synthetic stores of 10K and 100K memories. The suite runs a smaller year
(tests/test_lifecycle_sim.py) with the same checks.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.engine.exchange.markdown import count_words  # noqa: E402
from cortex_mcp.models import Category, Layer, Memory, new_id, to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import IngestRequest, build  # noqa: E402

TOPICS = [
    "router", "tax return", "Shinagawa flat", "Oracle VPS", "Rust course", "bike repair",
    "sourdough", "Kyoto trip", "index funds", "garden", "piano", "insurance", "kimchi",
    "marathon", "Linux kernel", "camera lens", "school visit", "dentist", "solar panels",
    "Japanese verbs", "chess opening", "coffee grinder", "tennis", "climbing gym", "novel draft",
    "home server", "electric car", "podcast", "gift ideas", "flu shot",
]  # fmt: skip
IDENTITY = [
    ("identity", "The user's name is Harry Tanaka", "Harry Tanaka name"),
    ("identity", "Harry works as a structural engineer in Yokohama", "structural engineer Yokohama"),
    ("identity", "Harry is allergic to peanuts", "allergic peanuts"),
    ("preference", "Harry prefers answers in Chinese, short and direct", "answers Chinese short direct"),
    ("preference", "Harry likes low-risk investments with steady cash flow", "low-risk investments cash flow"),
    ("preference", "Harry drinks green tea, never coffee after noon", "green tea coffee noon"),
]  # fmt: skip


@dataclass
class SimResult:
    months: list[dict[str, Any]] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    run_ms: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    final_counts: dict[str, int] = field(default_factory=dict)
    memory_md_words: int = 0
    budget: int = 0
    summaries: int = 0


class SimClock:
    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment


async def _turn(service: Any, rng: random.Random, day: int, turn: int) -> list[str]:
    topic = rng.choice(TOPICS)
    detail = rng.randint(1, 10_000)
    if hasattr(service, "ingest"):
        result = await service.conversation.ingest(
            build(
                IngestRequest,
                user_message=f"Day {day}: can you help with the {topic}? Detail {detail}.",
                assistant_message=f"Sure: for the {topic}, option {detail % 7} is the usual answer.",
            ),
            wait=True,
        )
        return [m.id for m in [*result.extracted, *getattr(result, "high_signals", [])]]
    if turn % 10 == 0:
        made = await service.memories.remember(
            RememberRequest(
                content=f"Decided on day {day} to go with option {detail % 7} for the {topic}",
                category="decision",
                layer="working",
                importance=0.6,
            )
        )
    else:
        made = await service.memories.remember(
            RememberRequest(
                content=f"Day {day} turn {turn}: talked about the {topic}, detail {detail}",
                category="context",
                layer="working",
                importance=0.4,
            )
        )
    return [made.id]


async def simulate(
    db: Path,
    *,
    days: int = 365,
    turns: int = 50,
    recalls: int = 10,
    core_facts: int = 5,
    export_dir: Path | None = None,
    lifecycle: dict[str, Any] | None = None,
    archive_ttl_days: float = 90,
    words: int = 3000,
    seed: int = 7,
) -> SimResult:
    rng = random.Random(seed)
    clock = SimClock(datetime(2026, 1, 1, 8, 0, tzinfo=UTC))
    settings = load_settings(
        db_path=db,
        embedding_provider="none",
        llm_provider="none",
        export_dir=export_dir,
        lifecycle=lifecycle or {},
        layers={"archive_ttl_days": archive_ttl_days},
        mirrors={"memory_md_words": words, "debounce_s": 3600},
    )
    result = SimResult(budget=words)
    async with open_cortex(settings, clock=clock, background=False) as service:
        keep = []
        for category, text, query in IDENTITY:
            made = await service.memories.remember(
                RememberRequest(content=text, category=category, importance=0.9)
            )
            keep.append((made.id, query))
            result.written.append(made.id)
        for day in range(days):
            day_start = clock.moment
            for turn in range(turns):
                clock.moment = day_start + timedelta(minutes=12 * turn)
                result.written += await _turn(service, rng, day, turn)
            for n in range(core_facts):
                topic = rng.choice(TOPICS)
                text = (
                    f"The {topic} budget is {rng.randint(1, 50)}0 thousand yen"
                    if n == 0 and day % 3 == 0
                    else f"Fact {day}-{n}: the {topic} needs {rng.randint(1, 99)} more steps"
                )
                made = await service.memories.remember(
                    RememberRequest(content=text, category="fact", importance=0.5)
                )
                result.written.append(made.id)
            for _ in range(recalls):
                await service.memories.recall(RecallRequest(query=f"{rng.choice(TOPICS)} detail"))
            if day % 30 == 0:
                for _, query in keep:
                    await service.memories.recall(RecallRequest(query=query))
            await service.drain()
            clock.moment = (day_start + timedelta(days=1)).replace(hour=3, minute=0)
            report = await service.lifecycle.run()
            result.run_ms.append(report.took_ms)
            clock.moment = clock.moment.replace(hour=8)
            if (day + 1) % 30 == 0 or day == days - 1:
                counts = (await service.stores.memories.counts())["by_layer"]
                result.months.append({"day": day + 1, **counts, "run_ms": report.took_ms})
        await _check(service, clock, keep, result, export_dir)
    return result


async def _check(
    service: Any, clock: SimClock, keep: list[tuple[str, str]], result: SimResult, out: Path | None
) -> None:
    everything = {m.id: m for m in await service.stores.exports.memories(None)}
    cited = {i for m in everything.values() for i in m.metadata.get("covers", [])}
    lost = [i for i in result.written if i not in everything and i not in cited]
    if lost:
        result.problems.append(f"{len(lost)} memories lost, e.g. {lost[:3]}")
    for memory_id, query in keep:
        memory = everything.get(memory_id)
        if memory is None or memory.layer is not Layer.core or memory.superseded_by:
            result.problems.append(f"identity/preference not in core: {query!r}")
    core = [m for m in everything.values() if m.layer is Layer.core and m.superseded_by is None]
    limit = service.settings.lifecycle.core_max_entries
    if len(core) > limit:
        result.problems.append(f"core holds {len(core)} > max_entries {limit}")
    oldest = to_iso(clock.now() - timedelta(hours=72))
    stale = [
        m for m in everything.values()
        if m.layer is Layer.working and m.forgotten_at is None and m.created_at < oldest
    ]  # fmt: skip
    if stale:
        result.problems.append(f"{len(stale)} working memories older than ~48 h + one night")
    result.summaries = sum(1 for m in core if m.category is Category.summary)
    result.final_counts = (await service.stores.memories.counts())["by_layer"]
    if out is not None and service.engines.mirrors is not None:
        await service.engines.mirrors.flush()
        text = (out / "MEMORY.md").read_text()
        body = text.split("\n---\n", 1)[1]
        result.memory_md_words = count_words("\n".join(
            line for line in body.splitlines() if not line.startswith("## ")
        ))  # fmt: skip
        if result.memory_md_words > result.budget:
            result.problems.append(f"MEMORY.md has {result.memory_md_words} words > budget")


# ---- run time at scale -------------------------------------------------------------------


def _synthetic(n: int, now: datetime, rng: random.Random) -> list[Memory]:
    layers = [Layer.working] * 2 + [Layer.core] * 3 + [Layer.archive] * 5
    rows = []
    for i in range(n):
        layer = rng.choice(layers)
        age = timedelta(days=rng.uniform(0, 2 if layer is Layer.working else 200))
        created = to_iso(now - age)
        rows.append(
            Memory(
                id=new_id(),
                agent_id="default",
                layer=layer,
                category=rng.choice([Category.fact, Category.context, Category.preference]),
                content=f"Synthetic memory {i} about the {rng.choice(TOPICS)} number {rng.randint(0, 10**6)}",
                importance=round(rng.uniform(0.2, 0.9), 2),
                confidence=0.8,
                decay_score=1.0,
                access_count=rng.randint(0, 5),
                created_at=created,
                updated_at=created,
                expires_at=to_iso(now - age + timedelta(hours=48))
                if layer is Layer.working
                else None,
            )
        )
    return rows


async def time_at_scale(n: int, folder: Path) -> dict[str, float]:
    now = datetime(2026, 6, 1, 3, 0, tzinfo=UTC)
    settings = load_settings(db_path=folder / f"scale{n}.db", embedding_provider="none")
    rng = random.Random(n)
    async with open_cortex(settings, clock=SimClock(now), background=False) as service:
        rows = _synthetic(n, now, rng)
        for start in range(0, n, 5000):
            batch = [m.model_dump(mode="json") for m in rows[start : start + 5000]]
            await service.stores.exports.import_batch("default", batch, [], [])
        started = time.perf_counter()
        await service.lifecycle.preview()
        preview_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        report = await service.lifecycle.run()
        run_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        again = await service.lifecycle.run()
        quiet_ms = (time.perf_counter() - started) * 1000
        export = folder / f"scale{n}.json"
        started = time.perf_counter()
        await service.exchange.export_json(str(export))
        export_ms = (time.perf_counter() - started) * 1000
        copy = folder / f"scale{n}.copy.db"
        started = time.perf_counter()
        await service.exchange.export_sqlite(str(copy))
        backup_ms = (time.perf_counter() - started) * 1000
    target = load_settings(db_path=folder / f"scale{n}.import.db", embedding_provider="none")
    async with open_cortex(target, clock=SimClock(now), background=False) as other:
        started = time.perf_counter()
        imported = await other.exchange.import_path(str(export))
        import_ms = (time.perf_counter() - started) * 1000
    return {
        "memories": n,
        "actions": len(report.actions),
        "preview_ms": preview_ms,
        "run_ms": run_ms,
        "next_night_ms": quiet_ms,
        "next_night_actions": len(again.actions),
        "export_json_ms": export_ms,
        "import_json_ms": import_ms,
        "imported": imported.memories,
        "sqlite_backup_ms": backup_ms,
        "json_mb": export.stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--scale", default="10000,100000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        sim = asyncio.run(
            simulate(folder / "year.db", days=args.days, turns=args.turns, export_dir=folder / "ws")
        )
        print(
            f"simulated {args.days} days x {args.turns} turns in {time.perf_counter() - started:.0f} s"
        )
        print(f"{'day':>5} {'working':>8} {'core':>6} {'archive':>8} {'run ms':>8}")
        for month in sim.months:
            print(
                f"{month['day']:>5} {month['working']:>8} {month['core']:>6} {month['archive']:>8} {month['run_ms']:>8.0f}"
            )
        print(f"memories written: {len(sim.written)}; history summaries in core: {sim.summaries}")
        print(f"MEMORY.md: {sim.memory_md_words} words (budget {sim.budget})")
        nightly = sim.run_ms
        print(
            f"lifecycle run: last night {nightly[-1]:.0f} ms; median of the last 30 nights"
            f" {statistics.median(nightly[-30:]):.0f} ms; max {max(nightly):.0f} ms"
        )
        print("invariants: " + ("all hold" if not sim.problems else "; ".join(sim.problems)))
        for n in [int(x) for x in args.scale.split(",") if x]:
            figures = asyncio.run(time_at_scale(n, folder))
            print(
                f"{n:>7} memories: preview {figures['preview_ms']:.0f} ms, run {figures['run_ms']:.0f} ms"
                f" ({figures['actions']} actions), next night {figures['next_night_ms']:.0f} ms;"
                f" export json {figures['export_json_ms']:.0f} ms ({figures['json_mb']:.1f} MB),"
                f" import json {figures['import_json_ms']:.0f} ms ({figures['imported']} memories),"
                f" sqlite backup {figures['sqlite_backup_ms']:.0f} ms"
            )
        if sim.problems:
            sys.exit(1)


if __name__ == "__main__":
    main()
