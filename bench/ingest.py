"""Ingest throughput and cost with a stub LLM of fixed latency (acceptance 6 of issue 7).

Prints, from one run:
- ingests/s with the stub answering in 200 ms and 20 concurrent callers, for wait=True and
  wait=False, next to the floor the LLM bound sets (max in flight / latency) and the strongest
  simple baseline: storing each raw turn with remember() (no extraction at all);
- LLM calls and prompt tokens per turn (small talk makes none);
- recall p50 while ingests run next to recall p50 on an idle service (the added latency).

    python bench/ingest.py [--turns 200] [--callers 20] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service.requests import IngestRequest, build  # noqa: E402
from tests.helpers.llm_stub import Received, Reply, extraction, llm_stub  # noqa: E402

TOPICS = ["invoice job", "VPS firewall", "Shinagawa 1LDK yield", "Postgres ledger", "CI runner"]


def turn(i: int) -> tuple[str, str]:
    if i % 10 == 9:
        return "thanks!", "You're welcome."  # small talk: no LLM call expected
    topic = TOPICS[i % len(TOPICS)]
    return (
        f"Ticket {i}: the {topic} failed again at step {i % 7}; what should we change?",
        f"For ticket {i}, retry the {topic} with a 30 s timeout and log the step-{i % 7} input.",
    )


def answer(latency_s: float):
    def respond(request: Received) -> Reply:
        marker = request.user.split("<user>")[1].split("</user>")[0].strip()[:60]
        reply = extraction(
            [
                {
                    "content": f"Fix for: {marker}",
                    "category": "fact",
                    "importance": 0.6,
                    "source": "both",
                }
            ]
        )
        reply.delay_s = latency_s
        return reply

    return respond


async def run_ingests(service, turns: int, callers: int, wait: bool, offset: int) -> float:
    gate = asyncio.Semaphore(callers)

    async def one(i: int) -> None:
        async with gate:
            user, assistant = turn(offset + i)
            await service.conversation.ingest(
                build(
                    IngestRequest,
                    user_message=user,
                    assistant_message=assistant,
                    session_id=f"bench-{offset}",
                ),
                wait=wait,
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(turns)))
    if not wait:
        accepted = time.perf_counter() - started
        await service.engines.ingestor.drain()
        print(f"  wait=False: {turns / accepted:8.1f} turns accepted/s", end="")
    return time.perf_counter() - started


async def run_baseline(service, turns: int, callers: int) -> float:
    gate = asyncio.Semaphore(callers)

    async def one(i: int) -> None:
        async with gate:
            user, assistant = turn(100_000 + i)
            await service.memories.remember(
                RememberRequest(content=f"user: {user}\nassistant: {assistant}", layer="working")
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(turns)))
    return time.perf_counter() - started


async def recall_p50(service, rounds: int) -> float:
    took = []
    for i in range(rounds):
        started = time.perf_counter()
        await service.memories.recall(
            RecallRequest(query=f"{TOPICS[i % len(TOPICS)]} step {i % 7}")
        )
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


async def main(args: argparse.Namespace) -> None:
    latency = args.latency_ms / 1000
    with llm_stub() as stub, tempfile.TemporaryDirectory() as tmp:
        stub.responder = answer(latency)
        settings = load_settings(
            db_path=Path(tmp) / "bench.db",
            embedding_provider="none",
            llm_provider="openai",
            llm_base_url=stub.openai_url,
            llm_timeout_s=10,
        )
        async with open_cortex(settings, background=False) as service:
            await service.engines.llm.warm_up()
            in_flight = settings.llm_max_in_flight
            floor = in_flight / latency
            print(
                f"stub LLM {args.latency_ms} ms, {args.callers} callers, {args.turns} turns,"
                f" CORTEX_LLM_MAX_IN_FLIGHT={in_flight} (LLM-bound ceiling {floor:.1f} turns/s"
                f" with 90% needing a call: {floor / 0.9:.1f})"
            )
            base = await run_baseline(service, args.turns, args.callers)
            print(f"  baseline remember() of the raw turn: {args.turns / base:8.1f} turns/s")
            idle = await recall_p50(service, 50)

            calls_before = len(stub.received)
            took = await run_ingests(service, args.turns, args.callers, True, 0)
            calls = len(stub.received) - calls_before
            print(f"  ingest wait=True: {args.turns / took:8.1f} turns/s ({took:.2f} s)")
            took_bg = await run_ingests(service, args.turns, args.callers, False, args.turns)
            print(f", all extracted in {took_bg:.2f} s ({args.turns / took_bg:.1f} turns/s)")

            prompt_chars = [len(r.system) + len(r.user) for r in stub.received[calls_before:]]
            counts = (await service.status.stats())["llm"]["counts"]
            print(
                f"  LLM calls per turn: {calls / args.turns:.2f} (small talk: none);"
                f" prompt tokens per call: {counts.get('prompt_tokens', 0) / max(1, counts.get('calls', 1)):.0f}"
                f" (stub count), {statistics.median(prompt_chars):.0f} chars median;"
                f" peak in flight {service.engines.llm.peak_in_flight}"
            )

            busy_task = asyncio.create_task(
                run_ingests(service, args.turns, args.callers, True, 2 * args.turns)
            )
            await asyncio.sleep(0.2)
            busy = await recall_p50(service, 50)
            await busy_task
            print(
                f"  recall p50: idle {idle:.2f} ms, during ingest {busy:.2f} ms"
                f" (added {busy - idle:+.2f} ms, ratio {busy / idle:.2f})"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--callers", type=int, default=20)
    parser.add_argument("--latency-ms", type=int, default=200)
    asyncio.run(main(parser.parse_args()))
