"""A separate process remembering facts, for the tests of several processes on one file.

python -m tests.helpers.remember_worker DB PREFIX COUNT [CONCURRENCY]

Prints one line per acknowledged write: "<id> <content>".
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest


async def main(db: str, prefix: str, count: int, concurrency: int) -> None:
    settings = load_settings(db_path=Path(db), embedding_provider="none")
    async with open_cortex(settings, background=False) as service:
        gate = asyncio.Semaphore(concurrency)

        async def one(n: int) -> None:
            content = f"{prefix} fact number {n}: the {prefix} sensor reads {n * 7} units"
            async with gate:
                made = await service.memories.remember(RememberRequest(content=content))
            sys.stdout.write(f"{made.id} {content}\n")

        await asyncio.gather(*(one(n) for n in range(count)))


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(args[0], args[1], int(args[2]), int(args[3]) if len(args) > 3 else 8))
