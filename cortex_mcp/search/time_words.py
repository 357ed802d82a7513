"""Words that can only be about time, to say so when the parser read no window from a query
that has them ("two Fridays ago", "Q1", "年初"): the answer then tells the model that its time
words were not understood, instead of silently ranking as if none were said.

Only words that are a time in every use are listed (not "May", "march", "weekend",
"quarter", a weekday or a bare number, which are often a name or a topic): a false "not
understood" would mislead as much as a silent miss."""

from __future__ import annotations

import re

_TIME_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|fortnight|ytd|year[- ]to[- ]date|q[1-4]|ago"
    r"|recently|lately|earlier\s+this\s+(?:week|month|year)"
    r"|(?:last|this|next|past|previous)\s+(?:week|month|year|quarter|weekend|night|spring"
    r"|summer|autumn|fall|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|january|february|march|april|may|june|july|august|september|october|november"
    r"|december)"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{4}-\d{2}(?:-\d{2})?)\b"
    r"|昨天|前天|今天|明天|上周|上週|本周|这周|上个月|上個月|这个月|去年|今年|前年|年初|年底|年末"
    r"|月初|月底|月末|上旬|中旬|下旬|最近|前几天|昨日|一昨日|今日|先週|今週|先月|今月|昨年|年始|先日",
    re.IGNORECASE,
)


def unread_time_words(query: str) -> str | None:
    """The first words of `query` that can only be about time, or None."""
    found = _TIME_WORDS.search(query)
    return found.group(0) if found else None
