"""A question without the names it gives: what it asks about them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cortex_mcp.tokenize import has_cjk

_POSSESSIVE = r"(?:['’]s\b|['’](?=\s|$))?"  # "Maya's", "James'"
# after a Chinese or Japanese name: an honorific (田中さん), then the possessive (张伟的, 田中の)
_CJK_AFTER = r"(?:さん|様|さま|くん|君|ちゃん|氏)?(?:的|の)?"


def without_names(text: str, names: Sequence[str]) -> str | None:
    """The question without the names it gives (and their possessive): "What are Maya's
    hobbies?" -> "What are hobbies?", "我表弟的老家在哪里？" -> "老家在哪里？", "田中さんの趣味は？"
    -> "趣味は？". Every memory a person said carries their name, so beside the name a
    question's meaning is mostly who, and the person's memories rank by how near the name
    brings them instead of by what they say. None when the question names nobody or nothing
    is left."""
    topic = text
    for name in sorted(set(names), key=len, reverse=True):
        if not name.strip():
            continue
        if not has_cjk(name):
            edge = r"\b" if name[0].isalnum() else ""
            tail = r"\b" if name[-1].isalnum() else ""
            pattern = f"{edge}{re.escape(name)}{tail}{_POSSESSIVE}"
        else:
            pattern = f"{re.escape(name)}{_CJK_AFTER}"
        topic = re.sub(pattern, " ", topic, flags=re.IGNORECASE)
    topic = " ".join(topic.split())
    if topic == " ".join(text.split()) or not re.search(r"\w", topic):
        return None
    return topic
