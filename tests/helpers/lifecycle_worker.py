"""A separate process running the lifecycle, for the lease and crash tests.

python -m tests.helpers.lifecycle_worker DB NOW run
python -m tests.helpers.lifecycle_worker DB NOW hold FILE   # waits after the first phase until FILE exists
python -m tests.helpers.lifecycle_worker DB NOW crash PHASE  # dies (no cleanup) right after PHASE commits
python -m tests.helpers.lifecycle_worker DB NOW hold FILE AGENT  # one agent's run (else every agent's)

CORTEX_DATABASE_URL in the environment runs it on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import LifecycleRequest


async def main(db: str, now: str, mode: str, arg: str | None, agent: str | None) -> None:
    settings = load_settings(db_path=Path(db), embedding_provider="none")

    def on_phase(phase: str, done: int, total: int) -> None:
        if mode == "crash" and phase == arg:
            os._exit(3)
        if mode == "hold" and done == 1:
            Path(arg + ".started").write_text("1")
            deadline = time.monotonic() + 30
            while not Path(arg).exists() and time.monotonic() < deadline:
                time.sleep(0.02)

    async with open_cortex(settings, background=False) as service:
        request = LifecycleRequest(agent_id=agent)
        report = await service.lifecycle.run(request, now=now, on_phase=on_phase)
        sys.stdout.write(report.model_dump_json() + "\n")


if __name__ == "__main__":
    optional = [*sys.argv[4:6], None, None]
    asyncio.run(main(*sys.argv[1:4], optional[0], optional[1]))
