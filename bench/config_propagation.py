"""How soon a setting changed on one server is used by another on the same store: two
`cortex-mcp serve` processes on one SQLite file, `PATCH /api/v1/config` on the first, then
the second's searches (`POST /api/v1/search` with debug, which reads the settings without
re-reading the database) until one uses the new weight. Prints the PATCH's own time and the
median and max delay over the changes; the baseline is the poll interval (1 s).

    python bench/config_propagation.py              # 10 changes
    python bench/config_propagation.py --changes 30
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cortex_mcp.service.config import POLL_SECONDS
from tests.helpers.http_helpers import AUTH, ServeProcess


def _weight_used(server: ServeProcess) -> float:
    body = {"query": "anything", "debug": True}
    answer = httpx2.post(server.url + "/api/v1/search", json=body, headers=AUTH, timeout=30)
    return float(answer.json()["debug"]["settings"]["vector_weight"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "brain.db"
        with ServeProcess(db) as one, ServeProcess(db) as two:
            patched, seen = [], []
            for index in range(args.changes):
                weight = round(0.1 + (index % 15) * 0.05, 2)
                started = time.monotonic()
                change = {"search": {"vector_weight": weight}}
                httpx2.patch(one.url + "/api/v1/config", json=change, headers=AUTH, timeout=30)
                patched.append(time.monotonic() - started)
                while _weight_used(two) != weight:
                    time.sleep(0.02)
                seen.append(time.monotonic() - started)
    print(f"poll interval (baseline)      {POLL_SECONDS:.2f} s")
    print(f"PATCH answered, median        {statistics.median(patched) * 1000:.0f} ms")
    print(f"second server used it, median {statistics.median(seen):.2f} s")
    print(f"second server used it, max    {max(seen):.2f} s  ({args.changes} changes)")


if __name__ == "__main__":
    main()
