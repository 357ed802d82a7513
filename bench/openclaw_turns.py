"""Recall inside real OpenClaw turns: N turns through a loopback gateway (the plugin loaded once,
as in production), offline with the local LLM stub as the model. Prints the plugin's recall time
per turn (what `before_prompt_build` adds to a turn, health check and HTTP included) against the
whole turn's wall time measured in the same run.

Needs what `bash .ci/openclaw` installs (Node 24, the built plugin, the pinned OpenClaw host).

    nice python bench/openclaw_turns.py --turns 8
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.http_helpers import AUTH, ServeProcess
from tests.helpers.llm_stub import llm_stub, text
from tests.test_openclaw_e2e import OpenClaw, _config, _missing, recall_times

FACTS = [
    "The staging database runs on db2.internal port 5433.",
    "Deploys happen on Tuesday nights after 22:00.",
    "The on-call rota lives in the ops wiki.",
    "Backups go to the archive-eu bucket.",
]
QUESTIONS = [
    "Where does the staging database run?",
    "When do deploys happen?",
    "Where is the on-call rota?",
    "Where do the backups go?",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs)")
    args = parser.parse_args()
    missing = _missing()
    if missing:
        print(f"cannot run: {missing}", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="openclaw-bench-"))
    try:
        walls, recalls = _turns(root, args.turns)
    finally:
        if args.keep:
            print(f"logs kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"OpenClaw turns through a gateway: {args.turns} (recalls logged: {len(recalls)})")
    print(f"recall in before_prompt_build, ms: {recalls}")
    p50, wall = statistics.median(recalls), statistics.median(walls)
    print(f"recall p50 {p50:.0f} ms, max {max(recalls)} ms; turn wall p50 {wall:.0f} ms")
    print(f"recall / turn (p50 ratio): {p50 / wall:.4f}")
    return 0


def _turns(root: Path, turns: int) -> tuple[list[float], list[int]]:
    with llm_stub() as stub:
        stub.responder = lambda request: text("OK.")
        with ServeProcess(root / "brain.db") as cortex:
            for fact in FACTS:
                body = {"content": fact, "agent_id": "main"}
                httpx2.post(f"{cortex.url}/api/v1/memories", json=body, headers=AUTH)
            claw = OpenClaw(root / "home")
            log = root / "openclaw.log"
            claw.write_config(_config(stub, log))
            claw.install_cortex(cortex.url)
            walls = []
            with claw.gateway():
                for turn in range(turns):
                    started = time.perf_counter()
                    question = QUESTIONS[turn % len(QUESTIONS)]
                    claw.ok("agent", "--session-key", f"bench-{turn}", "--message", question)
                    walls.append((time.perf_counter() - started) * 1000)
            recalls = recall_times(log.read_text(errors="replace"))
    return walls, recalls


if __name__ == "__main__":
    sys.exit(main())
