"""Which single-valued slot, and whose, a question asks about ("where does Marco live now?",
"我表弟在哪工作", "田中さんは何歳?"), and whether it asks for the history ("where did he live
before?", "以前", "前は"): what the validity stage (search/stages/validity.py) needs to bring a
slot's facts in and rank what is true now, or what was, first."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cortex_mcp.tokenize import SELF_HOLDER
from cortex_mcp.tokenize import slot_holder_key as holder_key

SELF_KEY = holder_key(SELF_HOLDER)


@dataclass(frozen=True)
class SlotQuestion:
    slots: tuple[str, ...]
    holder: str | None  # the holder's key as the question names it; None: anyone's
    history: bool  # asks what was true before, not what is true now


_SLOT_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern, re.IGNORECASE))
    for slot, pattern in (
        ("residence", r"\bwhere\b.{0,40}\b(?:live|lives|living|lived|reside|moved?|based|home)\b|\b(?:address|hometown)\b|住在?哪|住哪|搬到哪|搬去哪|どこに住|どこへ引っ越|どこに引っ越|住まい"),
        ("workplace", r"\bwhere\b.{0,40}\b(?:work|works|working|worked|employed|job)\b|\bwho\b.{0,30}\bwork(?:s|ed)? for\b|\bdo for (?:work|a living)\b|\bemployer\b|\bcompany\b|在哪.{0,4}(?:工作|上班)|哪家公司|どこで働|勤め先|会社"),
        ("role", r"\b(?:job|role|title|position|occupation)\b|\bwhat does\b.{0,30}\bdo\b(?: for (?:a )?living)?|职位|职务|做什么工作|什么工作|仕事は|役職"),
        ("age", r"\bhow old\b|\bage\b|几岁|多大|年龄|何歳|いくつ|年齢"),
        ("email", r"\be-?mail\b|邮箱|メール"),
        ("phone", r"\b(?:phone|number|cell|mobile)\b|电话|手机|電話|携帯"),
        ("relationship", r"\b(?:married|single|engaged|divorced|relationship status)\b|结婚|离婚|单身|結婚|離婚|独身"),
        ("metric", r"\bhow (?:long|fast|slow|much|many)\b|多久|多长时间|多少|どのくらい|何分"),
    )
)  # fmt: skip

_HISTORY = re.compile(
    r"\b(?:before|used to|use to|previously|formerly|earlier|prior|history|originally|any more|anymore)\b"
    r"|以前|之前|原来|原先|过去|曾经|前は|以前は|昔|かつて|元々|もともと",
    re.IGNORECASE,
)
_NOW_ONLY = re.compile(r"\bhow old\b", re.IGNORECASE)
_EN_HOLDER = re.compile(
    r"\b(?:does|did|is|was|has|had|do)\s+(?P<name>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)\b"
    r"|\b(?P<poss>[A-Z][\w-]+)'s\b|\b(?P<my>my (?:[a-z]+ )?[a-z]+)\b"
)
_SELF_Q = re.compile(r"\b(?:I|me|my)\b|我|私|僕|俺")
_ZH_ADVERBS = re.compile(r"现在|目前|以前|之前|原来|原先|过去|曾经|如今|今年")
_ZH_HOLDER = re.compile(
    r"^(?P<h>我(?=住|在|几岁|多大|的[^\u4e00-\u9fff]|是|做|搬|叫)|我的?[\u4e00-\u9fff]{1,2}?"
    r"|[\u4e00-\u9fff]{2,3}?)(?:住|在|几岁|多大|的|是|做|搬)"
)
_JA_HOLDER = re.compile(
    r"^(?P<h>[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{1,8}?)(?:さん|くん|ちゃん)?(?:は|が|の)"
)


def asks_for_history(query: str) -> bool:
    """Whether a question asks what was true before ("used to", "以前", "前は")."""
    return bool(_HISTORY.search(query))


def slot_question(query: str) -> SlotQuestion | None:
    """The slots a question asks about and whose, or None when it asks about no slot."""
    slots = tuple(slot for slot, pattern in _SLOT_WORDS if pattern.search(query))
    if not slots:
        return None
    history = asks_for_history(_NOW_ONLY.sub("", query))
    return SlotQuestion(slots=slots, holder=_holder_in(query), history=history)


def _holder_in(query: str) -> str | None:
    for found in (_ZH_HOLDER.search(_ZH_ADVERBS.sub("", query)), _JA_HOLDER.search(query)):
        if found is not None and re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", found.group("h")):
            return holder_key(found.group("h"))
    match = _EN_HOLDER.search(query)
    if match is not None:
        name = match.group("name") or match.group("poss") or match.group("my")
        name = re.sub(r"'s$", "", name or "")  # "what is Sara's role": Sara's slot
        if name and name not in {"I", "It", "The", "This", "That", "There", "You", "We"}:
            return holder_key(name)
    if _SELF_Q.search(query):
        return SELF_KEY
    return None


def holders_meant(asked: str | None, known: Sequence[str]) -> list[str]:
    """The stored holders a question's holder can mean: the same key, or a relative phrase
    bound to a speaker ("my sister" -> "tom/my sister"); every holder when it names none."""
    if asked is None:
        return list(known)
    if asked in {"my", "我", "私"}:
        asked = SELF_KEY
    meant = [h for h in known if h == asked or h.endswith("/" + asked)]
    if asked == SELF_KEY:
        meant += [h for h in known if "/" not in h and h not in meant and h == SELF_KEY]
    return meant
