"""The time benchmark runs end to end on a tiny slice of each dataset's layout (memories through the
service, BM25 in the same run, a sample over MCP stdio), and its LoCoMo date questions are what
its docstring says they are."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.time_data import bm25_match, cjk_bigrams, locomo_corpora, locomo_date_questions

BENCH = Path(__file__).resolve().parents[1] / "bench" / "time_recall.py"


def _diary(language: str, users: list[tuple[str, list[tuple[str, str]], list[dict]]]) -> dict:
    return {
        "source": "test",
        "language": language,
        "split": "dev",
        "users": [
            {
                "user": name,
                "memories": [
                    {"id": f"{name}|{day}|{i}", "date": day, "text": text}
                    for i, (day, text) in enumerate(turns)
                ],
                "questions": questions,
            }
            for name, turns, questions in users
        ],
    }


def _english() -> dict:
    turns = [
        ("2023-05-01", "I read the novel Dune today.\nA classic of science fiction."),
        ("2023-05-03", "I cooked a mushroom risotto.\nSounds delicious."),
        ("2023-05-06", "I read a book called Solaris.\nA thoughtful choice."),
    ]
    questions = [
        {
            "q": "On May 6th, I read a book. What was its name?",
            "evidence": ["Ann|2023-05-06|2"],
            "kind": "date",
        },
        {"q": "What dish did I cook?", "evidence": ["Ann|2023-05-03|1"], "kind": "plain"},
        {
            "q": "A few days ago I cooked something. What?",
            "evidence": ["Ann|2023-05-03|1"],
            "kind": "relative",
        },
        {"q": "A question the dataset left without evidence", "evidence": [], "kind": "plain"},
    ]
    held = [{"q": "What dish did I cook?", "evidence": ["Bob|2023-05-03|1"], "kind": "plain"}]
    return _diary("en", [("Ann", turns, questions), ("Bob", turns, held)])


def _chinese() -> dict:
    turns = [
        ("2023-05-01", "我今天读了小说《沙丘》。\n这是一部经典科幻小说。"),
        ("2023-05-06", "我读了一本书叫《索拉里斯星》。\n很有思想的选择。"),
    ]
    questions = [
        {"q": "在5月6号我读了一本书，它的名字是？", "evidence": ["李|2023-05-06|1"], "kind": "date"}
    ]
    return _diary("zh", [("李", turns, questions)])


def _locomo() -> list[dict]:
    dates = ["1:56 pm on 8 May, 2023", "2:00 pm on 9 June, 2023", "3:10 pm on 4 July, 2023"]
    lines = [
        [("Mel", "I started a pottery class this week."), ("Caro", "That sounds lovely!")],
        [("Mel", "My pottery bowl cracked in the kiln."), ("Caro", "Oh no, try again!")],
        [("Mel", "We went camping by the lake."), ("Caro", "I adopted a puppy named Rex.")],
    ]
    conversation: dict = {"speaker_a": "Mel", "speaker_b": "Caro"}
    for n, (date, session) in enumerate(zip(dates, lines, strict=True), start=1):
        conversation[f"session_{n}_date_time"] = date
        conversation[f"session_{n}"] = [
            {"speaker": s, "dia_id": f"D{n}:{i + 1}", "text": t} for i, (s, t) in enumerate(session)
        ]
    qa = [
        {
            "question": "What did Caro adopt?",
            "answer": "a puppy",
            "evidence": ["D3:2"],
            "category": 4,
        }
    ]
    return [{"sample_id": "conv-26", "conversation": conversation, "qa": qa}]


@pytest.fixture
def datasets(tmp_path: Path) -> Path:
    folder = tmp_path / "datasets"
    folder.mkdir()
    (folder / "memorybank_dev_en.json").write_text(json.dumps(_english()), encoding="utf-8")
    (folder / "memorybank_dev_cn.json").write_text(
        json.dumps(_chinese(), ensure_ascii=False), encoding="utf-8"
    )
    (folder / "locomo_dev.json").write_text(json.dumps(_locomo()), encoding="utf-8")
    return folder


def _rows(stdout: str, heading: str) -> dict[tuple[str, str], list[str]]:
    section = stdout.split(heading, 1)[1].split("###", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and not cells[0].startswith(("question", "---")):
            rows[(cells[0], cells[1])] = cells
    return rows


def test_the_bench_prints_each_set_and_kind_beside_bm25_and_over_stdio(datasets: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--datasets", str(datasets), "--mcp", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    tuned = _rows(result.stdout, "### tuning split")
    held = _rows(result.stdout, "### held back")
    assert set(tuned) == {
        ("memorybank_en", "date"),
        ("memorybank_en", "relative"),
        ("memorybank_en", "plain"),
        ("memorybank_zh", "date"),
        ("locomo", "qa"),
    }
    # Bob, the user at position 1, and the (speaker, word) pair its hash holds back
    assert set(held) == {("memorybank_en", "plain"), ("locomo", "month"), ("locomo", "day")}
    # the question without evidence is not asked; the one plain question finds its turn
    assert tuned[("memorybank_en", "plain")][2:4] == ["1.000", "1.000"]
    assert tuned[("memorybank_en", "plain")][-2] == "1"  # n, then p50 ms
    assert tuned[("locomo", "qa")][4] == "1.000"  # R@10
    for cells in tuned.values():
        assert all(0.0 <= float(v) <= 1.0 for v in cells[2:8])
    over_stdio = _rows(result.stdout, "### a sample over MCP stdio")
    assert ("memorybank_zh", "date") in over_stdio and ("locomo", "day") in over_stdio
    for cells in over_stdio.values():
        assert cells[3] == cells[4]  # stdio recall's R@5 = the in-process search's


def test_the_generated_date_questions_name_a_speaker_a_word_and_a_period(datasets: Path) -> None:
    (corpus,) = locomo_corpora(datasets / "locomo_dev.json")
    assert corpus.now == datetime(2023, 7, 5, 12, tzinfo=UTC)  # noon, the day after the last
    dated = sorted((q.kind, q.text, sorted(q.evidence)) for q in corpus.questions if q.kind != "qa")
    assert all(q.held for q in corpus.questions if q.kind != "qa")  # one pair: all or none
    assert dated == [
        ("day", "What did Mel say about pottery on June 9?", ["D2:1"]),
        ("day", "What did Mel say about pottery on May 8?", ["D1:1"]),
        ("month", "What did Mel say about pottery in June 2023?", ["D2:1"]),
        ("month", "What did Mel say about pottery in May 2023?", ["D1:1"]),
    ]
    assert corpus.memories["D2:1"][1] == datetime(2023, 6, 9, 14, 1, tzinfo=UTC)


@pytest.mark.needs_data("locomo_dev.json")
def test_on_locomo_the_questions_are_the_same_each_run_and_their_evidence_holds_the_word(
    data_file: Path,
) -> None:
    first, again = locomo_corpora(data_file), locomo_corpora(data_file)
    texts = [[q.text for q in c.questions] for c in first]
    assert texts == [[q.text for q in c.questions] for c in again]
    dated = [(c, q) for c in first for q in c.questions if q.kind in ("month", "day")]
    assert len(dated) > 300 and 0.2 < sum(q.held for _, q in dated) / len(dated) < 0.45
    for corpus, question in dated:
        speaker, word = re.match(r"What did (\w+) say about (\w+) ", question.text).groups()
        for source in question.evidence:
            text, when = corpus.memories[source]
            assert text.startswith(f"{speaker}: ") and word in text.lower()
            assert corpus.now - timedelta(days=365) < when < corpus.now


def test_the_baseline_query_is_the_strong_one_with_chinese_as_bigrams() -> None:
    assert bm25_match("On May 6th, I read a book. What was its name?") == (
        '"may" OR "6th" OR "read" OR "book" OR "name"'
    )
    assert bm25_match("读了一本书") == '"读了" OR "了一" OR "一本" OR "本书"'
    assert cjk_bigrams("我读了Dune") == " 我读 读了 Dune"
    assert locomo_date_questions.__doc__ and "deterministically" in locomo_date_questions.__doc__
