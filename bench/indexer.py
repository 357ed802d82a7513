"""The background indexer after a bulk import (issue 16): memories embedded per second against
the embedding provider's own most, and the time until the vector channel covers 95%.

The provider is `tests/helpers/embedding_stub.py` in its own process, made to behave like a hosted one:
each request takes `--latency-ms` plus `--per-item-ms` per input, served in parallel. Its most
is measured in the same run by a direct client (the real `openai` SDK) that keeps the same
number of requests of the same size in flight as the indexer is configured to. Then a server
(in a child process, `open_cortex` with the indexer running) imports a MEMORY.md of `--n`
bullets, and the child samples how many memories have a vector until all do: `import` with
the indexer running during the import, `backlog` with the import done first and the indexer
started after it (as after an outage or a model change), which times the indexer alone.

    python bench/indexer.py                       # 10K memories
    python bench/indexer.py --n 100000            # once, for the figures
    git archive <commit> cortex_mcp prompts | tar -x -C /tmp/old     # an older version...
    python bench/indexer.py --baseline /tmp/old   # ...same stub, same run

Prints, per mode and code version: the indexer's memories/s from its first vector to 95%
coverage and its ratio to the stub's most (measured right before and after that run), and
when 50%, 95% and 100% of the memories had a vector.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOPICS = [
    "green tea", "the Oracle Cloud VPS", "the router in IPv6 mode", "a trip to Kyoto",
    "the quarterly report", "Rust lifetimes", "the gateway crash", "a 1LDK in Shinagawa",
    "the dentist on Friday", "the new keyboard", "Harry's birthday", "the backup script",
]  # fmt: skip


def sentence(n: int, rng: random.Random) -> str:
    topic = rng.choice(TOPICS)
    return f"Note {n}: the user said something about {topic} (detail {rng.randrange(10**9)})"


def write_memory_md(path: Path, count: int) -> None:
    rng = random.Random(16)
    with path.open("w", encoding="utf-8") as out:
        out.write("# Memory\n\n## Facts\n\n")
        for n in range(count):
            out.write(f"- {sentence(n, rng)}\n")


# ---- the child: one code version, in-process server with its indexer ----------------------


async def measure_child(url: str, source: Path, db: Path, mode: str) -> dict[str, Any]:
    """`import`: import with the indexer running, sample until every memory has a vector.
    `backlog`: import with the indexer off (an outage, a model change), then start it."""
    from cortex_mcp.config import load_settings
    from cortex_mcp.runtime import open_cortex

    settings = load_settings(
        db_path=db,
        embedding_provider="openai",
        embedding_base_url=url,
        embedding_model="stub-embed",
        embedding_timeout_s=60.0,
    )
    if mode == "backlog":
        async with open_cortex(settings, background=False) as service:
            await service.exchange.import_path(str(source))
    async with open_cortex(settings, background=True) as service:
        indexer = service.engines.indexer
        assert indexer is not None
        service.start_warm_up()
        provider = service.engines.embeddings.providers[0]
        config = {
            "batch": getattr(provider, "batch_size", None),
            "concurrency": getattr(provider, "concurrency", 1),
        }
        samples: list[tuple[float, int]] = []
        started = time.perf_counter()

        async def sample() -> None:
            while True:
                samples.append((time.perf_counter() - started, indexer.embedded))
                await asyncio.sleep(0.02)

        sampler = asyncio.create_task(sample())
        if mode == "import":
            await service.exchange.import_path(str(source))
        imported_at = time.perf_counter() - started
        total = int((await service.status.stats())["memories"]["total"])
        while indexer.embedded < total:
            if time.perf_counter() - started > 3600:
                break
            await asyncio.sleep(0.02)
        samples.append((time.perf_counter() - started, indexer.embedded))
        sampler.cancel()
    return {"config": config, "total": total, "imported_at": imported_at, "samples": samples}


def child_main(url: str, source: str, db: str, mode: str) -> None:
    result = asyncio.run(measure_child(url, Path(source), Path(db), mode))
    print(json.dumps(result))


# ---- the parent: stub, its most, and each code version -------------------------------------


def start_stub(latency_ms: float, per_item_ms: float) -> tuple[subprocess.Popen[str], str]:
    limits = ["--latency-ms", str(latency_ms), "--per-item-ms", str(per_item_ms)]
    stub = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.embedding_stub", *limits],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stub.stdout is not None
    line = stub.stdout.readline().split()
    if not line or line[0] != "READY":
        raise SystemExit("the embedding stub did not start")
    return stub, f"http://127.0.0.1:{line[1]}/v1"


async def stub_most(url: str, batch: int, concurrency: int, requests: int) -> float:
    """Inputs per second a direct client gets with `concurrency` requests of `batch` in flight
    (the real SDK, reading each answer without building its models)."""
    from openai import AsyncOpenAI

    rng = random.Random(7)
    client = AsyncOpenAI(api_key="stub", base_url=url, max_retries=0, timeout=120)
    texts = [[sentence(i * batch + j, rng) for j in range(batch)] for i in range(requests)]
    queue = list(texts)

    async def worker() -> None:
        while queue:  # the body is read, not parsed: the most the stub can give anyone
            answer = await client.embeddings.with_raw_response.create(
                model="stub-embed", input=queue.pop(), encoding_format="base64"
            )
            assert answer.content

    await client.embeddings.create(model="stub-embed", input=["warm up"])
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    await client.close()
    return requests * batch / seconds


def run_child(
    url: str, source: Path, folder: Path, baseline: str | None, mode: str
) -> dict[str, Any]:
    db = folder / f"brain-{'baseline' if baseline else 'current'}-{mode}.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    env["CORTEX_LOG_LEVEL"] = "ERROR"
    command = [sys.executable, str(Path(__file__).resolve()), "--child", url, str(source), str(db)]
    command.append(mode)
    if baseline:  # -P: this checkout's folder is not put on sys.path; the baseline's package is
        command.insert(1, "-P")
        env["PYTHONPATH"] = baseline
    else:
        env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measuring child failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def when(samples: list[list[float]], count: float) -> float:
    for at, embedded in samples:
        if embedded >= count:
            return at
    return float("nan")


def report(name: str, result: dict[str, Any], most: float, mode: str) -> None:
    samples, total, imported = result["samples"], result["total"], result["imported_at"]
    first = next((at for at, embedded in samples if embedded > 0), float("nan"))
    at95 = when(samples, 0.95 * total)
    rate = 0.95 * total / (at95 - first) if at95 > first else float("nan")
    after = {p: when(samples, p / 100 * total) - imported for p in (50, 95, 100)}
    config = result["config"]
    rated = (
        f"batch {config['batch']} x {config['concurrency']} in flight: {rate:,.0f} embedded/s"
        f" (first vector to 95%) = {rate / most:.2f} of the stub's most ({most:,.0f}/s)"
    )
    if mode == "backlog":
        print(
            f"{name:>9}: {total} memories waiting; {rated}; first vector {first:.1f} s after"
            f" the server opened (SDK import), 95% at {at95:.1f} s"
        )
        return
    print(
        f"{name:>9}: {total} memories imported in {imported:.1f} s; {rated}; 95% covered"
        f" {at95:.1f} s after the import started; after it ended: 50% at {after[50]:+.1f} s,"
        f" 95% at {after[95]:+.1f} s, 100% at {after[100]:+.1f} s"
    )


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child_main(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="memories imported")
    parser.add_argument("--latency-ms", type=float, default=150.0, help="per request")
    parser.add_argument("--per-item-ms", type=float, default=1.0, help="per input")
    parser.add_argument("--baseline", help="also run the cortex_mcp package in this folder")
    parser.add_argument(
        "--modes",
        default="import,backlog",
        help="import: the indexer runs during the import; backlog: it starts after it",
    )
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from cortex_mcp.providers.embeddings import OPENAI_BATCH_SIZE, OPENAI_CONCURRENCY

    stub, url = start_stub(options.latency_ms, options.per_item_ms)
    try:
        print(
            f"stub: {options.latency_ms:g} ms a request + {options.per_item_ms:g} ms an input,"
            f" served in parallel; {os.cpu_count()} CPUs"
        )
        ideal = (
            OPENAI_CONCURRENCY
            * OPENAI_BATCH_SIZE
            / ((options.latency_ms + options.per_item_ms * OPENAI_BATCH_SIZE) / 1000)
        )
        print(
            f"the stub's most: a direct client, {OPENAI_BATCH_SIZE} x {OPENAI_CONCURRENCY} in"
            f" flight, measured before and after each run (its latencies alone: {ideal:,.0f}/s)"
        )

        def most() -> float:
            return asyncio.run(stub_most(url, OPENAI_BATCH_SIZE, OPENAI_CONCURRENCY, 40))

        with tempfile.TemporaryDirectory(prefix="cortex-bench-indexer-") as tmp:
            folder = Path(tmp)
            source = folder / "MEMORY.md"
            write_memory_md(source, options.n)
            versions = [("current", None)]
            if options.baseline:
                versions.append(("baseline", options.baseline))
            for mode in options.modes.split(","):
                print(f"{mode}:")
                for name, package in versions:
                    before = most()
                    result = run_child(url, source, folder, package, mode)
                    report(name, result, (before + most()) / 2, mode)
    finally:
        assert stub.stdin is not None
        stub.stdin.close()
        stub.wait(timeout=10)


if __name__ == "__main__":
    main()
