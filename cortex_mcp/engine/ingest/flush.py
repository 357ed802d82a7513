"""Flush+ (seed 000 §5.3): before a client compacts its context, keep the session's highlights.

Messages come as clients hold them (any role; content as text or blocks, see `messages`).
Decisions, state changes, preferences and blockers are extracted with one LLM call
(``prompts/flush.md``, which sees every role); the high-priority ones (importance >= 0.8) go to
core, the rest to working memory, tagged ``pre-compaction-flush``. Without an LLM (or when it
fails), the rules run over every user message and what the user said at the session's end is
kept, capped, as conversation history (the assistant's side is not kept as a memory)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import Any

from pydantic import BaseModel, Field

from cortex_mcp.engine.ingest import extraction
from cortex_mcp.engine.ingest.event_time import event_time
from cortex_mcp.engine.ingest.fast_channel import write_high_signals
from cortex_mcp.engine.ingest.messages import Message, checked_messages, said_at
from cortex_mcp.engine.ingest.pipeline import history_metadata
from cortex_mcp.engine.ingest.sieve import detect_high_signals
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import ProviderError
from cortex_mcp.models import Category, Clock, Layer, Memory, NewMemory, from_iso, to_iso
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.store.counters import Counters
from cortex_mcp.store.interfaces import MemoryStorage

log = logging.getLogger(__name__)

MAX_CONVERSATION_CHARS = 24_000  # what one LLM call sees: the end of the session
SUMMARY_CHARS = 1500
CORE_IMPORTANCE = 0.8
TAG = "pre-compaction-flush"


class FlushResult(BaseModel):
    flushed: list[Memory] = Field(default_factory=list)
    degraded: list[str] = Field(default_factory=list)


@dataclass
class FlushOutcome:
    memories: list[Memory] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)


def conversation_text(messages: list[Message], limit: int = MAX_CONVERSATION_CHARS) -> str:
    lines = [f"{m.role}: {m.content}" for m in messages if m.content]
    text = "\n".join(lines)
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _once(memories: list[Memory]) -> list[Memory]:
    """Each memory once, where it first came, as last written: what the rules, the model and
    the raw summary found alike is one memory (a write of known content returns that memory)."""
    return list({m.id: m for m in memories}.values())


class Flusher:
    def __init__(
        self,
        *,
        memories: MemoryStorage,
        llm: LLMCascade,
        redactor: Redactor,
        counters: Counters,
        clock: Clock,
        max_content_chars: int,
        user_zone: Callable[[], tzinfo] = lambda: UTC,
    ) -> None:
        self.user_zone = user_zone  # CORTEX_TIMEZONE: a message's time words are read in it
        self.memories = memories
        self.llm = llm
        self.redactor = redactor
        self.counters = counters
        self.clock = clock
        self.max_content_chars = max_content_chars

    def _now(self) -> str:
        return to_iso(self.clock.now())

    async def flush(
        self,
        raw_messages: Any,
        agent_id: str,
        session_id: str | None,
        reason: str | None,
        *,
        session_at: str | None = None,
        zone: tzinfo | None = None,
    ) -> FlushOutcome:
        """`session_at`: when the session was (its messages' own `timestamp` wins for what each
        said); None: now. What a user message tells is dated by the day it names ("last
        Tuesday I ...", engine/ingest/event_time.py), read in `zone` (default: CORTEX_TIMEZONE)."""
        where = zone or self.user_zone()
        messages = checked_messages(raw_messages)
        cleaned = await self.redactor.clean_many([m.content for m in messages])
        messages = [
            Message(m.role, text, m.said_at or session_at)
            for m, text in zip(messages, cleaned, strict=True)
        ]
        session_time = said_at(messages)  # its last user message's time
        reason = (await self.redactor.clean(reason))[:200] if reason else "compaction"
        meta = {"session_id": session_id, "tag": TAG, "reason": reason}
        users = [m for m in messages if m.role == "user"]
        outcome = FlushOutcome()
        signals = []
        for message in users:  # each dated by the message it was said in
            said = detect_high_signals(message.content)
            signals += said
            occurred = self._occurred(message, where)
            outcome.memories += await write_high_signals(
                self.memories, said, agent_id, meta, self._now(), occurred_at=occurred
            )
        if self.llm.providers:
            try:
                outcome.memories += await self._with_llm(
                    messages, agent_id, meta, reason, signals, session_time
                )
                await self.counters.add({"flush.llm": 1, "llm.calls": 1})
                outcome.memories = _once(outcome.memories)
                return outcome
            except ProviderError as exc:
                log.warning("flush extraction failed, keeping a raw summary: %s", exc.message)
                outcome.degraded.append(f"flush: {exc.message}")
                await self.counters.add({"llm.calls": 1, "llm.failures": 1})
        else:
            outcome.degraded.append("flush: no LLM provider configured: rules and a raw summary")
        summary = await self._raw_summary(messages, agent_id, meta, session_time)
        if summary is not None:
            outcome.memories.append(summary)
        await self.counters.add({"flush.rules": 1})
        outcome.memories = _once(outcome.memories)
        return outcome

    def _occurred(self, message: Message, where: tzinfo) -> str | None:
        """When what `message` tells happened: the day it dates it by, else when it was said."""
        said = from_iso(message.said_at) if message.said_at else self.clock.now()
        return event_time(message.content, said.astimezone(where)) or message.said_at

    async def _with_llm(
        self,
        messages: list[Message],
        agent_id: str,
        meta: dict[str, Any],
        reason: str,
        signals: list[Any],
        occurred_at: str | None,
    ) -> list[Memory]:
        prompt = extraction.render(
            "flush.md", conversation=conversation_text(messages), reason=reason
        )
        today = from_iso(occurred_at) if occurred_at else self.clock.now()
        system = extraction.render("extraction_system.md", date=today.strftime("%Y-%m-%d"))
        completion = await self.llm.complete(system, prompt)
        answer = extraction.parse_answer(completion.text)
        users = "\n\n".join(m.content for m in messages if m.role == "user")
        others = "\n\n".join(m.content for m in messages if m.role != "user")
        personal = any(s.category in {"identity", "preference"} for s in signals)
        items, _ = extraction.guard_injected(answer.memories, users, others, personal)
        written = []
        for item in items:
            core = item.importance >= CORE_IMPORTANCE
            new = NewMemory(
                agent_id=agent_id,
                content=item.content.strip()[: self.max_content_chars],
                category=Category(item.category),
                layer=Layer.core if core else Layer.working,
                importance=item.importance,
                source=item.source,
                metadata={**meta, "priority": "high" if core else "normal"},
                occurred_at=occurred_at,
            )
            new = await self.redactor.clean_memory(new)  # what the model wrote is stored too
            written.append((await self.memories.remember(new, self._now())).memory)
        return written

    async def _raw_summary(
        self,
        messages: list[Message],
        agent_id: str,
        meta: dict[str, Any],
        occurred_at: str | None,
    ) -> Memory | None:
        said = "\n".join(m.content for m in messages if m.role == "user" and m.content)
        if not said:
            return None
        if len(said) > SUMMARY_CHARS:
            said = "…" + said[-(SUMMARY_CHARS - 1) :]
        new = NewMemory(
            agent_id=agent_id,
            content=said[: self.max_content_chars],
            category=Category.summary,
            layer=Layer.working,
            importance=0.4,
            source="user",
            metadata=history_metadata("user", occurred_at or self._now(), **meta),
            occurred_at=occurred_at,
        )
        return (await self.memories.remember(new, self._now())).memory
