"""HTTP load: 20 concurrent clients x 100 mixed recall/remember calls against
`cortex-mcp serve --transport http` on loopback, while a stdio server writes to the same file.

    python bench/load.py                        # 20 clients x 100 calls, 1000 memories
    python bench/load.py --clients 20 --calls 100 --seed-memories 1000 --stdio-writes 200

Printed: errors; lost and duplicated writes (the file read back after the run: every
acknowledged write, HTTP and stdio, must be there once, under the id it was acknowledged
with, with its content); lost access counts (after a clean stop, the access log must hold one
row per memory every recall returned); p50/p95 per operation over HTTP (REST, bearer token, a
fresh JSON body per call), remember over HTTP against recall over HTTP, and beside them the
in-process `service.memories.recall` of the same queries on the same file (the floor: no HTTP, no
JSON), with the ratio. Text search only (no embedding provider), so the figures are the
server's own cost. Exit status 1 on any error, lost or duplicated write, or lost count.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from cortex_mcp.service.requests import RecallRequest, RememberRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from tests.helpers.http_helpers import AUTH, ServeProcess  # noqa: E402
from tests.helpers.stdio_helpers import server_command, server_env  # noqa: E402

TOPICS = "budget firewall vps apartment meeting invoice kubernetes travel cat dentist".split()
SUBJECTS = "Harry Alice Bob Mei Kenji Sofia the-team the-landlord our-client".split()
VERBS = "prefers bought deployed fixed reviewed scheduled moved cancelled planned".split()


def fact(rng: random.Random, tag: str) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} the {rng.choice(TOPICS)}"
        f" item {tag} on day {rng.randint(1, 28)}"
    )


def query(rng: random.Random) -> str:
    return f"what about the {rng.choice(TOPICS)} {rng.choice(SUBJECTS)}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def seed(db: Path, count: int, rng: random.Random) -> None:
    settings = load_settings(db_path=db, embedding_provider="none")
    async with open_cortex(settings, background=False) as service:
        for i in range(count):
            await service.memories.remember(
                RememberRequest(content=fact(rng, f"seed-{i}"), agent_id="load")
            )


async def http_client(
    url: str, n: int, calls: int, results: dict[str, Any], rng: random.Random
) -> None:
    async with httpx2.AsyncClient(base_url=url + "/api/v1", headers=AUTH, timeout=30) as http:
        for i in range(calls):
            is_write = rng.random() < 0.3
            body: dict[str, Any]
            if is_write:
                path, body = "/memories", {"content": fact(rng, f"c{n}-{i}"), "agent_id": "load"}
            else:
                path, body = "/recall", {"query": query(rng), "agent_id": "load"}
            started = time.perf_counter()
            try:
                reply = await http.post(path, json=body)
            except httpx2.HTTPError as exc:
                results["errors"].append(f"{path}: {exc!r}")
                continue
            took = (time.perf_counter() - started) * 1000
            if reply.status_code not in (200, 201):
                results["errors"].append(f"{path}: {reply.status_code} {reply.text[:200]}")
                continue
            if is_write:
                results["remember_ms"].append(took)
                results["acknowledged"].append((reply.json()["id"], body["content"]))
            else:
                results["recall_ms"].append(took)
                results["queries"].append(body["query"])
                results["hits"] += len(reply.json()["memories"])


async def sequential_recall(url: str, queries: list[str], results: dict[str, Any]) -> list[float]:
    """One client, one call at a time: the HTTP path's own cost, without queueing."""
    timings = []
    async with httpx2.AsyncClient(base_url=url + "/api/v1", headers=AUTH, timeout=30) as http:
        for text in queries:
            started = time.perf_counter()
            reply = await http.post("/recall", json={"query": text, "agent_id": "load"})
            timings.append((time.perf_counter() - started) * 1000)
            reply.raise_for_status()
            results["hits"] += len(reply.json()["memories"])
    return timings


async def stdio_writer(db: Path, writes: int, results: dict[str, Any]) -> None:
    command = server_command()
    params = StdioServerParameters(command=command[0], args=command[1:], env=server_env(db))
    async with Client(params) as client:
        for i in range(writes):
            content = f"stdio writer fact number {i}"
            started = time.perf_counter()
            reply = await client.call_tool(
                "cortex_remember", {"content": content, "agent_id": "load"}
            )
            if reply.is_error:
                results["errors"].append(f"stdio: {reply.content}")
            else:
                results["stdio_ms"].append((time.perf_counter() - started) * 1000)
                results["acknowledged"].append((reply.structured_content["id"], content))
                results["stdio_writes"] += 1


def read_back(db: Path, acknowledged: list[tuple[str, str]]) -> tuple[list[str], list[str], int]:
    """Acknowledged writes missing (or stored under another id or content), those stored more
    than once, and the access log's row count."""
    with sqlite3.connect(db) as conn:
        stored = dict(conn.execute("SELECT id, content FROM memories").fetchall())
        copies = Counter(content for (content,) in conn.execute("SELECT content FROM memories"))
        access_rows = conn.execute("SELECT COUNT(*) FROM access_log").fetchone()[0]
    lost = [i for i, content in acknowledged if stored.get(i) != content]
    twice = Counter(i for i, _ in acknowledged)
    duplicated = [i for i, content in acknowledged if copies[content] > 1 or twice[i] > 1]
    return lost, duplicated, access_rows


async def in_process_recall(db: Path, queries: list[str]) -> list[float]:
    settings = load_settings(db_path=db, embedding_provider="none")
    timings = []
    async with open_cortex(settings, background=False) as service:
        for text in queries[:50]:  # warm-up, as the server is warm
            await service.memories.recall(RecallRequest(query=text, agent_id="load"))
        for text in queries:
            started = time.perf_counter()
            await service.memories.recall(RecallRequest(query=text, agent_id="load"))
            timings.append((time.perf_counter() - started) * 1000)
    return timings


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "brain.db"
        await seed(db, args.seed_memories, rng)
        results: dict[str, Any] = {
            "errors": [],
            "acknowledged": [],
            "recall_ms": [],
            "remember_ms": [],
            "queries": [],
            "stdio_ms": [],
            "stdio_writes": 0,
            "hits": 0,
        }
        with ServeProcess(db) as server:
            started = time.perf_counter()
            await asyncio.gather(
                stdio_writer(db, args.stdio_writes, results),
                *(
                    http_client(server.url, n, args.calls, results, random.Random(n))
                    for n in range(args.clients)
                ),
            )
            wall = time.perf_counter() - started
            alone = await sequential_recall(
                server.url, results["queries"][: args.sequential], results
            )
        # the server has stopped cleanly (SIGTERM): every count it was given is written
        lost, duplicated, access_rows = read_back(db, results["acknowledged"])
        floor = await in_process_recall(db, results["queries"])
    http_calls = len(results["recall_ms"]) + len(results["remember_ms"])
    print(f"HTTP load: {args.clients} clients x {args.calls} calls (30% remember, 70% recall)")
    print(f"  on {args.seed_memories} seeded memories, with a stdio server writing")
    print(f"  {args.stdio_writes} memories to the same file at the same time")
    print(f"  wall {wall:.1f} s, {http_calls / wall:.0f} HTTP calls/s")
    print(f"  errors: {len(results['errors'])}")
    print(
        f"  lost writes: {len(lost)}, duplicated: {len(duplicated)},"
        f" of {len(results['acknowledged'])} acknowledged ({results['stdio_writes']} over stdio)"
    )
    lost_counts = results["hits"] - access_rows
    print(f"  access counts lost: {lost_counts} of {results['hits']} recalled memories")
    for line in results["errors"][:5]:
        print(f"    {line}")
    print()
    print(f"  {'operation':<26}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}")
    rows = [
        ("HTTP recall", results["recall_ms"]),
        ("HTTP remember", results["remember_ms"]),
        ("stdio remember (2nd proc)", results["stdio_ms"]),
        ("HTTP recall, 1 client", alone),
        ("in-process recall (floor)", floor),
    ]
    for name, values in rows:
        print(f"  {name:<26}{len(values):>6}{pct(values, 0.5):>10.2f}{pct(values, 0.95):>10.2f}")
    print()
    remember, recall = results["remember_ms"], results["recall_ms"]
    print(
        f"  HTTP remember / HTTP recall under load: p50 x{pct(remember, 0.5) / pct(recall, 0.5):.2f},"
        f" p95 x{pct(remember, 0.95) / pct(recall, 0.95):.2f}"
    )
    for name, values in (("under load", results["recall_ms"]), ("1 client", alone)):
        p50 = statistics.median(values) / statistics.median(floor)
        p95 = pct(values, 0.95) / pct(floor, 0.95)
        print(f"  HTTP recall {name} / in-process recall: p50 x{p50:.1f}, p95 x{p95:.1f}")
    print(f"  (under load: {args.clients} clients at once on one server process, 2 shared cores,")
    print("   with the stdio writer; recalls' access counts are written in batches)")
    return 1 if results["errors"] or lost or duplicated or lost_counts else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--seed-memories", type=int, default=1000)
    parser.add_argument("--stdio-writes", type=int, default=200)
    parser.add_argument("--sequential", type=int, default=300, help="1-client recalls after")
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
