"""Time expressions in a query (English, Chinese, Japanese) against a fixed reference time:
the window each names, the near misses that name none, and the words left for searching.

The reference time is Wednesday 20 May 2026, 15:00 (UTC unless a test says otherwise).
A row is (query, first day, day after the last, granularity); None for an open start."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from cortex_mcp.search import time_expressions
from cortex_mcp.search.time_expressions import TimeQuery, parse_time

NOW = datetime(2026, 5, 20, 15, 0, tzinfo=UTC)
OPEN = None

Row = tuple[str, str | None, str, str]


def window_days(query: str, now: datetime = NOW) -> tuple[str | None, str, str] | None:
    window = parse_time(query, now).window
    if window is None:
        return None
    start = None if window.start.year < 1900 else window.start.date().isoformat()
    return start, window.end.date().isoformat(), window.granularity


ENGLISH: list[Row] = [
    ("On May 6th, I read a book. What was its name?", "2026-05-06", "2026-05-07", "day"),
    ("what did I read on the 6th of May?", "2026-05-06", "2026-05-07", "day"),
    ("May 25", "2025-05-25", "2025-05-26", "day"),  # later than now this year: last year
    ("6 May 2023", "2023-05-06", "2023-05-07", "day"),
    ("May 6, 2023", "2023-05-06", "2023-05-07", "day"),
    ("2023-05-06", "2023-05-06", "2023-05-07", "day"),
    ("2023/05/06", "2023-05-06", "2023-05-07", "day"),
    ("13/05/2023", "2023-05-13", "2023-05-14", "day"),  # day first: 13 is no month
    ("05/13/2023", "2023-05-13", "2023-05-14", "day"),  # month first
    ("July 2023", "2023-07-01", "2023-08-01", "month"),
    ("2023-07", "2023-07-01", "2023-08-01", "month"),
    ("in July", "2025-07-01", "2025-08-01", "month"),
    ("what did we plan in May", "2026-05-01", "2026-06-01", "month"),
    ("early May", "2026-05-01", "2026-05-11", "range"),
    ("the end of April", "2026-04-21", "2026-05-01", "range"),
    ("in 2023", "2023-01-01", "2024-01-01", "year"),
    ("May last year", "2025-05-01", "2025-06-01", "month"),
    ("today", "2026-05-20", "2026-05-21", "day"),
    ("yesterday", "2026-05-19", "2026-05-20", "day"),
    ("the day before yesterday", "2026-05-18", "2026-05-19", "day"),
    ("last week", "2026-05-11", "2026-05-18", "week"),
    ("this week", "2026-05-18", "2026-05-25", "week"),
    ("two weeks ago", "2026-05-04", "2026-05-11", "week"),
    ("3 days ago", "2026-05-17", "2026-05-18", "day"),
    ("a few days ago", "2026-05-13", "2026-05-20", "range"),
    ("recently", "2026-05-06", "2026-05-21", "range"),
    ("this month", "2026-05-01", "2026-06-01", "month"),
    ("last month", "2026-04-01", "2026-05-01", "month"),
    ("2 months ago", "2026-03-01", "2026-04-01", "month"),
    ("last year", "2025-01-01", "2026-01-01", "year"),
    ("last summer", "2025-06-01", "2025-09-01", "season"),
    ("last winter", "2025-12-01", "2026-03-01", "season"),
    ("on Tuesday", "2026-05-19", "2026-05-20", "day"),
    ("on Wednesday", "2026-05-20", "2026-05-21", "day"),  # today is one
    ("last Wednesday", "2026-05-13", "2026-05-14", "day"),
    ("last Friday", "2026-05-15", "2026-05-16", "day"),
    ("Friday last week", "2026-05-15", "2026-05-16", "day"),
    ("the past 3 days", "2026-05-17", "2026-05-21", "range"),
    ("since Tuesday", "2026-05-19", "2026-05-21", "range"),
    ("since last week", "2026-05-11", "2026-05-21", "range"),
    ("after May 3", "2026-05-04", "2026-05-21", "range"),
    ("between March and May", "2026-03-01", "2026-06-01", "range"),
    ("from May 1 to May 3", "2026-05-01", "2026-05-04", "range"),
    ("from May 1 to 3", "2026-05-01", "2026-05-04", "range"),
    ("May 1-3", "2026-05-01", "2026-05-04", "range"),
    ("from December 28 to January 2", "2025-12-28", "2026-01-03", "range"),
    ("before June", OPEN, "2025-06-01", "open"),
    ("until April", OPEN, "2026-05-01", "open"),
    ("what happened around Nov 27?", "2025-11-24", "2025-12-01", "range"),
    ("What did Caroline do on the 7th of May, 2023?", "2023-05-07", "2023-05-08", "day"),
    ("in the summer of 2023", "2023-06-01", "2023-09-01", "season"),
    ("the first week of May", "2026-05-01", "2026-05-08", "range"),
    ("last Monday morning", "2026-05-18", "2026-05-19", "day"),
    ("over the weekend", "2026-05-16", "2026-05-18", "range"),
    ("the end of last month", "2026-04-21", "2026-05-01", "range"),
    ("late 2023", "2023-09-01", "2024-01-01", "range"),
    ("since May", "2026-05-01", "2026-05-21", "range"),
    ("May 2 and May 3", "2026-05-02", "2026-05-04", "range"),
    ("this time last year", "2025-05-13", "2025-05-28", "range"),
    ("before Christmas", OPEN, "2025-12-25", "open"),
    ("what did I say on Halloween", "2025-10-31", "2025-11-01", "day"),
    # a named year wins over a relative word: the question is about what was said then
    (
        "What did Maria start recently, as mentioned on 3 June, 2023?",
        "2023-06-03",
        "2023-06-04",
        "day",
    ),
    ("What did Joanna finish last Friday on 23 January, 2022?", "2022-01-23", "2022-01-24", "day"),
    # a span next to a day keeps the day: what is told on a day is often about the days before
    ("the week before August 3, 2023", "2023-07-27", "2023-08-04", "range"),
    ("two weeks before August 11, 2023", "2023-07-28", "2023-08-12", "range"),
    ("the Sunday before October 25, 2022", "2022-10-23", "2022-10-26", "range"),
    ("in last weekend before April 10, 2023", "2023-04-03", "2023-04-11", "range"),
    ("the day after May 3", "2026-05-03", "2026-05-05", "range"),
    ("the first half of September 2022", "2022-09-01", "2022-09-16", "range"),
    ("as of December 2023", OPEN, "2024-01-01", "open"),
    ("2023-05-06T10:00:00", "2023-05-06", "2023-05-07", "day"),
    ("13.05.2023", "2023-05-13", "2023-05-14", "day"),
    ("a couple days ago", "2026-05-18", "2026-05-19", "day"),
    ("3 weeks back", "2026-04-27", "2026-05-04", "week"),
    ("in the last 24 hours", "2026-05-19", "2026-05-21", "range"),
    ("this past Monday", "2026-05-18", "2026-05-19", "day"),
    ("Tuesday, May 5", "2026-05-05", "2026-05-06", "day"),
    ("3 weeks and 2 days ago", "2026-04-27", "2026-04-28", "day"),  # the finer part's unit
    ("1 year and 2 months ago", "2025-03-01", "2025-04-01", "month"),
    ("a year ago today", "2025-05-20", "2025-05-21", "day"),
    ("this day two years ago", "2024-05-20", "2024-05-21", "day"),
    ("the first Monday of May", "2026-05-04", "2026-05-05", "day"),
    ("the last Friday of May", "2025-05-30", "2025-05-31", "day"),  # this year's is to come
    ("the 2nd Tuesday of last month", "2026-04-14", "2026-04-15", "day"),
    ("May 3rd or 4th", "2026-05-03", "2026-05-05", "range"),
    ("the week of May 4", "2026-05-04", "2026-05-11", "week"),
    ("the week of May 6th, 2023", "2023-05-01", "2023-05-08", "week"),
    ("from May 4 to Friday", "2026-05-04", "2026-05-09", "range"),  # that week's Friday
    ("what did I buy on Black Friday", "2025-11-28", "2025-11-29", "day"),  # Thanksgiving + 1
    ("last Cyber Monday", "2025-12-01", "2025-12-02", "day"),
    ("we had a good Friday", "2026-05-15", "2026-05-16", "day"),  # not Good Friday
    ("the Friday before last", "2026-05-08", "2026-05-09", "day"),
    ("the previous Saturday", "2026-05-16", "2026-05-17", "day"),
    ("in December 2030", "2030-12-01", "2031-01-01", "month"),  # a named year is taken as said
]

CHINESE: list[Row] = [
    ("在5月6号我读了一本书，它的名字是？", "2026-05-06", "2026-05-07", "day"),
    ("5月6日", "2026-05-06", "2026-05-07", "day"),
    ("五月六日", "2026-05-06", "2026-05-07", "day"),
    ("十二月二十五号", "2025-12-25", "2025-12-26", "day"),
    ("2023年5月", "2023-05-01", "2023-06-01", "month"),
    ("2023年5月6日", "2023-05-06", "2023-05-07", "day"),
    ("2023年", "2023-01-01", "2024-01-01", "year"),
    ("去年5月", "2025-05-01", "2025-06-01", "month"),
    ("5月初", "2026-05-01", "2026-05-11", "range"),
    ("在3月我们去了哪里", "2026-03-01", "2026-04-01", "month"),
    ("上个月6号", "2026-04-06", "2026-04-07", "day"),
    ("今天", "2026-05-20", "2026-05-21", "day"),
    ("昨天", "2026-05-19", "2026-05-20", "day"),
    ("前天", "2026-05-18", "2026-05-19", "day"),
    ("三天前", "2026-05-17", "2026-05-18", "day"),
    ("两周前", "2026-05-04", "2026-05-11", "week"),
    ("上周", "2026-05-11", "2026-05-18", "week"),
    ("这周", "2026-05-18", "2026-05-25", "week"),
    ("上个月", "2026-04-01", "2026-05-01", "month"),
    ("这个月", "2026-05-01", "2026-06-01", "month"),
    ("去年", "2025-01-01", "2026-01-01", "year"),
    ("去年夏天", "2025-06-01", "2025-09-01", "season"),
    ("我最近去厦门旅游了", "2026-05-06", "2026-05-21", "range"),
    ("上周二", "2026-05-12", "2026-05-13", "day"),
    ("星期天", "2026-05-17", "2026-05-18", "day"),
    ("过去三天", "2026-05-17", "2026-05-21", "range"),
    ("5月1日到5月3日", "2026-05-01", "2026-05-04", "range"),
    ("5月1日到3日", "2026-05-01", "2026-05-04", "range"),
    ("从3月到5月", "2026-03-01", "2026-06-01", "range"),
    ("上周以来", "2026-05-11", "2026-05-21", "range"),
    ("6月以前", OPEN, "2025-06-01", "open"),
    ("12月25日左右", "2025-12-22", "2025-12-29", "range"),
    ("上周五开会说了什么", "2026-05-15", "2026-05-16", "day"),
    ("这个月初", "2026-05-01", "2026-05-11", "range"),
    ("上个月底", "2026-04-21", "2026-05-01", "range"),
    ("去年年底", "2025-11-01", "2026-01-01", "range"),
    ("前两天", "2026-05-17", "2026-05-20", "range"),
    ("前几周", "2026-04-13", "2026-05-11", "range"),
    ("去年的今天", "2025-05-20", "2025-05-21", "day"),
    ("截至5月3日", OPEN, "2026-05-04", "open"),
    ("国庆节去了哪里", "2025-10-01", "2025-10-08", "range"),
    ("上个周末", "2026-05-16", "2026-05-18", "range"),
    ("这两天", "2026-05-18", "2026-05-21", "range"),
    ("半年前", "2025-10-01", "2026-01-01", "range"),
    ("上个星期三我们吃了什么", "2026-05-13", "2026-05-14", "day"),
    ("礼拜天去了哪里", "2026-05-17", "2026-05-18", "day"),
    ("看一下周五的会议记录", "2026-05-15", "2026-05-16", "day"),  # 一下 is no 下 (next)
    ("两周零三天前", "2026-05-03", "2026-05-04", "day"),
    ("一年零两个月前", "2025-03-01", "2025-04-01", "month"),
    ("一年前的今天", "2025-05-20", "2025-05-21", "day"),
    ("5月的第一个星期一", "2026-05-04", "2026-05-05", "day"),
    ("4月最后一个周五", "2026-04-24", "2026-04-25", "day"),
    ("上周一到周三", "2026-05-11", "2026-05-14", "range"),  # the end in the start's week
    ("5月3日或4日", "2026-05-03", "2026-05-05", "range"),
    ("5月6日站会说了什么", "2026-05-06", "2026-05-07", "day"),  # a stand-up, not a station
]

JAPANESE: list[Row] = [
    ("先週話したレストランは？", "2026-05-11", "2026-05-18", "week"),
    ("5月6日に何を読んだ？", "2026-05-06", "2026-05-07", "day"),
    ("2023年5月6日", "2023-05-06", "2023-05-07", "day"),
    ("昨日", "2026-05-19", "2026-05-20", "day"),
    ("一昨日", "2026-05-18", "2026-05-19", "day"),
    ("先月", "2026-04-01", "2026-05-01", "month"),
    ("今月", "2026-05-01", "2026-06-01", "month"),
    ("今週", "2026-05-18", "2026-05-25", "week"),
    ("三日前", "2026-05-17", "2026-05-18", "day"),
    ("3日前に会った人", "2026-05-17", "2026-05-18", "day"),
    ("最近", "2026-05-06", "2026-05-21", "range"),
    ("去年の夏", "2025-06-01", "2025-09-01", "season"),
    (
        "前年に行った店",
        "2025-01-01",
        "2026-01-01",
        "year",
    ),  # the previous year (in Chinese: two back)
    ("先週の金曜日", "2026-05-15", "2026-05-16", "day"),
    ("火曜日に", "2026-05-19", "2026-05-20", "day"),
    ("5月1日から5月3日まで", "2026-05-01", "2026-05-04", "range"),
    ("火曜日から", "2026-05-19", "2026-05-21", "range"),
    ("6月より前", OPEN, "2025-06-01", "open"),
    ("この前の日曜日", "2026-05-17", "2026-05-18", "day"),
    ("4月下旬", "2026-04-21", "2026-05-01", "range"),
    ("5月3日以降", "2026-05-03", "2026-05-21", "range"),
    ("ここ3日間", "2026-05-17", "2026-05-21", "range"),
    ("去年の今頃", "2025-05-13", "2025-05-28", "range"),
    ("クリスマスに何をした", "2025-12-25", "2025-12-26", "day"),
    ("5月6日(土)に", "2026-05-06", "2026-05-07", "day"),
    ("さっき話したこと", "2026-05-20", "2026-05-21", "day"),
    ("令和5年5月6日", "2023-05-06", "2023-05-07", "day"),
    ("平成元年", "1989-01-01", "1990-01-01", "year"),
    ("1年2ヶ月前", "2025-03-01", "2025-04-01", "month"),
    ("2年前の今日", "2024-05-20", "2024-05-21", "day"),
    ("5月の第1月曜日", "2026-05-04", "2026-05-05", "day"),
    ("先週の月曜から水曜まで", "2026-05-11", "2026-05-14", "range"),
    ("5月3日か4日に", "2026-05-03", "2026-05-05", "range"),
]


# Issue 37: phrases that were read as a wrong window ("the weekend before last" as last
# weekend, "Christmas last year" as all 2025) or not read at all ("Q1", "YTD", "年初", "11/24")
PHRASES: list[Row] = [
    ("what did I do over the weekend before last", "2026-05-09", "2026-05-11", "range"),
    ("what did I do the weekend before last", "2026-05-09", "2026-05-11", "range"),
    ("two weekends ago", "2026-05-09", "2026-05-11", "range"),
    ("3 weekends back", "2026-05-02", "2026-05-04", "range"),
    ("two Fridays ago", "2026-05-08", "2026-05-09", "day"),
    ("3 Mondays ago", "2026-05-04", "2026-05-05", "day"),
    ("a fortnight ago", "2026-05-04", "2026-05-11", "week"),  # as "two weeks ago"
    ("over the past fortnight", "2026-05-06", "2026-05-21", "range"),
    ("4 hours ago", "2026-05-20", "2026-05-21", "day"),
    ("Tuesday the 24th", "2026-03-24", "2026-03-25", "day"),  # the last 24th on a Tuesday
    ("on Friday the 15th", "2026-05-15", "2026-05-16", "day"),
    ("Tuesday the 5th of May", "2026-05-05", "2026-05-06", "day"),
    ("the first weekend of November", "2025-11-01", "2025-11-03", "range"),
    ("the last weekend in April", "2026-04-25", "2026-04-27", "range"),
    ("the 2nd weekend of last month", "2026-04-11", "2026-04-13", "range"),
    ("in the last quarter of 2025", "2025-10-01", "2026-01-01", "quarter"),
    ("Q1", "2026-01-01", "2026-04-01", "quarter"),
    ("what did we ship in Q3", "2025-07-01", "2025-10-01", "quarter"),  # not begun this year
    ("Q2 2024", "2024-04-01", "2024-07-01", "quarter"),
    ("2024Q2", "2024-04-01", "2024-07-01", "quarter"),
    ("Q4 of last year", "2025-10-01", "2026-01-01", "quarter"),
    ("last quarter", "2026-01-01", "2026-04-01", "quarter"),
    ("in the last quarter", "2026-01-01", "2026-04-01", "quarter"),
    ("this quarter", "2026-04-01", "2026-07-01", "quarter"),
    ("two quarters ago", "2025-10-01", "2026-01-01", "quarter"),
    ("the first quarter of last year", "2025-01-01", "2025-04-01", "quarter"),
    ("H2 2025", "2025-07-01", "2026-01-01", "range"),
    ("the first half of last year", "2025-01-01", "2025-07-01", "range"),
    ("the second half of the year", "2025-07-01", "2026-01-01", "range"),
    ("YTD", "2026-01-01", "2026-05-21", "range"),
    ("year-to-date spending", "2026-01-01", "2026-05-21", "range"),
    ("so far this month", "2026-05-01", "2026-05-21", "range"),
    ("at the start of the year", "2026-01-01", "2026-03-01", "range"),
    ("since the beginning of the year", "2026-01-01", "2026-05-21", "range"),
    ("since the start of the month", "2026-05-01", "2026-05-21", "range"),
    ("at the end of the year", "2025-11-01", "2026-01-01", "range"),  # this year's is to come
    ("the end of the month", "2026-04-21", "2026-05-01", "range"),
    ("earlier this month", "2026-05-01", "2026-05-21", "range"),  # today too
    ("earlier this week", "2026-05-18", "2026-05-21", "range"),
    ("Christmas last year", "2025-12-25", "2025-12-26", "day"),
    ("last year's Christmas party", "2025-12-25", "2025-12-26", "day"),
    ("New Year's Eve last year", "2025-12-31", "2026-01-01", "day"),
    ("Halloween in 2024", "2024-10-31", "2024-11-01", "day"),
    ("Halloween two years ago", "2024-10-31", "2024-11-01", "day"),
    ("the Christmas before last", "2024-12-25", "2024-12-26", "day"),
    ("11/24", "2025-11-24", "2025-11-25", "day"),
    ("on 28/2", "2026-02-28", "2026-03-01", "day"),
    ("去年圣诞节", "2025-12-25", "2025-12-26", "day"),
    ("去年的圣诞节吃了什么", "2025-12-25", "2025-12-26", "day"),
    ("去年元旦", "2025-01-01", "2025-01-02", "day"),
    ("去年国庆节", "2025-10-01", "2025-10-08", "range"),
    ("今年五一", "2026-05-01", "2026-05-06", "range"),
    ("上上个周末", "2026-05-09", "2026-05-11", "range"),
    ("两个周末前", "2026-05-09", "2026-05-11", "range"),
    ("第二季度", "2026-04-01", "2026-07-01", "quarter"),
    ("上个季度", "2026-01-01", "2026-04-01", "quarter"),
    ("去年第四季度", "2025-10-01", "2026-01-01", "quarter"),
    ("今年Q1", "2026-01-01", "2026-04-01", "quarter"),
    ("年初", "2026-01-01", "2026-03-01", "range"),
    ("年末", "2025-11-01", "2026-01-01", "range"),
    ("年底做了什么", "2025-11-01", "2026-01-01", "range"),
    ("月初", "2026-05-01", "2026-05-11", "range"),
    ("月底", "2026-04-21", "2026-05-01", "range"),
    ("年初至今", "2026-01-01", "2026-05-21", "range"),
    ("今年到现在", "2026-01-01", "2026-05-21", "range"),
    ("这个月早些时候", "2026-05-01", "2026-05-21", "range"),
    ("11月的第一个周末", "2025-11-01", "2025-11-03", "range"),
    ("13号星期三", "2026-05-13", "2026-05-14", "day"),
    ("星期三13号", "2026-05-13", "2026-05-14", "day"),
    ("昨年のクリスマス", "2025-12-25", "2025-12-26", "day"),
    ("去年のお正月", "2025-01-01", "2025-01-04", "range"),
    ("先々週末", "2026-05-09", "2026-05-11", "range"),
    ("第1四半期", "2026-01-01", "2026-04-01", "quarter"),
    ("前四半期", "2026-01-01", "2026-04-01", "quarter"),
    ("今年に入ってから", "2026-01-01", "2026-05-21", "range"),
    ("年末年始", "2025-12-29", "2026-01-04", "range"),
    ("11月の最初の週末", "2025-11-01", "2025-11-03", "range"),
    ("3週間前の金曜日", "2026-05-01", "2026-05-02", "day"),
    ("今月前半", "2026-05-01", "2026-05-16", "range"),
    # holidays of other calendars and rules, with a year word too
    ("on Easter", "2026-04-05", "2026-04-06", "day"),
    ("Easter last year", "2025-04-20", "2025-04-21", "day"),
    ("on Good Friday", "2026-04-03", "2026-04-04", "day"),
    ("Mother's Day last year", "2025-05-11", "2025-05-12", "day"),
    ("over Memorial Day weekend", "2025-05-24", "2025-05-27", "range"),
    ("New Year last year", "2024-12-30", "2025-01-03", "range"),  # the one that began 2025
    ("去年春节", "2025-01-28", "2025-02-04", "range"),  # 除夕 to 初六
    ("2024年中秋节", "2024-09-17", "2024-09-18", "day"),
    ("去年七夕", "2025-08-29", "2025-08-30", "day"),
    ("去年の七夕", "2025-07-07", "2025-07-08", "day"),  # Japan keeps 7 July
    ("昨年のゴールデンウィーク", "2025-04-29", "2025-05-06", "range"),
    # more of the same kinds
    ("this year's Q1", "2026-01-01", "2026-04-01", "quarter"),
    ("the last quarter of the year", "2025-10-01", "2026-01-01", "quarter"),
    ("Q1-2025", "2025-01-01", "2025-04-01", "quarter"),
    ("at year-end", "2025-11-01", "2026-01-01", "range"),
    ("this month to date", "2026-05-01", "2026-05-21", "range"),
    ("a week ago today", "2026-05-13", "2026-05-14", "day"),
    ("half a year ago", "2025-10-01", "2026-01-01", "range"),
    ("the last two weekends", "2026-05-09", "2026-05-21", "range"),
    ("since the first of the month", "2026-05-01", "2026-05-21", "range"),
    ("end of last week", "2026-05-15", "2026-05-18", "range"),
    ("since the start of the week", "2026-05-18", "2026-05-21", "range"),
    ("两周前的周末", "2026-05-09", "2026-05-11", "range"),
    ("周末去了哪里", "2026-05-16", "2026-05-18", "range"),
    ("前两个周末", "2026-05-09", "2026-05-21", "range"),
    ("上个月的第一个周末", "2026-04-04", "2026-04-06", "range"),
    ("24年Q3", "2024-07-01", "2024-10-01", "quarter"),
    ("去年的最后一个季度", "2025-10-01", "2026-01-01", "quarter"),
    ("上个月月底", "2026-04-21", "2026-05-01", "range"),
    ("上半年", "2026-01-01", "2026-07-01", "range"),
    ("去年の年末", "2025-11-01", "2026-01-01", "range"),
    ("年初来", "2026-01-01", "2026-05-21", "range"),
    ("先週の週末", "2026-05-16", "2026-05-18", "range"),
    ("from Tuesday onwards", "2026-05-19", "2026-05-21", "range"),
    ("what did we do from May on?", "2026-05-01", "2026-05-21", "range"),
    ("24日(火)", "2026-03-24", "2026-03-25", "day"),
    ("去年过圣诞节的时候", "2025-12-25", "2025-12-26", "day"),
    ("今年に入って", "2026-01-01", "2026-05-21", "range"),
    ("年始から", "2026-01-01", "2026-05-21", "range"),
    ("the New Year before last", "2024-12-30", "2025-01-03", "range"),
    ("fifteen days ago", "2026-05-05", "2026-05-06", "day"),
    ("两周前的那个周末", "2026-05-09", "2026-05-11", "range"),
    ("上一个周末", "2026-05-16", "2026-05-18", "range"),
    ("两个星期五之前", "2026-05-08", "2026-05-09", "day"),
]
# the Chinese holidays by their English names (once "Spring Festival" and "Mid-Autumn Festival"
# were read as the seasons, and "Chinese New Year" not at all), and a holiday after "over the",
# "on the", "at the"
HOLIDAYS_IN_ENGLISH: list[Row] = [
    ("what did we eat on Chinese New Year", "2026-02-16", "2026-02-23", "range"),  # 除夕 to 初六
    ("over the Spring Festival", "2026-02-16", "2026-02-23", "range"),
    ("what did we do over the Lunar New Year", "2026-02-16", "2026-02-23", "range"),
    ("on the Lantern Festival", "2026-03-03", "2026-03-04", "day"),
    ("at the mid autumn festival", "2025-10-06", "2025-10-07", "day"),
    ("on Mid-Autumn Festival 2024", "2024-09-17", "2024-09-18", "day"),
    ("on the Dragon Boat Festival last year", "2025-05-31", "2025-06-01", "day"),
    ("over Tomb-Sweeping Day", "2026-04-04", "2026-04-07", "range"),
    ("on Canada Day", "2025-07-01", "2025-07-02", "day"),
    ("at Christmas", "2025-12-25", "2025-12-26", "day"),
    ("over the Christmas holidays", "2025-12-24", "2026-01-02", "range"),
]
HOLIDAY_NEAR_MISSES = [
    "at the Christmas party",  # the party's day, not Christmas
    "spring festival gala tickets",  # no cue
    "during the Spring Festival",  # "during" is no cue: "love during Thanksgiving" is a habit
    "what did I buy for Chinese New Year",  # about the holiday, not its day
    "the spring collection",
]
# how people type in a chat: short units and days, "yday", 前阵子 (a while back), "over the summer"
CHAT_SHORTHAND: list[Row] = [
    ("3 wks ago", "2026-04-27", "2026-05-04", "week"),
    ("2 mos ago", "2026-03-01", "2026-04-01", "month"),
    ("2 yrs ago", "2024-01-01", "2025-01-01", "year"),
    ("5 hrs ago", "2026-05-20", "2026-05-21", "day"),
    ("a couple wks back", "2026-05-04", "2026-05-11", "week"),
    ("last wk", "2026-05-11", "2026-05-18", "week"),
    ("last mth", "2026-04-01", "2026-05-01", "month"),
    ("last yr", "2025-01-01", "2026-01-01", "year"),
    ("last wknd", "2026-05-16", "2026-05-18", "range"),
    ("on fri", "2026-05-15", "2026-05-16", "day"),
    ("last thurs", "2026-05-14", "2026-05-15", "day"),
    ("what did I eat yday", "2026-05-19", "2026-05-20", "day"),
    ("前段时间", "2026-04-13", "2026-05-11", "range"),  # as loose as 前几周
    ("前一阵子我去了趟上海", "2026-04-13", "2026-05-11", "range"),
    ("what did I do over the summer", "2025-06-01", "2025-09-01", "season"),
]
CHAT_SHORTHAND_NEAR_MISSES = [
    "I last sat there",  # sat, sun, wed, mon in lower case are words
    "on sat",
    "2 mo old puppy",
    "my yr 3 exams",
    "the min wage",
    "mo money mo problems",
    "I got over the fall quickly",  # a tumble
]
# two numerals side by side are a guess, not a number: 两三天前 was read as 23 days ago,
# 两三个月前 as 23 months; 去年の暮れ and 去年の今ごろ as all of last year
CJK_GUESSES: list[Row] = [
    ("两三天前", "2026-05-17", "2026-05-19", "range"),
    ("三四天前", "2026-05-16", "2026-05-18", "range"),
    ("两三个月前", "2026-02-01", "2026-04-01", "range"),
    ("五六年前我在北京工作", "2020-01-01", "2022-01-01", "range"),
    ("过去两三天", "2026-05-17", "2026-05-21", "range"),
    ("二、三日前", "2026-05-17", "2026-05-19", "range"),
    ("一週間ほど前", "2026-05-11", "2026-05-18", "week"),
    ("去年の暮れ", "2025-11-01", "2026-01-01", "range"),
    ("去年の今ごろ", "2025-05-13", "2025-05-28", "range"),
]
CJK_GUESS_NEAR_MISSES = ["夕暮れに散歩した", "他有三四个朋友", "二三十个人来了"]
# a count said roughly: 十几天前 was read as 几天前 (the last week), 一个半月前 as 半月前, 十数年前
# as 数年前, 几十年前 as ten years ago; "two or three days ago" as three days ago alone
ROUGH_COUNTS: list[Row] = [
    ("十几天前", "2026-05-01", "2026-05-10", "range"),  # 11 to 19 days
    ("二十多天前", "2026-04-21", "2026-05-01", "range"),  # 20 to 29
    ("一个多月前", "2026-03-21", "2026-04-21", "range"),
    ("三年多前", "2022-05-21", "2023-05-22", "range"),
    ("一年半前", "2024-08-19", "2025-02-19", "range"),
    ("一个半月前", "2026-03-29", "2026-04-13", "range"),
    ("1か月半前", "2026-03-29", "2026-04-13", "range"),
    ("十数年前", "2007-05-25", "2015-05-24", "range"),
    ("two or three days ago", "2026-05-17", "2026-05-19", "range"),
    ("2-3 weeks ago", "2026-04-27", "2026-05-11", "range"),
    ("a day or two ago", "2026-05-18", "2026-05-20", "range"),
    ("a week or two ago", "2026-05-04", "2026-05-18", "range"),
    ("a month or so ago", "2026-03-01", "2026-05-01", "range"),
]
# 今春, 昨秋: this year's season and last year's, said in two characters
SEASONS_SAID_SHORT: list[Row] = [
    ("今春に転職した", "2026-03-01", "2026-06-01", "season"),
    ("昨秋", "2025-09-01", "2025-12-01", "season"),
    ("昨冬", "2025-12-01", "2026-03-01", "season"),  # the winter begun last December
    ("昨夏的旅行", "2025-06-01", "2025-09-01", "season"),
]
SEASONS_SAID_SHORT_NEAR_MISSES = ["今夏の旅行", "我们去春游吧", "我们去夏威夷"]  # 今夏 is to come
ROUGH_COUNT_NEAR_MISSES = [
    "几十年前",
    "十几个人",
    "三十多个人来了",
    "一年半的时间",
    "5 or 3 days ago",
]
TUESDAY = datetime(2026, 5, 19, 15, 0, tzinfo=UTC)
SATURDAY = datetime(2026, 5, 23, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(("query", "start", "end", "granularity"), PHRASES)
def test_phrases_once_misread_or_unread_name_the_window_a_person_means(
    query: str, start: str | None, end: str, granularity: str
) -> None:
    assert window_days(query) == (start, end, granularity)


# what people say that the rules once misread or left unread: holidays by their English names,
# chat shorthand, two numerals as a guess, a rough count, a season in two characters
SAID_AS_PEOPLE_SAY = (
    HOLIDAYS_IN_ENGLISH + CHAT_SHORTHAND + CJK_GUESSES + ROUGH_COUNTS + SEASONS_SAID_SHORT
)
NOT_SAID_AS_TIME = (
    HOLIDAY_NEAR_MISSES
    + CHAT_SHORTHAND_NEAR_MISSES
    + CJK_GUESS_NEAR_MISSES
    + ROUGH_COUNT_NEAR_MISSES
    + SEASONS_SAID_SHORT_NEAR_MISSES
)


@pytest.mark.parametrize(("query", "start", "end", "granularity"), SAID_AS_PEOPLE_SAY)
def test_time_as_people_say_it_names_the_window_they_mean(
    query: str, start: str | None, end: str, granularity: str
) -> None:
    assert window_days(query) == (start, end, granularity)


@pytest.mark.parametrize("query", NOT_SAID_AS_TIME)
def test_what_only_looks_like_those_words_names_no_window(query: str) -> None:
    assert parse_time(query, NOW) == TimeQuery(None, query)


@pytest.mark.parametrize("query", ["since Tuesday", "周二以来", "从周二开始", "火曜日から"])
def test_since_a_weekday_asked_on_that_weekday_starts_at_the_last_one(query: str) -> None:
    assert window_days(query, TUESDAY) == ("2026-05-12", "2026-05-20", "range")
    assert window_days("on Tuesday", TUESDAY) == ("2026-05-19", "2026-05-20", "day")


def test_on_a_weekend_the_last_weekend_and_the_one_before_are_over() -> None:
    assert window_days("last weekend", SATURDAY) == ("2026-05-16", "2026-05-18", "range")
    assert window_days("the weekend before last", SATURDAY) == ("2026-05-09", "2026-05-11", "range")
    assert window_days("two weekends ago", SATURDAY) == ("2026-05-09", "2026-05-11", "range")


def test_this_weekend_is_this_weeks_and_to_come_before_saturday() -> None:
    for query in ("this weekend", "这周末", "今週末"):
        assert window_days(query) is None  # asked on a Wednesday
        assert window_days(query, SATURDAY) == ("2026-05-23", "2026-05-25", "range")


@pytest.mark.parametrize("offset", [14, 9, -8])
def test_phrases_count_days_in_the_zone_of_now_around_its_midnight(offset: int) -> None:
    zone = timezone(timedelta(hours=offset))
    just_after = datetime(2026, 5, 19, 0, 30, tzinfo=zone)  # Tuesday there, not in UTC
    just_before = datetime(2026, 5, 19, 23, 30, tzinfo=zone)
    for now in (just_after, just_before):
        assert window_days("since Tuesday", now) == ("2026-05-12", "2026-05-20", "range")
        assert window_days("the weekend before last", now) == ("2026-05-09", "2026-05-11", "range")
        assert window_days("YTD", now) == ("2026-01-01", "2026-05-20", "range")
    assert window_days("2 hours ago", just_after) == ("2026-05-18", "2026-05-19", "day")


def test_hours_ago_reach_back_to_yesterday_after_midnight() -> None:
    just_after_midnight = datetime(2026, 5, 20, 1, 0, tzinfo=UTC)
    assert window_days("3 hours ago", just_after_midnight) == ("2026-05-19", "2026-05-20", "day")


@pytest.mark.parametrize(("query", "start", "end", "granularity"), ENGLISH)
def test_english_expressions_name_their_window(
    query: str, start: str | None, end: str, granularity: str
) -> None:
    assert window_days(query) == (start, end, granularity)


@pytest.mark.parametrize(("query", "start", "end", "granularity"), CHINESE)
def test_chinese_expressions_name_their_window(
    query: str, start: str | None, end: str, granularity: str
) -> None:
    assert window_days(query) == (start, end, granularity)


@pytest.mark.parametrize(("query", "start", "end", "granularity"), JAPANESE)
def test_japanese_expressions_name_their_window(
    query: str, start: str | None, end: str, granularity: str
) -> None:
    assert window_days(query) == (start, end, granularity)


NEAR_MISSES_ENGLISH = [
    "May said she liked jazz",
    "may I ask what you read?",
    "they march on",
    "and this may matter",
    "March forward, soldiers",
    "the 2023 model was cheaper",
    "Windows 2000 still boots",
    "meet at 5 pm",
    "the call at 3:30",
    "the second time we met",
    "on the 2nd floor",
    "I sat down by the river",
    "the sun was out",
    "they wed in secret",
    "05/06/2023",  # 5 June or May 6: ambiguous, so no window
    "06.05.2023",
    "version 2.5.2023",
    "what is the summer house like",
    "prices fall",
    "what did I buy for Christmas",  # the holiday as a topic: a window needs 'on', 'last'...
    "What tradition does Tim love during Thanksgiving?",  # a habit, not a day
    # a time to come names no window (never the last one): its words stay search words
    "what is on next Friday",
    "this coming Friday",
    "the upcoming Monday meeting",
    "this Friday",  # asked on a Wednesday
    "Friday next week",
    "tomorrow",
    "next week",
    "in two weeks",
    "next July",
    "in May next year",
    "this summer",  # asked in May
    "notes from after today",
    # a weekday inside a fixed name is not that day
    "Sunday school teacher",
    "my Sunday best",
    "Black Friday deals",  # a holiday, which needs a cue ("on Black Friday")
    "Cyber Monday sales",
    "Super Tuesday results",
    "Blue Monday by New Order",
    "the Good Friday service",
    "Friday night lights",
    # numbers with a slash that are no dates, quarters and halves that are no periods
    "it runs 24/7",
    "I scored 17/20 on the quiz",
    "a 3/16 inch drill bit",
    "see page 3/15 of the manual",
    "mix 1/2 cup of flour",
    "the first quarter of the game",
    "a quarter of the budget",
    "Q&A session notes",
    "the h1 tag of the page",
    "Christmas this year",  # asked in May: to come
    "at the end of this month",  # asked on the 20th: to come
    "on Fridays we swim",
    "Thanksgiving weekend plans",  # a holiday needs a cue
]
NEAR_MISSES_CHINESE = [
    "5月花牌纸巾好用吗",
    "3号楼在哪里",
    "在3号楼开会",
    "2023款手机",
    "离我最近的医院",
    "每周一的例会",
    "下午3点开会",
    "五月天的演唱会",  # Mayday, the band
    "下周五开会",
    "下个星期三",
    "这周五",  # asked on a Wednesday
    "明天",
    "明年5月",
    "三天后",
    # a street, a square named after a holiday or a date
    "五一路上的那家店",
    "五一广场见",
    "国庆路的咖啡馆",
    "5月6日路",
    "季度报告模板",
    "每年年底都很忙",
    "每月月初交房租",
    "大年初一",
    "这年头",
    "周末愉快",
    "每个周末都去游泳",
    "下半年的计划",  # asked in May: to come
]
NEAR_MISSES_JAPANESE = [
    "日本の首都",
    "毎日ジョギングする",
    "毎週月曜日の会議",
    "日記を書く",
    "日曜大工の道具",
    "前年比で売上が伸びた",
    "3日目の朝",
    "来週の金曜",
    "今週の金曜日",  # asked on a Wednesday
    "明日の予定",
    "次の月曜日",
    "四半期ごとの報告",
]


@pytest.mark.parametrize("query", NEAR_MISSES_ENGLISH + NEAR_MISSES_CHINESE + NEAR_MISSES_JAPANESE)
def test_near_misses_name_no_window_and_keep_every_word(query: str) -> None:
    assert parse_time(query, NOW) == TimeQuery(None, query)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("On May 6th, I read a book. What was its name?", "I read a book. What was its name?"),
        ("what did I read on the 6th of May?", "what did I read?"),
        ("What did we decide last week?", "What did we decide?"),
        ("what happened around Nov 27?", "what happened?"),
        ("notes since Tuesday about the launch", "notes about the launch"),
        ("I recently went on a trip to Xiamen", "I went on a trip to Xiamen"),
        ("在5月2日我去了博物馆，看了什么展览？", "我去了博物馆，看了什么展览？"),
        ("我曾经在5月4日这天分享了一些麻烦", "我曾经分享了一些麻烦"),
        ("上周的会议", "会议"),
        ("先週話したレストランは？", "話したレストランは？"),
        ("5月6日に何を読んだ？", "何を読んだ？"),
        ("yesterday", ""),
        ("we stayed 2 days and 3 weeks ago we left", "we stayed 2 days and we left"),
        ("what did we eat the Friday before last", "what did we eat"),
        ("the previous Saturday, where were we?", "where were we?"),
        ("last year's trip to Rome", "trip to Rome"),
        ("what did I do in the summer of 2023", "what did I do"),
        (
            "How long has Tim been playing the piano for, as of December 2023?",
            "How long has Tim been playing the piano for?",
        ),
    ],
)
def test_the_expression_and_its_dangling_preposition_leave_the_search_text(
    query: str, text: str
) -> None:
    assert parse_time(query, NOW).text == text


def test_the_window_names_the_words_that_said_it() -> None:
    window = parse_time("what did we decide between March and May?", NOW).window
    assert window is not None and window.expression == "between March and May"


def test_windows_are_in_the_time_zone_of_now() -> None:
    shanghai = timezone(timedelta(hours=8))
    now = datetime(2026, 5, 20, 1, 0, tzinfo=shanghai)  # 19 May 17:00 UTC, 20 May in Shanghai
    window = parse_time("昨天", now).window
    assert window is not None
    assert window.start == datetime(2026, 5, 19, tzinfo=shanghai)
    assert window.end == datetime(2026, 5, 20, tzinfo=shanghai)
    assert window.start.astimezone(UTC) == datetime(2026, 5, 18, 16, tzinfo=UTC)


def test_a_now_in_another_zone_is_read_in_its_own_zone() -> None:
    now_utc = datetime(2026, 5, 19, 17, 0, tzinfo=UTC)  # the same instant as above
    window = parse_time("yesterday", now_utc).window
    assert window is not None and window.start.date() == date(2026, 5, 18)
    shanghai = timezone(timedelta(hours=8))
    window = parse_time("yesterday", now_utc.astimezone(shanghai)).window
    assert window is not None and window.start.date() == date(2026, 5, 19)


def test_a_day_across_a_daylight_saving_change_keeps_its_local_midnights() -> None:
    try:
        new_york = ZoneInfo("America/New_York")
    except ZoneInfoNotFoundError:
        pytest.skip("no time zone database on this machine")
    window = parse_time("yesterday", datetime(2026, 3, 9, 1, 0, tzinfo=new_york)).window
    assert window is not None
    assert (window.start.hour, window.end.hour) == (0, 0)
    assert window.end.astimezone(UTC) - window.start.astimezone(UTC) == timedelta(hours=23)


def test_a_now_without_a_zone_is_read_as_utc() -> None:
    window = parse_time("yesterday", datetime(2026, 5, 20, 15, 0)).window
    assert window is not None and window.start == datetime(2026, 5, 19, tzinfo=UTC)


def test_an_open_start_survives_conversion_to_utc() -> None:
    now = datetime(2026, 5, 20, 9, 0, tzinfo=timezone(timedelta(hours=8)))
    window = parse_time("before June", now).window
    assert window is not None
    assert window.start.astimezone(UTC) < window.end.astimezone(UTC)
    assert window.start.astimezone(UTC).isoformat().startswith("0001-01-01")


def test_the_29th_of_february_is_the_most_recent_leap_day() -> None:
    assert window_days("February 29") == ("2024-02-29", "2024-03-01", "day")


def test_every_word_the_rules_know_passes_the_cheap_pre_check() -> None:
    words = [*time_expressions._RELATIVE_CJK, *time_expressions._HOLIDAYS]
    words += [row[0] for row in ENGLISH + CHINESE + JAPANESE]
    assert [w for w in words if not time_expressions._anchors(w)] == []


def test_a_query_without_time_words_is_returned_unchanged() -> None:
    query = "what is my favourite programming language"
    assert parse_time(query, NOW) == TimeQuery(None, query)


ROOT = Path(__file__).resolve().parent.parent
TABLE = re.compile(r"<!-- time-table[^>]*-->\n(.*?)<!-- /time-table -->", re.DOTALL)


def _table_rows(path: Path) -> list[list[str]]:
    match = TABLE.search(path.read_text(encoding="utf-8"))
    assert match is not None, f"{path.name} has no time table"
    lines = [line for line in match.group(1).splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


@pytest.mark.parametrize("page", ["README.md", "docs/time.md"])
def test_the_table_in_the_readme_and_the_docs_is_what_the_parser_says(page: str) -> None:
    rows = _table_rows(ROOT / page)
    assert len(rows) >= 6
    for query, first, last, kind, text in rows:
        result = parse_time(query, NOW)
        assert result.window is not None, query
        start = "open" if result.window.start.year < 1900 else result.window.start.date()
        final = (result.window.end - timedelta(days=1)).date()
        said = [str(start), final.isoformat(), result.window.granularity, result.text or "—"]
        assert said == [first, last, kind, text], query
