"""The lifecycle across real processes: one lease holder at a time, and a crash between
phases that the next run finishes."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.models import Layer
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest
from tests.conftest import FakeClock

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
NOW = "2027-06-01T03:00:00+00:00"


def _worker(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.lifecycle_worker", str(db), NOW, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _seed(db: Path) -> dict[str, str]:
    settings = load_settings(db_path=db, embedding_provider="none")
    async with open_cortex(settings, clock=FakeClock(), background=False) as service:
        ids = {
            "decision": (
                await service.memories.remember(
                    RememberRequest(
                        content="Decided to self-host Gitea", category="decision", layer="working"
                    )
                )
            ).id,
            "fact": (
                await service.memories.remember(
                    RememberRequest(content="A fact that will fade", importance=0.2)
                )
            ).id,
            "old": (
                await service.memories.remember(
                    RememberRequest(content="Long archived router note", layer="archive")
                )
            ).id,
        }
    return ids


async def _layers(db: Path, ids: dict[str, str]) -> dict[str, Layer]:
    settings = load_settings(db_path=db, embedding_provider="none")
    async with open_cortex(settings, clock=FakeClock(), background=False) as service:
        found = await service.stores.memories.get_many(list(ids.values()))
        assert await service.stores.db.integrity_check() == "ok"
        return {name: found[i].layer for name, i in ids.items()}


def test_two_processes_starting_a_run_together_one_runs_the_other_answers_busy_naming_no_process(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    asyncio.run(_seed(db))
    gate = tmp_path / "gate"
    first = _worker(db, "hold", str(gate))
    deadline = time.monotonic() + 30
    while not Path(str(gate) + ".started").exists():
        assert time.monotonic() < deadline and first.poll() is None, first.stderr
        time.sleep(0.02)
    second = _worker(db, "run")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    busy = json.loads(out)
    assert busy["status"] == "busy" and busy["busy_agents"] == ["default"]
    assert str(first.pid) not in busy["holder"] and socket.gethostname() not in busy["holder"]
    gate.write_text("go")
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert json.loads(out)["status"] == "done"


def test_a_crash_between_phases_leaves_a_consistent_database_and_the_next_run_finishes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    ids = asyncio.run(_seed(db))
    crashed = _worker(db, "crash", "merge")
    crashed.communicate(timeout=60)
    assert crashed.returncode == 3
    layers = asyncio.run(_layers(db, ids))
    assert layers["decision"] is Layer.core  # phase 1 committed
    assert layers["fact"] is Layer.core  # phase 3 never ran
    follow = _worker(db, "run")
    out, err = follow.communicate(timeout=60)
    assert follow.returncode == 0, err
    report = json.loads(out)
    assert report["status"] == "done" and report["resumed"] is True
    assert {a["kind"] for a in report["actions"]} == {"archive", "compress"}
    layers = asyncio.run(_layers(db, ids))
    assert layers["fact"] is Layer.archive


async def _reflect_plan(db: Path) -> dict | None:
    settings = load_settings(db_path=db, embedding_provider="none")
    async with open_cortex(settings, clock=FakeClock(), background=False) as service:
        stored = await service.stores.reflect.stored_plan("default")
        return stored[1] if stored is not None else None


def test_a_process_killed_before_its_reflect_step_leaves_the_stored_plan_the_next_run_carries_out(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    asyncio.run(_seed(db))
    crashed = _worker(db, "crash", "compress")  # dies once the last phase committed
    crashed.communicate(timeout=60)
    assert crashed.returncode == 3
    stored = asyncio.run(_reflect_plan(db))
    assert stored is not None and stored["memories"] == 3  # planned with the run, not run
    follow = _worker(db, "run")
    out, err = follow.communicate(timeout=60)
    assert follow.returncode == 0, err
    report = json.loads(out)
    assert report["status"] == "done" and report["resumed"] is True and report["actions"] == []
    [reflected] = report["reflect"]
    assert reflected["status"] == "done" and reflected["memories"] == 3
    assert report["counts"]["reflect_memories"] == 3
    assert asyncio.run(_reflect_plan(db)) is None
