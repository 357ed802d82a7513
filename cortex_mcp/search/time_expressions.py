"""Time in a query, in English, Chinese and Japanese: `parse_time(query, now)` finds the
first expression of a day, a period or a range and returns its window and the query without
those words. See docs/time.md for what each expression means; this docstring says how.

Our own rules, not dateparser. `python bench/time_parse.py` measures both in one run: these
rules cost ~10 µs a query with no time words (one scan for anchors) and ~30 µs one naming
a time;
dateparser's `search_dates` ~0.7 ms either way, a fifth of the recall's whole budget. It
finds dates inside ordinary words ("May said...", "may I", "the 2023 model", "at 5 pm"),
reads 5月6日 as a day in December, knows no window for "recently", 上周 as a week, 三天前 or
去年夏天, and no ranges: 32 of 66 held-out phrasings right, against 65 here; of issue 37's 95
(weekends and Fridays ago, quarters, YTD, holidays beside a year word), 23 against 95.

How the rules work:
1. One scan finds the anchors a query has (digits, month and weekday names, seasons,
   holidays, English time words and units, CJK time words): a query with none returns at
   once, and only the rules that need an anchor the query has run.
2. Atoms: each pattern finds a day, month, year, weekday, season or relative period and
   resolves it against `now` in `now`'s time zone. The earliest, longest atom wins where
   two overlap. A date without a year is its most recent past occurrence (a day later than
   today in this year means last year); a weekday is its most recent occurrence, today
   included; "last <weekday>" is the one before today. A time to come ("next Friday",
   "下周五", "来週の金曜", "tomorrow", or "this Friday" before it comes) makes no window: its
   atom keeps the weekday or date inside it from being read, and its words stay.
3. Words that could be something else (the month "May", "March", a Chinese "5月" followed
   by a noun, a year alone, "on the 6th", a season) make an atom that needs a cue: a
   preposition before it ("in May", "在5月", "in 2023"), a particle after it ("5月的",
   "5月に"), or being one end of a range. "May said..." or "5月花牌纸巾" make no window.
4. Neighbouring atoms merge ("May last year", "上个月6号", "Friday last week"), then a
   range word or a preposition around them makes the window: "from A to B", "between A and
   B", "A到B", "AからBまで" (a range), "since A", "A以来", "Aから" (A's start until the end
   of today), "after A" (A's end until the end of today), "before A", "A之前", "Aより前"
   (an open start until A's start), "until A", "A为止", "Aまで" (an open start until A's
   end), "around A", "A左右", "A頃" (a day widened to three days either side).
5. The expression's words and a dangling preposition or particle ("on", "in", "since",
   "在", "に", "の", "的", "那天") are cut from the text, so the rest still searches well.

Windows are [start, end) in `now`'s time zone (a naive `now` is taken as UTC). Weeks start
on Monday; quarters are the calendar's (Q1 January-March); seasons are meteorological (spring
March-May, summer June-August, autumn September-November, winter December to February, named
by the year of its December).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import cache

from cortex_mcp.search.lunar_holidays import lunar_day

__all__ = ["TimeQuery", "TimeWindow", "parse_time"]


@dataclass(frozen=True)
class TimeWindow:
    start: datetime  # aware; inclusive
    end: datetime  # aware; exclusive
    expression: str  # the words of the query that said it
    granularity: str  # "day" | "week" | "month" | "quarter" | "season" | "year" | "range" | "open"


@dataclass(frozen=True)
class TimeQuery:
    window: TimeWindow | None
    text: str  # the query with the time expression's words removed (for search words)


RECENT_DAYS = 14  # "recently", "最近": the last two weeks, today included
FEW_DAYS = 7  # "a few days ago", "前几天", "数日前": the week before today
AROUND_DAYS = 3  # "around May 6": three days either side


# ---------------------------------------------------------------------------- periods


@dataclass(frozen=True)
class _Period:
    start: datetime  # naive, in now's time zone
    end: datetime
    granularity: str


def _day(d: date, days: int = 1) -> _Period:
    start = datetime.combine(d, time())
    return _Period(start, start + timedelta(days=days), "day" if days == 1 else "range")


def _span(first: date, stop: date, granularity: str) -> _Period:
    return _Period(datetime.combine(first, time()), datetime.combine(stop, time()), granularity)


def _add_months(year: int, month: int, months: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + months
    return index // 12, index % 12 + 1


def _month(year: int, month: int) -> _Period:
    next_year, next_month = _add_months(year, month, 1)
    return _span(date(year, month, 1), date(next_year, next_month, 1), "month")


def _week(monday: date) -> _Period:
    return _span(monday, monday + timedelta(days=7), "week")


def _year(year: int) -> _Period:
    return _span(date(year, 1, 1), date(year + 1, 1, 1), "year")


def _quarter(year: int, number: int) -> _Period:
    """Q1 is January to March, Q4 October to December."""
    first = 3 * number - 2
    return _span(date(year, first, 1), date(*_add_months(year, first, 3), 1), "quarter")


def _quarter_of(day: date) -> int:
    return (day.month - 1) // 3 + 1


_SEASON_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}


def _season(name: str, year: int) -> _Period:
    first = _SEASON_MONTH[name]
    stop_year, stop_month = _add_months(year, first, 3)
    return _span(date(year, first, 1), date(stop_year, stop_month, 1), "season")


def _recent_season(name: str, today: date, *, ended: bool) -> _Period:
    """The season in progress or the last one begun; with `ended`, the last one over."""
    year = today.year if today.month >= _SEASON_MONTH[name] else today.year - 1
    period = _season(name, year)
    if ended and period.end.date() > today:
        period = _season(name, year - 1)
    return period


def _this_season(name: str, today: date) -> _Period:
    """'This summer': the one in progress, else this year's (to come, or over)."""
    period = _recent_season(name, today, ended=False)
    return period if period.end.date() > today else _season(name, today.year)


def _last_days(today: date, days: int) -> _Period:
    """The trailing days up to the end of today ("the past 3 days", "过去一周")."""
    return _span(today - timedelta(days=days), today + timedelta(days=1), "range")


def _shift(today: date, unit: str, count: int) -> _Period:
    """The calendar unit `count` units back (0 = the current one)."""
    if unit == "day":
        return _day(today - timedelta(days=count))
    if unit == "week":
        return _week(today - timedelta(days=today.weekday() + 7 * count))
    if unit == "month":
        return _month(*_add_months(today.year, today.month, -count))
    if unit == "quarter":
        year, month = _add_months(today.year, today.month, -3 * count)
        return _quarter(year, (month - 1) // 3 + 1)
    if unit == "weekend":
        saturday = today - timedelta(days=(today.weekday() - 5) % 7)
        if count:  # "last weekend" is the last one over: one back from a weekend in progress
            in_progress = saturday + timedelta(days=2) > today
            saturday -= timedelta(days=7 * (count if in_progress else count - 1))
        return _span(saturday, saturday + timedelta(days=2), "range")
    return _year(today.year - count)


def _this_weekend(today: date) -> _Period:
    """The Saturday and Sunday of this calendar week ("this weekend", "这周末", "今週末")."""
    saturday = today + timedelta(days=5 - today.weekday())
    return _span(saturday, saturday + timedelta(days=2), "range")


def _compound_ago(today: date, unit: str, count: int, unit2: str, count2: int) -> _Period:
    """'3 weeks and 2 days ago', '一年零两个月前': the calendar unit of the second (finer) part
    that holds the day that far back."""
    months = {"month": count, "year": 12 * count}.get(unit, 0)
    months += {"month": count2, "year": 12 * count2}.get(unit2, 0)
    days = {"day": count, "week": 7 * count}.get(unit, 0)
    days += {"day": count2, "week": 7 * count2}.get(unit2, 0)
    year, month = _add_months(today.year, today.month, -months)
    back = date(year, month, 1) + timedelta(days=today.day - 1)
    if back.month != month:  # 31 March less a month: the end of February
        back = back.replace(day=1) - timedelta(days=1)
    return _shift(back - timedelta(days=days), unit2, 0)


_UNIT_ORDER = ("day", "week", "month", "year")
# a unit in days, where a span is counted in days ("the past 3 months", 两三天前, 十几天前)
_UNIT_DAYS = {
    "day": 1,
    "week": 7,
    "weekend": 7,
    "fortnight": 14,
    "month": 30,
    "quarter": 91,
    "year": 365,
}


def _loose_ago(today: date, unit: str) -> _Period:
    """'A few days/weeks/months/years ago': a loose stretch before the current unit."""
    if unit == "day":
        return _span(today - timedelta(days=FEW_DAYS), today, "range")
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        return _span(monday - timedelta(days=35), monday - timedelta(days=7), "range")
    if unit == "month":
        year, month = _add_months(today.year, today.month, -6)
        this_year, this_month = _add_months(today.year, today.month, -1)
        return _span(date(year, month, 1), date(this_year, this_month, 1), "range")
    return _span(date(today.year - 6, 1, 1), date(today.year - 1, 1, 1), "range")


# ----------------------------------------------------------------------------- atoms


@dataclass(frozen=True)
class _Atom:
    begin: int
    end: int
    period: _Period
    kind: str = "period"  # "date" (re-anchorable), "dayonly", "year", "weekday", "period",
    # "holiday", "future" (names a time to come: no window, and its words stay search words)
    needs_cue: bool = False
    year: int | None = None  # for "date": the parts the query gave
    month: int | None = None
    day: int | None = None
    part: str | None = None  # early | mid | late, of a month
    absolute: bool = False  # names its year: preferred to a relative expression in the query
    holiday: str | None = None  # for "holiday": its key in _HOLIDAYS, to move it to a year


@dataclass(frozen=True)
class _Context:
    today: date
    japanese: bool
    moment: datetime  # now, naive, in now's time zone ("5 hours ago")


def _resolve_date(
    year: int | None, month: int, day: int | None, part: str | None, today: date
) -> _Period | None:
    """A day or month; without a year, its most recent occurrence on or before `today`."""
    try:
        if day is None:
            if year is None:
                year = today.year if month <= today.month else today.year - 1
            period = _month(year, month)
            return _month_part(period, part) if part else period
        if year is not None:
            return _day(date(year, month, day))
        year = today.year if (month, day) <= (today.month, today.day) else today.year - 1
        for back in range(8):  # 29 February: the most recent leap year
            try:
                return _day(date(year - back, month, day))
            except ValueError:
                if (month, day) != (2, 29):
                    raise
        return None
    except ValueError:
        return None


def _month_part(period: _Period, part: str) -> _Period:
    first = period.start.date()
    bounds = {"early": (1, 11), "mid": (11, 21)}
    if part in bounds:
        low, high = bounds[part]
        return _span(first.replace(day=low), first.replace(day=high), "range")
    return _Period(period.start.replace(day=21), period.end, "range")


_YEAR_PARTS = {"start": (1, 3), "early": (1, 5), "mid": (5, 9), "late": (9, 13), "end": (11, 13)}


_WEEK_PARTS = {"start": (0, 3), "early": (0, 3), "mid": (1, 4), "late": (4, 7), "end": (4, 7)}


def _part(period: _Period, part: str) -> _Period:
    """Early, mid or late in a month (days 1-10, 11-20, 21-; its start and end the same), a
    week (Monday-Wednesday, Tuesday-Thursday, Friday-Sunday) or a year (Jan-Apr, May-Aug,
    Sep-Dec; its start Jan-Feb, its end Nov-Dec)."""
    if period.granularity == "week":
        first, stop = _WEEK_PARTS[part]
        monday = period.start.date()
        return _span(monday + timedelta(days=first), monday + timedelta(days=stop), "range")
    if period.granularity != "year":
        return _month_part(period, {"start": "early", "end": "late"}.get(part, part))
    year = period.start.year
    first, stop = _YEAR_PARTS[part]
    return _span(date(year, first, 1), date(year + stop // 13, stop % 13 or 1, 1), "range")


def _resolve_day_only(day: int, today: date) -> _Period | None:
    """'On the 6th', '6号': the most recent 6th of a month, today included."""
    year, month = today.year, today.month
    if day > today.day:
        year, month = _add_months(year, month, -1)
    for _ in range(3):
        try:
            return _day(date(year, month, day))
        except ValueError:
            year, month = _add_months(year, month, -1)
    return None


def _date_atom(
    match: re.Match[str],
    ctx: _Context,
    year: int | None,
    month: int,
    day: int | None,
    *,
    part: str | None = None,
    needs_cue: bool = False,
    group: int | str = 0,
) -> _Atom | None:
    period = _resolve_date(year, month, day, part, ctx.today)
    if period is None:
        return None
    return _Atom(
        match.start(group),
        match.end(group),
        period,
        "date",
        needs_cue,
        year,
        month,
        day,
        part,
        absolute=year is not None,
    )


# --------------------------------------------------------------------------- numbers

_EN_NUMBERS = dict(
    zip(
        "a an one two three four five six seven eight nine ten eleven twelve couple".split(),
        [1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2],
        strict=True,
    )
)
_EN_NUMBERS |= {"a couple of": 2, "couple of": 2, "a couple": 2}
_EN_NUMBERS |= {
    word: index + 13
    for index, word in enumerate(
        "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_EN_NUMBERS |= {"thirty": 30}
_LOOSE = {"few", "a few", "several", "几", "幾", "数", "數", "何"}
_EN_ORDINALS = {
    word: index + 1
    for index, word in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
        "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
        "twenty-first twenty-second twenty-third twenty-fourth twenty-fifth twenty-sixth "
        "twenty-seventh twenty-eighth twenty-ninth thirtieth thirty-first".split()
    )
}
_CJK_DIGITS = {
    ch: d for d, chars in enumerate("〇零 一 二两兩 三 四 五 六 七 八 九".split()) for ch in chars
}
_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def _cjk_number(text: str) -> int | None:
    """'5', '５', '五', '十一', '二十三', '二〇二三' -> int; None if it is not one. Two or three
    numerals side by side are no number but a guess ('两三' is two or three, '三四' three or
    four: `_cjk_pair`); four are a year read digit by digit."""
    text = text.translate(_FULLWIDTH)
    if text.isdigit():
        return int(text)
    if "十" not in text:
        if 1 < len(text) < 4:
            return None
        digits = [_CJK_DIGITS.get(ch) for ch in text]
        if None in digits or not digits:
            return None
        return int("".join(str(d) for d in digits))
    tens, _, ones = text.partition("十")
    high = _CJK_DIGITS.get(tens, -1) if tens else 1
    low = _CJK_DIGITS.get(ones, -1) if ones else 0
    return None if high < 0 or low < 0 else high * 10 + low


def _cjk_pair(first: str | None, numerals: str) -> tuple[int, int] | None:
    """'两三', '三四', '二、三' (`first` '二', `numerals` '三'): the two counts of a guess, the
    second one more than the first; None for anything else."""
    if first is not None:
        low, high = _cjk_number(first), _cjk_number(numerals)
    elif len(numerals) == 2 and "十" not in numerals and not numerals.isdigit():
        low, high = _CJK_DIGITS.get(numerals[0]), _CJK_DIGITS.get(numerals[1])
    else:
        return None
    if low is None or high is None or high != low + 1 or low < 1:
        return None
    return low, high


def _en_count(word: str) -> int | None:
    """A count in English ('3', 'two', 'a couple of'); None for a loose 'few'."""
    word = " ".join(word.lower().split())
    if word.isdigit():
        return int(word)
    return _EN_NUMBERS.get(word)


# ------------------------------------------------------------------------- patterns

_EN_MONTHS = {
    name: index + 1
    for index, name in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())
}
# full names that are rarely anything else stand alone; the rest need a cue ("in May")
_EN_PLAIN_MONTHS = {"january", "february", "july", "september", "october", "november", "december"}
_EN_VERB_MONTHS = {"may", "march", "mar"}  # lower-case, these are words, not months
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORDINAL = "|".join(sorted(_EN_ORDINALS, key=len, reverse=True))
_DAY = rf"(?:(?P<dn>[0-3]?\d)(?:st|nd|rd|th)?|(?P<dw>{_ORDINAL}))(?![\w:])"
_YEAR = r"(?:19|20)\d{2}"
_EN_WEEKDAYS = {name: index for index, name in enumerate("mon tue wed thu fri sat sun".split())}
_WEEKDAY_WORDS = frozenset({"mon", "wed", "sat", "sun"})
_WEEKDAY = (
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|mon|tues?|wed|thur?s?|fri|sat|sun)"
)
_EN_NUM = (
    r"(?:\d{1,3}|a\s+couple(?:\s+of)?|couple(?:\s+of)?|a\s+few|an?|one|two|three|four|five|six"
    r"|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen"
    r"|nineteen|twenty|thirty|few|several)"
)
_EN_CUE_BEFORE = re.compile(
    r"(?:\b(?:in|during|since|from|until|till|before|after|of|by|throughout|through|around"
    r"|between|on|last|this|early|late|mid|until|circa)(?:\s+the)?\s*-?\s*)$",
    re.IGNORECASE,
)
_CJK_N = r"[0-9０-９]{1,2}|[一二三四五六七八九十两兩〇零]{1,3}"
_CJK_YEAR = r"[0-9０-９]{4}|[〇零一二三四五六七八九]{4}"
_CJK_CUE_BEFORE = re.compile(r"(?:在|于|於|从|從|自|到|至|是|截至|截止|等到)\s*$")
# after a month without a day ("5月的", "5月に"): a particle or a common verb, not a noun
_CJK_MONTH_FOLLOWERS = set(
    "的份里裡中初底末上下间間时時期以之前后後到至和与與或去来來回做买買看见見吃过過起开開"
    "会會我你他她它们們在是有就都也还還又才曾已了,，、。.!?！？ にからまではでもごろ頃のと"
)
_CJK_NOT_A_DAY = set(
    "目分ぶ电電楼樓线線门門房馆館机機车車站位球口厅廳床院桌窗柜櫃仓倉店铺鋪场場舱艙座码碼种種型版间間元"
)

_RELATIVE_CJK: dict[str, Callable[[_Context], _Period]] = {}


def _relative_words(words: str, make: Callable[[_Context], _Period]) -> None:
    for word in words.split():
        _RELATIVE_CJK[word] = make


def _today_period(ctx: _Context) -> _Period:
    return _day(ctx.today)


_relative_words("今天 今日 今儿 今早 今晚 今夜 今朝 けさ きょう 今天早上 今天晚上", _today_period)
_relative_words("昨天 昨日 昨儿 きのう", lambda c: _shift(c.today, "day", 1))
_relative_words("さっき 先ほど 先程 今晩 刚才 剛才", _today_period)
_relative_words("这两天 這兩天 这一两天", lambda c: _last_days(c.today, 2))
_relative_words(
    "半年前 大半年前",
    lambda c: _span(
        date(*_add_months(c.today.year, c.today.month, -7), 1),
        date(*_add_months(c.today.year, c.today.month, -4), 1),
        "range",
    ),
)
_relative_words(
    "昨晚 昨夜 昨天晚上 昨晚上 昨日の夜 昨日の晚 昨晩",
    lambda c: _Period(
        datetime.combine(c.today - timedelta(days=1), time(12)),
        datetime.combine(c.today, time(6)),
        "day",
    ),
)
_relative_words("前天 一昨日 おととい 前天晚上", lambda c: _shift(c.today, "day", 2))
_relative_words("大前天 一昨昨日 さきおととい", lambda c: _shift(c.today, "day", 3))
_relative_words(
    "上周 上週 上星期 上个星期 上個星期 上礼拜 上禮拜 上个礼拜 上個禮拜 先週 前週",
    lambda c: _shift(c.today, "week", 1),
)
_relative_words(
    "上上周 上上週 上上个星期 上上個星期 上上星期 先々週 先先週",
    lambda c: _shift(c.today, "week", 2),
)
_relative_words(
    "这周 這週 这个星期 這個星期 这星期 這星期 这礼拜 這禮拜 本周 本週 今週",
    lambda c: _shift(c.today, "week", 0),
)
_relative_words(
    "上周末 上週末 先週末 上个周末 上個週末 上一个周末 上一個週末 前一个周末 前一個週末",
    lambda c: _shift(c.today, "weekend", 1),
)
_relative_words(
    "这周末 這週末 本周末 本週末 今週末 这个周末 這個週末 这个週末",
    lambda c: _this_weekend(c.today),
)
_relative_words(
    "上上周末 上上週末 上上个周末 上上個週末 上上個周末 先々週末 先先週末",
    lambda c: _shift(c.today, "weekend", 2),
)
_relative_words(
    "上季度 上个季度 上個季度 上一季度 上一个季度 上一個季度 前四半期 前期の四半期",
    lambda c: _shift(c.today, "quarter", 1),
)
_relative_words("上上季度 上上个季度 上上個季度", lambda c: _shift(c.today, "quarter", 2))
_relative_words(
    "本季度 这季度 這季度 这个季度 這個季度 今四半期 当四半期 當季度",
    lambda c: _shift(c.today, "quarter", 0),
)
_relative_words(
    "上个月 上個月 上月 先月 前月 上一个月 上一個月", lambda c: _shift(c.today, "month", 1)
)
_relative_words("上上个月 上上個月 先々月 先先月", lambda c: _shift(c.today, "month", 2))
_relative_words("这个月 這個月 这月 這月 本月 今月", lambda c: _shift(c.today, "month", 0))
_relative_words("去年 昨年 去年一年", lambda c: _shift(c.today, "year", 1))
_relative_words("今年 本年", lambda c: _shift(c.today, "year", 0))
_relative_words(  # 年初来: the Japanese "year to date"
    "年初来", lambda c: _last_days(c.today, (c.today - date(c.today.year, 1, 1)).days)
)
_relative_words(  # 年明け: the new year's first weeks
    "年明け", lambda c: _span(date(c.today.year, 1, 1), date(c.today.year, 1, 16), "range")
)
_relative_words(  # 上半年 alone: this year's (下半年 is to come until July)
    "上半年", lambda c: _span(date(c.today.year, 1, 1), date(c.today.year, 7, 1), "range")
)
_relative_words(
    "下半年", lambda c: _span(date(c.today.year, 7, 1), date(c.today.year + 1, 1, 1), "range")
)
_relative_words("一昨年 おととし", lambda c: _shift(c.today, "year", 2))


def _seasons_said_short(prefix: str, years_back: int) -> None:
    """今春, 昨秋: this year's season, last year's (a winter is the year it begins in; one
    to come names no window)."""
    for char, name in _CJK_SEASONS.items():
        _relative_words(f"{prefix}{char}", _season_years_back(name, years_back))


def _season_years_back(name: str, years_back: int) -> Callable[[_Context], _Period]:
    def period(ctx: _Context) -> _Period:
        # in January and February, this year's winter is the one begun last December
        begun_last_year = 1 if name == "winter" and ctx.today.month < 3 else 0
        return _season(name, ctx.today.year - years_back - begun_last_year)

    return period


_relative_words("大前年", lambda c: _shift(c.today, "year", 3))
# 前年: the year before last in Chinese, the previous year in Japanese
_relative_words("前年", lambda c: _shift(c.today, "year", 1 if c.japanese else 2))
_relative_words(
    "この一週間 この1週間 这一周 這一週 最近一周 最近一週",
    lambda c: _last_days(c.today, 7),
)
_relative_words(
    "最近 近来 近來 近期 近日 这阵子 這陣子 这段时间 這段時間 最近这段时间 この頃 このごろ 近頃 最近では",
    lambda c: _last_days(c.today, RECENT_DAYS),
)
_relative_words(  # a while back: as loose as 前几周, "a few weeks ago"
    "前阵子 前陣子 前一阵子 前一陣子 前段时间 前段時間 前一段时间 前一段時間",
    lambda c: _loose_ago(c.today, "week"),
)
_relative_words(
    "前几天 前幾天 几天前 幾天前 这几天 這幾天 前些天 前些日子 数日前 數日前 先日 この間 この前 前几日",
    lambda c: _span(c.today - timedelta(days=FEW_DAYS), c.today, "range"),
)

_CJK_YEAR_WORDS = {"去年": 1, "昨年": 1, "今年": 0, "本年": 0, "前年": 2, "一昨年": 2}


def _cjk_years_back(word: str, ctx: _Context) -> int:
    """去年 1, 今年 0; 前年 is the year before last in Chinese, the previous one in Japanese."""
    return 1 if ctx.japanese and word == "前年" else _CJK_YEAR_WORDS[word]


_CJK_SEASONS = dict(zip("春夏秋冬", ("spring", "summer", "autumn", "winter"), strict=True))
_seasons_said_short("今", 0)
_seasons_said_short("昨", 1)  # not 去: 去夏威夷, 去春游 go somewhere
_CJK_UNITS = {
    word: unit
    for unit, words in (
        ("day", "天 日"),
        ("week", "周 週 星期 个星期 個星期 礼拜 禮拜 个礼拜 個禮拜 週間 周间"),
        ("month", "个月 個月 ヶ月 か月 カ月 ケ月 箇月 ヵ月"),
        ("year", "年"),
    )
    for word in words.split()
}
_CJK_UNIT = "|".join(sorted(map(re.escape, _CJK_UNITS), key=len, reverse=True))
_EVERY = re.compile(r"[每毎](?:周|週|个|個)?$")
_CJK_PARTS = {
    word: part
    for part, words in (
        ("early", "初 初め の初め 上旬"),
        ("mid", "中旬"),
        ("late", "下旬 底 末 の終わり 末尾"),
    )
    for word in words.split()
}
_CJK_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_JA_WEEKDAYS = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    make: Callable[[re.Match[str], _Context], _Atom | None]
    needs: tuple[str, ...]  # anchor kinds (_ANCHORS): a rule runs only on a query with one


_RULES: list[_Rule] = []


def _rule(
    pattern: str, flags: int = 0, *, needs: tuple[str, ...]
) -> Callable[..., Callable[..., _Atom | None]]:
    def register(
        make: Callable[[re.Match[str], _Context], _Atom | None],
    ) -> Callable[[re.Match[str], _Context], _Atom | None]:
        _RULES.append(_Rule(re.compile(pattern, flags), make, needs))
        return make

    return register


def _cjk_rule(pattern: str) -> Callable[..., Callable[..., _Atom | None]]:
    return _rule(pattern, needs=("cjk",))


def _period_atom(match: re.Match[str], period: _Period, **fields: object) -> _Atom:
    return _Atom(match.start(), match.end(), period, **fields)  # type: ignore[arg-type]


def _en_month(word: str) -> int:
    return _EN_MONTHS[word.lower().rstrip(".")[:3]]


def _en_day(match: re.Match[str]) -> int | None:
    if match.group("dn"):
        return int(match.group("dn"))
    return _EN_ORDINALS.get(match.group("dw").lower())


def _lower_verb_month(word: str) -> bool:
    return word in _EN_VERB_MONTHS


# --- English absolute dates


@_rule(
    r"\b(?P<y>(?:19|20)\d{2})([-/.])(?P<m>0?[1-9]|1[0-2])\2(?P<d>0?[1-9]|[12]\d|3[01])"
    r"(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?\b",
    needs=("digit",),
)
def _iso_date(match: re.Match[str], ctx: _Context) -> _Atom | None:
    return _date_atom(match, ctx, int(match["y"]), int(match["m"]), int(match["d"]))


@_rule(r"\b(?P<y>(?:19|20)\d{2})-(?P<m>0[1-9]|1[0-2])\b(?![-/.:]\d)", needs=("digit",))
def _iso_month(match: re.Match[str], ctx: _Context) -> _Atom | None:
    return _date_atom(match, ctx, int(match["y"]), int(match["m"]), None)


@_rule(
    r"(?<![\d/.])(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})(?P=sep)(?P<y>(?:19|20)\d{2}|\d{2})\b(?![/.]\d)",
    needs=("digit",),
)
def _slash_date(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """05/06/2023 is May 6 or 5 June: a window only when one reading is impossible."""
    first, second, year = int(match["a"]), int(match["b"]), int(match["y"])
    year = year + 2000 if year < 100 else year
    if first > 12 >= second:
        return _date_atom(match, ctx, year, second, first)
    if second > 12 >= first or first == second:
        return _date_atom(match, ctx, year, first, second)
    return None


_NOT_A_DAY_AFTER = re.compile(
    r"\s*(?:inch|inches|in\b|\"|cm|mm|cups?|tsp|tbsp|teaspoons?|tablespoons?|scale|points?"
    r"|stars?|marks?|odds|split|ratio|rule|vision)",
    re.IGNORECASE,
)
_NOT_A_DAY_BEFORE = re.compile(
    r"(?:\b(?:scored?|got|rated?|rating|grade|score\s+of|odds\s+of|page|pages|pp?\.|chapter"
    r"|slide|step|question|problem|item|no\.|number)|#)\s*$",
    re.IGNORECASE,
)


@_rule(
    r"(?<![0-9A-Za-z/.\-])(?P<a>[0-3]?\d)/(?P<b>[0-3]?\d)(?![0-9A-Za-z/%]|[.,]\d)",
    needs=("digit",),
)
def _slash_day(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'11/24' (or '24/11'): a day of the most recent such date, when only one reading (month
    first or day first) is a date; '5/6' could be either, and '24/7', '3/16 inch', 'scored
    17/20' are no dates."""
    first, second = int(match["a"]), int(match["b"])
    if (first, second) == (24, 7) or _NOT_A_DAY_AFTER.match(match.string, match.end()):
        return None
    if _NOT_A_DAY_BEFORE.search(match.string, max(0, match.start() - 16), match.start()):
        return None
    if first > 12 and 1 <= second <= 12:
        return _date_atom(match, ctx, None, second, first)
    if second > 12 and 1 <= first <= 12:
        return _date_atom(match, ctx, None, first, second)
    return None


@_rule(
    rf"\b(?P<mon>{_MONTH})\.?\s+(?:the\s+)?{_DAY}(?:,?\s+(?:of\s+)?(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
    needs=("month",),
)
def _month_day(match: re.Match[str], ctx: _Context) -> _Atom | None:
    day = _en_day(match)
    if day is None or (match["dw"] and match["mon"].islower()):
        return None
    year = int(match["y"]) if match["y"] else None
    return _date_atom(match, ctx, year, _en_month(match["mon"]), day)


@_rule(
    rf"\b(?:the\s+)?{_DAY}(?P<of>\s+of)?\s+(?P<mon>{_MONTH})\b\.?(?:,?\s+(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
    needs=("month",),
)
def _day_month(match: re.Match[str], ctx: _Context) -> _Atom | None:
    day = _en_day(match)
    if day is None or (not match["of"] and _lower_verb_month(match["mon"])):
        return None
    year = int(match["y"]) if match["y"] else None
    return _date_atom(match, ctx, year, _en_month(match["mon"]), day)


_DAY_RANGE_DAYS = r"(?P<d1>[0-3]?\d)(?:st|nd|rd|th)?\s*(?:-|–|to|through|until|till|or|and|&)\s*(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?(?![\w:])"


@_rule(
    rf"\b(?:(?P<mon>{_MONTH})\.?\s+{_DAY_RANGE_DAYS}|{_DAY_RANGE_DAYS.replace('d1', 'e1').replace('d2', 'e2')}"
    rf"\s+(?:of\s+)?(?P<mon2>{_MONTH})\b)(?:,?\s+(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
    needs=("month",),
)
def _day_range(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'May 1-3', 'May 1 to 3', '1-3 May 2023', 'May 3rd or 4th': days of one month."""
    word = match["mon"] or match["mon2"]
    first, last = int(match["d1"] or match["e1"]), int(match["d2"] or match["e2"])
    if first >= last:
        return None
    year = int(match["y"]) if match["y"] else None
    end = _resolve_date(year, _en_month(word), last, None, ctx.today)
    if end is None:
        return None
    try:
        start = end.start.replace(day=first)
    except ValueError:
        return None
    return _period_atom(match, _Period(start, end.end, "range"), absolute=year is not None)


@_rule(rf"\b(?P<mon>{_MONTH})\.?,?\s+(?:of\s+)?(?P<y>{_YEAR})\b", re.IGNORECASE, needs=("month",))
def _month_year(match: re.Match[str], ctx: _Context) -> _Atom | None:
    if _lower_verb_month(match["mon"]):
        return None
    return _date_atom(match, ctx, int(match["y"]), _en_month(match["mon"]), None)


@_rule(
    rf"\b(?:(?P<mod>last|this|early|late|mid|(?:the\s+)?(?:beginning|start|end|middle)\s+of)"
    rf"[\s-]+)?(?P<mon>{_MONTH})\b",
    re.IGNORECASE,
    needs=("month",),
)
def _month_alone(match: re.Match[str], ctx: _Context) -> _Atom | None:
    word, mod = match["mon"], (match["mod"] or "").lower()
    month = _en_month(word)
    part = None
    if mod:
        part = {"early": "early", "mid": "mid", "late": "late"}.get(mod)
        if part is None and " of" in mod:
            part = {"beginning": "early", "start": "early", "middle": "mid", "end": "late"}[
                mod.split()[-2]
            ]
    if mod in ("last", "this") and _lower_verb_month(word):
        return None  # "this may matter", "the last march"
    if mod == "last":
        year = ctx.today.year if month < ctx.today.month else ctx.today.year - 1
        return _date_atom(match, ctx, year, month, None)
    if mod == "this":
        return _date_atom(match, ctx, ctx.today.year, month, None)
    plain = word.lower() in _EN_PLAIN_MONTHS
    return _date_atom(match, ctx, None, month, None, part=part, needs_cue=not (plain or mod))


@_rule(
    rf"\b(?:(?:in|during)\s+)?(?:the\s+year\s+)?(?P<y>{_YEAR})\b(?!['’]?s\b)",
    re.IGNORECASE,
    needs=("digit",),
)
def _year_alone(match: re.Match[str], ctx: _Context) -> _Atom | None:
    year = int(match["y"])
    return _Atom(
        match.start("y"), match.end(), _year(year), "year", needs_cue=True, year=year, absolute=True
    )


@_rule(
    rf"\b(?:on\s+)?the\s+{_DAY}\s+of\s+(?P<rel>the|this|last|the\s+previous)\s+month\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _day_of_named_month(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'The first of the month', 'the 15th of this month', 'the 3rd of last month'."""
    day = _en_day(match)
    if day is None:
        return None
    rel = match["rel"].lower()
    if rel == "the":
        period = _resolve_day_only(day, ctx.today)
        return None if period is None else _period_atom(match, period)
    start = _shift(ctx.today, "month", 0 if rel == "this" else 1).start.date()
    try:
        return _period_atom(match, _day(start.replace(day=day)))
    except ValueError:
        return None


@_rule(rf"\b(?:on\s+)?the\s+{_DAY}(?!\s+(?:of\s+)?{_MONTH})", re.IGNORECASE, needs=("digit",))
def _day_of_month(match: re.Match[str], ctx: _Context) -> _Atom | None:
    if not match["dn"]:
        return None  # "the second" is an ordinal; "on the 2nd" a day
    rest = match.string[match.end() : match.end() + 12].lower()
    if re.match(r"\s+(?:floor|time|try|attempt|place|row|page|line|step|round|level|grade)", rest):
        return None
    period = _resolve_day_only(int(match["dn"]), ctx.today)
    if period is None:
        return None
    return _Atom(
        match.start(),
        match.end(),
        period,
        "dayonly",
        needs_cue=not match.group(0).lower().startswith("on"),
        day=int(match["dn"]),
    )


# --- English relative


@_rule(
    r"\b(?P<unit2>year|month)[\s-](?P<p3>end|start)\b(?!\s+(?:of|in)\s+(?:19|20)\d\d)",
    re.IGNORECASE,
    needs=("unit",),
)
def _unit_end(match: re.Match[str], ctx: _Context) -> _Atom:
    """'At year-end', 'by month end': the most recent one begun."""
    part = match["p3"].lower()
    return _period_atom(match, _recent_part(ctx.today, match["unit2"].lower(), part))


@_rule(
    rf"\b(?:(?P<p1>early|late|mid)[\s-]+|(?:the\s+)?(?P<p2>beginning|start|end|middle)\s+of\s+)"
    rf"(?:(?P<rel>last|this|the)\s+(?P<unit>week|month|year)|(?P<unit0>month|year)\b|(?P<y>{_YEAR}))\b",
    re.IGNORECASE,
    needs=("unit", "digit"),
)
def _part_of_period(match: re.Match[str], ctx: _Context) -> _Atom:
    """'The end of last month', 'early 2023'; 'the start of the year' is this year's, 'the end
    of the month' the most recent month end begun."""
    word = (match["p1"] or match["p2"]).lower()
    part = {"beginning": "start", "middle": "mid"}.get(word, word)
    if match["y"]:
        return _period_atom(match, _part(_year(int(match["y"])), part), absolute=True)
    if match["unit0"]:  # "at the end of year"
        return _period_atom(match, _recent_part(ctx.today, match["unit0"].lower(), part))
    rel, unit = match["rel"].lower(), match["unit"].lower()
    if rel == "the":
        return _period_atom(match, _recent_part(ctx.today, unit, part))
    period = _shift(ctx.today, unit, 1 if rel == "last" else 0)
    return _period_atom(match, _part(period, part))


def _recent_part(today: date, unit: str, part: str) -> _Period:
    """The part ("start", "end"...) of this month or year, or of the last one if this one's has
    not begun: asked in May, "the end of the year" is last year's."""
    period = _part(_shift(today, unit, 0), part)
    return period if period.start.date() <= today else _part(_shift(today, unit, 1), part)


_QUARTER_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3}
_QUARTER_WORDS |= {"fourth": 4, "4th": 4, "final": 4, "last": 4}


@_rule(
    r"(?:\b(?:in|during|over|for)\s+)?(?:\bthe\s+)?"
    r"(?:(?P<nth>first|1st|second|2nd|third|3rd|fourth|4th|final|last|previous)\s+quarter\b"
    r"|(?<![\w&])Q(?P<q>[1-4])(?![A-Za-z0-9&]))"
    rf"(?:(?:(?:\s+of|\s+in|,)?\s+|\s*[-/]\s*)(?:(?P<y>{_YEAR})|(?P<rel>last|this|the\s+previous|the)\s+year)\b"
    r"|\s*['’](?P<yy>\d\d)\b)?"
    rf"|\b(?P<y0>{_YEAR})\s*[-/]?\s*Q(?P<q0>[1-4])\b",
    re.IGNORECASE,
    needs=("unit", "digit"),
)
def _quarter_en(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'Q1', 'Q3 2025', 'the last quarter of 2025', 'the first quarter of last year'; 'the last
    quarter' alone is the previous one; a quarter without a year the most recent one begun."""
    nth = (match["nth"] or "").lower()
    rel = " ".join((match["rel"] or "").lower().split())
    year_word = match["y"] or match["y0"] or match["yy"]
    if not (year_word or rel):
        if nth in ("last", "previous"):
            return _period_atom(match, _shift(ctx.today, "quarter", 1))
        if nth and re.match(r"\s+of\s", match.string[match.end() :]):
            return None  # "the first quarter of the game"
    if nth == "previous":
        return None
    number = _QUARTER_WORDS[nth] if nth else int(match["q"] or match["q0"])
    if year_word:
        year = int(year_word) + (2000 if len(year_word) == 2 else 0)
        return _period_atom(match, _quarter(year, number), absolute=True)
    if rel in ("last", "this", "the previous"):
        return _period_atom(match, _quarter(ctx.today.year - (rel != "this"), number))
    year = ctx.today.year if number <= _quarter_of(ctx.today) else ctx.today.year - 1
    return _period_atom(match, _quarter(year, number))


@_rule(
    rf"(?<![\w&])H(?P<h>[12])(?:\s*[-/,]?\s*(?P<y>{_YEAR})\b)?(?![A-Za-z0-9&])"
    rf"|\b(?P<y0>{_YEAR})\s*[-/]?\s*H(?P<h0>[12])\b"
    r"|\b(?i:(?:the\s+)?(?P<word>first|second|latter)\s+half\s+of\s+the\s+year)\b",
    needs=("digit", "unit"),
)
def _half_year(match: re.Match[str], ctx: _Context) -> _Atom:
    """'H1 2025', '2025H2'; 'the second half of the year' is the most recent one begun. 'H1'
    alone needs a cue ("in H1"): it is also a heading."""
    digit = match["h"] or match["h0"]
    second = digit == "2" if digit else match["word"].lower() != "first"
    year_word = match["y"] or match["y0"]
    if year_word:
        year = int(year_word)
    else:
        year = ctx.today.year if not second or ctx.today.month >= 7 else ctx.today.year - 1
    start = date(year, 7 if second else 1, 1)
    period = _span(start, date(*_add_months(year, start.month, 6), 1), "range")
    needs_cue = not year_word and not match["word"]
    return _period_atom(match, period, needs_cue=needs_cue, absolute=bool(year_word))


@_rule(
    r"\b(?:(?P<abbr>[YMWQ]TD)|(?:this\s+)?(?P<unit>year|month|week|quarter)[\s-]+to[\s-]+date"
    r"|so\s+far\s+(?:this|in\s+the)\s+(?P<unit2>year|month|week|quarter)"
    r"|(?:this|the)\s+(?P<unit3>year|month|week|quarter)\s+so\s+far)\b",
    re.IGNORECASE,
    needs=("unit", "word"),
)
def _to_date(match: re.Match[str], ctx: _Context) -> _Atom:
    """'YTD', 'month to date', 'so far this year': from the unit's start through today."""
    abbr = (match["abbr"] or "").upper()
    unit = {"Y": "year", "M": "month", "W": "week", "Q": "quarter"}.get(abbr[:1], "")
    unit = unit or (match["unit"] or match["unit2"] or match["unit3"]).lower()
    start = _shift(ctx.today, unit, 0).start.date()
    return _period_atom(match, _last_days(ctx.today, (ctx.today - start).days))


@_rule(
    rf"\bthe\s+(?P<nth>first|second|third|fourth|last)\s+week\s+of\s+(?P<mon>{_MONTH})\b"
    rf"(?:,?\s+(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
    needs=("month",),
)
def _week_of_month(match: re.Match[str], ctx: _Context) -> _Atom | None:
    year = int(match["y"]) if match["y"] else None
    month = _resolve_date(year, _en_month(match["mon"]), None, None, ctx.today)
    if month is None:
        return None
    nth = match["nth"].lower()
    if nth == "last":
        return _period_atom(match, _Period(month.end - timedelta(days=7), month.end, "range"))
    first = month.start + timedelta(days=7 * ["first", "second", "third", "fourth"].index(nth))
    return _period_atom(match, _Period(first, first + timedelta(days=7), "range"))


_NTH = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date | None:
    """The nth (1-5, or -1 for the last) given weekday of a month; None if it has none."""
    if nth < 0:
        stop = date(*_add_months(year, month, 1), 1) - timedelta(days=1)
        return stop - timedelta(days=(stop.weekday() - weekday) % 7)
    first = date(year, month, 1)
    day = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
    return day if day.month == month else None


def _nth_weekday_atom(
    match: re.Match[str],
    ctx: _Context,
    year: int | None,
    month: int,
    weekday: int,
    nth: int,
    days: int = 1,
) -> _Atom | None:
    """'The first Monday of May', '5月的第一个星期一': without a year, the most recent one.
    With `days`, the days from it ('the first weekend of May': its first Saturday and Sunday)."""
    if not 1 <= month <= 12:
        return None
    if year is not None:
        day = _nth_weekday(year, month, weekday, nth)
        return None if day is None else _period_atom(match, _day(day, days), absolute=True)
    year = ctx.today.year if month <= ctx.today.month else ctx.today.year - 1
    for back in range(8):  # a fifth Monday: the most recent month that has one
        day = _nth_weekday(year - back, month, weekday, nth)
        if day is not None and day <= ctx.today:
            return _period_atom(match, _day(day, days))
    return None


@_rule(
    rf"\b(?:the\s+)?(?P<nth>first|second|third|fourth|fifth|last|[1-5](?:st|nd|rd|th))\s+"
    rf"weekend\s+(?:of|in)\s+(?:(?P<mon>{_MONTH})\b\.?(?:,?\s+(?P<y>{_YEAR})\b)?"
    r"|(?P<rel>last|this|the\s+previous)\s+month\b)",
    re.IGNORECASE,
    needs=("unit",),
)
def _nth_weekend(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'The first weekend of November': its first Saturday and the Sunday after."""
    nth_word = match["nth"].lower()
    nth = _NTH.get(nth_word) or int(nth_word[0])
    if match["rel"]:
        month = _shift(ctx.today, "month", 0 if match["rel"].lower() == "this" else 1)
        day = _nth_weekday(month.start.year, month.start.month, 5, nth)
        return None if day is None else _period_atom(match, _day(day, 2))
    year = int(match["y"]) if match["y"] else None
    return _nth_weekday_atom(match, ctx, year, _en_month(match["mon"]), 5, nth, days=2)


@_rule(
    rf"\b(?:the\s+)?(?P<nth>first|second|third|fourth|fifth|last|[1-5](?:st|nd|rd|th))\s+"
    rf"(?P<wd>{_WEEKDAY})\s+(?:of|in)\s+(?:(?P<mon>{_MONTH})\b\.?(?:,?\s+(?P<y>{_YEAR})\b)?"
    r"|(?P<rel>last|this|the\s+previous)\s+month\b)",
    re.IGNORECASE,
    needs=("weekday",),
)
def _nth_weekday_en(match: re.Match[str], ctx: _Context) -> _Atom | None:
    word = match["wd"]
    if not (len(word) >= 6 or word[0].isupper()):
        return None
    nth_word = match["nth"].lower()
    nth = _NTH.get(nth_word) or int(nth_word[0])
    weekday = _EN_WEEKDAYS[word.lower()[:3]]
    if match["rel"]:
        month = _shift(ctx.today, "month", 0 if match["rel"].lower() == "this" else 1)
        day = _nth_weekday(month.start.year, month.start.month, weekday, nth)
        return None if day is None else _period_atom(match, _day(day))
    year = int(match["y"]) if match["y"] else None
    return _nth_weekday_atom(match, ctx, year, _en_month(match["mon"]), weekday, nth)


@_rule(
    r"\b(?:over|during|at|on)\s+the\s+weekend(?P<before_last>\s+before\s+last)?\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _the_weekend(match: re.Match[str], ctx: _Context) -> _Atom:
    """'Over the weekend' is the last Saturday and Sunday; '... before last' the one before."""
    return _period_atom(match, _shift(ctx.today, "weekend", 2 if match["before_last"] else 0))


@_rule(
    rf"\b(?:this\s+(?:day|time)\s+(?:last\s+year|(?P<n>{_EN_NUM})\s+years?\s+ago)"
    rf"|(?P<n2>{_EN_NUM})\s+years?\s+ago\s+today)\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _this_day_last_year(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'This time last year', 'a year ago today', 'this day 3 years ago'."""
    words = match["n"] or match["n2"]
    years = _en_count(words) if words else 1
    if years is None:
        return None
    widen = "time" in match[0].lower()
    return _period_atom(match, _same_day_years_back(ctx.today, years, widen=widen))


def _same_day_years_back(today: date, years: int, *, widen: bool) -> _Period:
    """This day (or, widened, a week either side of it) `years` years ago."""
    try:
        day = today.replace(year=today.year - years)
    except ValueError:  # 29 February
        day = today.replace(year=today.year - years, day=28)
    if widen:
        return _span(day - timedelta(days=7), day + timedelta(days=8), "range")
    return _day(day)


@_rule(
    r"\b(?:(?:earlier|later)\s+)?today\b|\bthis\s+(?:morning|afternoon|evening)\b|\btonight\b",
    re.IGNORECASE,
    needs=("word",),
)
def _today(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _day(ctx.today))


@_rule(
    r"\b(?:yesterday|yday|yest)(?:\s+(?:morning|afternoon|evening|night))?\b",
    re.IGNORECASE,
    needs=("word",),
)
def _yesterday(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _shift(ctx.today, "day", 1))


@_rule(r"\blast\s+night\b", re.IGNORECASE, needs=("word",))
def _last_night(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _RELATIVE_CJK["昨晚"](ctx))


@_rule(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.IGNORECASE, needs=("word",))
def _day_before_yesterday(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _shift(ctx.today, "day", 2))


_AGO_UNIT = (
    r"(?:day|week|fortnight|month|quarter|year|weekend|hour|minute|wk|wknd|mo|mth|yr|hr|min)"
)
# chat's short forms of a unit ("3 wks ago", "last yr", "2 hrs ago")
_UNIT_SHORT = {
    "wk": "week",
    "wknd": "weekend",
    "mo": "month",
    "mth": "month",
    "yr": "year",
    "hr": "hour",
    "min": "minute",
}


def _unit_word(word: str) -> str:
    unit = word.lower()
    return _UNIT_SHORT.get(unit, unit)


@_rule(
    rf"\b(?:(?P<n0>{_EN_NUM})\s*(?:or|-|–|to)\s*)?(?P<n>{_EN_NUM})\s+(?P<unit>{_AGO_UNIT})s?"
    rf"(?:,?\s+(?:and\s+)?(?P<n2>{_EN_NUM})\s+(?P<unit2>{_AGO_UNIT})s?"
    r"|\s+or\s+(?P<or_n>two|three|so))?\s+(?:ago|back)\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _ago(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'3 days ago', 'two weekends ago', 'a fortnight ago', 'two quarters back', '5 hours ago';
    a guess ('two or three days ago', '2-3 weeks ago', 'a day or two ago') is either count."""
    unit = _unit_word(match["unit"])
    guess = _en_guess(match)
    if guess is not None:
        if guess[0] >= guess[1] or unit not in _UNIT_ORDER:
            return None
        older, newer = _units_back(ctx, unit, guess[1]), _units_back(ctx, unit, guess[0])
        return _period_atom(match, _Period(older.start, newer.end, "range"))
    count = _en_count(match["n"])
    if count is None:
        return _period_atom(match, _loose_units_back(ctx, unit))
    count2 = _en_count(match["n2"]) if match["n2"] else None
    if count2 is not None:
        unit2 = _unit_word(match["unit2"])
        if (
            unit not in _UNIT_ORDER
            or unit2 not in _UNIT_ORDER
            or (_UNIT_ORDER.index(unit2) >= _UNIT_ORDER.index(unit))
        ):
            # "2 days and 3 weeks ago": two things, the second of them a time
            period = _units_back(ctx, unit2, count2)
            return _Atom(match.start("n2"), match.end(), period)
        return _period_atom(match, _compound_ago(ctx.today, unit, count, unit2, count2))
    return _period_atom(match, _units_back(ctx, unit, count))


@_rule(
    rf"\b(?P<n>{_EN_NUM})\s+(?P<unit>day|week|month)s?\s+ago\s+today\b"
    r"|\b(?P<half>half\s+a\s+year)\s+ago\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _ago_today(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'A week ago today': that day; 'half a year ago': months four to six back, loosely."""
    if match["half"]:
        return _period_atom(match, _RELATIVE_CJK["半年前"](ctx))
    count = _en_count(match["n"])
    if count is None:
        return None
    unit = match["unit"].lower()
    if unit == "month":
        year, month = _add_months(ctx.today.year, ctx.today.month, -count)
        period = _resolve_date(year, month, min(ctx.today.day, 28), None, ctx.today)
        return None if period is None else _period_atom(match, period)
    days = count * (7 if unit == "week" else 1)
    return _period_atom(match, _day(ctx.today - timedelta(days=days)))


def _en_guess(match: re.Match[str]) -> tuple[int, int] | None:
    """The two counts of 'two or three days', '2-3 weeks', 'a day or two', 'a month or so':
    None for one count."""
    if match["n0"]:
        low, high = _en_count(match["n0"]), _en_count(match["n"])
    elif match["or_n"]:  # "a day or two", "a month or so": it or one more
        low = _en_count(match["n"])
        high = (
            (low + 1 if low is not None else None)
            if match["or_n"].lower() == "so"
            else (_en_count(match["or_n"]))
        )
    else:
        return None
    return None if low is None or high is None else (low, high)


def _units_back(ctx: _Context, unit: str, count: int) -> _Period:
    """The calendar unit `count` units back; hours and minutes back, the day they reach."""
    if unit in ("hour", "minute"):
        return _day((ctx.moment - timedelta(**{f"{unit}s": count})).date())
    if unit == "fortnight":
        return _shift(ctx.today, "week", 2 * count)
    return _shift(ctx.today, unit, count)


def _loose_units_back(ctx: _Context, unit: str) -> _Period:
    """'A few hours/weekends/quarters ago': as loose as the unit they are counted in."""
    if unit in ("hour", "minute"):
        return _day(ctx.today)
    unit = {"weekend": "week", "fortnight": "week", "quarter": "month"}.get(unit, unit)
    return _loose_ago(ctx.today, unit)


@_rule(
    r"\b(?:the\s+)?(?P<unit>week|weekend|month|quarter|year)\s+before\s+last\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _before_last(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _shift(ctx.today, match["unit"].lower(), 2))


@_rule(
    r"\b(?P<mod>last|previous|this\s+past|this|earlier\s+(?:this|in\s+the))\s+"
    r"(?P<unit>week|month|quarter|year|weekend|wk|wknd|mth|yr)\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _calendar_unit(match: re.Match[str], ctx: _Context) -> _Atom:
    mod, unit = " ".join(match["mod"].lower().split()), _unit_word(match["unit"])
    if mod.startswith("earlier"):  # from the unit's start, today included
        period = _shift(ctx.today, unit, 0)
        return _period_atom(match, _last_days(ctx.today, (ctx.today - period.start.date()).days))
    back = 1 if mod in ("last", "previous", "this past") else 0
    if unit == "weekend" and not back:  # this week's, to come before Saturday
        return _period_atom(match, _this_weekend(ctx.today))
    return _period_atom(match, _shift(ctx.today, unit, back))


@_rule(
    rf"\b(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+"
    rf"(?:(?P<n>{_EN_NUM})\s+)?(?P<unit>hour|day|weekend|week|fortnight|month|quarter|year)s?\b",
    re.IGNORECASE,
    needs=("unit",),
)
def _trailing(match: re.Match[str], ctx: _Context) -> _Atom | None:
    text = match.group(0).lower()
    if not match["n"] and not re.search(r"\b(?:the|past)\b", text):
        return None  # "last week" is the calendar week (_calendar_unit)
    count = _en_count(match["n"]) if match["n"] else 1
    unit = match["unit"].lower()
    if unit == "weekend":  # "the last two weekends": from the first one's Saturday
        saturday = _shift(ctx.today, "weekend", count or 3).start.date()
        return _period_atom(match, _last_days(ctx.today, (ctx.today - saturday).days))
    if unit == "hour":
        return _period_atom(match, _last_days(ctx.today, -(-(count or 3) // 24)))
    days = _UNIT_DAYS[unit] * (count or 3)
    return _period_atom(match, _last_days(ctx.today, days))


@_rule(r"\bthe\s+other\s+week(?:end)?\b", re.IGNORECASE, needs=("unit",))
def _other_week(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _loose_ago(ctx.today, "week"))


@_rule(
    r"\b(?:recently|lately|of\s+late|in\s+recent\s+(?:days|weeks))\b",
    re.IGNORECASE,
    needs=("word",),
)
def _recently(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _last_days(ctx.today, RECENT_DAYS))


@_rule(r"\bthe\s+other\s+day\b", re.IGNORECASE, needs=("unit",))
def _other_day(match: re.Match[str], ctx: _Context) -> _Atom:
    return _period_atom(match, _span(ctx.today - timedelta(days=FEW_DAYS), ctx.today, "range"))


@_rule(
    rf"\b(?:(?P<mod>last|this\s+past|this|past)\s+|(?P<over>over\s+the)\s+)?"
    rf"(?P<s>spring|summer|autumn|fall|winter)\b"
    rf"(?:\s+(?:of\s+)?(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
    needs=("season",),
)
def _season_en(match: re.Match[str], ctx: _Context) -> _Atom | None:
    if match["over"] and match["s"].lower() == "fall":
        return None  # "got over the fall": a tumble
    name = match["s"].lower().replace("fall", "autumn")
    mod = " ".join((match["mod"] or "").lower().split())
    if match["y"]:
        return _period_atom(match, _season(name, int(match["y"])), absolute=True)
    if mod == "this":
        return _period_atom(match, _this_season(name, ctx.today))
    period = _recent_season(name, ctx.today, ended=mod in ("last", "past", "this past"))
    return _period_atom(match, period, needs_cue=not (mod or match["over"]))


# a weekday inside a fixed name (Black Friday and Cyber Monday are holidays, read below)
_WEEKDAY_NAME_BEFORE = re.compile(
    r"(?:\b(?:super|easter|palm|ash|maundy)|(?-i:\b(?:Man|Girl|Good|Blue|Holy)))\s+$", re.IGNORECASE
)
_WEEKDAY_NAME_AFTER = re.compile(r"\s+(?:school|best|night\s+lights)\b", re.IGNORECASE)


@_rule(
    rf"\b(?:(?P<mod>last|this\s+past|this|past|previous)\s+)?(?P<wd>{_WEEKDAY})\b\.?"
    r"(?:,?\s+(?:the\s+(?P<dom>[0-3]?\d)(?:st|nd|rd|th)?|(?P<dom2>[0-3]?\d)(?:st|nd|rd|th))(?![\w:]))?"
    r"(?:\s+(?P<wk>(?:of\s+)?(?:last|this|the\s+previous)\s+week|before\s+last|after\s+next))?"
    r"(?:\s+(?:morning|afternoon|evening|night))?",
    re.IGNORECASE,
    needs=("weekday",),
)
def _weekday_en(match: re.Match[str], ctx: _Context) -> _Atom | None:
    word, mod = match["wd"], " ".join((match["mod"] or "").lower().split())
    mod = "last" if mod == "this past" else mod
    weekday = _EN_WEEKDAYS[word.lower()[:3]]
    full = len(word) >= 6
    if not full and not word[0].isupper() and word.lower() in _WEEKDAY_WORDS:
        return None  # "sat", "sun", "wed", "mon" are words ("I last sat there"); "fri" is not
    if _WEEKDAY_NAME_AFTER.match(match.string, match.end("wd")) or (
        not mod
        and _WEEKDAY_NAME_BEFORE.search(match.string, max(0, match.start() - 8), match.start())
    ):
        return None  # "Sunday school", "Super Tuesday", "Good Friday": names, not that day
    day_of_month = match["dom"] or match["dom2"]
    if day_of_month:
        return _weekday_of_month_atom(match, ctx, weekday, int(day_of_month))
    week = (match["wk"] or "").lower()
    if week == "after next":  # a time to come
        return _future_atom(match, ctx)
    if week:
        back = 2 if "before" in week else (0 if "this" in week else 1)
        monday = _shift(ctx.today, "week", back).start.date()
        return _period_atom(match, _day(monday + timedelta(days=weekday)))
    days_back = (ctx.today.weekday() - weekday) % 7
    if mod in ("last", "past", "previous") and days_back == 0:
        days_back = 7
    if mod == "this":
        days_back = ctx.today.weekday() - weekday
    needs_cue = not full and not mod
    return _period_atom(
        match, _day(ctx.today - timedelta(days=days_back)), kind="weekday", needs_cue=needs_cue
    )


def _weekday_of_month_atom(
    match: re.Match[str], ctx: _Context, weekday: int, day_of_month: int
) -> _Atom | None:
    """'Tuesday the 24th'; before a month ('Tuesday the 5th of May') the date says the day."""
    rest = match.string[match.end() :]
    if re.match(rf"\s+(?:of\s+)?{_MONTH}\b", rest, re.IGNORECASE):
        last = _day(ctx.today - timedelta(days=(ctx.today.weekday() - weekday) % 7))
        return _Atom(match.start(), match.end("wd"), last, "weekday")
    dated = _weekday_dated(ctx.today, weekday, day_of_month)
    return None if dated is None else _period_atom(match, dated)


def _weekday_dated(today: date, weekday: int, day_of_month: int) -> _Period | None:
    """The most recent `day_of_month` that fell on `weekday` (today included); else, when
    the two never met in the last years, the most recent `day_of_month`."""
    year, month = today.year, today.month
    for _ in range(60):
        try:
            day = date(year, month, day_of_month)
        except ValueError:
            day = None
        if day is not None and day <= today and day.weekday() == weekday:
            return _day(day)
        year, month = _add_months(year, month, -1)
    return _resolve_day_only(day_of_month, today)


@_rule(
    rf"\b(?P<n>{_EN_NUM})\s+(?P<wd>{_WEEKDAY})s\s+(?:ago|back)\b", re.IGNORECASE, needs=("weekday",)
)
def _weekdays_ago(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """'Two Fridays ago': the Friday before last (the last one is the most recent before today)."""
    count = _en_count(match["n"])
    if count is None or count < 1:
        return None
    weekday = _EN_WEEKDAYS[match["wd"].lower()[:3]]
    days_back = (ctx.today.weekday() - weekday) % 7 or 7
    return _period_atom(match, _day(ctx.today - timedelta(days=days_back + 7 * (count - 1))))


# --- holidays: on fixed days, on the nth weekday of a month, after Easter, and of the lunar
# calendar (春节, 中秋: a table, search/lunar_holidays.py)


def _thanksgiving(year: int) -> date:
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


def _easter(year: int) -> date:
    """Easter Sunday (the anonymous Gregorian computus)."""
    golden, century, of_century = year % 19, year // 100, year % 100
    leap, leap_left = divmod(century, 4)
    moon_fix = (century + 8) // 25
    epact = (19 * golden + century - leap - (century - moon_fix + 1) // 3 + 15) % 30
    weekday = (32 + 2 * leap_left + 2 * (of_century // 4) - epact - of_century % 4) % 7
    correction = (golden + 11 * epact + 22 * weekday) // 451
    month, day = divmod(epact + weekday - 7 * correction + 114, 31)
    return date(year, month, day + 1)


_Start = Callable[[int], date | None]  # a holiday's first day in a year


def _fixed(month: int, day: int, years_back: int = 0) -> _Start:
    return lambda year: date(year - years_back, month, day)


def _nth(month: int, weekday: int, nth: int) -> _Start:
    return lambda year: _nth_weekday(year, month, weekday, nth)


def _after(start: _Start, days: int) -> _Start:
    def moved(year: int) -> date | None:
        day = start(year)
        return None if day is None else day + timedelta(days=days)

    return moved


def _after_easter(days: int) -> _Start:
    return lambda year: _easter(year) + timedelta(days=days)


def _after_thanksgiving(days: int) -> _Start:
    return lambda year: _thanksgiving(year) + timedelta(days=days)


def _lunar(holiday: str, days: int = 0) -> _Start:
    def start(year: int) -> date | None:
        day = lunar_day(year, holiday)
        return None if day is None else day + timedelta(days=days)

    return start


_HOLIDAYS: dict[str, tuple[_Start, int]] = {
    word: (start, days)
    for (start, days), words in (
        ((_fixed(12, 24), 1), "christmas eve|平安夜|クリスマスイブ|クリスマス・イブ"),
        ((_fixed(12, 25), 1), "christmas day|christmas|xmas|圣诞节|聖誕節|圣诞|聖誕|クリスマス"),
        ((_fixed(12, 26), 1), "boxing day"),
        ((_fixed(12, 24), 9), "christmas holidays|christmas break|christmas vacation"),
        ((_fixed(12, 31), 1), "new year's eve|new years eve|大晦日|跨年夜"),
        ((_fixed(12, 29), 6), "年末年始"),
        ((_fixed(1, 1), 1), "new year's day|new years day|元旦|元日"),
        ((_fixed(12, 30, years_back=1), 4), "new year|new year's"),  # the one that begins it
        ((_fixed(1, 1), 3), "お正月|正月"),
        (
            (_fixed(2, 14), 1),
            "valentine's day|valentines day|valentine's|情人节|情人節|バレンタインデー|バレンタイン",
        ),
        ((_fixed(3, 14), 1), "white day|ホワイトデー|白色情人节"),
        ((_fixed(3, 8), 1), "妇女节|婦女節|三八妇女节"),
        ((_fixed(3, 17), 1), "st. patrick's day|st patrick's day|saint patrick's day"),
        (
            (_fixed(4, 4), 3),
            "清明节|清明節|清明假期|qingming festival|tomb-sweeping day|tomb sweeping day",
        ),
        ((_fixed(4, 29), 7), "ゴールデンウィーク"),
        ((_fixed(5, 1), 5), "劳动节|勞動節|五一假期|五一"),
        ((_fixed(5, 5), 1), "こどもの日|子供の日"),
        ((_fixed(6, 1), 1), "儿童节|兒童節|六一儿童节"),
        ((_fixed(7, 4), 1), "independence day"),  # "the fourth of July" is a date
        ((_fixed(7, 1), 1), "canada day"),
        ((_fixed(7, 14), 1), "bastille day"),
        ((_fixed(11, 11), 1), "remembrance day|veterans day|veterans' day"),
        ((_fixed(8, 13), 4), "お盆休み|お盆|盆休み"),
        ((_fixed(9, 10), 1), "教师节|教師節"),
        ((_fixed(10, 1), 7), "国庆节|國慶節|国庆假期|国庆|國慶"),
        ((_fixed(10, 31), 1), "halloween|万圣节|萬聖節|ハロウィン|ハロウィーン"),
        ((_fixed(11, 11), 1), "双十一|雙十一|双11|雙11"),
        ((_nth(5, 6, 2), 1), "mother's day|mothers day|母亲节|母親節|母の日"),
        ((_nth(6, 6, 3), 1), "father's day|fathers day|父亲节|父親節|父の日"),
        ((_nth(5, 0, -1), 1), "memorial day"),
        ((_nth(9, 0, 1), 1), "labor day|labour day"),
        ((_after(_nth(5, 0, -1), -2), 3), "memorial day weekend"),
        ((_after(_nth(9, 0, 1), -2), 3), "labor day weekend|labour day weekend"),
        ((_after_easter(0), 1), "easter sunday|easter"),
        ((_after_easter(-2), 1), "good friday"),
        ((_after_easter(1), 1), "easter monday"),
        ((_after_easter(-2), 4), "easter weekend|easter holidays"),
        ((_after_thanksgiving(0), 1), "thanksgiving day|thanksgiving"),
        ((_after_thanksgiving(0), 4), "thanksgiving weekend"),
        ((_after_thanksgiving(1), 1), "black friday"),
        ((_after_thanksgiving(4), 1), "cyber monday"),
        # the lunar calendar: 除夕 to 初六, 元宵 (the 15th), 端午 (5/5), 中秋 (8/15)
        (
            (_lunar("new_year", -1), 7),
            "春节|春節|过年|過年|旧正月|农历新年|農曆新年"
            "|chinese new year|lunar new year|spring festival",
        ),
        ((_lunar("new_year", -1), 1), "除夕|chinese new year's eve|lunar new year's eve"),
        ((_lunar("new_year", 14), 1), "元宵节|元宵節|lantern festival"),
        ((_lunar("dragon_boat"), 1), "端午节|端午節|端午|dragon boat festival"),
        (
            (_lunar("mid_autumn"), 1),
            "中秋节|中秋節|中秋|mid-autumn festival|mid autumn festival|moon festival"
            "|mooncake festival",
        ),
        ((_lunar("qixi"), 1), "七夕节|七夕節|七夕|qixi festival"),  # in Japanese 7 July (_holiday)
        ((_fixed(7, 7), 1), "たなばた"),
        ((_lunar("double_ninth"), 1), "重阳节|重陽節|重阳|重陽|double ninth festival"),
    )
    for word in words.split("|")
}
_HOLIDAY = "|".join(
    r"\s+".join(re.escape(word).replace("'", "['’]") for word in name.split())
    for name in sorted(_HOLIDAYS, key=len, reverse=True)
)


# "at the Christmas party" is any day the party was: after "the", a holiday before one of these
# names no day (without "the", "at Christmas dinner" is Christmas, as before)
_EVENT_NOUN = r"(?:party|parties|dinner|lunch|market|sale|sales|show|concert|gala|parade|fair|play)"


@_rule(
    rf"(?:\b(?P<mod>last|this\s+past|this|past|on|at|over)\s+(?P<the>the\s+)?)?"
    rf"(?<![一二三四五六七八九十〇零A-Za-z])(?P<name>{_HOLIDAY})(?![一二三四五六七八九十〇零A-Za-z])"
    rf"(?(the)(?!\s+{_EVENT_NOUN}\b))"
    rf"(?:\s+(?P<y>{_YEAR})\b|(?P<cy>去年|今年)|\s+(?P<before_last>before\s+last)\b)?",
    re.IGNORECASE,
    needs=("holiday",),
)
def _holiday(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """Christmas, 国庆节, バレンタイン: the most recent one begun (a year, if given; 'the
    Christmas before last' the one before). A year word beside it ('Christmas last year',
    '去年圣诞节', '昨年のクリスマス') moves it to that year (_join)."""
    name = match["name"]
    key = _holiday_key(name)
    if key == "七夕" and ctx.japanese:
        key = "たなばた"  # Japan keeps it on 7 July
    if key == "good friday" and not name.startswith("G"):
        return None  # "we had a good Friday": a Friday
    mod = " ".join((match["mod"] or "").lower().split())
    if match["y"]:
        year: int | None = int(match["y"])
    else:
        year = _recent_holiday_year(key, ctx.today, before_today=mod in ("last", "this past"))
        last_start = None if year is None else _HOLIDAYS[key][0](year)
        if last_start is not None and match["before_last"]:
            year = _recent_holiday_year(key, last_start - timedelta(days=1))
    period = None if year is None else _holiday_period(key, year)
    if period is None:
        return None
    needs_cue = not (mod or match["y"] or match["before_last"]) and name.isascii()
    absolute = bool(match["y"])
    return _period_atom(
        match, period, kind="holiday", needs_cue=needs_cue, absolute=absolute, holiday=key
    )


def _holiday_key(name: str) -> str:
    return " ".join(name.lower().replace("’", "'").split())


def _recent_holiday_year(key: str, today: date, *, before_today: bool = False) -> int | None:
    """The year whose holiday began most recently (today included, unless `before_today`)."""
    for year in range(today.year + 1, today.year - 3, -1):
        start = _HOLIDAYS[key][0](year)
        if start is not None and (start < today or (start == today and not before_today)):
            return year
    return None


def _holiday_period(key: str, year: int) -> _Period | None:
    start, days = _HOLIDAYS[key]
    first = start(year)
    if first is None:
        return None
    return _span(first, first + timedelta(days=days), "day" if days == 1 else "range")


# --- the future: an expression of a time to come names no window (memories are of the past),
# and its words stay search words; its atom only keeps the weekday or date inside it ("next
# Friday", "下周五", "来週の金曜") from being read as the last one


_FUTURE_EN = (
    r"\b(?:next|this\s+coming|coming|upcoming)\s+(?:"
    rf"{_WEEKDAY}|week(?:end)?|month|year|{_MONTH}|spring|summer|autumn|fall|winter|{_HOLIDAY})\b"
    r"|\btomorrow\b"
)  # "in two weeks", "3 days from now" hold nothing another rule would read


@_rule(_FUTURE_EN, re.IGNORECASE, needs=("weekday", "unit", "month", "season", "holiday"))
def _future_en(match: re.Match[str], ctx: _Context) -> _Atom:
    return _future_atom(match, ctx)


@_cjk_rule(
    r"(?<!一)下下?(?:个|個)?(?:(?:周|週|星期|礼拜|禮拜)(?:[一二三四五六日天]|末)?|月)"
    r"|明天|明日|明早|明晚|后天|後天|大后天|大後天|明年|后年|後年|明後日|再来週|来週|再来月|来月"
    r"|再来年|来年|今度の|次の"
    rf"|(?:{_CJK_N}|几|幾|数|數)\s*(?:{_CJK_UNIT})(?:之后|以后|以後|后|後)"
)
def _future_cjk(match: re.Match[str], ctx: _Context) -> _Atom:
    return _future_atom(match, ctx)


def _future_atom(match: re.Match[str], ctx: _Context) -> _Atom:
    return _Atom(match.start(), match.end(), _day(ctx.today + timedelta(days=1)), "future")


# --- Chinese and Japanese


@_cjk_rule(
    rf"(?<![0-9０-９一二三四五六七八九十两兩〇零])(?:(?P<y>{_CJK_YEAR})年|(?P<yw>去年|今年|本年|前年|昨年|一昨年))?"
    rf"(?:の|的)?(?P<m>{_CJK_N})月(?:(?P<d>{_CJK_N})(?:日|号|號))?"
    r"(?P<part>份|初め|初|上旬|中旬|下旬|底|末|の初め|の終わり|末尾)?"
    r"(?:\s*[(（][月火水木金土日一二三四五六天][)）])?"
)
def _cjk_date(match: re.Match[str], ctx: _Context) -> _Atom | None:
    month = _cjk_number(match["m"])
    day = _cjk_number(match["d"]) if match["d"] else None
    if month is None or not 1 <= month <= 12 or (match["d"] and day is None):
        return None
    year = _cjk_number(match["y"]) if match["y"] else None
    if match["yw"]:
        year = ctx.today.year - _cjk_years_back(match["yw"], ctx)
    part_word = match["part"] or ""
    part = _CJK_PARTS.get(part_word)
    needs_cue = False
    if day is None and year is None and not part_word:
        following = match.string[match.end() : match.end() + 1]
        needs_cue = bool(following) and following not in _CJK_MONTH_FOLLOWERS
        if match.string.startswith("天", match.end()) and not match.string.startswith(
            "天气", match.end()
        ):
            return None  # 五月天 is a band
    return _date_atom(match, ctx, year, month, day, part=part, needs_cue=needs_cue)


@_cjk_rule(rf"(?<![0-9０-９一二三四五六七八九十两兩〇零])(?P<y>{_CJK_YEAR})年(?:度)?")
def _cjk_year(match: re.Match[str], ctx: _Context) -> _Atom | None:
    year = _cjk_number(match["y"])
    if year is None or not 1900 <= year <= 2199:
        return None
    return _Atom(match.start(), match.end(), _year(year), "year", year=year, absolute=True)


@_cjk_rule(
    r"(?P<d>(?<![0-9０-９])[0-9０-９]{1,2}|(?<![一二三四五六七八九十两兩〇零])[一二三四五六七八九十两兩〇零]{1,3})"
    r"(?:日|号|號)(?P<after>那天|那一天|当天|當天)?(?:\s*[(（](?P<wd>[月火水木金土日一二三四五六天])[)）])?"
)
def _cjk_day_only(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """6号, 24日: a day that needs a cue; 24日(火) the most recent 24th on a Tuesday."""
    day = _cjk_number(match["d"])
    following = match.string[match.end() : match.end() + 1]
    if day is None or not 1 <= day <= 31 or following in _CJK_NOT_A_DAY:
        return None
    if match["wd"]:
        weekday = _JA_WEEKDAYS.get(match["wd"]) or _CJK_WEEKDAYS[match["wd"]]
        dated = _weekday_dated(ctx.today, weekday, day)
        return None if dated is None else _period_atom(match, dated)
    period = _resolve_day_only(day, ctx.today)
    if period is None:
        return None
    return _Atom(
        match.start(), match.end(), period, "dayonly", needs_cue=not match["after"], day=day
    )


_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}


@_cjk_rule(rf"(?P<era>令和|平成|昭和)(?P<n>{_CJK_N}|元)年")
def _ja_era_year(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """令和5年 is 2023, 平成元年 1989."""
    number = 1 if match["n"] == "元" else _cjk_number(match["n"])
    if number is None:
        return None
    year = _ERAS[match["era"]] + number
    return _Atom(match.start(), match.end(), _year(year), "year", year=year, absolute=True)


_RELATIVE_CJK_PATTERN = "|".join(sorted(map(re.escape, _RELATIVE_CJK), key=len, reverse=True))


_CJK_PART_WORDS = {
    word: part
    for part, words in (
        ("start", "年初 年头 年頭 月初 初め の初め 初"),
        ("early", "上旬"),
        ("mid", "中旬 の半ば 年中"),
        ("late", "下旬"),
        ("end", "年底 年末 月底 月末 底 末 の終わり 暮れ の暮れ"),
        ("half", "上半年 下半年"),
        ("first_half", "前半 の前半 上半月"),
        ("second_half", "後半 の後半 下半月"),
        ("earlier", "早些时候 早些時候 早些时 早些時 早前 早些"),
    )
    for word in words.split()
}
_CJK_PART = "|".join(sorted(_CJK_PART_WORDS, key=len, reverse=True))


_NUMERAL_BEFORE = re.compile(r"[0-9０-９一二三四五六七八九十两兩几幾数數个個]$")


@_cjk_rule(rf"(?P<word>{_RELATIVE_CJK_PATTERN})(?:(?:の|的)?(?P<part>{_CJK_PART}))?")
def _cjk_relative(match: re.Match[str], ctx: _Context) -> _Atom | None:
    word = match["word"]
    if _NUMERAL_BEFORE.search(match.string, max(0, match.start() - 1), match.start()):
        return None  # 十几天前 is not 几天前: _cjk_about_ago
    if word.startswith("最近") and re.search(
        r"[离離距]", match.string[max(0, match.start() - 8) : match.start()]
    ):
        return None  # 离我最近的: the nearest, not the most recent
    if word == "前年" and match.string.startswith(("比", "同期"), match.end()):
        return None  # 前年比: year on year
    period = _RELATIVE_CJK[word](ctx)
    part = _CJK_PART_WORDS.get(match["part"] or "")
    if part == "earlier" and period.granularity in ("week", "month", "quarter", "year"):
        # 这个月早些时候: from its start, today included
        days = (ctx.today - period.start.date()).days
        return _period_atom(match, _last_days(ctx.today, days))
    if part in ("first_half", "second_half") and period.granularity in ("month", "year"):
        return _period_atom(match, _halve(period, first=part == "first_half"))
    if part and period.granularity in ("month", "year"):
        if match["part"] in ("上半年", "下半年"):
            year = period.start.year
            halves = {"上半年": (datetime(year, 1, 1), datetime(year, 7, 1))}
            start, stop = halves.get(match["part"], (datetime(year, 7, 1), period.end))
            return _period_atom(match, _Period(start, stop, "range"))
        return _period_atom(match, _part(period, part))
    return _Atom(match.start(), match.end("word"), period)


@_cjk_rule(
    rf"(?:(?P<yw>去年|前年|昨年|一昨年)|(?P<n>{_CJK_N})\s*年(?:之前|以前|前))(?:的|の)?"
    r"(?P<what>今天|今日|这个时候|這個時候|这时候|今頃|今ごろ|この時期|同期|这个时期)"
)
def _cjk_this_day_years_back(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """去年的今天, 一年前的今天, 2年前の今日: that day; 去年の今頃: a week either side."""
    years = _cjk_number(match["n"]) if match["n"] else _cjk_years_back(match["yw"], ctx)
    if years is None:
        return None
    widen = match["what"] not in ("今天", "今日")
    return _period_atom(match, _same_day_years_back(ctx.today, years, widen=widen))


@_cjk_rule(
    rf"(?<![0-9０-９一二三四五六七八九十两兩〇零])(?:(?:(?P<y>{_CJK_YEAR})年|(?P<yw>去年|今年|前年|昨年|一昨年))?"
    rf"(?:の|的)?(?P<m>{_CJK_N})月|(?P<rm>上个月|上個月|上月|这个月|這個月|本月|先月|今月))"
    r"(?:的|の)?(?:第(?P<n>[1-5１-５一二三四五])(?:个|個)?"
    r"|(?P<last>最后一个|最後一個|最后一|最後一|最后|最後の|最後)|(?P<first>最初の|最初的|头一个|頭一個))"
    r"(?:(?:星期|周|週|礼拜|禮拜)(?P<wd>[一二三四五六日天])|(?P<jwd>[月火水木金土日])曜(?:日)?"
    r"|(?P<weekend>周末|週末))"
)
def _cjk_nth_weekday(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """5月的第一个星期一, 5月の第1月曜日, 4月最后一个周五; 11月的第一个周末 (its first
    Saturday and Sunday)."""
    nth = -1 if match["last"] else 1 if match["first"] else _cjk_number(match["n"])
    if nth is None:
        return None
    weekday, days = 5, 2  # a weekend: its Saturday and Sunday
    if not match["weekend"]:
        weekday = _CJK_WEEKDAYS[match["wd"]] if match["wd"] else _JA_WEEKDAYS[match["jwd"]]
        days = 1
    if match["rm"]:  # 上个月的第一个周末: that month, whether or not the day has come
        month = _shift(ctx.today, "month", 0 if match["rm"][0] in "这這本今" else 1).start
        day = _nth_weekday(month.year, month.month, weekday, nth)
        return None if day is None else _period_atom(match, _day(day, days))
    number = _cjk_number(match["m"])
    if number is None:
        return None
    year = _cjk_number(match["y"]) if match["y"] else None
    if match["yw"]:
        year = ctx.today.year - _cjk_years_back(match["yw"], ctx)
    return _nth_weekday_atom(match, ctx, year, number, weekday, nth, days=days)


@_cjk_rule(
    rf"(?:前|过去|過去|最近|这|這|ここ|この)(?:的)?(?P<n>{_CJK_N}|几|幾|数|數)\s*(?:个|個)?(?:周末|週末)"
    r"(?!(?:之前|以前|前))"
)
def _cjk_last_weekends(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """前两个周末, 过去几个周末: from the first one's Saturday through today."""
    count = 3 if match["n"] in _LOOSE else _cjk_number(match["n"])
    if count is None:
        return None
    saturday = _shift(ctx.today, "weekend", count).start.date()
    return _period_atom(match, _last_days(ctx.today, (ctx.today - saturday).days))


@_cjk_rule(r"(?:周末|週末)")
def _cjk_weekend(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """周末 alone: the last weekend, given a cue; after a week (两周前的周末, 先週の週末) that
    week's Saturday and Sunday (_join)."""
    if _EVERY.search(match.string, 0, match.start()):
        return None  # 每周末: every weekend
    following = match.string[match.end() : match.end() + 1]
    needs_cue = not following or following not in _CJK_MONTH_FOLLOWERS  # 周末去了, 周末的
    period = _shift(ctx.today, "weekend", 0)
    return _period_atom(match, period, kind="weekend", needs_cue=needs_cue)


@_cjk_rule(
    rf"(?P<n>{_CJK_N})\s*(?:个|個)(?:星期|周|週|礼拜|禮拜)(?P<wd>[一二三四五六日天])(?:之前|以前|前)"
)
def _cjk_weekdays_ago(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """两个星期五之前: two Fridays ago, the Friday before last."""
    count = _cjk_number(match["n"])
    if count is None or count < 1:
        return None
    days_back = (ctx.today.weekday() - _CJK_WEEKDAYS[match["wd"]]) % 7 or 7
    return _period_atom(match, _day(ctx.today - timedelta(days=days_back + 7 * (count - 1))))


@_cjk_rule(rf"(?P<n>{_CJK_N})\s*(?:个|個)?(?:周末|週末)(?:之前|以前|前)")
def _cjk_weekends_ago(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """两个周末前: the weekend before last."""
    count = _cjk_number(match["n"])
    return None if count is None else _period_atom(match, _shift(ctx.today, "weekend", count))


@_cjk_rule(
    rf"(?<![0-9０-９一二三四五六七八九十两兩〇零])(?:(?P<y>{_CJK_YEAR})年(?:度)?"
    r"|(?P<yy>[0-9]{2})年|(?P<yw>去年|今年|本年|前年|昨年|一昨年))?(?:的|の)?"
    r"(?:第(?P<n>[1-4１-４一二三四])(?:个|個)?(?:季度|四半期)|(?<![第0-9０-９])(?P<n2>[一二三四1-4１-４])季度"
    r"|(?P<last>最后一个季度|最後一個季度|最后一季度|最後一季度|最終四半期)"
    r"|(?<![A-Za-z])[QＱ](?P<q>[1-4１-４])(?![A-Za-z0-9]))"
)
def _cjk_quarter(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """第一季度, 一季度, 去年第四季度, 2025年Q3, 昨年の第4四半期: a quarter without a year is the
    most recent one begun."""
    number = 4 if match["last"] else _cjk_number(match["n"] or match["n2"] or match["q"])
    if number is None or not 1 <= number <= 4:
        return None
    if match["y"] or match["yy"]:
        year = _cjk_number(match["y"] or match["yy"])
        if year is None:
            return None
        year += 2000 if year < 100 else 0
        return _period_atom(match, _quarter(year, number), absolute=True)
    if match["yw"]:
        return _period_atom(
            match, _quarter(ctx.today.year - _cjk_years_back(match["yw"], ctx), number)
        )
    year = ctx.today.year if number <= _quarter_of(ctx.today) else ctx.today.year - 1
    return _period_atom(match, _quarter(year, number))


@_cjk_rule(
    r"(?<![0-9０-９一二三四五六七八九十两兩〇零上下本这這今去前明来來昨每毎大新过過拜同当當年月])"
    r"(?P<unit>年|月)(?P<part>初め|初|头|頭|末|底|(?<=年)始)(?![一二三四五六七八九十])"
)
def _cjk_unit_part(match: re.Match[str], ctx: _Context) -> _Atom:
    """年初, 年末, 月初, 月底 alone: the start of this year or month; the end of the most
    recent one whose end has begun (asked in May, 年末 is last year's)."""
    unit = "year" if match["unit"] == "年" else "month"
    part = "end" if match["part"] in ("末", "底") else "start"
    return _period_atom(match, _recent_part(ctx.today, unit, part))


_CJK_BARE_UNITS = {"月": "month", "星期": "week", "礼拜": "week", "禮拜": "week"}


@_cjk_rule(
    rf"(?P<n>{_CJK_N})?(?P<teens>(?<=十)(?:几|幾|数|數|来|來))?(?:个|個)?(?P<more>多|余|餘)?"
    rf"(?:个|個)?(?P<half_before>半)?(?P<unit>{_CJK_UNIT}|月|星期|礼拜|禮拜)"
    r"(?P<after>多|半)?(?:ほど|くらい|ぐらい)?(?:之前|以前|前)"
)
def _cjk_about_ago(match: re.Match[str], ctx: _Context) -> _Atom | None:
    """A count said roughly: 十几天前 (11 to 19 days), 二十多天前 (20 to 29), 一个多月前 and
    三年多前 (one to two months, three to four years), 一个半月前 and 一年半前 (half a unit
    either side of one and a half). The plain counts are _cjk_ago's."""
    word = match["unit"]
    unit = _CJK_UNITS.get(word) or _CJK_BARE_UNITS[word]
    numerals = match["n"] or ""
    more = bool(match["more"]) or match["after"] == "多"
    half = bool(match["half_before"]) or match["after"] == "半"
    if match["teens"]:
        if not numerals.endswith("十"):
            return None
        tens = _cjk_number(numerals) or 10
        low, high = tens + 1.0, tens + 9.0
    elif more or half:
        count = _cjk_number(numerals) if numerals else None
        if count is None or (half and more):
            return None
        low, high = (
            (count + 0.25, count + 0.75) if half else (count, count + (9 if count % 10 == 0 else 1))
        )
    else:
        return None
    if word in _CJK_BARE_UNITS and not (match["more"] or match["half_before"]):
        return None  # "3月前" is no "3 months ago"
    days = _UNIT_DAYS[unit]
    start = ctx.today - timedelta(days=round(high * days))
    end = ctx.today - timedelta(days=round(low * days)) + timedelta(days=1)
    return _period_atom(match, _span(start, end, "range"))


@_cjk_rule(r"(?<![0-9０-９一二三四五六七八九十两兩个個多])(?:半个月前|半個月前|半月前)")
def _cjk_half_month_ago(match: re.Match[str], ctx: _Context) -> _Atom:
    start = ctx.today - timedelta(days=18)
    return _period_atom(match, _span(start, start + timedelta(days=7), "range"))


@_cjk_rule(rf"前(?P<n>几|幾|数|數|两|兩)\s*(?P<unit>{_CJK_UNIT})")
def _cjk_previous_few(match: re.Match[str], ctx: _Context) -> _Atom:
    """前几周, 前两天: a loose stretch before the current unit."""
    unit = _CJK_UNITS[match["unit"]]
    if unit == "day" and match["n"] in "两兩":
        return _period_atom(match, _span(ctx.today - timedelta(days=3), ctx.today, "range"))
    return _period_atom(match, _loose_ago(ctx.today, unit))


@_cjk_rule(
    r"(?<![十几幾数數0-9０-９])(?:(?P<n0>[1-9１-９一二三四五六七八九两兩])[、，,・]\s*)?"
    rf"(?P<n>{_CJK_N}|几|幾|数|數|何)\s*(?P<unit>{_CJK_UNIT})"
    rf"(?:(?:零|又)?(?P<n2>{_CJK_N})\s*(?P<unit2>{_CJK_UNIT}))?(?:ほど|程|くらい|ぐらい)?"
    r"(?:之前|以前|前)"
)
def _cjk_ago(match: re.Match[str], ctx: _Context) -> _Atom | None:
    unit = _CJK_UNITS[match["unit"]]
    if match["n"] in _LOOSE:
        return _period_atom(match, _loose_ago(ctx.today, unit))
    pair = _cjk_pair(match["n0"], match["n"])
    if pair is not None and not match["n2"]:  # 两三天前, 二、三日前: either
        older, newer = _shift(ctx.today, unit, pair[1]), _shift(ctx.today, unit, pair[0])
        return _period_atom(match, _Period(older.start, newer.end, "range"))
    count = _cjk_number(match["n"])
    if count is None:
        return None
    if match["n2"]:
        count2 = _cjk_number(match["n2"])
        if count2 is None:
            return None
        unit2 = _CJK_UNITS[match["unit2"]]
        if _UNIT_ORDER.index(unit2) >= _UNIT_ORDER.index(unit):
            return None
        period = _compound_ago(ctx.today, unit, count, unit2, count2)
    else:
        period = _shift(ctx.today, unit, count)
    if match["n0"]:  # "5、3日前": a list's last count, alone
        return _Atom(match.start("n"), match.end(), period, "period")
    return _period_atom(match, period)


@_cjk_rule(
    rf"(?:过去|過去|最近|近|这|這|ここ|この)(?:的)?\s*(?P<n>{_CJK_N}|几|幾|数|數)\s*(?P<unit>{_CJK_UNIT})"
    r"(?:间|間|内|內|里|裡|以来|以來|来|來)?"
)
def _cjk_trailing(match: re.Match[str], ctx: _Context) -> _Atom | None:
    pair = _cjk_pair(None, match["n"])  # 过去两三天: the larger count
    count = 3 if match["n"] in _LOOSE else pair[1] if pair else _cjk_number(match["n"])
    if count is None:
        return None
    unit = _CJK_UNITS[match["unit"]]
    days = _UNIT_DAYS[unit] * count
    return _period_atom(match, _last_days(ctx.today, days))


@_cjk_rule(
    rf"(?:(?P<yw>去年|今年|前年|昨年|一昨年|本年)|(?P<y>{_CJK_YEAR})年|(?P<cue>在|上个|上個|这个|這個|今年の|去年の))?"
    r"(?:的|の)?(?P<s>春|夏|秋|冬)(?:天|季|休み)?(?![节節])"
)
def _cjk_season(match: re.Match[str], ctx: _Context) -> _Atom | None:
    name = _CJK_SEASONS[match["s"]]
    whole = match.group(0)
    if match["y"]:
        year = _cjk_number(match["y"])
        if year is None:
            return None
        return _period_atom(match, _season(name, year))
    if match["yw"]:
        return _period_atom(
            match, _season(name, ctx.today.year - _cjk_years_back(match["yw"], ctx))
        )
    if len(whole) == 1:
        return None  # 春, 夏 alone are too often parts of other words
    cue = match["cue"] or ""
    if cue in ("这个", "這個", "今年の"):
        return _period_atom(match, _this_season(name, ctx.today))
    period = _recent_season(name, ctx.today, ended=cue.startswith("上"))
    return _period_atom(match, period, needs_cue=not cue)


@_cjk_rule(
    r"(?P<mod>上上个|上上個|上上|上个|上個|上|这个|這個|这|這|本|先々週の?|先週の?|今週の?)?"
    r"(?:周|週|星期|礼拜|禮拜)(?P<wd>[一二三四五六日天])"
)
def _cjk_weekday(match: re.Match[str], ctx: _Context) -> _Atom | None:
    if _EVERY.search(match.string, 0, match.start()):
        return None  # 每周一: every Monday
    return _weekday_atom(match, ctx, _CJK_WEEKDAYS[match["wd"]], match["mod"] or "")


@_cjk_rule(
    r"(?P<mod>先々週の?|先週の?|今週の?|この前の|(?<![間日月年週])前の)?(?P<wd>[月火水木金土日])曜(?:日)?(?!大工)"
)
def _ja_weekday(match: re.Match[str], ctx: _Context) -> _Atom | None:
    if _EVERY.search(match.string, 0, match.start()):
        return None  # 毎週月曜日: every Monday
    return _weekday_atom(match, ctx, _JA_WEEKDAYS[match["wd"]], match["mod"] or "")


def _weekday_atom(match: re.Match[str], ctx: _Context, weekday: int, mod: str) -> _Atom:
    if mod:
        back = 2 if mod.startswith(("上上", "先々")) else 1 if mod[0] in "上先" else 0
        if mod.startswith(("前", "この前")):
            days_back = (ctx.today.weekday() - weekday) % 7 or 7
            return _period_atom(match, _day(ctx.today - timedelta(days=days_back)))
        monday = _shift(ctx.today, "week", back).start.date()
        return _period_atom(match, _day(monday + timedelta(days=weekday)))
    days_back = (ctx.today.weekday() - weekday) % 7
    return _period_atom(match, _day(ctx.today - timedelta(days=days_back)), kind="weekday")


# --------------------------------------------------------------------- combination

_GAP_MERGE = re.compile(r"\s*(?:,|of|in|['’]s|の|的|过|過)?\s*(?:那个|那個)?\s*", re.IGNORECASE)
_RANGE_GAP = re.compile(
    r"\s*(?:-|–|—|~|～|to|until|till|through|thru|and|or|到|至|から|より|和|与|與|跟|或者|或|と|や|か)\s*$",
    re.IGNORECASE,
)
_RANGE_OPEN = re.compile(r"(?:\b(?:from|between)\s+|从|從|自|由)$", re.IGNORECASE)
_RANGE_TAIL = re.compile(r"^\s*(?:まで|为止|為止|之间|之間|の間|にかけて)", re.IGNORECASE)
_SINCE_BEFORE = re.compile(
    r"(?:\b(?P<since>since|starting(?:\s+from)?|beginning)\s+|\b(?P<after>after)\s+"
    r"|\b(?P<before>before|prior\s+to)\s+|\b(?P<until>until|till|up\s+to|through|as\s+of)\s+"
    r"|\b(?P<around>around|circa|approximately|roughly|on\s+or\s+around)\s+"
    r"|(?P<since_cjk>自从|自從|从|從|自)\s*|(?P<until_cjk>截至|截止到|截止|直到)\s*)$",
    re.IGNORECASE,
)
_SINCE_AFTER = re.compile(
    r"(?:\s*(?P<around>左右|前后|前後|頃|ごろ|ころ)"
    r"|\s*(?P<since>(?:到|至)(?:现在|現在|目前|今天)(?:为止|為止)?|迄今|に入ってから|に入って以来"
    r"|から(?:今|現在|今日)まで|に入って|これまで|今まで"
    r"|以来|以來|开始|開始|起|至今|から|以降|以后|以後|之后|之後|后|後)"
    r"|\s*(?P<before>之前|以前|より前|前)|\s*(?P<until>为止|為止|まで)"
    r"|(?P<since_en>(?i:\s+(?:on(?:wards?)?|onward)(?=\s*(?:$|[,.;:!?]))"
    r"|\s+(?:until|till|to|up\s+to)\s+(?:now|today|date)\b)))",
)


# after a date or holiday, a place suffix makes it a name: 五一路, 五一广场, 国庆路, 八月一日駅
_PLACE_AFTER = re.compile(
    r"大道|大街|广场|廣場|公园|公園|小区|小區|号线|號線|通り|[路街巷桥橋駅]|站(?![在起着著会會])"
    r"|道(?![歉别別谢謝贺賀])"
)
_NAMEABLE = ("holiday", "date", "dayonly")


@cache
def _rules_for(anchors: frozenset[str]) -> tuple[_Rule, ...]:
    """The rules a query with these anchor kinds runs (a few hundred sets at most)."""
    return tuple(rule for rule in _RULES if anchors.intersection(rule.needs))


def _atoms(query: str, ctx: _Context, anchors: frozenset[str]) -> list[_Atom]:
    found: list[_Atom] = []
    for rule in _rules_for(anchors):
        for match in rule.pattern.finditer(query):
            atom = rule.make(match, ctx)
            if atom is None:
                continue
            if atom.kind in _NAMEABLE and _PLACE_AFTER.match(query, atom.end):
                continue  # a street, a square, a station named after the day
            found.append(atom)
    found.sort(key=lambda a: (a.begin, -(a.end - a.begin)))
    chosen: list[_Atom] = []
    for atom in found:
        if chosen and atom.begin < chosen[-1].end:
            continue
        chosen.append(atom)
    return chosen


def _merge(query: str, atoms: list[_Atom], ctx: _Context) -> list[_Atom]:
    """Neighbours that say one thing: 'May last year', '上个月6号', 'Friday last week'."""
    merged: list[_Atom] = []
    for atom in atoms:
        previous = merged[-1] if merged else None
        if previous is not None and _GAP_MERGE.fullmatch(query, previous.end, atom.begin):
            joined = _join(previous, atom, ctx) or _join(atom, previous, ctx)
            if joined is not None:
                merged[-1] = joined
                continue
        merged.append(atom)
    return merged


_REANCHORABLE = ("date", "dayonly", "weekday")


def _join(first: _Atom, second: _Atom, ctx: _Context) -> _Atom | None:
    begin, end = min(first.begin, second.begin), max(first.end, second.end)
    if first.kind == "future" and second.kind in _REANCHORABLE and second.year is None:
        return replace(first, begin=begin, end=end)  # 'Friday next week', '明年5月': to come
    year_of = _year_of(second)
    if first.holiday and year_of is not None and second.kind != "holiday":
        # 'Christmas last year', '去年圣诞节', '昨年のクリスマス': that year's, not the year
        moved = _holiday_period(first.holiday, year_of)
        if moved is None:
            return None
        return _Atom(begin, end, moved, "holiday", absolute=second.absolute, holiday=first.holiday)
    if first.period.granularity == "quarter" and not first.absolute and year_of is not None:
        # "this year's Q1", "last year's first quarter": that year's
        number = _quarter_of(first.period.start.date())
        return _Atom(begin, end, _quarter(year_of, number), absolute=second.absolute)
    if first.kind == "weekday" and second.kind == "dayonly" and second.day:
        # '星期二24号', '24号星期二': the most recent 24th that was a Tuesday
        dated = _weekday_dated(ctx.today, first.period.start.date().weekday(), second.day)
        return None if dated is None else _Atom(begin, end, dated, "period")
    if first.kind == "date" and first.year is None and year_of is not None and first.month:
        period = _resolve_date(year_of, first.month, first.day, first.part, ctx.today)
        if period is not None:
            return _Atom(
                begin, end, period, "date", False, year_of, first.month, first.day, absolute=True
            )
    if first.kind == "dayonly" and second.period.granularity == "month" and first.day:
        month_start = second.period.start.date()
        try:
            return _Atom(begin, end, _day(month_start.replace(day=first.day)), "period")
        except ValueError:
            return None
    if first.kind == "weekday" and second.kind == "date" and second.day:
        return replace(second, begin=begin, end=end)  # 'Tuesday, May 6': the date says it
    if first.kind == "weekend" and second.period.granularity == "week":
        saturday = second.period.start.date() + timedelta(days=5)
        return _Atom(begin, end, _day(saturday, 2), "period")
    if first.kind == "weekday" and second.period.granularity == "week":
        monday = second.period.start.date()
        weekday = first.period.start.date().weekday()
        return _Atom(begin, end, _day(monday + timedelta(days=weekday)), "period")
    return None


def _halve(period: _Period, *, first: bool) -> _Period:
    """A month's days 1-15 and 16 to the end; a year's January-June and July-December."""
    if period.granularity == "year":
        middle = period.start.replace(month=7)
    else:
        middle = period.start.replace(day=16)
    return _Period(period.start, middle, "range") if first else _Period(middle, period.end, "range")


def _year_of(atom: _Atom) -> int | None:
    if atom.kind == "year":
        return atom.year
    if atom.period.granularity == "year":
        return atom.period.start.year
    return None


@dataclass(frozen=True)
class _Found:
    begin: int
    end: int
    period: _Period
    absolute: bool = False


def _expression(query: str, atoms: list[_Atom], ctx: _Context) -> _Found | None:
    """The first expression that names its year ('recently, as mentioned on 3 June, 2023' is
    about 3 June 2023), else the first one: an atom with the range or preposition around it."""
    first: _Found | None = None
    tomorrow = datetime.combine(ctx.today + timedelta(days=1), time())
    for index, atom in enumerate(atoms):
        if atom.kind == "future":
            continue
        after = atoms[index + 1] if index + 1 < len(atoms) else None
        found = _range(query, atom, after, ctx) or _bounded(query, atom, ctx)
        if found is None and (not atom.needs_cue or _cued(query, atom)):
            found = _Found(atom.begin, atom.end, atom.period, atom.absolute)
        if found is not None and (
            found.period.start >= found.period.end
            or (not found.absolute and found.period.start >= tomorrow)
        ):
            continue  # 'this Friday' on a Wednesday, 'after today': not yet ('May 2030' is said)
        if found is not None and found.absolute:
            return found
        if found is not None and (first is None or found.begin >= first.end):
            first = first or found
    return first


def _cued(query: str, atom: _Atom) -> bool:
    return atom.kind != "holiday" and _CUE_BEFORE(query, atom.begin)


def _CUE_BEFORE(query: str, position: int) -> bool:
    before = query[max(0, position - 24) : position]
    return bool(_EN_CUE_BEFORE.search(before) or _CJK_CUE_BEFORE.search(before))


_BOTH_WORDS = {"and", "or", "和", "与", "與", "跟", "或", "或者", "と", "や", "か"}


def _range(query: str, first: _Atom, second: _Atom | None, ctx: _Context) -> _Found | None:
    if second is None or second.kind == "future":
        return None
    if not _RANGE_GAP.fullmatch(query, first.end, second.begin):
        return None
    gap = query[first.end : second.begin].strip().lower()
    opened = _RANGE_OPEN.search(query[max(0, first.begin - 10) : first.begin])
    tail = _RANGE_TAIL.match(query[second.end :])
    end_period = second.period
    in_month = second.kind == "dayonly" and first.kind == "date" and first.month and second.day
    if in_month:  # '5月1日到3日', '5月3日或4日': the day of the start's month
        try:
            end_period = _day(first.period.start.date().replace(day=second.day or 1))
        except ValueError:
            return None
    if gap in _BOTH_WORDS and not (opened or tail):
        if first.needs_cue or (second.needs_cue and not in_month):
            return None
        start = min(first.period.start, end_period.start)  # 'May 2 and May 3': both
        stop = max(first.period.end, end_period.end)
        absolute = first.absolute or second.absolute
        return _Found(first.begin, second.end, _Period(start, stop, "range"), absolute)
    if gap in ("-", "–", "—") and (first.needs_cue or second.needs_cue):
        return None
    if second.kind == "weekday" and first.kind != "weekday" and first.period.granularity == "day":
        # '先週の月曜から水曜まで', 'May 4 to Friday': the first such weekday from the start on
        start_day = first.period.start.date()
        weekday = second.period.start.date().weekday()
        end_period = _day(start_day + timedelta(days=(weekday - start_day.weekday()) % 7))
    start_period = _anchor_before(first, end_period, ctx)
    begin = first.begin - (len(opened.group(0)) if opened else 0)
    end = second.end + (tail.end() if tail else 0)
    period = _Period(start_period.start, max(end_period.end, start_period.end), "range")
    return _Found(begin, end, period, first.absolute or second.absolute)


def _anchor_before(first: _Atom, end_period: _Period, ctx: _Context) -> _Period:
    """A range's start without a year is the latest one not after the range's end."""
    if first.period.start <= end_period.start:
        return first.period
    if first.kind == "date" and first.year is None and first.month:
        anchor = end_period.end.date() - timedelta(days=1)
        period = _resolve_date(None, first.month, first.day, first.part, anchor)
        if period is not None:
            return period
    if first.kind == "weekday":
        start = first.period.start - timedelta(days=7)
        return _Period(start, start + timedelta(days=1), "day")
    return first.period


_SPAN_NEXT_TO = re.compile(
    rf"\b(?:(?P<n>the|last|{_EN_NUM})\s+)?(?:(?P<unit>day|week|month|weekend)s?|(?P<wd>{_WEEKDAY}))"
    r"\s+(?P<dir>before|after|prior\s+to)\s+$",
    re.IGNORECASE,
)
_HALF_OF = re.compile(r"\b(?:the\s+)?(?P<half>first|second|latter)\s+half\s+of\s+$", re.IGNORECASE)
_WEEK_OF = re.compile(r"\b(?:the\s+)?week\s+of\s+$", re.IGNORECASE)


def _next_to(query: str, atom: _Atom) -> _Found | None:
    """'the week before August 3', 'two weeks before X', 'the Sunday before X', 'a day after X':
    from that point through X (or from X through it). X itself is kept: what is said on a
    day is often about the days before it."""
    match = _SPAN_NEXT_TO.search(query, max(0, atom.begin - 40), atom.begin)
    if match is None:
        return None
    period, after = atom.period, match["dir"].lower() == "after"
    if match["wd"]:
        if not (len(match["wd"]) >= 6 or match["wd"][0].isupper()):
            return None
        weekday = _EN_WEEKDAYS[match["wd"].lower()[:3]]
        anchor = period.end.date() - timedelta(days=1) if after else period.start.date()
        step = (
            (weekday - anchor.weekday()) % 7 or 7
            if after
            else (anchor.weekday() - weekday) % 7 or 7
        )
        day = anchor + timedelta(days=step if after else -step)
        start, stop = (period.start, _day(day).end) if after else (_day(day).start, period.end)
    else:
        count = (
            _en_count(match["n"]) if match["n"] and match["n"].lower() not in ("the", "last") else 1
        )
        days = _UNIT_DAYS[match["unit"].lower()] * (count or 3)
        if after:
            start, stop = period.start, period.end + timedelta(days=days)
        else:
            start, stop = period.start - timedelta(days=days), period.end
    return _Found(match.start(), atom.end, _Period(start, stop, "range"), atom.absolute)


def _half(query: str, atom: _Atom) -> _Found | None:
    match = _HALF_OF.search(query, max(0, atom.begin - 24), atom.begin)
    if match is None:
        return None
    period = atom.period
    middle = datetime.combine((period.start + (period.end - period.start) / 2).date(), time())
    if period.granularity == "month":
        middle = period.start.replace(day=16)
    if period.granularity == "year":
        middle = period.start.replace(month=7)
    first = match["half"].lower() == "first"
    halved = (
        _Period(period.start, middle, "range") if first else _Period(middle, period.end, "range")
    )
    return _Found(match.start(), atom.end, halved, atom.absolute)


def _week_of(query: str, atom: _Atom) -> _Found | None:
    """'The week of May 4': the calendar week (Monday to Sunday) that holds the day."""
    match = _WEEK_OF.search(query, max(0, atom.begin - 16), atom.begin)
    if match is None or atom.period.granularity != "day":
        return None
    day = atom.period.start.date()
    week = _week(day - timedelta(days=day.weekday()))
    return _Found(match.start(), atom.end, week, atom.absolute)


_FROM_BEFORE = re.compile(r"\bfrom\s+$", re.IGNORECASE)


def _bounded(query: str, atom: _Atom, ctx: _Context) -> _Found | None:
    """The atom with the words around it that bound it: since, before, until, around..."""
    near = _next_to(query, atom) or _half(query, atom) or _week_of(query, atom)
    if near is not None:
        return near
    before = _SINCE_BEFORE.search(query[max(0, atom.begin - 24) : atom.begin])
    after = _SINCE_AFTER.match(query, atom.end)
    verb_on = after is not None and after["since_en"] and atom.needs_cue and before is None
    if verb_on and not _FROM_BEFORE.search(query, max(0, atom.begin - 8), atom.begin):
        after = None  # "they march on": a verb, not "from March on"
    bare = after is not None and after.group(0).strip() in ("前", "后", "後")
    if bare and (atom.kind not in ("date", "dayonly") or atom.period.granularity == "range"):
        after = None  # 三天前 is its own atom; a bare 前 only follows a date
    if before is None and after is None:
        return None
    kinds = {k for m in (before, after) if m for k, v in m.groupdict().items() if v}
    begin = atom.begin - (len(before.group(0)) if before else 0)
    end = after.end() if after else atom.end
    start = atom.period
    since = atom.kind == "weekday" and kinds & {"since", "since_cjk", "since_en", "after"}
    if since and start.start.date() == ctx.today:  # 'since Tuesday' on a Tuesday: last Tuesday
        start = _day(ctx.today - timedelta(days=7))
    period = _bound(start, kinds, ctx.today, bool(after))
    return None if period is None else _Found(begin, end, period, atom.absolute)


def _bound(period: _Period, kinds: set[str], today: date, suffixed: bool) -> _Period | None:
    end_of_today = datetime.combine(today + timedelta(days=1), time())
    open_start = datetime.combine(date(1, 1, 2), time())
    if "around" in kinds:
        if period.granularity != "day":
            return period
        wide = timedelta(days=AROUND_DAYS)
        return _Period(period.start - wide, period.end + wide, "range")
    if "before" in kinds:
        return _Period(open_start, period.start, "open")
    if "until" in kinds or "until_cjk" in kinds:
        return _Period(open_start, period.end, "open")
    if "after" in kinds:
        return _Period(period.end, max(end_of_today, period.end), "range")
    if kinds & {"since", "since_cjk", "since_en"}:
        if kinds == {"since_cjk"} and not suffixed:
            return None  # 从5月 alone: from May, a range's start, or May itself
        stop = end_of_today if period.start < end_of_today else period.end
        return _Period(period.start, stop, "range")
    return None


# ---------------------------------------------------------------------------- text

_DANGLING_BEFORE = re.compile(
    r"(?:\b(?:on|in|at|during|since|from|by|around|of|for|over|within|between|towards?)(?:\s+the)?\s*"
    r"|\bthe\s*|在|于|於|从|從|自从|自從|是)$",
    re.IGNORECASE,
)
_DANGLING_AFTER = re.compile(
    r"^(?:['’]s\b)?(?:那天|那一天|这天|這天|当天|當天|那时|那時)?(?:的|に|の|には|では|で|は)?"
)
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([?.!,;:？。！，、])|[\s,，、]+([?.!？。！])")
_EDGE_PUNCT = " \t,，、;；"


def _without(query: str, begin: int, end: int) -> str:
    head, tail = query[:begin], query[end:]
    dangling = _DANGLING_BEFORE.search(head.rstrip() if head.endswith(" ") else head)
    if dangling:
        head = head.rstrip()[: dangling.start()]
    trailing = _DANGLING_AFTER.match(tail)
    if trailing:
        tail = tail[trailing.end() :]
    head, tail = head.rstrip(), tail.lstrip()
    spaced = head and tail and not (_CJK.match(head[-1]) or _CJK.match(tail[0]))
    joined = f"{head} {tail}" if spaced else head + tail
    text = _SPACE_BEFORE_PUNCT.sub(lambda m: m.group(1) or m.group(2), " ".join(joined.split()))
    return text.strip(_EDGE_PUNCT)


# --------------------------------------------------------------------------- entry

# What a rule needs before it runs: a digit, a month or weekday name, a season, a holiday,
# an English time word or unit, or a CJK time word. One scan finds which kinds a query has;
# a query with none (most of them) returns at once, and a query with some runs only the
# rules that need them. Words that only bound an expression ("since", 以来, から) need an
# atom beside them, so they are no anchors.
_ANCHORS = re.compile(
    r"(?P<digit>[0-9０-９])"
    r"|(?P<holiday_cjk>圣诞|聖誕|国庆|國慶|五一|平安夜|元旦|元日|正月|晦|[节節]|跨年|年末年始|クリスマス"
    r"|春[节節]|[过過]年|除夕|端午|中秋|清明|七夕|たなばた|重[阳陽]|双十一|雙十一|双11|雙11"
    r"|ゴールデンウィーク|盆休み|お盆"
    r"|こどもの日|子供の日|母の日|父の日|ホワイトデー"
    r"|バレンタイン|ハロウィ)"
    r"|(?P<cjk>[年月日号號周週天昨今曜春夏秋冬頃近季]|四半期|前[天年几幾两兩些日週月]|最近"
    r"|先[週月日々先ほ程]|星期|礼拜|禮拜|阵子|陣子|段时间|段時間|ごろ|きょう|おととい|きのう"
    r"|けさ|おととし|さっき|刚才|剛才|この[間前])"
    r"|\b(?:(?P<word>to(?:day|night)|yesterday|yday|yest|recent(?:ly)?|lately|late|night|morning"
    r"|afternoon|evening|[ymwq]td)"
    r"|(?P<unit>(?:minute|hour|day|week|weekend|fortnight|month|quarter|year|wk|wknd|mth|yr|hr"
    r"|min|mo)s?)"
    r"|(?P<holiday>christmas|xmas|new\s+years?|valentine(?:['’]?s)?|halloween|thanksgiving"
    r"|easter|good\s+friday|boxing\s+day|white\s+day|(?:st\.?|saint)\s+patrick['’]?s"
    r"|mother['’]?s\s+day|father['’]?s\s+day|memorial\s+day|labou?r\s+day|independence\s+day"
    r"|black\s+friday|cyber\s+monday|canada\s+day|bastille\s+day|remembrance\s+day"
    r"|veterans['’]?\s+day|(?:chinese|lunar)\s+new\s+year|(?:spring|lantern|dragon\s+boat|moon"
    r"|mooncake|qixi|double\s+ninth|qingming)\s+festival|mid[-\s]autumn\s+festival"
    r"|tomb[-\s]sweeping\s+day)"
    r"|(?P<season>spring|summer|autumn|fall|winter)"  # after the holidays: "Spring Festival"
    rf"|(?P<month>{_MONTH})|(?P<weekday>{_WEEKDAY})s?)\b",
    re.IGNORECASE,
)


_NO_ANCHORS: frozenset[str] = frozenset()


def _anchors(query: str) -> frozenset[str]:
    kinds = {match.lastgroup for match in _ANCHORS.finditer(query)}
    if not kinds:
        return _NO_ANCHORS
    if "holiday_cjk" in kinds:
        kinds |= {"holiday", "cjk"}
    if "holiday" in kinds:  # its scan took "good Friday", "black Friday" whole
        kinds.add("weekday")
    return frozenset(kind for kind in kinds if kind)


_KANA = re.compile(r"[\u3040-\u30ff]")


def parse_time(query: str, now: datetime) -> TimeQuery:
    """The window the query's first time expression names, and the query without it."""
    anchors = _anchors(query)
    if not anchors:
        return TimeQuery(None, query)
    zone: tzinfo = now.tzinfo or UTC
    local_now = now.astimezone(zone) if now.tzinfo else now
    ctx = _Context(local_now.date(), bool(_KANA.search(query)), local_now.replace(tzinfo=None))
    atoms = _merge(query, _atoms(query, ctx, anchors), ctx)
    found = _expression(query, atoms, ctx)
    if found is None:
        return TimeQuery(None, query)
    window = TimeWindow(
        start=found.period.start.replace(tzinfo=zone),
        end=found.period.end.replace(tzinfo=zone),
        expression=query[found.begin : found.end].strip(),
        granularity=found.period.granularity,
    )
    return TimeQuery(window, _without(query, found.begin, found.end))
