"""Two checkouts' stdio servers side by side: the same calls alternately, at the same load.

    python bench/stdio_ab.py /path/to/before /path/to/after            # ping and recall
    python bench/stdio_ab.py A B --calls 2000 --only ping

Each checkout's `cortex_mcp` is put first on the server's PYTHONPATH (the console script of
this interpreter runs it). Both serve a copy of one database of 1,000 memories (the speed
bench's, vectors from the hashing stub of tests/helpers/embedding_stub.py in its own process).
`ping` is a protocol round trip (the transport's own cost); `recall` is `cortex_recall`
returning 10 with the speed bench's query texts. Printed per checkout: p50 wall per call and
the server's CPU per call (user + sys of all its threads, from /proc), so a change is judged
against its parent in one run rather than across runs whose load differs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.latency import synthetic_query  # noqa: E402
from bench.speed import _fill, _start_embedding_stub, vocabulary  # noqa: E402
from tests.helpers.stdio_helpers import server_command, server_env  # noqa: E402


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pid(client_marker: Path) -> int:
    """The server whose environment names `client_marker` (its database)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"cortex" in command and f"CORTEX_DB_PATH={client_marker}".encode() in environ:
            return int(entry.name)
    raise RuntimeError(f"no server found for {client_marker}")


async def _compare(
    checkouts: list[Path], dbs: list[Path], url: str, calls: int, only: set[str]
) -> None:
    from mcp import Client, StdioServerParameters

    def params(checkout: Path, db: Path) -> StdioServerParameters:
        env = server_env(
            db,
            PYTHONPATH=str(checkout),
            CORTEX_LOG_LEVEL="WARNING",
            CORTEX_EMBEDDING_PROVIDER="openai",
            CORTEX_EMBEDDING_BASE_URL=url,
            CORTEX_EMBEDDING_MODEL="stub-384",
        )
        command, *args = server_command()
        return StdioServerParameters(command=command, args=args, env=env)

    rng = random.Random(5)
    words = vocabulary(random.Random(1000))
    queries = [synthetic_query(rng, words) for _ in range(calls + 20)]
    async with (
        Client(params(checkouts[0], dbs[0]), mode="legacy") as first,
        Client(params(checkouts[1], dbs[1]), mode="legacy") as second,
    ):
        clients = [first, second]
        for query in queries[:20]:  # both warm, the engines imported
            for client in clients:
                await client.call_tool("cortex_recall", {"query": query, "max_results": 10})
        pids = [_server_pid(db) for db in dbs]
        for kind in ("ping", "recall"):
            if kind not in only:
                continue
            wall: list[list[float]] = [[], []]
            cpu_before = [_cpu_s(pid) for pid in pids]
            for n, query in enumerate(queries[20:]):
                for i in (0, 1) if n % 2 else (1, 0):
                    wall[i].append(await _timed(clients[i], kind, query))
            for i, checkout in enumerate(checkouts):
                cpu_ms = (_cpu_s(pids[i]) - cpu_before[i]) * 1000 / calls
                print(
                    f"{kind:6} {checkout}: p50 {statistics.median(wall[i]):.3f} ms,"
                    f" server CPU {cpu_ms:.3f} ms per call",
                    flush=True,
                )


async def _timed(client: Any, kind: str, query: str) -> float:
    started = time.perf_counter()
    if kind == "ping":
        await client.send_ping()
    else:
        await client.call_tool("cortex_recall", {"query": query, "max_results": 10})
    return (time.perf_counter() - started) * 1000


def main() -> None:
    # ping is a legacy-era request (these clients are legacy); the SDK warns of its removal
    warnings.filterwarnings("ignore", message="ping is removed")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs=2, type=Path, help="two checkouts' root folders")
    parser.add_argument("--calls", type=int, default=600, help="calls of each kind (default 600)")
    parser.add_argument("--only", default="ping,recall", help="comma list of: ping, recall")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        stub, url = _start_embedding_stub()
        try:
            rng = random.Random(1000)
            _fill(root / "recall.db", url, 1000, rng, vocabulary(rng))
            dbs = [root / "a" / "recall.db", root / "b" / "recall.db"]
            for db in dbs:
                db.parent.mkdir()
                for suffix in ("", "-wal", "-shm"):  # the database as its writer left it
                    if (root / f"recall.db{suffix}").exists():
                        shutil.copy(root / f"recall.db{suffix}", f"{db}{suffix}")
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
            checkouts = [c.resolve() for c in args.checkouts]
            asyncio.run(_compare(checkouts, dbs, url, args.calls, set(args.only.split(","))))
            print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)
        finally:
            if stub.stdin is not None:
                stub.stdin.close()
            stub.wait()


if __name__ == "__main__":
    main()
