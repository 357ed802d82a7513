"""Ingest: one conversation turn in, memories out (the Memory Sieve, seed 000 §5.2.6).

1. The turn is redacted and stored durably (`turns`) before anything else; the same turn
   again (same agent, session and text) returns what the first one produced and adds nothing.
2. Both channels run concurrently: the fast channel writes high-signal sentences of the user's
   own words straight to core; the deep channel makes at most one LLM call (none for small
   talk) and its memories go to working memory with category, importance, source and session.
3. When every provider fails (or none is configured) the user's side of the raw turn is kept
   as conversation history: a working `context` memory marked `unextracted` in its metadata,
   with who said it and when, which recall shows apart from facts. The assistant's side stays
   in the stored turn only, so an agent is never fed its own earlier replies as memories.
   The memories, relations and the turn's `done` status are written together.
A process that dies mid-extraction leaves the turn pending: the next start finishes it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, timedelta, tzinfo
from typing import Any

from pydantic import BaseModel, Field

from cortex_mcp.engine import validate
from cortex_mcp.engine.entities.linker import EntityLinker, written
from cortex_mcp.engine.entities.resolve import Named
from cortex_mcp.engine.ingest import extraction
from cortex_mcp.engine.ingest.event_time import event_time
from cortex_mcp.engine.ingest.fast_channel import write_high_signals
from cortex_mcp.engine.ingest.messages import without_injected_memories
from cortex_mcp.engine.ingest.profile import ProfileKeeper, prompt_block
from cortex_mcp.engine.ingest.sieve import HighSignal, detect_high_signals
from cortex_mcp.engine.recall.gate import small_talk_reason
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import InvalidInput, ProviderError
from cortex_mcp.models import (
    Category,
    Clock,
    Layer,
    LinkRole,
    Memory,
    NewMemory,
    from_iso,
    to_iso,
)
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.relations import Triple
from cortex_mcp.store.turns import Completion, Turn, TurnStore
from cortex_mcp.tokenize import CJK_CHAR, speaker_of

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 100_000
_LATIN_WORD = re.compile(r"[^\W\d_]+")


class IngestResult(BaseModel):
    extracted: list[Memory] = Field(default_factory=list)
    high_signals: list[Memory] = Field(default_factory=list)
    turn_id: str
    status: str  # "done" or "pending" (accepted, extraction running in the background)
    outcome: str | None = None  # extracted | fallback | skipped
    duplicate: bool = False
    degraded: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class DeepResult:
    outcome: str
    memories: list[NewMemory]
    triples: list[tuple[Triple, int | None]]
    counts: dict[str, int]
    degraded: list[str]
    named: list[tuple[Named, ...]] = field(default_factory=list)  # per memory, the LLM's entities


def turn_hash(
    agent_id: str, session_id: str | None, user: str, assistant: str, said_at: str | None = None
) -> str:
    """The same words said at another time (a `said_at` given) are another turn."""
    parts = [agent_id, session_id or "", user, assistant]
    key = "\x1f".join([*parts, said_at] if said_at else parts)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def process_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(owner: str | None) -> bool:
    """True when `owner` was a process on this host that no longer runs."""
    if not owner:
        return True
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def is_small_talk(user: str, assistant: str, signals: list[HighSignal]) -> bool:
    """No LLM for greetings and chit-chat: a short user line with nothing specific in it (no
    signal, no digits) and a short reply (seed: small talk and a reply under 100 chars)."""
    if signals:
        return False
    if small_talk_reason(user) is not None and len(assistant) < 200:
        return True
    specific = any(ch.isdigit() for ch in user + assistant) or "?" in user or "？" in user
    size = len(_LATIN_WORD.findall(user)) + len(CJK_CHAR.findall(user)) / 2
    return not specific and size <= 4 and len(assistant) < 100


def history_metadata(speaker: str, said_at: str, **extra: Any) -> dict[str, Any]:
    """Metadata of a memory kept verbatim without extraction: conversation history (who said
    it and when), which recall shows apart from what the agent knows."""
    history = {"unextracted": True, "kind": "conversation", "speaker": speaker}
    return {**extra, **history, "said_at": said_at}


class Ingestor:
    def __init__(
        self,
        *,
        turns: TurnStore,
        memories: MemoryStorage,
        llm: LLMCascade,
        profiles: ProfileKeeper,
        redactor: Redactor,
        clock: Clock,
        max_content_chars: int,
        on_write: Callable[[], None],
        lease: timedelta,
        embeddings: EmbeddingCascade | None = None,
        linker: EntityLinker | None = None,
        user_zone: Callable[[], tzinfo] = lambda: UTC,
    ) -> None:
        self.turns = turns
        self.user_zone = user_zone  # CORTEX_TIMEZONE: a turn's time words are read in it
        self.linker = linker
        self.memories = memories
        self.llm = llm
        self.profiles = profiles
        self.redactor = redactor
        self.clock = clock
        self.max_content_chars = max_content_chars
        self.on_write = on_write
        self.lease = lease
        self.embeddings = embeddings  # to tell by meaning what a correction is about
        self.owner = process_owner()
        self._running: dict[str, asyncio.Task[IngestResult]] = {}
        self._zones: dict[str, tzinfo] = {}  # a request's own zone, until its turn is read
        self._watchers: set[asyncio.Task[None]] = set()

    def _now(self) -> str:
        return to_iso(self.clock.now())

    # ---- entry points ---------------------------------------------------------------------

    async def ingest(
        self,
        user_message: str,
        assistant_message: str | None,
        agent_id: str,
        session_id: str | None,
        *,
        wait: bool = True,
        said_at: str | None = None,
        zone: tzinfo | None = None,
    ) -> IngestResult:
        """`said_at` (`to_iso` text): when the turn was said, the own time of every memory
        written from it (None: when it is received), unless the user dates what they tell
        ("last Tuesday I switched my phone plan": engine/ingest/event_time.py), read in
        `zone` (default: CORTEX_TIMEZONE)."""
        user, assistant = _checked(user_message, assistant_message)
        user, assistant = await self.redactor.clean_many([user, assistant])
        turn, created = await self.turns.accept(
            agent_id=agent_id,
            session_id=session_id,
            turn_hash=turn_hash(agent_id, session_id, user, assistant, said_at),
            user_message=user,
            assistant_message=assistant,
            now=self._now(),
            said_at=said_at,
        )
        if not created:
            return await self._again(turn, wait)
        if zone is not None:
            self._zones[turn.id] = zone
        task = self._start(turn)
        if not wait:
            return IngestResult(turn_id=turn.id, status="pending")
        return await asyncio.shield(task)

    async def resume_pending(self) -> int:
        """Finish every turn a dead process left pending (called once at start)."""
        resumed = 0
        cutoff = to_iso(self.clock.now() - self.lease)
        for turn in await self.turns.pending():
            if turn.id in self._running:
                continue
            abandoned = owner_is_dead(turn.claimed_by) or (turn.claimed_at or "") < cutoff
            if turn.claimed_by is not None and not abandoned:
                continue
            log.info("resuming ingest of turn %s (attempt %d)", turn.id, turn.attempts + 1)
            self._start(turn)
            resumed += 1
        return resumed

    # ---- the work -------------------------------------------------------------------------

    def _start(self, turn: Turn) -> asyncio.Task[IngestResult]:
        """The turn's extraction, one per turn in this process: the resume at start can find
        a turn this process has just accepted, before its caller starts it. A second task
        would lose the claim to the first and answer its caller "pending, duplicate"."""
        running = self._running.get(turn.id)
        if running is not None:
            return running
        task = asyncio.get_running_loop().create_task(self._process(turn))
        self._running[turn.id] = task

        async def watch() -> None:
            try:
                await task
            except Exception:  # the turn stays pending and is resumed at the next start
                log.exception("ingest of turn %s failed; it stays pending", turn.id)
            finally:
                self._running.pop(turn.id, None)

        watcher = asyncio.get_running_loop().create_task(watch())
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return task

    async def drain(self) -> None:
        """Wait until every extraction started so far has finished."""
        while self._watchers:
            await asyncio.gather(*list(self._watchers), return_exceptions=True)

    async def close(self, grace_s: float) -> None:
        """Give running extractions `grace_s` to finish; the rest stay pending in the
        database and are resumed by the next start."""
        if not self._watchers:
            return
        _, late = await asyncio.wait(list(self._watchers), timeout=grace_s)
        for task in [*self._running.values(), *late]:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    async def _again(self, turn: Turn, wait: bool) -> IngestResult:
        running = self._running.get(turn.id)
        if running is not None and wait:
            result = await asyncio.shield(running)
            return result.model_copy(update={"duplicate": True})
        if turn.status == "pending":
            if running is None and (turn.claimed_by is None or owner_is_dead(turn.claimed_by)):
                task = self._start(turn)
                if wait:
                    return (await asyncio.shield(task)).model_copy(update={"duplicate": True})
            return IngestResult(turn_id=turn.id, status="pending", duplicate=True)
        return await self._stored_result(turn, duplicate=True)

    async def _stored_result(self, turn: Turn, duplicate: bool) -> IngestResult:
        ids = turn.result
        found = await self.memories.get_many(
            [*ids.get("high_signals", []), *ids.get("extracted", [])]
        )
        return IngestResult(
            extracted=[found[i] for i in ids.get("extracted", []) if i in found],
            high_signals=[found[i] for i in ids.get("high_signals", []) if i in found],
            turn_id=turn.id,
            status=turn.status,
            outcome=turn.outcome,
            duplicate=duplicate,
        )

    async def _process(self, turn: Turn) -> IngestResult:
        if not await self.turns.claim(turn, self.owner, self._now()):
            current = await self.turns.get(turn.id)
            assert current is not None
            return await self._stored_result(current, duplicate=True)
        signals = detect_high_signals(turn.user_message)
        occurred = self._occurred(turn)
        fast = asyncio.create_task(self._fast_channel(turn, signals, occurred))
        deep = await self._deep_channel(turn, signals, occurred)
        high = await fast
        done = Completion(
            outcome=deep.outcome,
            high_signal_ids=[m.id for m in high],
            memories=deep.memories,
            triples=deep.triples,
            counts={**deep.counts, "ingest.high_signals": len(high)},
        )
        extracted = await self.turns.complete(turn, done, self._now())
        self._link(turn.agent_id, high, extracted, deep.named)
        self.on_write()
        return IngestResult(
            extracted=extracted,
            high_signals=high,
            turn_id=turn.id,
            status="done",
            outcome=deep.outcome,
            degraded=deep.degraded,
        )

    def _link(
        self,
        agent_id: str,
        high: list[Memory],
        extracted: list[Memory],
        named: list[tuple[Named, ...]],
    ) -> None:
        """The turn's memories linked to whom they name; an extracted memory also to the
        entities the model gave for it."""
        if self.linker is None:
            return
        given = named if len(named) == len(extracted) else [()] * len(extracted)
        items = [written(m) for m in high]
        items += [written(m, names) for m, names in zip(extracted, given, strict=True)]
        self.linker.submit(agent_id, items, self._now())

    def _occurred(self, turn: Turn) -> str:
        """When what the turn tells happened: the day its user message dates it by, else
        when it was said."""
        where = self._zones.pop(turn.id, None) or self.user_zone()
        said = from_iso(turn.occurred_at).astimezone(where)
        return event_time(turn.user_message, said) or turn.occurred_at

    async def _fast_channel(
        self, turn: Turn, signals: list[HighSignal], occurred: str
    ) -> list[Memory]:
        meta = {"session_id": turn.session_id, "turn_id": turn.id}
        written = await write_high_signals(
            self.memories,
            signals,
            turn.agent_id,
            meta,
            self._now(),
            speaker=speaker_of(turn.user_message),
            embeddings=self.embeddings,
            occurred_at=occurred,
        )
        if written:
            self.on_write()
        return written

    async def _deep_channel(
        self, turn: Turn, signals: list[HighSignal], occurred: str
    ) -> DeepResult:
        user, assistant = turn.user_message, turn.assistant_message
        if is_small_talk(user, assistant, signals):
            return DeepResult("skipped", [], [], {}, [])
        if not self.llm.providers:
            return self._fallback(
                turn, "no LLM provider configured (CORTEX_LLM_PROVIDER)", {}, occurred
            )
        profile = await self.profiles.current(turn.agent_id)
        # "yesterday" in the turn is the day before it was said
        system, prompt = extraction.extraction_prompts(
            user, assistant, prompt_block(profile), from_iso(turn.occurred_at)
        )
        try:
            completion = await self.llm.complete(system, prompt)
        except ProviderError as exc:
            return self._fallback(turn, exc.message, {"llm.calls": 1, "llm.failures": 1}, occurred)
        try:
            answer = extraction.parse_answer(completion.text)
        except extraction.ExtractionError as exc:
            self.llm.note_bad_answer(completion.provider, exc.message)
            return self._fallback(turn, exc.message, {"llm.calls": 1, "llm.failures": 1}, occurred)
        personal = any(s.category in {"identity", "preference"} for s in signals)
        items, blocked = extraction.guard_injected(answer.memories, user, assistant, personal)
        # what the model wrote is stored too: redacted like everything else
        memories = [
            await self.redactor.clean_memory(self._working(turn, i, occurred)) for i in items
        ]
        triples = [
            (
                Triple(*await self.redactor.clean_relation(r.subject, r.predicate, r.object)),
                _source_index(r, items),
            )
            for r in answer.relations
        ]
        counts = {
            "ingest.memories_extracted": len(memories),
            "ingest.injection_blocked": blocked,
            "ingest.invalid_items": answer.dropped,
            "llm.calls": 1,
            "llm.prompt_tokens": completion.prompt_tokens,
        }
        named = [
            tuple(Named(e.name, e.kind, LinkRole(e.role)) for e in item.entities) for item in items
        ]
        return DeepResult("extracted", memories, triples, counts, [], named)

    def _working(self, turn: Turn, item: extraction.ExtractedMemory, occurred: str) -> NewMemory:
        return NewMemory(
            agent_id=turn.agent_id,
            content=item.content.strip()[: self.max_content_chars],
            category=Category(item.category),
            layer=Layer.working,
            importance=item.importance,
            source=item.source,
            metadata={"session_id": turn.session_id, "turn_id": turn.id, "channel": "llm"},
            occurred_at=occurred,
        )

    def _fallback(
        self, turn: Turn, reason: str, counts: dict[str, int], occurred: str
    ) -> DeepResult:
        log.warning("extraction of turn %s fell back to the raw turn: %s", turn.id, reason)
        degraded = [f"extraction: {reason}"]
        if not turn.user_message:
            return DeepResult("fallback", [], [], counts, degraded)
        note = NewMemory(
            agent_id=turn.agent_id,
            content=_cut(turn.user_message, self.max_content_chars),
            category=Category.context,
            layer=Layer.working,
            importance=0.3,
            source="user",
            metadata=history_metadata(
                "user", turn.occurred_at, session_id=turn.session_id, turn_id=turn.id
            ),
            occurred_at=occurred,
        )
        return DeepResult("fallback", [note], [], counts, degraded)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _source_index(relation: extraction.ExtractedRelation, items: list[Any]) -> int | None:
    """The extracted memory a relation most likely came from (one naming its subject or object)."""
    for index, item in enumerate(items):
        text = item.content.casefold()
        if relation.object.casefold() in text or relation.subject.casefold() in text:
            return index
    return 0 if items else None


def _checked(user_message: Any, assistant_message: Any) -> tuple[str, str]:
    assistant_message = "" if assistant_message is None else assistant_message
    for name, value in (("user_message", user_message), ("assistant_message", assistant_message)):
        if not isinstance(value, str):
            raise InvalidInput(f"{name}: must be text", field=name)
        validate.no_nul(name, value)
        if len(value) > MAX_MESSAGE_CHARS:
            raise InvalidInput(
                f"{name}: {len(value)} characters is over the limit of {MAX_MESSAGE_CHARS}",
                field=name,
            )
    user = without_injected_memories(user_message.strip())
    assistant = without_injected_memories(assistant_message.strip())
    if not user and not assistant:
        raise InvalidInput(
            "user_message: a turn needs text in user_message, assistant_message or messages",
            field="user_message",
        )
    return user, assistant
