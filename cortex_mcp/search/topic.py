"""A question without the names it gives: what it asks about them."""

from __future__ import annotations

import re
from collections.abc import Sequence

_POSSESSIVE = r"(?:['’]s\b|['’](?=\s|$))?"  # "Maya's", "James'"


def without_names(text: str, names: Sequence[str]) -> str | None:
    """The question without the names it gives (and their possessive): "What are Maya's
    hobbies?" -> "What are hobbies?". Every memory a person said carries their name, so
    beside the name a question's meaning is mostly who, and the person's memories rank by
    how near the name brings them instead of by what they say. None when the question names
    nobody or nothing is left."""
    topic = text
    for name in sorted(set(names), key=len, reverse=True):
        if not name.strip():
            continue
        edge = r"\b" if name[0].isalnum() and name.isascii() else ""
        tail = r"\b" if name[-1].isalnum() and name.isascii() else ""
        pattern = f"{edge}{re.escape(name)}{tail}{_POSSESSIVE}"
        topic = re.sub(pattern, " ", topic, flags=re.IGNORECASE)
    topic = " ".join(topic.split())
    if topic == " ".join(text.split()) or not re.search(r"\w", topic):
        return None
    return topic
