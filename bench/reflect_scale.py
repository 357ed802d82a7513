"""Reflect at scale (issue 34, acceptance 4): one agent's 10,000 memories about 500 people, text
only (no embeddings, no LLM), on a SQLite file.

    nice python bench/reflect_scale.py                 # 10,000 memories, 500 entities
    nice python bench/reflect_scale.py --memories 20000 --entities 1000

The memories are generated (fixed seed): each about one person (linked as its subject), a mix of
single-valued slot facts that change over time (where they live, where they work), preferences
that later memories support or contradict, and plain facts. Prints the time of each part of a
first reflect (reading slots, reading beliefs, planning and applying), the preview's time and
whether its plan equals the run's, what the run did, and a second run's time and changes (none
expected). The baseline in the same run: one lifecycle preview of the same store. Then the
same memories in a new store reflected by the lifecycle: its preview (which lists its reflect
phase), a run (four phases, then reflect), whether the two reflect plans are equal, and a
second run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.models import (  # noqa: E402
    EntityKind,
    EntityRef,
    LinkPlan,
    LinkRole,
    PlannedLink,
    to_iso,
)
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import LifecycleRequest, ReflectRequest, build  # noqa: E402

NOW = datetime(2026, 6, 1, 3, 0, tzinfo=UTC)
AGENT = "bench"
FIRST = [
    "Anna",
    "Marco",
    "Priya",
    "Tom",
    "Lena",
    "Kenji",
    "Sara",
    "Omar",
    "Mia",
    "Luca",
    "Nora",
    "Ivan",
    "Yuki",
    "Elena",
    "Jonas",
    "Aisha",
    "Pablo",
    "Chloe",
    "Ravi",
    "Emma",
]
LAST = [
    "Rossi",
    "Khan",
    "Berg",
    "Sato",
    "Novak",
    "Silva",
    "Meyer",
    "Costa",
    "Ahmed",
    "Lind",
    "Moreau",
    "Tanaka",
    "Weber",
    "Lopez",
    "Ivanova",
    "Nagy",
    "Olsen",
    "Park",
    "Reyes",
    "Fischer",
    "Dubois",
    "Hall",
    "Kim",
    "Rao",
    "Ward",
]
CITIES = [
    "Turin",
    "Milan",
    "Rome",
    "Lisbon",
    "Porto",
    "Berlin",
    "Munich",
    "Osaka",
    "Kyoto",
    "Madrid",
    "Lyon",
    "Oslo",
    "Vienna",
    "Prague",
    "Dublin",
]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"]
LIKES = [
    "green tea",
    "black coffee",
    "dark mode",
    "window seats",
    "jazz",
    "hiking",
    "spicy food",
    "early meetings",
    "paper books",
    "cycling to work",
]
PLAIN = ["{n} mentioned the quarterly report was late", "{n} shared photos from the trip",
         "{n} asked about the offsite agenda", "{n} fixed the flaky build on Tuesday",
         "{n} recommended a podcast about history", "{n} is reading a novel about sailors"]  # fmt: skip


def generate(n: int, people: int, seed: int = 11) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """`n` memory rows about `people` people, and each row's person."""
    rng = random.Random(seed)
    names = [f"{first} {last}" for last in LAST for first in FIRST][:people]
    rows, about = [], {}
    for i in range(n):
        name = names[i % people] if i < people else rng.choice(names)
        when = NOW - timedelta(days=365) + timedelta(minutes=i * (365 * 24 * 60 // n))
        kind = rng.random()
        category = "fact"
        if kind < 0.25:
            content = f"{name} lives in {rng.choice(CITIES)}"
        elif kind < 0.4:
            content = f"{name} works at {rng.choice(COMPANIES)}"
        elif kind < 0.6:
            like = rng.choice(LIKES)
            if rng.random() < 0.2:
                content = f"{name} no longer likes {like}"
            else:
                content = f"{name} prefers {like}"
            category = "preference"
        else:
            content = rng.choice(PLAIN).format(n=name) + f" ({i})"
        row = _row(content, category, when, rng)
        rows.append(row)
        about[row["id"]] = name
    return rows, about


def _row(content: str, category: str, when: datetime, rng: random.Random) -> dict[str, Any]:
    at = to_iso(when)
    return {
        "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "agent_id": AGENT,
        "layer": "core",
        "category": category,
        "content": content,
        "source": "bench",
        "importance": round(rng.uniform(0.2, 0.95), 2),
        "confidence": 0.8,
        "decay_score": 1.0,
        "access_count": 0,
        "last_accessed": None,
        "created_at": at,
        "updated_at": at,
        "occurred_at": at,
        "expires_at": None,
        "superseded_by": None,
        "forgotten_at": None,
        "metadata": {},
        "shared": False,
    }


class FixedClock:
    def now(self) -> datetime:
        return NOW


async def main(memories: int, entities: int) -> None:
    rows, about = generate(memories, entities)
    with tempfile.TemporaryDirectory() as folder:
        async with _filled(Path(folder) / "brain.db", rows, about) as service:
            await _reflect_alone(service)
            started = time.perf_counter()
            await service.lifecycle.preview(build(LifecycleRequest, agent_id=AGENT))
            print(
                f"baseline: lifecycle preview {time.perf_counter() - started:.2f} s"
                " (after reflect: its reflect phase has nothing new)"
            )
        async with _filled(Path(folder) / "lifecycle.db", rows, about) as service:
            await _reflect_in_the_lifecycle(service)


@contextlib.asynccontextmanager
async def _filled(db: Path, rows: list[dict[str, Any]], about: dict[str, str]) -> Any:
    settings = load_settings(
        db_path=db, embedding_provider="none", llm_provider="none", link_entities=False
    )
    async with open_cortex(settings, clock=FixedClock(), background=False) as service:
        for start in range(0, len(rows), 5000):
            await service.stores.exports.import_batch(AGENT, rows[start : start + 5000], [], [])
        plans = [
            LinkPlan(
                row["id"],
                (PlannedLink(EntityRef(about[row["id"]], EntityKind.person), LinkRole.subject),),
            )
            for row in rows
        ]
        for start in range(0, len(plans), 1000):
            await service.stores.entities.link(AGENT, plans[start : start + 1000], to_iso(NOW))
        count = await service.stores.entities.count(AGENT)
        print(f"store {db.name}: {len(rows)} memories, {count} entities, agent {AGENT!r}")
        yield service


async def _reflect_alone(service: Any) -> None:
    """`cortex-mcp reflect --preview`, then `cortex-mcp reflect`, then again."""
    lifecycle = service.lifecycle
    started = time.perf_counter()
    preview = await lifecycle.reflect(build(ReflectRequest, agent_id=AGENT, preview=True))
    print(
        f"reflect preview: {time.perf_counter() - started:.2f} s (reads slots and beliefs:"
        f" {preview.validity_changes} slot changes, {preview.belief_changes} beliefs)"
    )
    started = time.perf_counter()
    run = await lifecycle.reflect(build(ReflectRequest, agent_id=AGENT))
    took = time.perf_counter() - started
    print(
        f"reflect run: {took:.2f} s: {run.memories} memories, {len(run.entities)} entity"
        f" summaries, {len(run.proposals)} proposals"
        f" ({sum(p.action == 'promote' for p in run.proposals)} promote,"
        f" {sum(p.action == 'archive' for p in run.proposals)} archive)"
    )
    same = _plan(preview) == _plan(run)
    print(f"preview plan == run plan: {same}")
    total = took + float(preview.took_ms) / 1000
    print(f"first reflect, preview + run: {total:.2f} s (acceptance: under 30 s)")
    started = time.perf_counter()
    second = await lifecycle.reflect(build(ReflectRequest, agent_id=AGENT))
    print(
        f"second run: {time.perf_counter() - started:.2f} s, status {second.status!r},"
        f" {len(second.entities)} summaries, {len(second.proposals)} proposals"
    )
    beliefs = await service.stores.beliefs.beliefs(AGENT)
    revised = sum(1 for b in beliefs if b.revisions)
    print(f"beliefs: {len(beliefs)} ({revised} revised by repeated contradiction)")
    if run.entities:
        print(f"a summary: {run.entities[0].summary[:200]}")


async def _reflect_in_the_lifecycle(service: Any) -> None:
    """The same store new: `cortex-mcp lifecycle preview`, then a lifecycle run (its four
    phases, then reflect), then a second run."""
    scope = build(LifecycleRequest, agent_id=AGENT)
    started = time.perf_counter()
    preview = await service.lifecycle.preview(scope)
    print(f"lifecycle preview (with its reflect phase): {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    run = await service.lifecycle.run(scope)
    print(
        f"lifecycle run (with its reflect phase): {time.perf_counter() - started:.2f} s:"
        f" {run.counts}"
    )
    same = [_plan(r) for r in preview.reflect] == [_plan(r) for r in run.reflect]
    print(f"lifecycle preview's reflect plan == its run's: {same}")
    started = time.perf_counter()
    second = await service.lifecycle.run(scope)
    print(
        f"second lifecycle run: {time.perf_counter() - started:.2f} s, reflect"
        f" {[r.status for r in second.reflect] or 'nothing new'}"
    )


def _plan(report: Any) -> tuple[Any, ...]:
    return (
        [(e.id, e.summary) for e in report.entities],
        [(p.memory_id, p.action, p.reason) for p in report.proposals],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--entities", type=int, default=500)
    options = parser.parse_args()
    asyncio.run(main(options.memories, options.entities))
