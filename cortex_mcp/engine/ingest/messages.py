"""Chat messages as agent frameworks send them, reduced to the text a memory can hold.

A message is `{role, content}`: any role (user, assistant, system, tool, toolResult, developer,
...), `content` a string, null, or a list of blocks of which only `{type: "text", text}` carries
text (tool calls, tool results, thinking and images are dropped). A block of memories that a
bridge pasted into the prompt (`<relevant-memories>...</relevant-memories>`) is removed from
every text, so recalled memories are never captured again as if they had been said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cortex_mcp.engine import validate
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import to_iso

MAX_MESSAGES = 2000
MAX_ROLE_CHARS = 64
MAX_TEXT_CHARS = 100_000  # one message's text, blocks joined
MAX_BLOCKS = 500
MEMORY_TAG = "relevant-memories"
_INJECTED = re.compile(
    rf"<{MEMORY_TAG}\b[^>]*>.*?(?:</{MEMORY_TAG}\s*>|\Z)", re.IGNORECASE | re.DOTALL
)


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    said_at: str | None = None  # the message's `timestamp`, when it has a readable one


# a message's time before this is no clock's (a sequence number, a placeholder): not used
_EARLIEST_SAID = datetime(2000, 1, 1, tzinfo=UTC)


def message_time(value: Any, where: str = "timestamp") -> str | None:
    """A message's `timestamp` as `to_iso` text (`validate.timestamp_moment`: epoch seconds or
    milliseconds, or an ISO date-time); None when it is absent or reads as no wall-clock time
    (a sequence number, text that is not a time): a message's extra keys never refuse it,
    but a time past the range of valid moments is refused naming `where`."""
    try:
        moment = validate.timestamp_moment(value)
    except ValueError as exc:
        raise InvalidInput(f"{where}: {exc}", field=where) from None
    return to_iso(moment) if moment is not None and moment >= _EARLIEST_SAID else None


def without_injected_memories(text: str) -> str:
    """`text` without any framed memory block a bridge pasted into the prompt (an unclosed one
    runs to the end of the text)."""
    if "<" not in text:
        return text
    return _INJECTED.sub("", text).strip()


def message_text(content: Any, where: str) -> str:
    """The text of one message's `content`: a string, null, or a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        if len(content) > MAX_BLOCKS:
            raise InvalidInput(f"{where}: at most {MAX_BLOCKS} blocks", field="messages")
        text = "\n".join(_block_text(block, f"{where}[{i}]") for i, block in enumerate(content))
    else:
        raise InvalidInput(
            f"{where}: must be text, null or a list of blocks like "
            '{"type": "text", "text": "..."}',
            field="messages",
        )
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(
            f"{where}: {len(text)} characters is over the limit of {MAX_TEXT_CHARS}",
            field="messages",
        )
    if "\x00" in text:
        raise InvalidInput(f"{where}: {validate.NUL_RULE}", field="messages")
    return without_injected_memories(text.strip())


def _block_text(block: Any, where: str) -> str:
    if not isinstance(block, dict):
        raise InvalidInput(f"{where}: a block must be an object with a type", field="messages")
    if block.get("type") != "text":
        return ""
    text = block.get("text")
    if not isinstance(text, str):
        raise InvalidInput(f"{where}.text: a text block needs its text", field="messages")
    return text.strip()


def checked_messages(messages: Any) -> list[Message]:
    """Every message with its role and its text (blocks joined); a malformed one is refused
    with its index, an unknown role is kept as it is."""
    if not isinstance(messages, list) or not messages:
        raise InvalidInput(
            "messages: must be a non-empty list of {role, content}", field="messages"
        )
    if len(messages) > MAX_MESSAGES:
        raise InvalidInput(f"messages: at most {MAX_MESSAGES} per call", field="messages")
    out = []
    for index, item in enumerate(messages):
        if not isinstance(item, dict):
            raise InvalidInput(f"messages[{index}]: must be an object", field="messages")
        role = item.get("role")
        if not isinstance(role, str) or not role.strip() or len(role) > MAX_ROLE_CHARS:
            raise InvalidInput(
                f"messages[{index}].role: must be 1 to {MAX_ROLE_CHARS} characters of text",
                field="messages",
            )
        text = message_text(item.get("content"), f"messages[{index}].content")
        said = message_time(item.get("timestamp"), f"messages.{index}.timestamp")
        out.append(Message(role.strip(), text, said))
    return out


def said_at(messages: list[Message]) -> str | None:
    """When the conversation's last turn was said: its last user message's time (else its
    last message's with one)."""
    users = [m.said_at for m in messages if m.role == "user" and m.content and m.said_at]
    anyone = [m.said_at for m in messages if m.said_at]
    return users[-1] if users else (anyone[-1] if anyone else None)


def last_turn(messages: list[Message]) -> tuple[str, str]:
    """(user, assistant) text of the conversation's last turn: the last run of user messages
    and the assistant's replies after it. Other roles (tools, system) are not part of it."""
    starts = [i for i, m in enumerate(messages) if m.role == "user" and m.content]
    if not starts:
        assistant = [m.content for m in messages if m.role == "assistant" and m.content]
        return "", "\n\n".join(assistant)
    first = starts[-1]
    while first > 0 and messages[first - 1].role == "user":
        first -= 1
    turn = messages[first:]
    user = [m.content for m in turn if m.role == "user" and m.content]
    assistant = [m.content for m in turn if m.role == "assistant" and m.content]
    return "\n\n".join(user), "\n\n".join(assistant)
