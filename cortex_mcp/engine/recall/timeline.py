"""The dashboard timeline's axis: which days of memories it shows and at what granularity.

Memories are placed by their own time (`occurred_at`). The axis runs from the earliest to the
latest day with memories, except for a few outliers far from the rest: at most 2% of the
memories at each end (one when there are fewer than 100, none when fewer than 5) are left off
the chart when they lie further beyond the others than the others' own span, and 90 days at
least. So one memory dated years ago does not squash the others into a corner, while two
real periods (a conversation from 2023 imported today, and today's memories) both stay on
the chart. What is left off is counted, and `fit="all"` shows everything.

The bucket follows the span shown: days up to 62 days, weeks (from Monday) up to a year,
months up to six years, years beyond; every bucket between the first and the last is given,
at zero when it has none."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

OUTLIER_SHARE = 0.02  # at most this share of the memories is left off at each end
OUTLIER_MIN_MEMORIES = 5  # below this, nothing is left off
OUTLIER_MIN_GAP = timedelta(days=90)  # an outlier lies at least this far beyond the rest

_DAYS_PER_BUCKET = (("day", 62), ("week", 366), ("month", 6 * 366))


@dataclass(frozen=True)
class Day:
    day: date
    counts: dict[str, int]  # per layer

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def days_from_rows(rows: Iterable[dict[str, Any]]) -> list[Day]:
    """Per-day rows ({day: 'YYYY-MM-DD', total, <layer>: n}) as sorted Days."""
    found = [
        Day(
            date.fromisoformat(row["day"]),
            {k: int(v) for k, v in row.items() if k not in ("day", "total")},
        )
        for row in rows
    ]
    return sorted(found, key=lambda d: d.day)


def fitted_range(days: list[Day]) -> tuple[date, date]:
    """The first and last day the chart shows (`days` sorted, not empty)."""
    total = sum(d.total for d in days)
    allowed = max(1, int(total * OUTLIER_SHARE)) if total >= OUTLIER_MIN_MEMORIES else 0
    low = _inner_edge(days, allowed)
    high = _inner_edge(list(reversed(days)), allowed)
    margin = max(high - low, OUTLIER_MIN_GAP)
    # distances, not low - margin: a span of millennia would reach past the calendar
    shown = [d.day for d in days if low - d.day <= margin and d.day - high <= margin]
    return shown[0], shown[-1]


def _inner_edge(days: list[Day], allowed: int) -> date:
    """The first day of `days` after at most `allowed` memories from its start."""
    passed = 0
    for d in days:
        passed += d.total
        if passed > allowed:
            return d.day
    return days[-1].day


def granularity(start: date, end: date) -> str:
    span = (end - start).days + 1
    for name, most in _DAYS_PER_BUCKET:
        if span <= most:
            return name
    return "year"


def bucket_start(day: date, unit: str) -> date:
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    if unit == "year":
        return day.replace(month=1, day=1)
    return day


def next_bucket(start: date, unit: str) -> date:
    if unit == "day":
        return start + timedelta(days=1)
    if unit == "week":
        return start + timedelta(days=7)
    if unit == "month":
        return date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return date(start.year + 1, 1, 1)


def timeline(rows: Iterable[dict[str, Any]], layers: list[str], *, fit: bool) -> dict[str, Any]:
    """The chart's data from per-day counts: {by, granularity, start, end, earliest, latest,
    buckets [{start, total, <layer>...}], total, off_chart {before, after}}."""
    days = days_from_rows(rows)
    if not days:
        return {
            "by": "occurred_at",
            "granularity": "day",
            "start": None,
            "end": None,
            "earliest": None,
            "latest": None,
            "buckets": [],
            "total": 0,
            "off_chart": {"before": 0, "after": 0},
        }
    start, end = fitted_range(days) if fit else (days[0].day, days[-1].day)
    unit = granularity(start, end)
    buckets: dict[date, dict[str, Any]] = {}
    cursor = bucket_start(start, unit)
    while cursor <= end:
        buckets[cursor] = {"start": cursor.isoformat(), "total": 0, **dict.fromkeys(layers, 0)}
        cursor = next_bucket(cursor, unit)
    for d in days:
        if start <= d.day <= end:
            bucket = buckets[bucket_start(d.day, unit)]
            for layer, n in d.counts.items():
                bucket[layer] = bucket.get(layer, 0) + n
            bucket["total"] += d.total
    return {
        "by": "occurred_at",
        "granularity": unit,
        "start": start.isoformat(),
        "end": end.isoformat(),
        "earliest": days[0].day.isoformat(),
        "latest": days[-1].day.isoformat(),
        "buckets": list(buckets.values()),
        "total": sum(d.total for d in days if start <= d.day <= end),
        "off_chart": {
            "before": sum(d.total for d in days if d.day < start),
            "after": sum(d.total for d in days if d.day > end),
        },
    }
