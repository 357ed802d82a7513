"""LoCoMo for the retrieval benchmark: finding the file, reading it, and the FTS5 baselines' queries."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

DEV_IDS = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
_DIA = re.compile(r"D:?(\d+):0*(\d+)")
_WORD = re.compile(r"\w+")

# NLTK's English stop list (the one most FTS/BM25 setups reach for), as `\w+` splits text:
# contractions appear as their fragments (don, t, ll).
ENGLISH_STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be been
    being have has had having do does did doing a an the and but if or because as until while of
    at by for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can will
    just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn
    didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn
    mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't""".split()
)


class DataNotFound(Exception):
    """Raised with a message that says where the data is expected and how to get it."""


@dataclass
class Conversation:
    sample_id: str
    turns: dict[str, str]  # dia_id -> "<speaker>: <text>"
    questions: list[tuple[str, set[str]]]  # (question, evidence dia_ids)


def find_dataset(given: Path | None, root: Path) -> Path:
    """--dataset, else $CORTEX_LOCOMO, else shared/datasets/locomo_dev.json beside the checkout
    or one of its parents (worktrees live one level deeper)."""
    candidates = [given] if given else []
    if os.environ.get("CORTEX_LOCOMO"):
        candidates.append(Path(os.environ["CORTEX_LOCOMO"]))
    if not given:
        candidates += [p / "shared" / "datasets" / "locomo_dev.json" for p in root.parents[:3]]
    for path in candidates:
        if path.is_file():
            return path
    tried = "\n  ".join(str(p) for p in candidates)
    raise DataNotFound(
        f"LoCoMo data not found. Looked for:\n  {tried}\n"
        "Get data/locomo10.json from the snap-research/locomo repository on GitHub (ACL 2024,"
        " CC BY-NC 4.0) and pass it with --dataset PATH (or set CORTEX_LOCOMO); the dev split"
        f" is {', '.join(DEV_IDS)}, and --split heldout runs the other five."
    )


def load_dataset(path: Path, split: str = "dev") -> list[Conversation]:
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataNotFound(f"cannot read LoCoMo data from {path}: {exc}") from exc
    conversations = [
        _conversation(s)
        for s in samples
        if split == "all" or (s["sample_id"] in DEV_IDS) == (split == "dev")
    ]
    if not conversations:
        raise DataNotFound(f"{path} holds no conversation of the {split} split")
    return conversations


def _conversation(sample: dict) -> Conversation:
    conv = sample["conversation"]
    turns = {
        turn["dia_id"]: f"{turn['speaker']}: {turn['text']}"
        for key, session in conv.items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    }
    questions = []
    for qa in sample["qa"]:
        if qa["category"] not in (1, 2, 3, 4):
            continue
        # malformed ids in the data: "D8:6; D9:17", "D:11:26", "D30:05"
        evidence = {f"D{a}:{b}" for raw in qa["evidence"] for a, b in _DIA.findall(raw)}
        evidence &= set(turns)
        if evidence:
            questions.append((qa["question"], evidence))
    return Conversation(sample["sample_id"], turns, questions)


def _or_of(words: list[str]) -> str:
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


def strong_match(question: str) -> str:
    """What a competent FTS5 server sends: content words, lower-cased, quoted, OR-ed."""
    words = _WORD.findall(question.lower())
    return _or_of([w for w in words if w not in ENGLISH_STOP_WORDS] or words)


def weak_match(question: str) -> str:
    """Every word OR-ed, stop words included: flatters whatever is compared with it."""
    return _or_of(_WORD.findall(question.lower()))
