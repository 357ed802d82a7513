"""A memory's date as a model reads it: the day it happened and how long before the recall's
reference time ("2026-05-06, 3 weeks ago"), so a model can answer "when did I ...?" and
"how long ago ...?" without date arithmetic of its own."""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, timedelta, tzinfo

from cortex_mcp.models import from_iso


def relative_phrase(moment: datetime, now: datetime) -> str:
    """'today', 'yesterday', '5 days ago', '3 weeks ago', '4 months ago', '2 years ago' (or
    'tomorrow', 'in 3 days' ... for a moment after `now`): calendar days, whole weeks, whole
    calendar months and years, in `now`'s time zone (the user's)."""
    where = now.tzinfo or UTC
    return _between(moment.astimezone(where).date(), now.astimezone(where).date())


def _between(earlier: date, later: date) -> str:
    days = (later - earlier).days
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days == -1:
        return "tomorrow"
    if days < 0:
        earlier, later = later, earlier
    amount, unit = _span(earlier, later)
    span = f"{amount} {unit}{'' if amount == 1 else 's'}"
    return f"{span} ago" if days > 0 else f"in {span}"


def _span(earlier: date, later: date) -> tuple[int, str]:
    days = (later - earlier).days
    if days < 14:
        return days, "day"
    if days < 60:
        return days // 7, "week"
    months = (later.year - earlier.year) * 12 + later.month - earlier.month
    months -= later.day < earlier.day  # a month not yet complete
    if months < 24:
        return months, "month"
    return months // 12, "year"


def dated(occurred_at: str, now: datetime | None) -> str:
    """'2026-05-06, 3 weeks ago': the day in `now`'s time zone (the user's) and how long before
    `now` (the UTC date alone without a reference time)."""
    if now is None or not occurred_at:
        return occurred_at[:10]
    return _dated(occurred_at, now, now.utcoffset())


@functools.lru_cache(maxsize=256)
def _dated(occurred_at: str, now: datetime, offset: timedelta | None) -> str:
    """`dated` of one moment at one reference time, kept: a recall shows each memory's date in
    its context and again in the text a model reads. `offset` is in the key because equal
    moments in two zones are equal datetimes, and the days are the zone's (its offset then)."""
    where = now.tzinfo or UTC
    day = from_iso(occurred_at).astimezone(where).date()
    return f"{day.isoformat()}, {_between(day, now.astimezone(where).date())}"


def window_words(start: str, end: str, granularity: str, where: tzinfo) -> str:
    """The window a query's time words were read as, for the model and the person reading the
    answer: "19 May 2026", "March 2026", "2025", "11 May 2026 to 17 May 2026", "before
    25 Dec 2025"; its days are `where`'s (the user's zone). `start`, `end`: ISO UTC, the end
    exclusive."""
    if granularity == "open" or from_iso(start).year <= _OPEN_BEFORE_YEAR:
        return f"before {_day(from_iso(end).astimezone(where))}"
    first = from_iso(start).astimezone(where)
    last = (from_iso(end) - timedelta(microseconds=1)).astimezone(where)
    if first.date() == last.date():
        return _day(first)
    if granularity == "month" and first.day == 1 and (last + timedelta(days=1)).day == 1:
        return f"{_MONTHS[first.month - 1]} {first.year}"
    if granularity == "year" and (first.month, first.day, last.month, last.day) == (1, 1, 12, 31):
        return str(first.year)
    return f"{_day(first)} to {_day(last)}"


_OPEN_BEFORE_YEAR = 1970  # an open start ("before May") is reckoned from the earliest moment
_MONTHS = (
    "January February March April May June July August September October November December"
).split()


def _day(moment: datetime) -> str:
    return f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year}"


def in_window(occurred_at: str, start: str, end: str) -> bool:
    """Whether a memory's own time lies in [start, end) (all ISO UTC, so text compares)."""
    return start <= occurred_at < end
