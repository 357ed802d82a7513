"""Which memories are beliefs, whose, and which later memories speak for or against them.

A belief is a memory of kind `opinion` (category preference or decision, an `O(c=…)` line of a
`## Retain` section, a preference ingest found). Its **holder** is whom it belongs to: a name the
`## Retain` line tags (`@Peter`), the memory's speaker (`Peter: …`), a name the sentence opens
with before a verb of liking ("Peter prefers tea", "张伟喜欢咖啡", "田中さんはコーヒーが好き"),
and otherwise the user.

A later memory is **evidence** for a belief of the same holder (or a belief whose holder it
names) when the two say much the same thing: their content words overlap (`related`: at least
`MIN_SHARED` words, `MIN_OVERLAP` of the shorter side's), words of liking, of negation and the
holder's name left out. It **supports** the belief when both, or neither, carry a negation or
contrast cue ("not", "no longer", "stopped", "instead", 不再, 不喜欢, もう…ない, じゃなくて,
…), and **contradicts** it otherwise. A stated opinion weighs 1, anything else `INFERRED_WEIGHT`.
Everything here is rules: the same memories give the same beliefs, whatever the order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cortex_mcp.models import Memory, MemoryKind
from cortex_mcp.tokenize import BELIEF_USER, index_text, normalize_name, speaker_of, without_speaker

USER = BELIEF_USER
MIN_SHARED = 2
MIN_OVERLAP = 0.6
MIN_OVERLAP_LONGER = 0.3
INFERRED_WEIGHT = 0.7

_CUES = re.compile(
    r"\b(?:not|no longer|never|stopped|stop|quit|instead|anymore|any more|no more|rather than"
    r"|hates?|dislikes?|can't stand|cannot stand|gave up|give up)\b|n't\b"
    r"|不再|不喜欢|不想|不要|不爱|不用|再也不|讨厌|不是|而是|别再|没有|受不了|放弃"
    r"|もう.{0,12}ない|じゃなくて|ではなく|やめ|嫌い|じゃない|ではない|ません|なくなった",
    re.IGNORECASE,
)
# words that say liking, not what is liked: left out when statements are compared
_LIKING = re.compile(
    r"\b(?:prefers?|preferred|preference|likes?|liked|loves?|loved|wants?|wanted|enjoys?"
    r"|enjoyed|favou?rite|hates?|dislikes?|really|much|more|better|always|again|still|now"
    r"|asked|asks|for|the|a|an|to|of|in|on|at|and|or|is|are|was|were|be|it|that|this|with"
    r"|i|me|my|we|our|you|he|she|they|his|her|their|user|users|does|do|did|has|have|had"
    r"|not|no|longer|never|stopped|instead|anymore|would|rather|than|over|very|so|just)\b"
    r"|喜欢|偏好|更|最|爱|想要|觉得|我|的|了|是|很|也|都|在|不|再|还|要|用|吃|喝|就"
    r"|好き|好み|でした|ました|です|ます|じゃ|もう|が|は|を|に|の|で|と|も|な|い|た|だ",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)
_EN_HOLDER = re.compile(
    r"^(?P<name>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)\s+(?:really |still |now |no longer |also )?"
    r"(?:prefers|likes|loves|hates|wants|enjoys|dislikes|thinks|believes|favou?rs"
    r"|doesn't|does not|is into|can't stand|stopped)\b"
)
_ZH_HOLDER = re.compile(
    r"^(?![我你他她它咱])(?P<name>[\u4e00-\u9fff]{2,3}?)(?:更|最|很|也|还|不再|不)?(?:喜欢|偏好|讨厌|爱|想要|觉得|认为)"
)
_JA_HOLDER = re.compile(
    r"^(?P<name>[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{1,8}?)(?:さん|くん|ちゃん)(?:は|が)"
)
_SELF = {"i", "me", "we", "我", "私", "僕", "俺", "user", "the user"}


@dataclass(frozen=True)
class Holder:
    key: str  # `normalize_name`'d, or USER
    name: str  # as shown


def is_belief(memory: Memory) -> bool:
    return memory.kind is MemoryKind.opinion and memory.forgotten_at is None


def holder_of(memory: Memory) -> Holder:
    """Whose opinion or evidence `memory` is (see the module's docstring)."""
    tagged = memory.metadata.get("entities")
    if isinstance(tagged, list) and tagged and isinstance(tagged[0], str):
        return _holder(tagged[0])
    speaker = speaker_of(memory.content, memory.metadata)
    if speaker:
        return _holder(speaker)
    text = without_speaker(memory.content).strip()
    for pattern in (_EN_HOLDER, _ZH_HOLDER, _JA_HOLDER):
        found = pattern.match(text)
        if found is not None:
            return _holder(found.group("name"))
    return Holder(USER, USER)


def _holder(name: str) -> Holder:
    key = normalize_name(name)
    if not key or key in _SELF:
        return Holder(USER, USER)
    return Holder(key, name.strip())


def statement_of(memory: Memory) -> str:
    """The belief's statement as shown: the memory's words without a `Name: ` label."""
    return without_speaker(memory.content).strip()


def negated(text: str) -> bool:
    """Whether the text carries a negation or contrast cue."""
    return bool(_CUES.search(text))


def content_words(text: str, holder: str = "") -> frozenset[str]:
    """The words compared: CJK as characters, English with a plural 's' dropped; words of
    liking and negation, and the holder's name, left out."""
    folded = index_text(_LIKING.sub(" ", text.casefold()))
    words = set()
    for word in _WORD.findall(folded):
        if holder and word in holder.split():
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return frozenset(words)


def related(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two statements say much the same: most of the shorter one's words are in the
    other (at least `MIN_SHARED`, or all of a shorter one) and a fair part of the longer's."""
    if not a or not b:
        return False
    shared = len(a & b)
    shorter, longer = sorted((len(a), len(b)))
    if shared < min(MIN_SHARED, shorter):
        return False
    return shared / shorter >= MIN_OVERLAP and shared / longer >= MIN_OVERLAP_LONGER


def supports(statement: str, text: str) -> bool:
    """Whether a related text agrees with the statement (same polarity) or contradicts it."""
    return negated(statement) == negated(text)


def weight_of(memory: Memory) -> float:
    return 1.0 if memory.kind is MemoryKind.opinion else INFERRED_WEIGHT


def stated_confidence(memory: Memory) -> float | None:
    """The confidence a `## Retain` line stated (`O(c=0.9)`), else None (the prior)."""
    return memory.confidence if memory.metadata.get("retain") else None
