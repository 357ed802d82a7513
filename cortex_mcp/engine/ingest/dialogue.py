"""Who said each sentence of a turn written as dialogue ("Caroline: I'm allergic to cats").

A turn whose lines carry speaker labels keeps its speaker on every sentence it yields, so a core
memory cut from the middle of a turn still says whose fact it is. A turn that holds more than
one speaker, or a role label ("Assistant:", "User:"), is a pasted transcript: the user is
quoting, and nothing in it is the user's own identity or preference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LATIN_NAME = r"[A-Z][\w'’.-]{0,20}(?: [A-Z][\w'’.-]{0,20}){0,2}"
_CJK_NAME = r"[\u3040-\u30ff\u3400-\u9fff々ー]{1,6}"
# A label opens a line, or follows the end of a sentence ("... Mallory. User: remember").
_LABEL = re.compile(
    rf"(?:^|(?<=[.!?。！？]\s))[ \t]*(?P<name>{_LATIN_NAME}):[ \t]+"
    rf"|^[ \t]*(?P<cjk>{_CJK_NAME})[:：][ \t]*",
    re.MULTILINE,
)
# Words that open a line like a label but announce what follows ("Correction:", "记住：").
_NOT_A_NAME = re.compile(
    r"^(?:correction|todo|to-?do|note|nb|important|decision|update|reminder|ps|p\.s|fyi|edit|"
    r"warning|tip|question|answer|summary|re|subject|title|step|example|result|reason|goal|"
    r"idea|problem|issue|fix|error|info|remember|memo|q|a|"
    r"记住|注意|更正|纠正|重要|提醒|待办|备注|补充|结论|问题|回答|决定|总结|目标|备忘|说明|原因|"
    r"例如|比如|订正|訂正|メモ|結論|質問|追記|要点|決定|ポイント|予定|理由|例|目標)$",
    re.IGNORECASE,
)
# A Chinese name holds none of these; a phrase ("这个很重要：", "他说：") does.
_NOT_IN_HAN_NAME = re.compile(r"[这那很是的了要个我你他她它们吗呢吧啊不没在说道问讲写都就还]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff々]")
# Kanji with a verb or particle ending ("覚えておいて：") is a phrase, not a Japanese name.
_PHRASE_END = re.compile(r"[てでただねよとにをはが]$")
_ROLE_NAMES = (
    r"user|assistant|system|ai|bot|human|model|chatgpt|claude|gpt|gemini|"
    r"用户|助手|系统|ユーザー|アシスタント|システム"
)
_ROLES = re.compile(rf"^(?:{_ROLE_NAMES})$", re.IGNORECASE)
_ROLE_LABEL = re.compile(
    rf"(?:^|[.!?。！？]\s*)(?:{_ROLE_NAMES})\s*[:：]", re.IGNORECASE | re.MULTILINE
)


@dataclass(frozen=True)
class Utterance:
    speaker: str | None  # the label as written, None for a turn without labels
    prefix: str  # the label and separator as written ("Caroline: ", "小林："), or ""
    text: str  # what the speaker said


def _speaker(match: re.Match[str]) -> str | None:
    name = (match.group("name") or match.group("cjk") or "").strip()
    if _NOT_A_NAME.match(name.rstrip(".")):
        return None
    if _HAN.search(name) and not _KANA.search(name) and _NOT_IN_HAN_NAME.search(name):
        return None
    if _HAN.search(name) and _KANA.search(name) and _PHRASE_END.search(name):
        return None
    return name


def utterances(text: str) -> list[Utterance]:
    """`text` cut at its speaker labels; text before the first label has no speaker."""
    labels = [(m, name) for m in _LABEL.finditer(text) if (name := _speaker(m))]
    if not labels:
        return [Utterance(None, "", text)] if text.strip() else []
    parts = []
    head = text[: labels[0][0].start()]
    if head.strip():
        parts.append(Utterance(None, "", head))
    for index, (match, name) in enumerate(labels):
        end = labels[index + 1][0].start() if index + 1 < len(labels) else len(text)
        prefix = match.group(0).lstrip()
        parts.append(Utterance(name, prefix, text[match.end() : end]))
    return parts


def is_transcript(text: str, parts: list[Utterance]) -> bool:
    """More than one speaker, or a role label anywhere: the user is quoting a conversation."""
    speakers = {u.speaker for u in parts if u.speaker}
    if len(speakers) > 1 or any(_ROLES.match(s) for s in speakers):
        return True
    return _ROLE_LABEL.search(text) is not None
