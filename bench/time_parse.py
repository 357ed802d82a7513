"""The time-expression parser (cortex_mcp/search/time_expressions.py): its cost per query and
what it gets right, beside dateparser's `search_dates` in the same run when dateparser is
installed (`pip install dateparser`; it is not a dependency).

- cost: median microseconds per query, timed query by query, over a few hundred mixed queries:
  questions with no time words (LoCoMo's and the diary's plain questions when the data sets
  are beside the checkout, and a built-in list) and questions that name a time (the tables of
  tests/test_time_expressions.py);
- right: a row of those tables is right when the parser's window is the row's window (for
  dateparser, when the first date it finds falls inside the row's window; it has no windows),
  and a near miss is right when no window (no date) comes back.

    python bench/time_parse.py [--show-wrong]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_mcp.search.time_expressions import parse_time  # noqa: E402
from tests.helpers.datasets import default_folders, find  # noqa: E402
from tests.test_time_expressions import (  # noqa: E402
    CHINESE,
    ENGLISH,
    JAPANESE,
    NEAR_MISSES_CHINESE,
    NEAR_MISSES_ENGLISH,
    NEAR_MISSES_JAPANESE,
    NOW,
    Row,
    _window_days,
)

PLAIN = [
    "what is my favourite programming language",
    "who is Caroline's best friend",
    "what did the doctor recommend for my back pain",
    "which restaurant did Sam like",
    "我喜欢的电影是什么",
    "我的狗叫什么名字",
    "好きな食べ物は何ですか",
    "東京で行ったカフェの名前は",
    "how do I configure the embedding provider",
    "what book did Melanie recommend about pottery",
]


def _plain_questions() -> list[str]:
    questions = list(PLAIN)
    for name in ("memorybank_dev_en.json", "memorybank_dev_cn.json"):
        path = next((f / name for f in default_folders() if (f / name).is_file()), None)
        if path is not None:
            data = json.loads(path.read_text(encoding="utf-8"))
            questions += [
                q["q"] for user in data["users"] for q in user["questions"] if q["kind"] == "plain"
            ]
    path = find("locomo_dev.json", {})
    if path is not None:
        for sample in json.loads(path.read_text(encoding="utf-8")):
            questions += [str(qa["question"]) for qa in sample["qa"]][:60]
    return questions


def _median_us(parse: Callable[[str], object], queries: list[str], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        for query in queries:
            started = time.perf_counter()
            parse(query)
            samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


def _dateparser() -> Callable[[str], list[datetime]] | None:
    try:
        from dateparser.search import search_dates
    except ImportError:
        return None
    settings = {"RELATIVE_BASE": NOW.replace(tzinfo=None), "PREFER_DATES_FROM": "past"}

    def dates(query: str) -> list[datetime]:
        found = search_dates(query, languages=["en", "zh", "ja"], settings=settings)  # type: ignore[arg-type]
        return [moment for _, moment in found or []]

    dates("warm up on May 6")  # its first call loads its language data
    return dates


def _ours_right(row: Row) -> bool:
    return _window_days(row[0]) == row[1:]


def _theirs_right(dates: Callable[[str], list[datetime]], row: Row) -> bool:
    found = dates(row[0])
    if not found:
        return False
    day = found[0].date().isoformat()
    return (row[1] is None or row[1] <= day) and day < row[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-wrong", action="store_true")
    args = parser.parse_args()
    tables = {"English": ENGLISH, "Chinese": CHINESE, "Japanese": JAPANESE}
    misses = {
        "English": NEAR_MISSES_ENGLISH,
        "Chinese": NEAR_MISSES_CHINESE,
        "Japanese": NEAR_MISSES_JAPANESE,
    }
    plain = [q for q in _plain_questions() if parse_time(q, NOW).window is None]
    timed = [row[0] for table in tables.values() for row in table]
    dates = _dateparser()

    def ours(query: str) -> object:
        return parse_time(query, NOW)

    print(f"queries: {len(plain)} with no time words, {len(timed)} naming a time")
    print("| parser | no time words, median µs | naming a time, median µs | mixed, median µs |")
    print("| --- | --- | --- | --- |")
    row = [_median_us(ours, qs, 5) for qs in (plain, timed, plain + timed)]
    print("| ours | " + " | ".join(f"{v:.1f}" for v in row) + " |")
    if dates is not None:
        sample = plain[:150]
        row = [_median_us(dates, qs, 1) for qs in (sample, timed, sample + timed)]
        print("| dateparser.search_dates | " + " | ".join(f"{v:.0f}" for v in row) + " |")
    else:
        print("| dateparser | not installed (pip install dateparser) | | |")

    print(
        "\n| language | expressions right (ours) | near misses right (ours) |"
        + (" expressions right (dateparser) | near misses right (dateparser) |" if dates else "")
    )
    print("| --- | --- | --- |" + (" --- | --- |" if dates else ""))
    wrong: list[str] = []
    for language, table in tables.items():
        ours_right = [r for r in table if _ours_right(r)]
        ours_clean = [q for q in misses[language] if parse_time(q, NOW).window is None]
        wrong += [f"ours: {r[0]!r} -> {_window_days(r[0])}" for r in table if r not in ours_right]
        wrong += [
            f"ours: {q!r} (near miss) -> {_window_days(q)}"
            for q in misses[language]
            if q not in ours_clean
        ]
        line = f"| {language} | {len(ours_right)}/{len(table)} | {len(ours_clean)}/{len(misses[language])} |"
        if dates is not None:
            theirs_right = [r for r in table if _theirs_right(dates, r)]
            theirs_clean = [q for q in misses[language] if not dates(q)]
            wrong += [
                f"dateparser: {r[0]!r} -> {dates(r[0])[:1]}" for r in table if r not in theirs_right
            ]
            wrong += [
                f"dateparser: {q!r} (near miss) -> {dates(q)[:1]}"
                for q in misses[language]
                if q not in theirs_clean
            ]
            line += (
                f" {len(theirs_right)}/{len(table)} | {len(theirs_clean)}/{len(misses[language])} |"
            )
        print(line)
    if args.show_wrong:
        print()
        print("\n".join(wrong))


if __name__ == "__main__":
    main()
