"""The entities benchmark runs from a plain checkout on a small LoCoMo-shaped file: it prints the
categories, the alias sets of each language, the BM25 baseline beside them and the pages line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "entities_locomo.py"


def _sample(sample_id: str) -> dict:
    turns = [
        ("Caroline", "I went to a support group yesterday, it was powerful."),
        ("Melanie", "That sounds great! I painted a sunset with my kids last weekend."),
        ("Caroline", "I am researching adoption agencies, I want to be a mother."),
        ("Melanie", "We camped at the beach and roasted marshmallows, Caroline."),
    ]
    session = [
        {"speaker": s, "dia_id": f"D1:{i + 1}", "text": text} for i, (s, text) in enumerate(turns)
    ]
    qa = [
        {"question": "What did Caroline research?", "evidence": ["D1:3"], "category": 4},
        {"question": "What has Melanie done?", "evidence": ["D1:2", "D1:4"], "category": 1},
        {"question": "When did Caroline go to the group?", "evidence": ["D1:1"], "category": 2},
        {"question": "Unanswerable?", "evidence": ["D1:1"], "category": 5},
    ]
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1": session,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    }
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def test_the_bench_prints_each_category_and_language_beside_bm25_and_the_pages(
    tmp_path: Path,
) -> None:
    samples = [_sample(c) for c in ("conv-26", "conv-42")]
    (tmp_path / "locomo_dev.json").write_text(json.dumps(samples), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(BENCH), "--datasets", str(tmp_path), "--modes", "text"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "held back: conv-42" in out
    for row in ("| locomo | multi-hop (cat 1) | 1 |", "| locomo | dates (cat 2) | 1 |"):
        assert row in out
    for language in ("en", "zh", "ja"):
        assert f"| aliases {language} | multi |" in out
    assert "'tell me about X', locomo (tuning): a page for" in out
    assert "entity stage p50" in out
