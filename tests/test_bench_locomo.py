"""The LoCoMo benchmark script runs from a plain checkout: without the data it says where the
data is expected, and without an embedding server it prints the text rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "locomo_recall.py"


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CORTEX_LOCOMO"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # no cached vectors: text rows only
    return subprocess.run(
        [sys.executable, str(BENCH), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _sample(sample_id: str) -> dict:
    turns = [
        ("Caroline", "I went to a transgender support group yesterday, it was powerful."),
        ("Melanie", "That sounds great! I painted a sunset with my kids last weekend."),
        ("Caroline", "I am researching adoption agencies, I want to be a mother."),
        ("Melanie", "We camped at the beach and roasted marshmallows."),
    ]
    session = [
        {"speaker": s, "dia_id": f"D1:{i + 1}", "text": text} for i, (s, text) in enumerate(turns)
    ]
    qa = [
        {
            "question": "What did Caroline research?",
            "answer": "adoption",
            "evidence": ["D1:3"],
            "category": 4,
        },
        {
            "question": "What did Melanie paint?",
            "answer": "a sunset",
            "evidence": ["D1:2"],
            "category": 4,
        },
        {"question": "Unanswerable?", "evidence": ["D1:1"], "category": 5},
    ]
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1": session,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    }
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def test_without_the_data_the_bench_says_where_it_is_expected(tmp_path: Path) -> None:
    missing = tmp_path / "locomo_dev.json"
    result = _run("--dataset", str(missing), tmp_path=tmp_path)
    assert result.returncode != 0
    assert "LoCoMo data not found" in result.stderr
    assert str(missing) in result.stderr and "--dataset" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_an_embedding_server_the_bench_prints_the_text_rows(tmp_path: Path) -> None:
    data = tmp_path / "locomo10.json"
    data.write_text(json.dumps([_sample("conv-26"), _sample("conv-99")]), encoding="utf-8")
    result = _run("--dataset", str(data), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "1 conversations, 2 queries" in result.stdout  # dev split only; category 5 skipped
    rows = {line.split("|")[1].strip(): line for line in result.stdout.splitlines() if "|" in line}
    assert "FTS5 BM25, stop words dropped (strong)" in rows
    assert "text only" in rows and "vector only" not in rows
    recall_at_10 = float(rows["text only"].split("|")[3])
    assert recall_at_10 == 1.0
    assert "text rows only" in result.stderr
