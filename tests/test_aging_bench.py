"""The aging bench in small: a few weeks of dialogue through rules-only ingest with the
lifecycle every night, then questions a month later, checked against the same turns stored
without a lifecycle. No turn untraceable, no supersede unlogged, nothing lost to the schedule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import aging

pytestmark = pytest.mark.anyio

SESSIONS = [
    ("10:00 am on 2 March, 2026", [
        ("Ana", "Hi Ben! How have you been?"),
        ("Ben", "Good! We have a big grassy area behind the house now, perfect for the dog."),
        ("Ana", "My daughter is seven."),
        ("Ben", "Nice. I work as a nurse at the city hospital, night shifts mostly."),
        ("Ana", "I love hiking in the Alps every summer with my sister."),
        ("Ben", "Thanks!"),
    ]),
    ("6:30 pm on 9 March, 2026", [
        ("Ana", "Sorry, my daughter is not seven, but eight, she had her birthday."),
        ("Ben", "It's not big, but we can all have fun in the garden."),
        ("Ana", "We adopted a kitten called Miso from the shelter on Saturday."),
        ("Ben", "My brother is moving to Lisbon next month for a new job."),
    ]),
    ("9:15 am on 20 March, 2026", [
        ("Ana", "I finished the oil painting of the lake that I started in January."),
        ("Ben", "I'm training for the Boston marathon in April, running 60 km a week."),
        ("Ana", "Violin recital is on the 28th, she is nervous."),
        ("Ben", "Lisbon sounds amazing, my brother found a flat near the river."),
    ]),
]  # fmt: skip
QUESTIONS = [
    ("How old is Ana's daughter?", ["D2:1"]),
    ("When is the violin recital?", ["D3:3"]),
    ("What is behind Ben's house?", ["D1:2"]),
    ("Where does Ben work?", ["D1:4"]),
    ("Where does Ana go hiking?", ["D1:5"]),
    ("What is the name of Ana's kitten?", ["D2:3"]),
    ("Where is Ben's brother moving?", ["D2:4", "D3:4"]),
    ("What did Ana paint?", ["D3:1"]),
    ("Which marathon is Ben training for?", ["D3:2"]),
]


def _sample() -> dict[str, Any]:
    conversation: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n, (when, turns) in enumerate(SESSIONS, start=1):
        conversation[f"session_{n}_date_time"] = when
        conversation[f"session_{n}"] = [
            {"speaker": s, "dia_id": f"D{n}:{i}", "text": t} for i, (s, t) in enumerate(turns, 1)
        ]
    qa = [{"question": q, "answer": "", "evidence": e, "category": 4} for q, e in QUESTIONS]
    return {"sample_id": "weeks", "conversation": conversation, "qa": qa}


async def _outcomes(dialogue: aging.Dialogue, tmp_path: Path) -> dict[str, aging.Outcome]:
    return {mode: await aging.age(dialogue, mode, tmp_path, 30) for mode in aging.MODES}


async def test_a_few_weeks_of_dialogue_age_without_loss(tmp_path: Path) -> None:
    data = tmp_path / "weeks.json"
    data.write_text(json.dumps([_sample()]), encoding="utf-8")
    (dialogue,) = aging.load_dialogues(data, "all", {"weeks"}, None)
    outcomes = await _outcomes(dialogue, tmp_path)
    aged, never, control = (outcomes[m] for m in aging.MODES)
    assert aged.untraceable == [] and never.untraceable == []
    assert aged.unlogged == [] and never.unlogged == []
    assert aged.skipped == 1  # "Thanks!": small talk, nothing to keep
    # the daughter's age is corrected; the other speaker's "not big" leaves the garden alone
    assert [(row["rule"], row["old"]) for row in aged.supersedes] == [
        ("sieve:correction:en", "Ana: My daughter is seven.")
    ]
    assert aged.recall_at() >= control.recall_at() - 0.005
    assert never.recall_at() >= control.recall_at() - 0.02
    assert aged.months and aged.months[-1]["working"] == 0  # the lifecycle moved every note


@pytest.mark.needs_data("locomo_dev.json")
async def test_the_first_weeks_of_a_dev_conversation_keep_the_invariants(
    tmp_path: Path, data_file: Path
) -> None:
    (dialogue,) = aging.load_dialogues(data_file, "dev", {"conv-30"}, 21)
    outcomes = await _outcomes(dialogue, tmp_path)
    aged, never, control = (outcomes[m] for m in aging.MODES)
    assert aged.untraceable == [] and aged.unlogged == [] and never.untraceable == []
    # the schedule loses nothing: aged as the same ingest without a lifecycle
    assert aged.recall_at() >= never.recall_at() - 0.005
    # ingest's memories against one memory per raw turn, a bound and not the figure: the control
    # gains more from issue 33's ranking (the turn next to a match, the lift that keeps the
    # turn matching a single-fact question's words), which ingest's skipped chatter and
    # event-dated turns move (conv-30, 21 days: aged 0.829, control 0.862; 0.852 and 0.838
    # before issue 33; `python bench/aging.py --split dev` prints the whole dev gap, -0.05)
    assert aged.recall_at() >= control.recall_at() - 0.04
    assert never.recall_at() >= control.recall_at() - 0.04
