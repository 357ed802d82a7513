"""A memory's date as a model reads it: the day it happened and how long before the recall's
reference time ("2026-05-06, 3 weeks ago"), so a model can answer "when did I ...?" and
"how long ago ...?" without date arithmetic of its own."""

from __future__ import annotations

from datetime import UTC, date, datetime

from cortex_mcp.models import from_iso


def relative_phrase(moment: datetime, now: datetime) -> str:
    """'today', 'yesterday', '5 days ago', '3 weeks ago', '4 months ago', '2 years ago' (or
    'tomorrow', 'in 3 days' ... for a moment after `now`): calendar days, whole weeks, whole
    calendar months and years, in `now`'s time zone (the user's)."""
    where = now.tzinfo or UTC
    earlier, later = moment.astimezone(where).date(), now.astimezone(where).date()
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
    moment = from_iso(occurred_at)
    day = moment.astimezone(now.tzinfo or UTC).date().isoformat()
    return f"{day}, {relative_phrase(moment, now)}"
