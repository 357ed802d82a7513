"""What a model reads: each tool result as compact text that carries everything it can act on
(ids, layer, category, date, score, what was degraded or skipped), next to the same result as
structured content. Many clients (Claude Code among them) pass only the text to the model.

A readable block rather than the JSON dump: for a recall of 10 memories it is about a third
of the tokens of the pretty-printed JSON and leaves out nothing a model can use.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from cortex_mcp.engine.recall.gate import Window, time_said, what_and_who
from cortex_mcp.engine.recall.page import candidates_text, page_text
from cortex_mcp.engine.recall.when import dated
from cortex_mcp.engine.redaction import describe_redactions
from cortex_mcp.models import (
    ForgetResult,
    RecallMeta,
    RecallResult,
    RememberResult,
    ScoredMemory,
    from_iso,
)
from cortex_mcp.zones import labelled


def recall_text(result: RecallResult) -> str:
    meta = result.meta
    window = _window(meta)
    said = time_said(window, meta.time_unread)
    if meta.skipped_reason:
        lines = [f"No recall: {meta.skipped_reason} (meta.skipped_reason)."]
    elif not result.memories:
        lines = ["No memories matched." + (f" {said}" if said else "")]
    else:
        count = len(result.memories)
        lines = [
            *([said] if said else []),
            f"{count} memor{'y' if count == 1 else 'ies'}, most relevant first"
            f" ({meta.tokens} tokens; search: {', '.join(meta.channels) or 'none'})."
            " Pass an id to cortex_forget to retract or correct it.",
        ]
        now = _reference(meta)
        marks = window if window is not None and window.boosted else None
        for rank, memory in enumerate(result.memories, start=1):
            lines += ["", *_memory_block(rank, memory, now, marks)]
    if meta.entity is not None:
        lines = [page_text(meta.entity, _reference(meta)), "", *lines]
    elif meta.entity_candidates:
        lines = [candidates_text(None, meta.entity_candidates), "", *lines]
    if meta.degraded:
        lines += ["", "degraded: " + "; ".join(meta.degraded)]
    if meta.notes:
        lines += ["", "notes: " + "; ".join(meta.notes)]
    return "\n".join(lines)


def _reference(meta: RecallMeta) -> datetime | None:
    """The recall's reference time on the user's clock (dates are shown in their zone)."""
    return from_iso(meta.now).astimezone(labelled(meta.timezone)) if meta.now else None


def _window(meta: RecallMeta) -> Window | None:
    """The period the query was read as, from `meta.time`."""
    found = meta.time
    if found is None or not isinstance(found.get("read_as"), str):
        return None
    start, end = str(found["start"]), str(found["end"])
    return Window(start, end, str(found["read_as"]), bool(found.get("boosted")))


def _memory_block(
    rank: int, memory: ScoredMemory, now: datetime | None, window: Window | None = None
) -> list[str]:
    outside = window.outside(memory).lstrip(", ") if window is not None else ""
    head = (
        f"[{rank}] id {memory.id} | {memory.layer.value} | {memory.category.value}"
        f" | {dated(memory.occurred_at or memory.created_at, now)}"
        + (f" ({outside})" if outside else "")
        + f" | score {memory.score:.3f} | {what_and_who(memory)}"
    )
    if memory.metadata.get("unextracted"):
        speaker = memory.metadata.get("speaker") or "conversation"
        head += f" | conversation history: what {speaker} said, not a verified fact"
    if memory.truncated:
        head += f" | cut to fit max_tokens (full text: cortex://memories/{memory.id})"
    return [head, *("  " + line for line in memory.content.split("\n"))]


def remember_text(result: RememberResult) -> str:
    verb = "Already remembered (deduplicated)" if result.deduplicated else "Remembered"
    text = f"{verb}: id {result.id} ({result.layer.value})."
    if result.superseded:
        text += f" It supersedes {', '.join(result.superseded)}."
    if result.redacted:
        text += f" {describe_redactions(result.redacted)}"
    return text


def forget_text(result: ForgetResult) -> str:
    if result.status == "purged":
        return f"Memory {result.id} purged: its content is erased everywhere."
    if result.status == "corrected":
        return f"Memory {result.id} corrected: the corrected fact is memory {result.new_id}."
    if result.status == "already_forgotten":
        return f"Memory {result.id} was already forgotten: nothing changed."
    return f"Memory {result.id} forgotten: it leaves recall and stays in the archive."


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)
