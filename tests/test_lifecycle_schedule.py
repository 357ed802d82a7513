"""The lifecycle schedule: cron expressions in local time and the catch-up on start."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.engine.lifecycle.schedule import LifecycleScheduler, next_fire, parse_cron
from cortex_mcp.errors import ConfigError
from cortex_mcp.models import to_iso
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


def test_the_default_schedule_fires_at_three_every_night() -> None:
    cron = parse_cron("0 3 * * *")
    moment = datetime(2026, 3, 1, 3, 0)
    assert next_fire(cron, moment) == datetime(2026, 3, 2, 3, 0)
    assert next_fire(cron, datetime(2026, 3, 1, 2, 59, 30)) == datetime(2026, 3, 1, 3, 0)


def test_steps_ranges_lists_and_weekdays_follow_cron_rules() -> None:
    assert next_fire(parse_cron("*/15 * * * *"), datetime(2026, 1, 1, 10, 7)) == datetime(
        2026, 1, 1, 10, 15
    )
    # Mondays to Fridays at 22:30; 2026-01-03 is a Saturday
    assert next_fire(parse_cron("30 22 * * 1-5"), datetime(2026, 1, 3, 12, 0)) == datetime(
        2026, 1, 5, 22, 30
    )
    # day-of-month and weekday both restricted: either one matches (1st, or a Sunday)
    assert next_fire(parse_cron("0 4 1 * 0"), datetime(2026, 1, 2, 0, 0)) == datetime(
        2026, 1, 4, 4, 0
    )
    assert next_fire(parse_cron("0 0 29 2 *"), datetime(2026, 1, 1)) == datetime(2028, 2, 29)


@pytest.mark.parametrize("bad", ["0 3 * *", "61 3 * * *", "0 3 * * mon", "*/0 * * * *"])
def test_a_bad_cron_expression_names_the_setting(bad: str) -> None:
    with pytest.raises(ConfigError, match="CORTEX_LIFECYCLE__SCHEDULE"):
        parse_cron(bad)


def test_settings_refuse_a_schedule_that_is_not_cron(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_LIFECYCLE__SCHEDULE", "every night")
    with pytest.raises(ConfigError, match="CORTEX_LIFECYCLE__SCHEDULE"):
        load_settings()
    monkeypatch.setenv("CORTEX_LIFECYCLE__SCHEDULE", "off")
    assert load_settings().lifecycle.schedule == "off"


async def _scheduler_runs(last: str | None, clock: FakeClock) -> int:
    runs: list[int] = []

    async def run() -> None:
        runs.append(1)

    async def last_success() -> str | None:
        return last

    scheduler = LifecycleScheduler(
        run,
        last_success,
        expression="0 3 * * *",
        catch_up_hours=48,
        catch_up_delay_s=0,
        clock=clock,
    )
    scheduler.start()
    for _ in range(50):
        await asyncio.sleep(0.01)
    await scheduler.stop()
    return len(runs)


async def test_a_server_starting_after_two_missed_nights_catches_up_in_the_background() -> None:
    clock = FakeClock(datetime(2026, 5, 10, 14, 0, tzinfo=UTC))
    assert await _scheduler_runs(to_iso(clock.now() - timedelta(hours=60)), clock) == 1
    assert await _scheduler_runs(None, clock) == 1


async def test_a_recent_success_means_no_catch_up_run() -> None:
    clock = FakeClock(datetime(2026, 5, 10, 14, 0, tzinfo=UTC))
    assert await _scheduler_runs(to_iso(clock.now() - timedelta(hours=20)), clock) == 0


async def test_a_schedule_changed_while_running_turns_runs_on_and_off_and_finishes_a_run() -> None:
    clock = FakeClock(datetime(2026, 5, 10, 14, 0, tzinfo=UTC))
    started, release, finished = asyncio.Event(), asyncio.Event(), []

    async def run() -> None:
        started.set()
        await release.wait()
        finished.append(1)

    async def never_ran() -> str | None:
        return None  # overdue: a schedule turned on catches up at once

    scheduler = LifecycleScheduler(
        run, never_ran, expression="off", catch_up_hours=48, catch_up_delay_s=0, clock=clock
    )
    scheduler.start()
    await asyncio.sleep(0.05)
    assert not started.is_set()  # off: nothing runs

    scheduler.reschedule("*/5 * * * *", catch_up_hours=48, catch_up_delay_s=0)
    await asyncio.wait_for(started.wait(), 5)
    scheduler.reschedule("off", catch_up_hours=48, catch_up_delay_s=0)  # during the run
    release.set()
    for _ in range(50):
        await asyncio.sleep(0.01)
    assert finished == [1]  # the run in progress finished, and no other started
    assert scheduler.cron == parse_cron("*/5 * * * *") and scheduler.off
    await scheduler.stop()
