"""What linking memories to entities costs where people wait: remember and ingest p50 with
linking on and off, interleaved call by call on one server.

    python bench/entity_linking_cost.py                       # 2000 memories, 400 calls each
    python bench/entity_linking_cost.py --fill 5000 --calls 1000 --postgres

The store starts with `--fill` memories (linked: names, kinship aliases, speakers, in
English, Chinese and Japanese). Each round then writes two new texts, one with the server's
linker on and one with it off, in alternating order, timing the service call (`MemoryService.remember`;
`ConversationService.ingest` rules-only, waited for, so the turn's memories are written when
it returns). Linking runs after the call answers, so two figures are printed: the call's
answer as its caller waits for it (each call's linking finished before the next starts), and
the linking's own work per memory. Printed: the medians and p90 of each, the ratio on/off
(and the median of each pair's ratio), and the cost of each part of linking alone (finding
the mentions, planning, the store's lookup).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import Settings, load_settings  # noqa: E402
from cortex_mcp.engine.entities.linker import written  # noqa: E402
from cortex_mcp.engine.entities.mentions import find_mentions  # noqa: E402
from cortex_mcp.engine.entities.resolve import Known, lookup_keys, plan_links  # noqa: E402
from cortex_mcp.models import NewMemory  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.service.requests import IngestRequest, RememberRequest, build  # noqa: E402

NAMES = "Anna Tom Maya Caroline Melanie Jon Gina Priya Kenji Sofia Omar Lena".split()
KIN = ["my sister", "my brother", "my friend", "my boss", "my cousin", "my neighbour"]
PLACES = ["Lyon", "Berlin", "Osaka", "Toronto", "Lisbon", "Seattle"]
ACTS = [
    "went hiking near {place} last weekend",
    "started a pottery class on Tuesdays",
    "is thinking about moving to {place}",
    "adopted a kitten named {pet}",
    "finished the marathon in under four hours",
    "recommended a book about sailing",
]
PETS = ["Luna", "Rex", "Milo", "Bella"]
CJK = [
    "我的表弟张伟在{zh}工作",
    "我表弟下周来{zh}",
    "同事小王推荐了一家餐厅",
    "上司の田中さんは明日休みです",
    "友達の翔太くんが大阪に引っ越した",
    "妹は東京で働いている",
]
ZH_PLACES = ["北京", "上海", "深圳"]
NOW = "2026-01-01T00:00:00.000000Z"
# a process idle for the whole pause answers its next call slower than one woken in it (the CPU
# sleeps deeper): the "off" server gets the same wake-up the linker's delay gives the "on" one
LINK_DELAY_S = 0.005


def texts(rng: random.Random, count: int) -> list[str]:
    """Dialogue-like lines: a speaker's label, names, kinship phrases, places, CJK."""
    out = []
    for i in range(count):
        if i % 5 == 4:
            out.append(rng.choice(CJK).format(zh=rng.choice(ZH_PLACES)) + f"（{i}）")
            continue
        speaker, other = rng.sample(NAMES, 2)
        act = rng.choice(ACTS).format(place=rng.choice(PLACES), pet=rng.choice(PETS))
        subject = rng.choice([other, f"{rng.choice(KIN)} {other}", rng.choice(KIN)])
        out.append(f"{speaker}: {subject[0].upper()}{subject[1:]} {act} (note {i})")
    return out


def settings_for(folder: Path, linking: bool, pg_url: str | None) -> Settings:
    extra: dict[str, Any] = {"database_url": pg_url} if pg_url else {}
    return load_settings(
        db_path=folder / "brain.db",
        embedding_provider="none",
        llm_provider="none",
        link_entities=linking,
        **extra,
    )


async def fill(svc: CortexService, lines: list[str]) -> None:
    for line in lines:
        await svc.memories.remember(build(RememberRequest, content=line, category="fact"))


async def interleaved(svc: CortexService, lines: list[str], write: str) -> dict[str, list[float]]:
    """Each call as its caller waits for it, linking on and off in turn on one server (the
    same connections and caches); each call's linking is finished before the next starts, so
    it is never timed in another call."""
    times: dict[str, list[float]] = {"on": [], "off": []}
    linker = svc.engines.linker
    for i, text in enumerate(lines):
        order = ("on", "off") if i % 2 == 0 else ("off", "on")
        for name in order:
            linker.enabled = name == "on"  # a bench's switch: the server reads the setting once
            content = f"{text} [{name}]"  # the same text twice would be a duplicate
            if write == "remember":
                call: Awaitable[Any] = svc.memories.remember(
                    build(RememberRequest, content=content, category="fact")
                )
            else:
                turn = build(IngestRequest, user_message=content, assistant_message="I see.")
                call = svc.conversation.ingest(turn)
            started = time.perf_counter()
            await call
            times[name].append((time.perf_counter() - started) * 1000)
            if name == "off":  # the wake-up the linker's delay gives an "on" call
                asyncio.get_running_loop().create_task(asyncio.sleep(LINK_DELAY_S))
            await asyncio.sleep(0.01)  # the same pause after every call, linked or not
            await linker.drain()
    linker.enabled = True
    return times


async def link_work(on: CortexService, lines: list[str]) -> list[float]:
    """The linking a memory sets going, alone: its mentions, the lookup, the transaction."""
    spent = []
    for text in lines:
        memory = (
            await on.stores.memories.remember(NewMemory(agent_id="bench", content=text), NOW)
        ).memory
        started = time.perf_counter()
        await on.engines.linker.link("bench", [written(memory)], NOW)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def parts(on: CortexService, lines: list[str]) -> dict[str, float]:
    """Median µs of finding mentions and of planning (pure), per text."""
    found_us, plan_us = [], []
    for i, text in enumerate(lines):
        started = time.perf_counter()
        found = find_mentions(text)
        found_us.append((time.perf_counter() - started) * 1e6)
        started = time.perf_counter()
        lookup_keys(found)
        plan_links(f"m{i}", found, Known([]))
        plan_us.append((time.perf_counter() - started) * 1e6)
    return {"find_mentions": statistics.median(found_us), "plan": statistics.median(plan_us)}


async def store_parts(svc: CortexService, lines: list[str]) -> dict[str, float]:
    """Median ms of the store's lookup (one read) for a text's keys."""
    lookups = []
    for text in lines:
        keys = lookup_keys(find_mentions(text))
        started = time.perf_counter()
        await svc.stores.entities.find_entities("default", keys)
        lookups.append((time.perf_counter() - started) * 1000)
    return {"lookup": statistics.median(lookups)}


def row(name: str, times: dict[str, list[float]]) -> str:
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    paired = statistics.median(a / b for a, b in zip(times["on"], times["off"], strict=True))
    p90 = {k: statistics.quantiles(v, n=10)[-1] for k, v in times.items()}
    return (
        f"{name:<9} p50 on {on:7.3f} ms  off {off:7.3f} ms  ratio {on / off:5.3f}"
        f" (median of paired ratios {paired:5.3f})   p90 on {p90['on']:7.3f}  off {p90['off']:7.3f}"
    )


async def run(args: argparse.Namespace, url: str | None) -> None:
    rng = random.Random(33)
    logging.basicConfig(level=logging.ERROR)  # a rules-only ingest warns once per turn
    with tempfile.TemporaryDirectory() as tmp:
        async with open_cortex(settings_for(Path(tmp), True, url)) as on:
            await fill(on, texts(rng, args.fill))
            await on.background.drain()
            entities = await on.stores.entities.count("default")
            store = "PostgreSQL" if url else "SQLite"
            print(f"{store}, {args.fill} memories, {entities} entities; {args.calls} calls each")
            remember = await interleaved(on, texts(rng, args.calls), "remember")
            ingest = await interleaved(on, texts(rng, args.calls), "ingest")
            print(row("remember", remember))
            print(row("ingest", ingest))
            work = statistics.median(await link_work(on, texts(rng, 300)))
            print(f"linking   {work:.3f} ms per memory, after the call has answered")
            sample = texts(rng, 500)
            pure = parts(on, sample)
            stored = await store_parts(on, sample)
            print(
                f"parts      find_mentions {pure['find_mentions']:.1f} µs"
                f"  plan {pure['plan']:.1f} µs  store lookup {stored['lookup']:.3f} ms"
                f"  (the write is the rest: one transaction per call)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fill", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--postgres", action="store_true", help="on a pgserver PostgreSQL")
    args = parser.parse_args()
    if not args.postgres:
        asyncio.run(run(args, None))
        return
    from tests.helpers.postgres_server import PostgresServer

    server = PostgresServer()  # started outside the event loop: it runs its own
    try:
        with server.fresh_database() as url:
            asyncio.run(run(args, url))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
