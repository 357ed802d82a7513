"""When the lifecycle runs inside a long-lived server: a cron expression in local time, plus a
catch-up shortly after start when the last success is too old (a laptop asleep at 03:00).

Runs are background tasks, never on a request's path; the database lease keeps several
servers sharing one file from running it twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cortex_mcp.errors import ConfigError
from cortex_mcp.models import Clock, from_iso

log = logging.getLogger(__name__)

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day", 1, 31), ("month", 1, 12), ("weekday", 0, 7))
_SETTING = "CORTEX_LIFECYCLE__SCHEDULE"


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool
    any_weekday: bool

    def day_matches(self, moment: datetime) -> bool:
        weekday = (moment.weekday() + 1) % 7
        in_days, in_weekdays = moment.day in self.days, weekday in self.weekdays
        if self.any_day or self.any_weekday:  # cron: both restricted means either matches
            return in_days and in_weekdays
        return in_days or in_weekdays


def parse_cron(expression: str) -> Cron:
    parts = expression.split()
    if len(parts) != 5:
        raise ConfigError(
            f"{_SETTING}: {expression!r} needs 5 fields (minute hour day month weekday)",
            field=_SETTING,
        )
    sets = [_field(part, *spec) for part, spec in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return Cron(sets[0], sets[1], sets[2], sets[3], weekdays, parts[2] == "*", parts[4] == "*")


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        span, _, step_text = item.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if span == "*":
                start, end = low, high
            elif "-" in span:
                start, end = (int(x) for x in span.split("-", 1))
            else:
                start = end = int(span)
        except ValueError:
            raise ConfigError(f"{_SETTING}: bad {name} field {text!r}", field=_SETTING) from None
        if step < 1 or not low <= start <= end <= high:
            raise ConfigError(
                f"{_SETTING}: {name} {text!r} must lie within {low}-{high}", field=_SETTING
            )
        values.update(range(start, end + 1, step))
    return frozenset(values)


def next_fire(cron: Cron, after: datetime) -> datetime:
    """The first moment strictly after `after` (in its timezone) that the expression names."""
    moment = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    limit = moment + timedelta(days=366 * 5)
    while moment < limit:
        if moment.month not in cron.months or not cron.day_matches(moment):
            moment = (moment + timedelta(days=1)).replace(hour=0, minute=0)
        elif moment.hour not in cron.hours:
            moment = (moment + timedelta(hours=1)).replace(minute=0)
        elif moment.minute not in cron.minutes:
            moment += timedelta(minutes=1)
        else:
            return moment
    raise ConfigError(f"{_SETTING}: the expression never fires", field=_SETTING)


class LifecycleScheduler:
    def __init__(
        self,
        run: Callable[[], Awaitable[Any]],
        last_success: Callable[[], Awaitable[str | None]],
        *,
        expression: str,
        catch_up_hours: float,
        catch_up_delay_s: float,
        clock: Clock,
    ) -> None:
        self.off = expression.strip().lower() in ("", "off")
        self.cron = parse_cron("0 3 * * *" if self.off else expression)  # unused while off
        self._run = run
        self._last_success = last_success
        self.catch_up_after = timedelta(hours=catch_up_hours)
        self.catch_up_delay_s = catch_up_delay_s
        self.clock = clock
        self._task: asyncio.Task[None] | None = None
        self._running = False
        self.runs = 0

    def start(self) -> None:
        if self.off:
            return
        self._task = asyncio.create_task(self._loop(), name="lifecycle-scheduler")

    def reschedule(self, expression: str, catch_up_hours: float, catch_up_delay_s: float) -> None:
        """The schedule changed while running ("off": no more runs): a run in progress
        finishes and the loop then follows the new schedule; a waiting loop starts again."""
        self.off = expression.strip().lower() in ("", "off")
        if not self.off:
            self.cron = parse_cron(expression)
        self.catch_up_after = timedelta(hours=catch_up_hours)
        self.catch_up_delay_s = catch_up_delay_s
        if self._running:
            return
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.start()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def overdue(self) -> bool:
        last = await self._last_success()
        return last is None or self.clock.now() - from_iso(last) > self.catch_up_after

    async def _loop(self) -> None:
        await asyncio.sleep(self.catch_up_delay_s)
        if await self.overdue():
            await self._run_once("catch-up")
        while not self.off:
            now = self.clock.now().astimezone()  # cron is local time
            fire = next_fire(self.cron, now)
            await asyncio.sleep(max(0.0, (fire - now).total_seconds()))
            await self._run_once("schedule")

    async def _run_once(self, why: str) -> None:
        log.info("lifecycle %s run starting", why)
        self._running = True
        try:
            await self._run()
        except Exception:  # a failed night must not stop the next one; the log says why
            log.exception("lifecycle %s run failed", why)
        finally:
            self._running = False
        self.runs += 1
