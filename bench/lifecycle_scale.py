"""The lifecycle at 100K memories (issue 16): preview and run times, peak RSS, what a run did,
and how much the near-duplicate blocking finds of what comparing all pairs would.

    nice python bench/lifecycle_scale.py                     # 10K and 100K, text only
    nice python bench/lifecycle_scale.py --vectors 384       # the same with vectors
    git archive 85b7fe8 cortex_mcp prompts | tar -x -C /tmp/old     # main before this work...
    nice python bench/lifecycle_scale.py --baseline /tmp/old  # ...on the same stores

Each store (bench/lifecycle_data.py: five agents, working/core/archive over a year,
5% of core memories with a planted near-duplicate) is built once; every preview and every run
is a child process on a fresh copy of it, so the peak RSS is that command's own (wait4). Prints
per size: preview and run medians over `--repeat` copies, peak RSS, the run's counts, the planted
pairs it merged, and for the largest size the blocking's recall against all pairs on a sample;
then the scaling exponent between the sizes. `--baseline DIR` runs the same children on the
package in DIR (sizes up to `--baseline-max`: the old code took 132 s at 100K).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lifecycle_data import Dataset, build  # noqa: E402
from cortex_mcp.config import load_settings  # noqa: E402
from cortex_mcp.engine.lifecycle.blocking import candidate_pairs  # noqa: E402
from cortex_mcp.engine.lifecycle.similarity import dice, shingles  # noqa: E402
from cortex_mcp.models import to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.store.vectors import PendingEmbedding  # noqa: E402
from cortex_mcp.tokenize import content_hash, speaker_of  # noqa: E402

NOW = datetime(2026, 6, 1, 3, 0, tzinfo=UTC)
MODEL = "bench-vectors"
THRESHOLD = 0.85

# One preview or run in a child: only `cortex_mcp` imported, so a baseline checkout can run it.
CHILD = """
import asyncio, json, sys, time
from datetime import datetime
from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex

args = json.loads(sys.argv[1])

class Clock:
    def __init__(self, moment):
        self.moment = moment
    def now(self):
        return self.moment

async def main():
    settings = load_settings(db_path=args["db"], embedding_provider="none", llm_provider="none")
    async with open_cortex(settings, clock=Clock(datetime.fromisoformat(args["now"])),
                           background=False) as service:
        if args["model"]:
            service.engines.lifecycle.vector_model = lambda: args["model"]
        started, cpu = time.perf_counter(), time.process_time()
        if args["what"] == "preview":
            report = await service.lifecycle.preview()
        else:
            report = await service.lifecycle.run()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "cpu": cpu, "counts": report.counts}))

asyncio.run(main())
"""


# A store from the data files, built by the version that will measure it (schemas differ).
STORE_CHILD = """
import asyncio, json, sys
from datetime import datetime
import numpy as np
from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.store.vectors import PendingEmbedding
from cortex_mcp.tokenize import content_hash

args = json.loads(sys.argv[1])

class Clock:
    def now(self):
        return datetime.fromisoformat(args["now"])

async def main():
    memories = json.loads(open(args["memories"], encoding="utf-8").read())
    settings = load_settings(db_path=args["db"], embedding_provider="none", llm_provider="none")
    async with open_cortex(settings, clock=Clock(), background=False) as service:
        for agent, rows in memories.items():
            for start in range(0, len(rows), 5000):
                await service.stores.exports.import_batch(agent, rows[start : start + 5000], [], [])
        if args["vectors"]:
            ids = json.loads(open(args["vectors"] + ".ids", encoding="utf-8").read())
            matrix = np.load(args["vectors"])
            text = {r["id"]: r["content"] for rows in memories.values() for r in rows}
            items = [
                (PendingEmbedding(i, text[i], content_hash(text[i])), matrix[n].tobytes())
                for n, i in enumerate(ids)
            ]
            for start in range(0, len(items), 5000):
                await service.stores.vectors.save(
                    items[start : start + 5000], args["model"], matrix.shape[1], args["now"]
                )

asyncio.run(main())
"""


class FixedClock:
    def now(self) -> datetime:
        return NOW


def write_data(folder: Path, data: Dataset) -> dict[str, str]:
    """The memories (JSON) and vectors (.npy and their ids) a store child reads."""
    files = {"memories": str(folder / "memories.json"), "vectors": ""}
    Path(files["memories"]).write_text(json.dumps(data.memories), encoding="utf-8")
    if data.vectors:
        files["vectors"] = str(folder / "vectors.npy")
        ids = list(data.vectors)
        np.save(files["vectors"], np.stack([data.vectors[i] for i in ids]))
        Path(files["vectors"] + ".ids").write_text(json.dumps(ids), encoding="utf-8")
    return files


def make_store_with(path: Path, files: dict[str, str], baseline: str | None) -> None:
    """Build the store with this checkout, or with the package in `baseline`."""
    args = {**files, "db": str(path), "now": to_iso(NOW), "model": MODEL}
    env = {**os.environ, "PYTHONPATH": baseline or str(ROOT)}
    command = [sys.executable, "-P", "-c", STORE_CHILD, json.dumps(args)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(
            f"building the store failed ({baseline or 'this checkout'}):\n{done.stderr[-2000:]}"
        )


async def make_store(path: Path, data: Dataset) -> None:
    """The same store in this process (the tests' way)."""
    settings = load_settings(db_path=path, embedding_provider="none", llm_provider="none")
    async with open_cortex(settings, clock=FixedClock(), background=False) as service:
        for agent, rows in data.memories.items():
            for start in range(0, len(rows), 5000):
                await service.stores.exports.import_batch(agent, rows[start : start + 5000], [], [])
        items = []
        contents = {r["id"]: r["content"] for rows in data.memories.values() for r in rows}
        for memory_id, vector in data.vectors.items():
            text = contents[memory_id]
            items.append((PendingEmbedding(memory_id, text, content_hash(text)), vector.tobytes()))
        dim = len(next(iter(data.vectors.values()))) if data.vectors else 0
        for start in range(0, len(items), 5000):
            await service.stores.vectors.save(items[start : start + 5000], MODEL, dim, to_iso(NOW))


def child(what: str, db: Path, vectors: bool, baseline: str | None) -> dict[str, Any]:
    """One preview or run in its own process: seconds inside, peak RSS (MB), counts."""
    args = {"db": str(db), "now": NOW.isoformat(), "what": what, "model": MODEL if vectors else ""}
    env = {**os.environ, "PYTHONPATH": baseline or str(ROOT)}
    command = [sys.executable, "-P", "-c", CHILD, json.dumps(args)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    out = process.stdout.read().decode() if process.stdout else ""
    err = process.stderr.read().decode() if process.stderr else ""
    if status != 0:
        raise SystemExit(f"{what} failed ({baseline or 'this checkout'}):\n{err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["rss_mb"] = usage.ru_maxrss / 1024
    return result


def measure(store: Path, folder: Path, repeat: int, vectors: bool, baseline: str | None) -> dict:
    previews, runs, copy = [], [], folder / "copy.db"
    for _ in range(repeat):
        previews.append(child("preview", store, vectors, baseline))
        shutil.copy(store, copy)
        runs.append(child("run", copy, vectors, baseline))
    return {
        "preview": statistics.median(p["seconds"] for p in previews),
        "run": statistics.median(r["seconds"] for r in runs),
        "preview_cpu": statistics.median(p["cpu"] for p in previews),
        "run_cpu": statistics.median(r["cpu"] for r in runs),
        "preview_rss": max(p["rss_mb"] for p in previews),
        "run_rss": max(r["rss_mb"] for r in runs),
        "counts": runs[-1]["counts"],
        "same_plan": previews[-1]["counts"] == runs[-1]["counts"],
        "copy": copy,
    }


async def planted_merged(db: Path, data: Dataset) -> tuple[int, int]:
    """(planted pairs the run merged into one, planted pairs)."""
    settings = load_settings(db_path=db, embedding_provider="none", llm_provider="none")
    ids = [i for pair in data.planted for i in pair]
    async with open_cortex(settings, clock=FixedClock(), background=False) as service:
        found = await service.stores.memories.get_many(ids)
    merged = 0
    for original, twin in data.planted:
        a, b = found.get(original), found.get(twin)
        if a is not None and b is not None:
            keeper = {a.superseded_by or a.id, b.superseded_by or b.id}
            merged += len(keeper) == 1
    return merged, len(data.planted)


def blocking_recall(data: Dataset, sample: int, rng: random.Random) -> dict[str, float]:
    """Blocking over the largest merge group against all pairs of a sample of it: a sample of
    planted pairs (both sides) and other memories, every pair compared exactly."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for agent, rows in data.memories.items():
        for r in rows:
            if r["layer"] == "core":
                key = (agent, r["category"], speaker_of(r["content"], r["metadata"]) or "")
                groups.setdefault(key, []).append(r)
    group = max(groups.values(), key=len)
    position = {r["id"]: n for n, r in enumerate(group)}
    sets = [shingles(r["content"]) for r in group]
    started = time.perf_counter()
    found = {tuple(p) for p in candidate_pairs(sets, THRESHOLD).tolist()}
    blocking_s = time.perf_counter() - started
    twins = [p for p in data.planted if p[0] in position and p[1] in position]
    chosen = {position[i] for pair in rng.sample(twins, min(len(twins), sample // 4)) for i in pair}
    others = [i for i in range(len(group)) if i not in chosen]
    chosen |= set(rng.sample(others, min(len(others), sample - len(chosen))))
    truth = [
        (i, j)
        for i, j in itertools.combinations(sorted(chosen), 2)
        if dice(sets[i], sets[j]) >= THRESHOLD
    ]
    hit = sum(1 for pair in truth if pair in found)
    return {
        "group": len(group),
        "sample": len(chosen),
        "pairs": len(truth),
        "recall": hit / len(truth) if truth else 1.0,
        "blocking_s": blocking_s,
        "candidates": len(found),
    }


def vector_recall(data: Dataset, sample: int, rng: random.Random) -> dict[str, float] | None:
    """The vector blocking against all pairs by cosine on a sample of the vectors (planted
    pairs among them)."""
    try:
        from cortex_mcp.engine.lifecycle.vector_blocking import close_pairs
    except ImportError:
        return None
    twins = [p for p in data.planted if p[0] in data.vectors and p[1] in data.vectors]
    chosen = [i for pair in rng.sample(twins, min(len(twins), sample // 4)) for i in pair]
    rest = [i for i in data.vectors if i not in set(chosen)]
    chosen += rng.sample(rest, min(len(rest), sample - len(chosen)))
    matrix = np.stack([data.vectors[i] for i in chosen])
    sims = matrix @ matrix.T
    rows, cols = np.nonzero(np.triu(sims >= THRESHOLD, k=1))
    truth = set(zip(rows.tolist(), cols.tolist(), strict=True))
    found = {tuple(p) for p in close_pairs(matrix, THRESHOLD).tolist()}
    hit = len(truth & found)
    return {"pairs": len(truth), "recall": hit / len(truth) if truth else 1.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vectors", type=int, default=0, help="vector size (0: text only)")
    parser.add_argument("--baseline", help="a folder holding another version's cortex_mcp")
    parser.add_argument("--baseline-max", type=int, default=20000)
    parser.add_argument("--sample", type=int, default=3000, help="memories compared all-pairs")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    rng = random.Random(11)
    mode = f"vectors {args.vectors}d" if args.vectors else "text only"
    load = os.getloadavg()[0]
    print(
        f"lifecycle at scale ({mode}); {os.cpu_count()} CPUs, load average {load:.1f} at the"
        f" start; medians of {args.repeat} (wall time; CPU time of the process beside it)"
    )
    times: dict[str, dict[int, float]] = {"preview": {}, "run": {}, "preview CPU": {}}
    times["run CPU"] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in sizes:
            started = time.perf_counter()
            data = build(n, NOW, dim=args.vectors)
            files = write_data(folder, data)
            store = folder / f"store{n}.db"
            make_store_with(store, files, None)
            print(f"\n{n:>7} memories (built in {time.perf_counter() - started:.0f} s)")
            new = measure(store, folder, args.repeat, bool(args.vectors), None)
            merged, planted = asyncio.run(planted_merged(new["copy"], data))
            _print("this", new)
            print(f"{'':9}planted near-duplicates merged: {merged}/{planted}")
            times["preview"][n], times["run"][n] = new["preview"], new["run"]
            times["preview CPU"][n], times["run CPU"][n] = new["preview_cpu"], new["run_cpu"]
            if args.baseline and n <= args.baseline_max:
                store = folder / f"store{n}.baseline.db"
                make_store_with(store, files, args.baseline)
                old = measure(store, folder, args.repeat, bool(args.vectors), args.baseline)
                merged_old, _ = asyncio.run(planted_merged(old["copy"], data))
                _print("baseline", old)
                print(f"{'':9}planted near-duplicates merged: {merged_old}/{planted}")
                print(
                    f"{'':9}speed-up: preview x{old['preview'] / new['preview']:.1f},"
                    f" run x{old['run'] / new['run']:.1f}"
                )
            elif args.baseline:
                print(f"{'':9}baseline not measured above {args.baseline_max} (too slow)")
        recall = blocking_recall(data, args.sample, rng)
        print(
            f"\ntext blocking over the largest merge group ({recall['group']} core memories):"
            f" {recall['candidates']} candidate pairs in {recall['blocking_s']:.2f} s;"
            f" recall {recall['recall']:.3f} of the {recall['pairs']} pairs with Dice >= "
            f"{THRESHOLD} among {recall['sample']} sampled memories compared all-pairs"
        )
        if args.vectors:
            found = vector_recall(data, args.sample, rng)
            if found is not None:
                print(
                    f"vector blocking: recall {found['recall']:.3f} of the {found['pairs']}"
                    f" pairs with cosine >= {THRESHOLD} among {args.sample} sampled vectors"
                )
    if len(sizes) >= 2:
        low, high = min(sizes), max(sizes)
        for what, by_size in times.items():
            exponent = math.log(by_size[high] / by_size[low]) / math.log(high / low)
            print(f"{what} time grows as n^{exponent:.2f} from {low} to {high}")


def _print(label: str, figures: dict[str, Any]) -> None:
    counts = {k: v for k, v in figures["counts"].items() if v}
    print(
        f"  {label:<9}preview {figures['preview']:.2f} s ({figures['preview_cpu']:.2f} s CPU,"
        f" peak {figures['preview_rss']:.0f} MB), run {figures['run']:.2f} s"
        f" ({figures['run_cpu']:.2f} s CPU, peak {figures['run_rss']:.0f} MB)\n{'':11}run did"
        f" {counts}; preview planned the same: {figures['same_plan']}"
    )


if __name__ == "__main__":
    main()
