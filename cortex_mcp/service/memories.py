"""Recall, remember, forget, search and the search debugger: the memory tools every transport
calls (the four MCP tools, REST's memory routes, the CLI's add/search/forget)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.beliefs.keeper import BeliefKeeper
from cortex_mcp.engine.beliefs.reflect import Reflector
from cortex_mcp.engine.beliefs.validity import ValidityKeeper
from cortex_mcp.engine.entities.linker import EntityLinker
from cortex_mcp.engine.entities.mentions import page_subject
from cortex_mcp.engine.lifecycle.runner import LifecycleEngine
from cortex_mcp.engine.recall.access import AccessBatcher
from cortex_mcp.engine.recall.gate import (
    Window,
    build_context,
    frame_for_prompt,
    framing_cost,
    small_talk_reason,
    time_said,
)
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer, FreshVectors
from cortex_mcp.engine.recall.latency import LatencyWindow
from cortex_mcp.engine.recall.page import (
    PageLookup,
    candidates_text,
    find_page,
    page_of,
    page_text,
)
from cortex_mcp.engine.recall.report import debug_report
from cortex_mcp.engine.recall.when import window_words
from cortex_mcp.engine.redaction import Redactor, redact
from cortex_mcp.errors import InvalidInput, NotFound, ReadOnlyStorage
from cortex_mcp.models import (
    LOCAL,
    Caller,
    Category,
    Clock,
    EntityPage,
    ForgetResult,
    ForgetStatus,
    Layer,
    Memory,
    MemoryChanges,
    NewMemory,
    RecallMeta,
    RecallResult,
    RememberResult,
    ScoredMemory,
    SearchAnswer,
    SearchFilters,
    SearchMeta,
    to_iso,
)
from cortex_mcp.search.fusion import Candidate
from cortex_mcp.search.hybrid import HybridSearch
from cortex_mcp.search.stages.vector_channel import drop
from cortex_mcp.search.time_words import unread_time_words
from cortex_mcp.service.effects import Background, Refresher
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
    UpdateRequest,
    build,
)
from cortex_mcp.store.interfaces import EntityStorage, MemoryStorage
from cortex_mcp.tokenize import count_tokens, one_question
from cortex_mcp.zones import label, zone

log = logging.getLogger(__name__)

_PENDING_PER_RECALL = 8  # memories without a vector embedded along with a recall's query


@dataclass(kw_only=True)
class MemoryService:
    """Recall, remember, forget, search, search_debug, update_memory, restore, correct."""

    settings: Settings
    memories: MemoryStorage
    linker: EntityLinker
    searcher: HybridSearch
    indexer: EmbeddingIndexer | None
    redactor: Redactor
    access: AccessBatcher
    latency: LatencyWindow
    lifecycle: LifecycleEngine
    refresher: Refresher
    background: Background
    clock: Clock
    entities: EntityStorage
    validity: ValidityKeeper
    beliefs: BeliefKeeper
    reflector: Reflector
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def recall(self, request: RecallRequest) -> RecallResult:
        """`format="prompt"` frames the context for pasting into a prompt (a
        `<relevant-memories>` block marked as untrusted data, escaped), within the same budget.
        A question about an entity ("tell me about Anna") or `about` puts its page first
        (engine/recall/page.py)."""
        started = time.perf_counter()
        text = _query(request.query)
        limit, budget = request.max_results, request.max_tokens
        framed = request.format == "prompt"
        where = self.zone_for(request.timezone, request.now)
        filters = self.filters(
            request.agent_id,
            request.layers,
            request.categories,
            request.include_shared,
            since=request.since,
            until=request.until,
            include_history=request.include_history,
            where=where,
        )
        reason = small_talk_reason(text)
        if reason is not None and request.about is None:
            meta = RecallMeta(took_ms=_ms_since(started), skipped_reason=reason)
            return RecallResult(context="", memories=[], meta=meta)
        pending = (
            self.indexer.pending_for(filters.agent_id, _PENDING_PER_RECALL) if self.indexer else []
        )
        now = self.reference_time(request.now, where)
        # the provider's round trip overlaps the settling, linking and page lookup below
        embedding = self.searcher.embed_soon(text, pending)
        begun = None
        try:
            if embedding is not None:  # let it send its request: the reads below do not yield
                await asyncio.sleep(0)
            await self._settle(filters.agent_id)
            await self.linker.drain()  # what was just written is linked before it is searched
            # the text channel searches from here on, while the page is looked up
            begun = self.searcher.begin(
                text, filters, limit, now, pending=pending, embedding=embedding
            )
            await asyncio.sleep(0)  # its statement goes to a database thread now
            lookup = await self._page_lookup(filters.agent_id, request.about, text)
            about = {lookup.entity.id: lookup.entity.name} if lookup and lookup.entity else None
            outcome = await self.searcher.run(begun, about)
        finally:
            drop(embedding)  # used by the search unless something before it failed
            if begun is not None:
                self.searcher.release(begun)
        if outcome.fresh and self.indexer is not None:
            self.background.spawn(
                self.indexer.save_fresh(FreshVectors(outcome.fresh_model, outcome.fresh))
            )
        ranked = [c for c in outcome.ranked if c.memory is not None]
        if self.indexer is not None and "vector" in outcome.channels:
            # found by text only: embed these before the rest of the backlog
            self.indexer.prioritise([c.memory_id for c in ranked if c.cosine is None])
        found = {c.memory_id: c for c in ranked}
        memories = await self._with_entities(
            filters.agent_id, [c.memory for c in ranked if c.memory], now
        )
        page = None
        if lookup is not None and lookup.entity is not None:
            linked = outcome.entity_links.get(lookup.entity.id, set())
            page = page_of(lookup.entity, _page_memories(memories, linked))
        head = _head(lookup, page, now)
        window = read_window(outcome.facts, now)
        unread = None if window is not None else unread_time_words(text)
        said = time_said(window, unread)
        frame = framing_cost() if framed else 0
        said_cost = count_tokens(said) + 1 if said else 0
        head_cost = count_tokens(head) + 1 if head else 0
        marks = window if window is not None and window.boosted else None
        context, kept, tokens = build_context(
            memories, budget - frame - said_cost - head_cost, now, marks
        )
        if head and head_cost <= budget - frame - said_cost:
            context, tokens = "\n\n".join(p for p in (head, context) if p), tokens + head_cost
        if said and context:
            context, tokens = f"{said}\n{context}", tokens + said_cost
        if page is not None:
            shown = {m.id for m in kept}
            page.memory_ids = [i for i in page.memory_ids if i in shown]
        if framed and context:
            context, tokens = frame_for_prompt(context), tokens + frame
        scored = [_scored(memory, found[memory.id]) for memory in kept]
        self.access.record([(m.id, rank) for rank, m in enumerate(scored)], text, self._now())
        meta = RecallMeta(
            took_ms=_ms_since(started),
            degraded=unique(outcome.degraded),
            channels=outcome.channels,
            tokens=tokens,
            timings_ms=outcome.timings_ms,
            now=to_iso(now),
            timezone=label(where),
            time=_window_of(outcome.facts, window),
            entity=page,
            entity_candidates=lookup.candidates if lookup is not None else [],
        )
        if len(text) == 1:
            meta.notes.append("one-character query: matched as a single character")
        if unread is not None:
            meta.time_unread = unread
            meta.notes.append(f'time words not understood: "{unread}" (ranked without a period)')
        if request.about is not None and lookup is not None and not (page or lookup.candidates):
            meta.notes.append(f"about: no person, pet or place is called {request.about!r}")
        self.latency.record(meta.took_ms)
        return RecallResult(context=context, memories=scored, meta=meta)

    async def _page_lookup(self, agent_id: str, about: str | None, text: str) -> PageLookup | None:
        """The entity `about` names, else the one a "tell me about X" question asks for."""
        asked = about if about is not None else page_subject(text)
        if asked is None:
            return None
        return await find_page(self.entities, agent_id, asked)

    async def _settle(self, agent_id: str) -> None:
        """Read the agent's newest memories for slots and beliefs before it searches. A
        read-only database is searched as it stands: settling is a write."""
        if self.memories.db.read_only:
            return
        try:
            # one trip when nothing is new (a keeper's settle reads its mark and what is past it)
            validity_behind, beliefs_behind = await self.validity.store.keepers_behind(agent_id)
            if validity_behind:
                await self.validity.settle(agent_id)
            if beliefs_behind:  # the validity keeper's writes add no memory for beliefs to read
                await self.beliefs.settle(agent_id)
        except ReadOnlyStorage:
            log.warning(
                "recall of %s without settling new facts: the database is read-only", agent_id
            )

    async def _with_entities(
        self, agent_id: str, memories: list[Memory], now: datetime
    ) -> list[Memory]:
        """Each memory with the names of the entities it is linked to, and the belief it
        states with its evidence's standing at `now`."""
        if not memories:
            return []
        ids = [m.id for m in memories]
        # one trip to a reader for both (a trip's thread hand-overs cost more than the reads)
        names, stated = await self.memories.db.read_both(
            self.entities.names_read(agent_id, ids), self.beliefs.store.stating_read(agent_id, ids)
        )
        beliefs = await self.beliefs.summaries_of(agent_id, stated, now)
        return [m.updated(entities=names.get(m.id, []), belief=beliefs.get(m.id)) for m in memories]

    async def remember(
        self, request: RememberRequest, *, metadata: dict[str, Any] | None = None
    ) -> RememberResult:
        """`metadata`: fields kept with the memory by callers inside the server (no transport
        takes them from a client); their values are redacted like the content."""
        supersedes = request.supersedes
        new = NewMemory(
            agent_id=validate.agent_for(self.caller, request.agent_id, self.settings.agent_id),
            content=validate.content(request.content, self.settings.max_content_chars),
            category=request.category,
            layer=request.layer,
            importance=request.importance,
            supersedes=validate.memory_id(supersedes, "supersedes") if supersedes else None,
            source=validate.optional_text("source", request.source, validate.MAX_SOURCE_CHARS),
            metadata=metadata or {},
            shared=request.shared,
            occurred_at=_iso_or_none(request.occurred_at, self.zone_for(request.timezone)),
        )
        redacted: Counter[str] = Counter()
        new = await self.redactor.clean_memory(new, redacted)
        now = self._now()
        outcome = await self.memories.remember(new, now)
        self.linker.submit_memories(new.agent_id, [outcome.memory], now)
        if not outcome.deduplicated:
            self.refresher.track(outcome.memory)
        self.refresher.mirror()
        return RememberResult(
            id=outcome.memory.id,
            layer=outcome.memory.layer,
            deduplicated=outcome.deduplicated,
            superseded=outcome.superseded,
            redacted=dict(sorted(redacted.items())),
        )

    async def forget(self, request: ForgetRequest) -> ForgetResult:
        target = validate.memory_id(request.memory_id)
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        reason = validate.optional_text("reason", request.reason, validate.MAX_REASON_CHARS)
        purge, correction = request.purge, request.correction
        if purge and correction:
            raise InvalidInput(
                "correction: cannot be combined with purge=true (purge erases, correction keeps)",
                field="correction",
            )
        reason = await self.redactor.clean_optional(reason)
        now = self._now()
        self.refresher.discard(target)
        chains = await self.validity.chains_of(agent, target)
        pages = await self.reflector.pages_of(agent, target)  # read before its links go
        if purge:
            await self.memories.purge(target, agent, now)
            await self.validity.resettle(agent, chains)
            await self.beliefs.left(agent, target)
            await self.reflector.rewrite_pages(agent, pages)
            await self.lifecycle.erase_from_summaries(target, agent)  # no extract may remain
            self.searcher.index.mark_dirty()
            self.refresher.mirror()
            return ForgetResult(id=target, status=ForgetStatus.purged)
        if correction is not None:
            old = await self._require(target, agent)
            corrected = validate.content(correction, self.settings.max_content_chars)
            new = NewMemory(
                agent_id=agent,
                content=await self.redactor.clean(corrected),
                category=old.category,
                layer=Layer.core,
                importance=max(old.importance, 0.7),
                source="correction",
            )
            outcome = await self.memories.correct(target, new, reason, now)
            await self.validity.settle(agent)
            await self.validity.resettle(agent, chains)
            await self.beliefs.left(agent, target)
            await self.reflector.rewrite_pages(agent, pages)
            self.linker.submit_memories(agent, [outcome.memory], now)
            self.refresher.track(outcome.memory)
            self.refresher.mirror()
            return ForgetResult(id=target, status=ForgetStatus.corrected, new_id=outcome.memory.id)
        if (await self._require(target, agent)).forgotten_at is not None:
            return ForgetResult(id=target, status=ForgetStatus.already_forgotten)
        await self.memories.forget(target, agent, reason, now)
        await self.validity.resettle(agent, chains)
        await self.beliefs.left(agent, target)
        await self.reflector.rewrite_pages(agent, pages)
        self.refresher.mirror()
        return ForgetResult(id=target, status=ForgetStatus.forgotten)

    async def search(self, request: SearchRequest) -> list[ScoredMemory]:
        """Ranked memories for a query, without the recall gate (no small-talk skip, no
        context block, no access counting)."""
        return (await self.search_answer(request)).memories

    async def search_answer(self, request: SearchRequest) -> SearchAnswer:
        """`search`'s memories and what the search understood (`meta`: its reference time and
        zone, the window the query's time words were read as, or the words it could not
        read)."""
        text = _query(request.query)
        where = self.zone_for(request.timezone, request.now)
        filters = self.filters(
            request.agent_id,
            request.layers,
            request.categories,
            request.include_shared,
            since=request.since,
            until=request.until,
            include_history=request.include_history,
            where=where,
        )
        now = self.reference_time(request.now, where)
        await self._settle(filters.agent_id)
        await self.linker.drain()  # what was just written is linked before it is searched
        outcome = await self.searcher.search(text, filters, request.limit, now)
        found = {c.memory_id: c for c in outcome.ranked}
        memories = await self._with_entities(
            filters.agent_id, [c.memory for c in outcome.ranked if c.memory is not None], now
        )
        window = read_window(outcome.facts, now)
        meta = SearchMeta(
            now=to_iso(now),
            timezone=label(where),
            time=_window_of(outcome.facts, window),
            time_unread=None if window is not None else unread_time_words(text),
        )
        scored = [ScoredMemory.of(m, round(found[m.id].final, 6)) for m in memories]
        return SearchAnswer(memories=scored, meta=meta)

    async def search_debug(self, request: SearchDebugRequest) -> dict[str, Any]:
        text = _query(request.query)
        limit = request.max_results
        where = self.zone_for(request.timezone, request.now)
        filters = self.filters(
            request.agent_id, None, None, since=request.since, until=request.until, where=where
        )
        now = self.reference_time(request.now, where)
        await self._settle(filters.agent_id)
        await self.linker.drain()  # what was just written is linked before it is searched
        outcome = await self.searcher.search(text, filters, limit, now, debug=True)
        report = debug_report(outcome, self.settings.search)
        report["small_talk"] = small_talk_reason(text)
        report["degraded"] = unique(outcome.degraded)
        report["vector_index"] = self.searcher.index.describe(filters.agent_id)
        return report

    async def update_memory(self, memory_id: str, request: UpdateRequest) -> Memory:
        """Change a memory's category, importance, layer or sharing in place."""
        target = validate.memory_id(memory_id, "id")
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        changes = MemoryChanges(**request.model_dump(exclude={"agent_id"}))
        if changes.importance is not None:
            validate.unit_interval("importance", changes.importance)
        return await self.memories.update(target, agent, changes, self._now())

    async def restore(
        self, memory_id: str, layer: str = "core", agent_id: str | None = None
    ) -> dict[str, Any]:
        """A forgotten or superseded memory live again (in `layer`); a live one is returned
        unchanged."""
        target = validate.memory_id(memory_id, "id")
        now = to_iso(self.clock.now())
        agent = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
        restored = await self.memories.restore(
            target, agent, validate.member("layer", layer, Layer), now
        )
        await self.validity.resettle(agent, await self.validity.chains_of(agent, target))
        self.linker.submit_memories(agent, [restored], now)  # its links went with the forget
        self.refresher.bulk_changed()
        self.refresher.track(restored)
        return restored.model_dump(mode="json")

    async def correct(
        self, memory_id: str, content: str, reason: str | None = None, agent_id: str | None = None
    ) -> ForgetResult:
        """A new version that supersedes the memory (the old one stays in the chain)."""
        request = build(
            ForgetRequest, memory_id=memory_id, reason=reason, correction=content, agent_id=agent_id
        )
        return await self.forget(request)

    def filters(
        self,
        agent_id: str | None,
        layers: Sequence[Layer | str] | None,
        categories: Sequence[Category | str] | None,
        include_shared: bool | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        include_history: bool = False,
        where: tzinfo = UTC,
    ) -> SearchFilters:
        """What a search of `agent_id`'s memories is limited to, each argument validated
        (`since`, `until`: ISO dates or date-times of the memories' own time, read in `where`
        without an offset; a date `until` takes in that whole day)."""
        return SearchFilters(
            agent_id=validate.agent_for(self.caller, agent_id, self.settings.agent_id),
            layers=validate.members("layers", _values(layers), Layer),
            categories=validate.members("categories", _values(categories), Category),
            now=self._now(),
            include_shared=(
                self.settings.include_shared if include_shared is None else include_shared
            ),
            since=to_iso(validate.moment_of("since", since, where)) if since else None,
            until=to_iso(validate.period_end_of("until", until, where)) if until else None,
            include_history=include_history,
        )

    def reference_time(self, now: str | None, where: tzinfo = UTC) -> datetime:
        """The moment a search reckons from (the request's `now`, else the clock) on the wall
        clock of `where`, the zone its "today" and "last week" are read in."""
        moment = validate.moment_of("now", now, where) if now else self.clock.now()
        return moment.astimezone(where)

    def zone_for(self, timezone: str | None, now: str | None = None) -> tzinfo:
        """The zone a request's dates are read in: its `timezone`, else the offset its `now`
        names (a caller that says "+08:00" lives there), else the server's CORTEX_TIMEZONE."""
        if timezone is not None:
            return zone(timezone)
        offset = validate.offset_of(now) if now else None
        return offset if offset is not None else zone(self.settings.timezone)

    def _now(self) -> str:
        return to_iso(self.clock.now())

    async def _require(self, memory_id: str, agent_id: str) -> Memory:
        memory = await self.memories.get(memory_id)
        if memory is None or memory.agent_id != agent_id:
            raise NotFound(
                f"memory_id: no memory {memory_id} for agent {agent_id!r}", field="memory_id"
            )
        return memory


def _scored(kept: Memory, candidate: Candidate) -> ScoredMemory:
    """A memory as a recall returns it: its fields bounded (content cut to the token budget by
    the context builder, an oversized legacy `source` cut to the current limit)."""
    source = kept.source
    cut = (
        {}
        if source is None or len(source) <= validate.MAX_SOURCE_CHARS
        else {"source": source[: validate.MAX_SOURCE_CHARS] + "…"}
    )
    original = candidate.memory
    truncated = original is not None and original.content != kept.content
    return ScoredMemory.of(kept, round(candidate.final, 6), truncated, **cut)


def _head(lookup: PageLookup | None, page: EntityPage | None, now: datetime) -> str:
    """What the context starts with: the entity's page, or the candidates of an ambiguous
    name."""
    if page is not None:
        return page_text(page, now)
    if lookup is not None and lookup.candidates:
        return candidates_text(lookup.asked, lookup.candidates)
    return ""


def _iso_or_none(value: str | None, where: tzinfo) -> str | None:
    return to_iso(validate.moment_of("occurred_at", value, where)) if value else None


def _values(members: Sequence[Layer | Category | str] | None) -> list[str] | None:
    return None if members is None else [getattr(m, "value", m) for m in members]


def unique(notes: list[str]) -> list[str]:
    """What a search could not use, each fact once and short ("no embedding provider: text
    search only"). What to set to fix it is for the person running the server: doctor, stats
    and the MCP server's instructions say it, not every recall a model reads."""
    return list(dict.fromkeys(notes))


def _query(query: str) -> str:
    """A valid query with any secret in it replaced: queries are sent to the embedding
    provider (and matched against memories whose secrets are already redacted)."""
    return redact(validate.query(query)).text


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _window_of(facts: dict[str, Any], window: Window | None) -> dict[str, str | bool] | None:
    """The window the time stage understood, as recall's meta shows it."""
    found = facts.get("time")
    if found is None or window is None:
        return None
    shown: dict[str, str | bool] = {key: found[key] for key in ("start", "end", "expression")}
    return {**shown, "read_as": window.words, "boosted": window.boosted}


def read_window(facts: dict[str, Any], now: datetime) -> Window | None:
    """The window the time stage understood, named on the user's calendar (`now`'s zone)."""
    found = facts.get("time")
    if found is None:
        return None
    where = now.tzinfo or UTC
    words = window_words(found["start"], found["end"], found["granularity"], where)
    return Window(found["start"], found["end"], words, bool(found.get("boosted")))


def _page_memories(memories: Sequence[Memory], linked: AbstractSet[str]) -> list[str]:
    """The ids a page lists: its entity's memories among those recalled, best first; a memory
    that is one question ("旺财最近还好吗？", asked by the page's person) tells nothing about them
    and is left off the list (it stays in the context), unless the page would be empty."""
    ids = [m.id for m in memories if m.id in linked]
    telling = [m.id for m in memories if m.id in linked and not one_question(m.content)]
    return telling or ids
