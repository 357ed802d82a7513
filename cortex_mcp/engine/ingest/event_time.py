"""When what a turn tells happened, by the time words the speaker dates it with: "last Tuesday
I switched my phone plan", said today, happened last Tuesday, and the memories written from
the turn take that day as their own time (`occurred_at`) instead of when it was said.

Only a statement that names a short past period in words that say it is past ("yesterday",
"last Tuesday", "3 days ago", "on May 2", "上周五", "先週の金曜日": a day, a weekend, a week, at
most 7 days, ended before the day it was said) is dated by it; a bare weekday ("Tuesday
night") is as often a plan as a memory and dates nothing; a question ("what did I do last Tuesday?"),
a longer period ("last year", "in 2019": the speaker tells when, not the day) and a time to
come keep the time it was said. The period is read in the user's time zone, from when it was
said, and the memory is dated at its first day's start (shown as the day alone)."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta

from cortex_mcp.models import to_iso
from cortex_mcp.search.time_expressions import parse_time

LONGEST = timedelta(days=7)
_QUESTION = re.compile(r"[?？]")
# words that put a period in the past: a bare weekday ("Tuesday night") is as often the next
# one, a plan, as the last
_PAST = re.compile(
    r"\b(?:yesterday|ago|last|previous|past|earlier|before|other\s+day)\b|\d"
    r"|昨|前天|上周|上週|上个|上個|上星期|前几天|先週|先月|先日|前の|この前|去年|昨年",
    re.IGNORECASE,
)


def event_time(text: str, said: datetime) -> str | None:
    """The `to_iso` start of the past day (or days) `text` dates what it tells by, read
    against `said` (aware, on the user's clock); None when it dates nothing so."""
    if not text or _QUESTION.search(text):
        return None
    window = parse_time(text, said).window
    if window is None or not _PAST.search(window.expression):
        return None
    said_day = datetime.combine(said.date(), time(), said.tzinfo)
    if window.end > said_day or window.end - window.start > LONGEST:
        return None
    return to_iso(window.start)
