"""Which memory a spoken correction replaces: one about the same thing, or none.

"It's not big, but we can all have fun" once superseded another speaker's "a big grassy area"
because "not X, but" took the newest memory holding X anywhere. A correction now supersedes a
memory only when every test below holds; when any is in doubt the new sentence is stored and
the old memory left alone (a wrong supersede hides a true memory, a missed one only leaves two).

- same speaker: a memory's speaker is its metadata `speaker` or a leading "Name: "; a memory
  with no speaker is the user's own;
- X is in it as whole words (for CJK: as the same characters), not inside another word;
- X is the object of the same predicate: for words, X follows the same word in the memory as
  "not" does in the correction ("my daughter is seven" / "my daughter is not seven, but eight";
  in "my daughter is eight, not seven" the word before the right value);
- same subject: by meaning when an embedding provider answers (cosine of the two texts at
  least `SAME_SUBJECT_COSINE`), else by text: beyond X, they share content words, at least
  half of the smaller set.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cortex_mcp.models import Memory
from cortex_mcp.search.text import EN_STOP_WORDS
from cortex_mcp.tokenize import CJK_RUN, has_cjk, normalise, speaker_of, without_speaker

SAME_SUBJECT_COSINE = 0.7
_MIN_SHARED_FRACTION = 0.5
_SPEAKER = re.compile(
    r"^(?:\[[^\]\n]{1,16}\]\s*)?(?:user:\s*)?([A-Z][\w.'’-]{0,30}(?: [A-Z][\w.'’-]{0,30}){0,2}):\s"
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# Words that make a sentence a correction and say nothing of its subject.
_MARKERS = frozenset(
    "actually sorry correction meant wrong scratch not but rather instead no".split()
)
_CJK_MARKERS = re.compile(r"不是|而是|其实|更正|ではなく|じゃなくて|実は|訂正")
_CONTRACTED = {"'s": "is", "'m": "am", "'re": "are", "’s": "is", "’m": "am", "’re": "are"}
_CJK_TOPIC = re.compile(r"^.*[はがをにでもの](?=[^はがをにでもの]+$)")
_HIRAGANA = re.compile("[\u3040-\u309f]+")
_NEGATION = re.compile(r"\bnot\b", re.IGNORECASE)

Cosine = Callable[[Memory], float | None]


@dataclass(frozen=True)
class Verdict:
    memory: Memory | None
    reason: str  # why this memory, or why none


def choose_superseded(
    sentence: str,
    term: str,
    speaker: str | None,
    candidates: list[Memory],
    cosine: Cosine | None = None,
) -> Verdict:
    """The newest candidate the correction `sentence` ("not `term`, but ...") is about."""
    said = without_speaker(sentence)
    term = _object_of(term)
    context = _content(said) - _content(term)
    if not context:
        return Verdict(None, "the correction names nothing beyond what it corrects")
    for memory in sorted(candidates, key=lambda m: m.created_at, reverse=True):
        if memory.content == sentence or memory.superseded_by or memory.forgotten_at:
            continue
        if speaker_of(memory.content, memory.metadata) != speaker:
            continue
        text = without_speaker(memory.content)
        if not _holds_phrase(text, term):
            continue
        if not has_cjk(term) and _word_before(text, term) != _predicate_in_correction(said, term):
            continue  # X is not the object of the same predicate
        similarity = cosine(memory) if cosine is not None else None
        if similarity is not None:
            if similarity >= SAME_SUBJECT_COSINE:
                return Verdict(memory, "same speaker, same subject by meaning")
        elif _shares_subject(text, term, context):
            return Verdict(memory, "same speaker, same subject by text")
    return Verdict(None, "no memory of the same speaker about the same thing")


def _object_of(term: str) -> str:
    """The corrected phrase without a topic in front ("会議は火曜日" -> "火曜日")."""
    return _CJK_TOPIC.sub("", term).strip() or term


def _content(text: str) -> set[str]:
    """Content words (stop words and correction markers dropped) and CJK bigrams."""
    flat = normalise(text).casefold()
    words = {w for w in _WORD.findall(CJK_RUN.sub(" ", flat)) if w not in EN_STOP_WORDS}
    words -= _MARKERS
    for run in CJK_RUN.findall(_CJK_MARKERS.sub("|", flat)):
        pairs = {run[i : i + 2] for i in range(max(1, len(run) - 1))}
        words.update(p for p in pairs if not _HIRAGANA.fullmatch(p))  # grammar, not topic
    return words


def _holds_phrase(text: str, term: str) -> bool:
    if has_cjk(term):
        return normalise(term) in normalise(text)
    return re.search(_phrase(term), text, re.IGNORECASE) is not None


def _shares_subject(old: str, term: str, context: set[str]) -> bool:
    """Beyond X, at least half of the smaller set of content words is shared."""
    theirs = _content(old) - _content(term)
    shared = context & theirs
    return bool(shared) and len(shared) >= _MIN_SHARED_FRACTION * min(len(context), len(theirs))


def _word_before(text: str, term: str) -> str | None:
    match = re.search(_phrase(term), text, re.IGNORECASE)
    return _last_word(text[: match.start()]) if match else None


def _predicate_in_correction(sentence: str, term: str) -> str | None:
    """The word X would follow had it been right: the one before "not" in "is not X, but Y";
    in "is Y, not X" the one before Y (Y taken as long as X)."""
    match = re.search(r"\bnot\s+" + _phrase(term), sentence, re.IGNORECASE)
    match = match or _NEGATION.search(sentence)
    if match is None:
        return None
    before = sentence[: match.start()].rstrip()
    if not before.endswith(","):
        return _last_word(before)
    words = _WORD.findall(before.casefold())
    value = max(1, len(term.split()))
    return _last_word(" ".join(words[:-value])) if len(words) > value else None


def _phrase(term: str) -> str:
    return r"(?<![\w])" + r"\s+".join(map(re.escape, term.split())) + r"(?![\w])"


def _last_word(text: str) -> str | None:
    words = _WORD.findall(text.casefold())
    if not words:
        return None
    last = words[-1]
    for ending, full in _CONTRACTED.items():
        if last.endswith(ending):
            return full
    return last
