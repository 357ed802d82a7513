"""The time benchmark's question sets: MemoryBank's dated diaries, date questions generated from
LoCoMo's dated sessions, and LoCoMo's own questions. Each set is a list of `Corpus` (one agent's
dated memories and its questions); `bench/time_recall.py` measures them.

MemoryBank (shared/datasets/memorybank_dev_{en,cn}.json): one memory per turn, its `text`, dated
by its day at 09:00 UTC plus three minutes a turn; the years moved by `YEAR_SHIFT` (2023 -> 2026,
so the newest day lies before today; month and day names stay true). `now` = 12:00 UTC on the day
after the user's last day, so "a few days ago" and "recently" mean the days just before it.
Held back: the users at odd positions (1, 3, 5) of each file, the same personas in both languages.

LoCoMo (shared/datasets/locomo_dev.json): one memory per turn, "<speaker>: <text>", dated by its
session's `session_N_date_time` plus a minute a turn; `now` = 12:00 UTC on the day after the last
session. `locomo_date_questions` generates the date questions (see its docstring); `locomo_qa`
is LoCoMo's own questions (categories 1-4) over the same memories, read by bench/locomo_data.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from bench.locomo_data import ENGLISH_STOP_WORDS, load_dataset

YEAR_SHIFT = 3
MONTHS = (
    "January February March April May June July August September October November December"
).split()
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_WORD = re.compile(r"\w+")
_SESSION_TIME = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m) on (\d{1,2}) (\w+),? (\d{4})", re.I)
_TOPIC_WORD = re.compile(r"[a-z]{4,}")
# a word said in more turns than this is chat, not a topic (of ~300-700 turns a conversation)
_TOPIC_MAX_TURNS = 12
_TOPIC_MAX_SESSIONS = 4
_PER_CONVERSATION = 40  # questions of each form kept per conversation


@dataclass
class Question:
    text: str
    evidence: set[str]
    kind: str
    held: bool


@dataclass
class Corpus:
    """One agent's memories (source id -> (text, when)) and the questions asked of them."""

    agent: str
    memories: dict[str, tuple[str, datetime]]
    now: datetime
    questions: list[Question] = field(default_factory=list)
    language: str = "en"


def _day_after(last: datetime) -> datetime:
    return datetime.combine(last.date() + timedelta(days=1), time(12), tzinfo=UTC)


def _shifted(day: str) -> date:
    parsed = date.fromisoformat(day)
    return parsed.replace(year=parsed.year + YEAR_SHIFT)


def load_memorybank(path: Path) -> list[tuple[Corpus, bool]]:
    """(corpus, held back) per user of one language's file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    language = "zh" if data.get("language", "").lower().startswith(("zh", "cn", "chin")) else "en"
    out = []
    for position, user in enumerate(data["users"]):
        held = position % 2 == 1
        memories: dict[str, tuple[str, datetime]] = {}
        turn_of_day: dict[str, int] = defaultdict(int)
        for memory in user["memories"]:
            day = memory["date"]
            at = datetime.combine(_shifted(day), time(9), tzinfo=UTC)
            memories[memory["id"]] = (
                memory["text"],
                at + timedelta(minutes=3 * turn_of_day[day]),
            )
            turn_of_day[day] += 1
        now = _day_after(max(at for _, at in memories.values()))
        corpus = Corpus(f"mb-{language}-{position}", memories, now, language=language)
        for q in user["questions"]:
            if q["evidence"]:
                corpus.questions.append(Question(q["q"], set(q["evidence"]), q["kind"], held))
        out.append((corpus, held))
    return out


def session_times(sample: dict) -> dict[int, datetime]:
    """Session number -> its start, from "1:56 pm on 8 May, 2023" (read as UTC)."""
    out = {}
    for key, value in sample["conversation"].items():
        if not key.endswith("_date_time") or not isinstance(value, str):
            continue
        found = _SESSION_TIME.search(value)
        if found is None:
            continue
        hour, minute, half, day, month, year = found.groups()
        hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
        month_number = MONTHS.index(month.capitalize()) + 1
        out[int(key.split("_")[1])] = datetime(
            int(year), month_number, int(day), hour_24, int(minute), tzinfo=UTC
        )
    return out


def locomo_corpora(path: Path) -> list[Corpus]:
    """One corpus per dev conversation: its turns dated, LoCoMo's own questions (kind "qa",
    none held back: the whole LoCoMo held-out split is the other five conversations) and the
    generated date questions."""
    samples = {s["sample_id"]: s for s in json.loads(path.read_text(encoding="utf-8"))}
    common = _common_words(list(samples.values()))
    out = []
    for conv in load_dataset(path, "dev"):
        sample = samples[conv.sample_id]
        starts = session_times(sample)
        memories = {}
        for dia_id, text in conv.turns.items():
            session, turn = (int(n) for n in dia_id[1:].split(":"))
            if session in starts:
                memories[dia_id] = (text, starts[session] + timedelta(minutes=turn))
        now = _day_after(max(at for _, at in memories.values()))
        corpus = Corpus(conv.sample_id, memories, now)
        corpus.questions = [
            Question(q, evidence & set(memories), "qa", False)
            for q, evidence in conv.questions
            if evidence & set(memories)
        ]
        corpus.questions += locomo_date_questions(sample, memories, now, common)
        out.append(corpus)
    return out


def _common_words(samples: list[dict]) -> set[str]:
    """Words said in more than two conversations of the file: chat, not a topic."""
    seen: dict[str, int] = defaultdict(int)
    for sample in samples:
        words: set[str] = set()
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    words |= set(_TOPIC_WORD.findall(turn["text"].lower()))
        for word in words:
            seen[word] += 1
    return {word for word, n in seen.items() if n > 2}


def locomo_date_questions(
    sample: dict, memories: dict[str, tuple[str, datetime]], now: datetime, common: set[str]
) -> list[Question]:
    """Date questions a person could ask of a long conversation, made deterministically.

    A topic word is a lower-case word of four letters or more, not an English stop word, not a
    speaker's name, not `common` (said in more than two conversations of the file: "agree",
    "weekend"), said by one speaker in 2 to 4 sessions and in at most 12 turns of the whole
    conversation (rarer than chat words, common enough to recur). For each (speaker, topic
    word) whose sessions fall in at least two months, one question per month:
    "What did <speaker> say about <word> in <Month> <Year>?", evidence = that speaker's turns
    holding the word in that month's sessions (kind "month"); for those whose sessions fall on
    at least two days, one per day: "What did <speaker> say about <word> on <Month> <day>?"
    (no year: the day's latest occurrence before `now` is the session's, as every session here
    lies within a year of `now`), evidence = that day's turns holding the word (kind "day").
    The date is then what tells the sessions apart. Candidates are ordered by a hash of their
    text and the first 40 of each kind kept per conversation; a third of the (speaker, word)
    pairs, chosen by a hash, are held back (never looked at while tuning).
    """
    conversation = sample["conversation"]
    names = {conversation["speaker_a"].lower(), conversation["speaker_b"].lower()}
    turns_with: dict[str, int] = defaultdict(int)
    said: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    session_of: dict[str, str] = {}
    for dia_id, (text, _) in memories.items():
        speaker, _, words = text.partition(": ")
        session_of[dia_id] = dia_id.split(":")[0]
        seen = set(_TOPIC_WORD.findall(words.lower()))
        for word in seen:
            turns_with[word] += 1
            if word not in ENGLISH_STOP_WORDS and word not in names and word not in common:
                said[(speaker, word)][session_of[dia_id]].add(dia_id)
    month_questions: list[Question] = []
    day_questions: list[Question] = []
    for (speaker, word), sessions in sorted(said.items()):
        if turns_with[word] > _TOPIC_MAX_TURNS or not 2 <= len(sessions) <= _TOPIC_MAX_SESSIONS:
            continue
        if any(now - memories[min(ids)][1] > timedelta(days=365) for ids in sessions.values()):
            continue
        held = _hash(f"{sample['sample_id']}|{speaker}|{word}") % 3 == 0
        by_month: dict[tuple[int, int], set[str]] = defaultdict(set)
        by_day: dict[date, set[str]] = defaultdict(set)
        for ids in sessions.values():
            when = memories[min(ids)][1]
            by_month[(when.year, when.month)] |= ids
            by_day[when.date()] |= ids
        if len(by_month) >= 2:
            for (year, month), ids in by_month.items():
                text = f"What did {speaker} say about {word} in {MONTHS[month - 1]} {year}?"
                month_questions.append(Question(text, ids, "month", held))
        if len(by_day) >= 2:
            for day, ids in by_day.items():
                text = f"What did {speaker} say about {word} on {MONTHS[day.month - 1]} {day.day}?"
                day_questions.append(Question(text, ids, "day", held))
    chosen = []
    for questions in (month_questions, day_questions):
        questions.sort(key=lambda q: _hash(f"{sample['sample_id']}|{q.text}"))
        chosen += questions[:_PER_CONVERSATION]
    return chosen


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)


def cjk_bigrams(text: str) -> str:
    """CJK runs as overlapping bigrams separated by spaces (unicode61 would index a run of
    Chinese as one token); the rest unchanged."""

    def split(run: re.Match[str]) -> str:
        chars = run.group(0)
        if len(chars) == 1:
            return f" {chars} "
        return " " + " ".join(chars[i : i + 2] for i in range(len(chars) - 1)) + " "

    return _CJK.sub(split, text)


def bm25_match(question: str) -> str:
    """The strong FTS5 query: `\\w+` words lower-cased (CJK runs as bigrams), English stop
    words removed unless that leaves none, de-duplicated, quoted, OR-ed."""
    words = _WORD.findall(cjk_bigrams(question).lower())
    kept = [w for w in words if w not in ENGLISH_STOP_WORDS] or words
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(kept))
