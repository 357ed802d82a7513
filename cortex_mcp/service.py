"""The one facade every transport calls: recall, remember, forget, search_debug, ingest, flush,
profile, resources."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

from cortex_mcp import __version__
from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.exporters import (
    ImportReport,
    Progress,
    export_document,
    export_json,
    export_markdown,
    import_parsed,
    input_path,
    mirror_files,
    output_path,
)
from cortex_mcp.engine.flush import Flusher, FlushResult
from cortex_mcp.engine.gate import build_context, small_talk_reason
from cortex_mcp.engine.health import (
    IntegrityWatch,
    embedding_endpoint,
    embedding_health,
    llm_record,
    sqlite_health,
    worst,
)
from cortex_mcp.engine.importers import parse_path, parse_text
from cortex_mcp.engine.indexer import EmbeddingIndexer, FreshVectors
from cortex_mcp.engine.ingest import Ingestor, IngestResult
from cortex_mcp.engine.lifecycle import LifecycleEngine, PhaseCallback, parse_moment
from cortex_mcp.engine.markdown import MirrorWriter
from cortex_mcp.engine.profile import ProfileKeeper, readable
from cortex_mcp.engine.redact import Redactor
from cortex_mcp.engine.report import core_snapshot, debug_report
from cortex_mcp.errors import InvalidInput, NotFound, StorageError
from cortex_mcp.models import (
    Category,
    Clock,
    ForgetResult,
    ForgetStatus,
    Layer,
    LifecycleReport,
    Memory,
    MemoryChanges,
    NewMemory,
    RecallMeta,
    RecallResult,
    RememberResult,
    ScoredMemory,
    SearchFilters,
    to_iso,
)
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.search.fusion import Candidate
from cortex_mcp.search.hybrid import NO_EMBEDDINGS, HybridSearch
from cortex_mcp.store import Database, connector_info
from cortex_mcp.store.counters import Counters
from cortex_mcp.store.exports import ExportStore
from cortex_mcp.store.memories import MemoryStore
from cortex_mcp.store.profiles import ProfileStore
from cortex_mcp.store.relations import RelationStore
from cortex_mcp.store.turns import TurnStore
from cortex_mcp.store.vectors import PendingEmbedding, VectorStore
from cortex_mcp.tokenize import content_hash

log = logging.getLogger(__name__)

_PENDING_PER_RECALL = 8  # memories without a vector embedded along with a recall's query


class CortexService:
    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        memories: MemoryStore,
        vectors: VectorStore,
        search: HybridSearch,
        embeddings: EmbeddingCascade,
        indexer: EmbeddingIndexer | None,
        clock: Clock,
        provider_notes: list[str],
        counters: Counters | None = None,
        lifecycle: LifecycleEngine | None = None,
        exports: ExportStore | None = None,
        mirrors: MirrorWriter | None = None,
        llm: LLMCascade | None = None,
        llm_notes: list[str] | None = None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.memories = memories
        self.vectors = vectors
        self.searcher = search
        self.embeddings = embeddings
        self.indexer = indexer
        self.clock = clock
        self.provider_notes = provider_notes
        self.counters = counters or Counters(db)
        self.redactor = Redactor(self.counters.add)
        self.lifecycle = lifecycle
        self.exports = exports or ExportStore(db)
        self.mirrors = mirrors
        self.llm = llm or LLMCascade([], timeout_s=settings.llm_timeout_s)
        self.llm_notes = llm_notes or []
        self.relations = RelationStore(db)
        self.turns = TurnStore(db, memories)
        self.profiles = ProfileKeeper(
            store=ProfileStore(db),
            memories=memories,
            llm=self.llm,
            redactor=self.redactor,
            clock=clock,
        )
        self.ingestor = Ingestor(
            turns=self.turns,
            memories=memories,
            llm=self.llm,
            profiles=self.profiles,
            redactor=self.redactor,
            clock=clock,
            max_content_chars=settings.max_content_chars,
            on_write=self._memories_written,
            lease=timedelta(
                seconds=settings.llm_timeout_s * 2 * max(1, len(self.llm.providers)) + 60
            ),
        )
        self.flusher = Flusher(
            memories=memories,
            llm=self.llm,
            redactor=self.redactor,
            counters=self.counters,
            clock=clock,
            max_content_chars=settings.max_content_chars,
        )
        self._background: set[asyncio.Task[Any]] = set()
        self._integrity = IntegrityWatch()
        self._warm_started = False

    # ---- tools ----------------------------------------------------------------------------

    async def recall(
        self,
        query: str,
        max_results: int = 5,
        layers: list[str] | None = None,
        categories: list[str] | None = None,
        max_tokens: int = 2000,
        agent_id: str | None = None,
        include_shared: bool | None = None,
    ) -> RecallResult:
        started = time.perf_counter()
        text = validate.query(query)
        limit = validate.int_range("max_results", max_results, 1, 50)
        budget = validate.int_range("max_tokens", max_tokens, 50, 100_000)
        filters = self._filters(agent_id, layers, categories, include_shared)
        reason = small_talk_reason(text)
        if reason is not None:
            meta = RecallMeta(took_ms=_ms_since(started), skipped_reason=reason)
            return RecallResult(context="", memories=[], meta=meta)
        pending = (
            self.indexer.pending_for(filters.agent_id, _PENDING_PER_RECALL) if self.indexer else []
        )
        outcome = await self.searcher.search(
            text, filters, limit, self.clock.now(), pending=pending
        )
        if outcome.fresh and self.indexer is not None:
            self._spawn(self.indexer.save_fresh(FreshVectors(outcome.fresh_model, outcome.fresh)))
        ranked = [c for c in outcome.ranked if c.memory is not None]
        context, kept, tokens = build_context([c.memory for c in ranked if c.memory], budget)
        found = {c.memory_id: c for c in ranked}
        scored = [_scored(memory, found[memory.id]) for memory in kept]
        self._spawn(self._record_access(scored, text))
        meta = RecallMeta(
            took_ms=_ms_since(started),
            degraded=self._degraded(outcome.degraded),
            channels=outcome.channels,
            tokens=tokens,
            timings_ms=outcome.timings_ms,
        )
        if len(text) == 1:
            meta.notes.append("one-character query: matched as a single character")
        return RecallResult(context=context, memories=scored, meta=meta)

    async def remember(
        self,
        content: str,
        category: str = "fact",
        importance: float = 0.7,
        layer: str = "core",
        supersedes: str | None = None,
        source: str | None = None,
        agent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        shared: bool = False,
    ) -> RememberResult:
        content = await self.redactor.clean(
            validate.content(content, self.settings.max_content_chars)
        )
        new = NewMemory(
            agent_id=validate.agent_id(agent_id, self.settings.agent_id),
            content=content,
            category=validate.member("category", category, Category),
            layer=validate.member("layer", layer, Layer),
            importance=validate.unit_interval("importance", importance),
            supersedes=validate.memory_id(supersedes, "supersedes") if supersedes else None,
            source=await self.redactor.clean_optional(
                validate.optional_text("source", source, validate.MAX_SOURCE_CHARS)
            ),
            metadata=metadata or {},
            shared=shared,
        )
        outcome = await self.memories.remember(new, self._now())
        if self.indexer is not None and not outcome.deduplicated:
            self._track(outcome.memory)
        self._mirror()
        return RememberResult(
            id=outcome.memory.id,
            layer=outcome.memory.layer,
            deduplicated=outcome.deduplicated,
            superseded=outcome.superseded,
        )

    async def forget(
        self,
        memory_id: str,
        reason: str | None = None,
        correction: str | None = None,
        purge: bool = False,
        agent_id: str | None = None,
    ) -> ForgetResult:
        target = validate.memory_id(memory_id)
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        reason = validate.optional_text("reason", reason, validate.MAX_REASON_CHARS)
        if purge and correction:
            raise InvalidInput(
                "correction: cannot be combined with purge=true (purge erases, correction keeps)",
                field="correction",
            )
        reason = await self.redactor.clean_optional(reason)
        now = self._now()
        if self.indexer is not None:
            self.indexer.discard(target)
        if purge:
            await self.memories.purge(target, agent, now)
            await self._engine().erase_from_summaries(target)  # no extract of it may remain
            self.searcher.index.mark_dirty()
            self._mirror()
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
            if self.indexer is not None:
                self._track(outcome.memory)
            self._mirror()
            return ForgetResult(id=target, status=ForgetStatus.corrected, new_id=outcome.memory.id)
        await self.memories.forget(target, agent, reason, now)
        self._mirror()
        return ForgetResult(id=target, status=ForgetStatus.forgotten)

    async def ingest(
        self,
        user_message: str,
        assistant_message: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        *,
        wait: bool = True,
    ) -> IngestResult:
        """One conversation turn in: high signals to core, extracted memories to working.
        `wait=False` stores the raw turn durably and returns at once (extraction continues in
        the background; a crash resumes it at the next start)."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        session = _session_id(session_id)
        return await self.ingestor.ingest(
            user_message, assistant_message, agent, session, wait=wait
        )

    async def flush(
        self,
        messages: list[dict[str, Any]],
        agent_id: str | None = None,
        session_id: str | None = None,
        reason: str | None = None,
    ) -> FlushResult:
        """Keep a session's highlights before the client compacts its context."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        outcome = await self.flusher.flush(messages, agent, _session_id(session_id), reason)
        self._memories_written()
        return FlushResult(flushed=outcome.memories, degraded=outcome.degraded)

    async def profile(self, agent_id: str | None = None, refresh: bool = False) -> dict[str, Any]:
        """The user profile (cached; rebuilt by rules when stale, by the LLM on refresh)."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        if refresh:
            profile = await self.profiles.synthesise(agent)
        else:
            profile = await self.profiles.current(agent) or {"agent_id": agent}
        return {**profile, "text": readable(profile)}

    async def edit_profile(
        self, changes: dict[str, Any], agent_id: str | None = None
    ) -> dict[str, Any]:
        """Manual profile edits: kept apart from what is generated and never overwritten."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        profile = await self.profiles.edit(agent, changes)
        return {**profile, "text": readable(profile)}

    async def search_debug(
        self, query: str, max_results: int = 10, agent_id: str | None = None
    ) -> dict[str, Any]:
        text = validate.query(query)
        limit = validate.int_range("max_results", max_results, 1, 50)
        filters = self._filters(agent_id, None, None)
        outcome = await self.searcher.search(text, filters, limit, self.clock.now())
        report = debug_report(outcome, self.settings.search)
        report["small_talk"] = small_talk_reason(text)
        report["degraded"] = self._degraded(outcome.degraded)
        return report

    # ---- lifecycle ------------------------------------------------------------------------

    async def lifecycle_preview(
        self, now: str | None = None, agent_id: str | None = None
    ) -> LifecycleReport:
        agent = validate.agent_id(agent_id, "*") if agent_id else None
        return await self._engine().preview(parse_moment(now), agent)

    async def lifecycle_run(
        self,
        now: str | None = None,
        agent_id: str | None = None,
        on_phase: PhaseCallback | None = None,
    ) -> LifecycleReport:
        agent = validate.agent_id(agent_id, "*") if agent_id else None
        await self.drain()
        return await self._engine().run(parse_moment(now), agent, on_phase)

    async def lifecycle_log(self, limit: int = 100) -> list[dict[str, Any]]:
        return await self._engine().store.log(validate.int_range("limit", limit, 1, 10_000))

    async def after_lifecycle(self) -> None:
        """What a finished run refreshes: vector index, embeddings of new summaries, mirrors."""
        self._changed()

    # ---- import / export ------------------------------------------------------------------

    async def import_path(
        self, path: str, agent_id: str | None = None, progress: Progress | None = None
    ) -> ImportReport:
        """Import files (idempotent; secrets redacted; a bad file imports nothing of itself)."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        target = input_path(path)
        parsed = await asyncio.to_thread(parse_path, target, agent, self.clock.now())
        report = await import_parsed(parsed, self.exports, self.redactor.clean, progress)
        if report.memories or report.relations:
            self._changed()
        return report

    async def export_json(self, out: str, agent_id: str | None = None) -> dict[str, Any]:
        agent = validate.agent_id(agent_id, "*") if agent_id else None
        target = output_path(out)
        lines = await export_json(self.exports, target, agent, self._now())
        return {"format": "json", "path": str(target), "lines": lines}

    async def export_markdown(self, out: str, agent_id: str | None = None) -> dict[str, Any]:
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        target = output_path(out)
        words = self.settings.mirrors.memory_md_words
        written = await export_markdown(self.exports, target, agent, self._now(), words)
        return {"format": "markdown", "path": str(target), "files_written": written}

    async def export_sqlite(self, out: str) -> dict[str, Any]:
        """A consistent copy taken with SQLite's online backup API, writers or not."""
        target = output_path(out, fresh=True)
        await self.exports.backup(target)
        verdict, count = await self.exports.check_copy(target)
        return {"format": "sqlite", "path": str(target), "integrity": verdict, "memories": count}

    async def list_relations(self, agent_id: str | None = None, limit: int = 200) -> dict[str, Any]:
        """The agent's relations (subject, predicate, object), most recently updated first."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        size = validate.int_range("limit", limit, 1, 10_000)
        return {"relations": await self.relations.for_agent(agent, size)}

    async def list_memories(
        self,
        layer: str | None = None,
        category: str | None = None,
        limit: int = 50,
        agent_id: str | None = None,
        offset: int = 0,
        include_shared: bool | None = None,
    ) -> dict[str, Any]:
        """Live memories, newest first: {memories, limit, offset}."""
        limit = validate.int_range("limit", limit, 1, 100_000)
        offset = validate.int_range("offset", offset, 0, 10**9)
        shared = self.settings.include_shared if include_shared is None else include_shared
        rows = await self.exports.list_memories(
            validate.agent_id(agent_id, self.settings.agent_id),
            validate.member("layer", layer, Layer).value if layer else None,
            validate.member("category", category, Category).value if category else None,
            limit,
            offset,
            shared,
        )
        memories = [m.model_dump(mode="json") for m in rows]
        return {"memories": memories, "limit": limit, "offset": offset}

    async def export_memories(
        self, format: str = "json", agent_id: str | None = None
    ) -> dict[str, Any]:
        """An export returned rather than written to a file (REST)."""
        if format == "markdown":
            agent = validate.agent_id(agent_id, self.settings.agent_id)
            words = self.settings.mirrors.memory_md_words
            files = await mirror_files(self.exports, agent, self._now(), words)
            return {"format": "markdown", "files": files}
        agent = validate.agent_id(agent_id, "*") if agent_id else None
        document = await export_document(self.exports, agent, self._now())
        return {"format": "json", "document": json.loads(document)}

    async def import_memories(
        self, content: str, format: str = "json", agent_id: str | None = None
    ) -> dict[str, Any]:
        """Import text given inline (REST): json (our export), markdown (a MEMORY.md) or
        openclaw (one daily note; its date from a leading `# YYYY-MM-DD`, else today)."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        parsed = parse_text(content, format, agent, self.clock.now())
        if parsed.problems:
            raise InvalidInput(f"content: {parsed.problems[0]}", field="content")
        report = await import_parsed(parsed, self.exports, self.redactor.clean)
        if report.memories or report.relations:
            self._changed()
        return report.as_dict()

    def _mirror(self) -> None:
        if self.mirrors is not None:
            self.mirrors.notify()

    def _changed(self) -> None:
        """Bulk changes: vectors to refresh and embed, mirrors to rewrite."""
        self.searcher.index.mark_dirty()
        if self.indexer is not None:
            self.indexer.notify()
        if self.mirrors is not None:
            self.mirrors.notify()

    def _engine(self) -> LifecycleEngine:
        if self.lifecycle is None:
            raise RuntimeError("the lifecycle engine is not configured")
        return self.lifecycle

    async def search(
        self,
        query: str,
        limit: int = 10,
        layers: list[str] | None = None,
        categories: list[str] | None = None,
        agent_id: str | None = None,
        include_shared: bool | None = None,
    ) -> list[ScoredMemory]:
        """Ranked memories for a query, without the recall gate (no small-talk skip, no
        context block, no access counting)."""
        text = validate.query(query)
        size = validate.int_range("limit", limit, 1, 50)
        filters = self._filters(agent_id, layers, categories, include_shared)
        outcome = await self.searcher.search(text, filters, size, self.clock.now())
        return [
            ScoredMemory(**c.memory.model_dump(), score=round(c.final, 6))
            for c in outcome.ranked
            if c.memory is not None
        ]

    async def update_memory(
        self, memory_id: str, changes: MemoryChanges, agent_id: str | None = None
    ) -> Memory:
        target = validate.memory_id(memory_id, "id")
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        if changes.importance is not None:
            validate.unit_interval("importance", changes.importance)
        return await self.memories.update(target, agent, changes, self._now())

    # ---- resources ------------------------------------------------------------------------

    async def memory_detail(self, memory_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """One memory of `agent_id` (default: this server's) with its correction chain and access
        history. Another agent's memory is "not found", exactly like a missing one, unless that
        agent marked it shared and shared recall is on (CORTEX_INCLUDE_SHARED)."""
        await self.drain()
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        target = validate.memory_id(memory_id, "id")
        memory = await self.memories.get(target)
        visible = memory is not None and (
            memory.agent_id == agent or (memory.shared and self.settings.include_shared)
        )
        if memory is None or not visible:
            raise NotFound(f"id: no memory {target} for agent {agent!r}", field="id")
        chain = [m for m in await self.memories.chain(memory) if m.agent_id == memory.agent_id]
        return {
            "memory": memory.model_dump(),
            "correction_chain": [m.model_dump() for m in chain],
            "access_history": await self.memories.access_history(memory.id),
            "relations": await self.relations.for_memory(memory.id),
        }

    async def core_markdown(self, agent_id: str | None = None, max_tokens: int = 2000) -> str:
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        core = await self.memories.list_layer(agent, Layer.core, self._now(), limit=500)
        return core_snapshot(core, max_tokens)

    async def stats(self, agent_id: str | None = None) -> dict[str, Any]:
        """Health and counts; memory counts are the agent's (default: this server's), plus an
        all-agents total (a number, never contents)."""
        agent = validate.agent_id(agent_id, self.settings.agent_id)
        info = connector_info()
        primary = self.embeddings.primary
        return {
            "version": __version__,
            "db_path": str(self.db.path),
            "schema_version": await self.db.schema_version(),
            "sqlite": {
                "driver": info.module,
                "version": info.sqlite_version,
                "fts5": info.fts5,
                "sqlite_vec": self.db.vec_loaded,
            },
            "agent_id": agent,
            "memories": await self.memories.counts(agent),
            "all_agents": {"memories": (await self.memories.counts())["total"]},
            "vectors": await self.vectors.counts(),
            "embedding_cache_rows": await self.vectors.cache_size(),
            "embeddings": {
                "providers": [p.name for p in self.embeddings.providers],
                "model": primary.model_key if primary else None,
                "ready": bool(primary and primary.ready()),
                "failures": dict(self.embeddings.failures),
                "indexer_error": self.indexer.last_error if self.indexer else None,
                "health": self.embeddings.health_report(),
                "indexer": self.indexer.report() if self.indexer else None,
            },
            "degraded": list(self.provider_notes),
            "redactions": await self.counters.read("redacted"),
            "ingest": {
                "turns": await self.turns.counts(),
                "counts": await self.counters.read("ingest"),
                "flush": await self.counters.read("flush"),
                "relations": await self.relations.count(self.settings.agent_id),
            },
            "llm": {
                "providers": self.llm.names,
                "notes": list(self.llm_notes),
                "counts": await self.counters.read("llm"),
                "failures": dict(self.llm.failures),
                "in_flight": self.llm.in_flight,
            },
            "health": await self.health_check(),
        }

    def health(self) -> dict[str, Any]:
        """For liveness probes: no query, no provider call."""
        primary = self.embeddings.primary
        return {
            "status": "ok",
            "version": __version__,
            "db": {"path": str(self.db.path), "open": self.db.is_open},
            "vector": {
                "sqlite_vec": self.db.vec_loaded,
                "model": primary.model_key if primary else None,
            },
            "providers": {
                "embeddings": [p.name for p in self.embeddings.providers],
                "degraded": list(self.provider_notes),
            },
        }

    async def core_version(self) -> tuple[Any, ...]:
        """A value that changes when core memory changes, in this process or another."""
        return await self.memories.core_fingerprint()

    async def change_counter(self) -> tuple[int, int]:
        """Cheap: changes on every commit (ours or another process's); no table read."""
        return self.db.commits, await self.db.data_version()

    async def health_check(self) -> dict[str, Any]:
        """What `cortex-mcp doctor` checks, for this running server: SQLite, the open
        database's integrity, and one real call to each embedding provider (`health` above
        is the cheap liveness answer)."""
        parts = sqlite_health(connector_info())
        parts.append(await self._integrity.health(self.db))
        endpoint = embedding_endpoint(self.settings)
        parts += await embedding_health(self.embeddings, self.provider_notes, endpoint)
        parts += llm_record(self.llm, self.llm_notes)
        return {"status": worst(parts), "parts": [part.as_dict() for part in parts]}

    # ---- housekeeping ---------------------------------------------------------------------

    async def embed_pending(self) -> int:
        """Embed every memory still missing a vector now (tests, benchmarks, CLI)."""
        return await self.indexer.catch_up() if self.indexer is not None else 0

    def start_warm_up(self) -> None:
        """Import provider SDKs and load local models in the background, and let the indexer
        start. Transports call this once the client's `initialize` has been answered."""
        if self._warm_started:
            return
        self._warm_started = True
        self._spawn(self.embeddings.warm_up())
        if self.indexer is not None:
            self.indexer.go()

    async def drain(self) -> None:
        """Wait for background writes (access counts) started by earlier calls."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def resume_ingest(self) -> None:
        """Finish the turns a previous process accepted but did not extract."""
        self._spawn(self._resume())

    async def _resume(self) -> None:
        try:
            resumed = await self.ingestor.resume_pending()
        except Exception:  # recovery must never stop the server; the log says why
            log.exception("resuming pending ingests failed")
            return
        if resumed:
            log.info("resumed %d pending ingest turn(s)", resumed)

    def _memories_written(self) -> None:
        if self.indexer is not None:
            self.indexer.notify()

    async def close(self) -> None:
        await self.ingestor.close(grace_s=self.settings.llm_timeout_s + 1)
        await self.drain()
        if self.mirrors is not None:
            await self.mirrors.close()
        if self.indexer is not None:
            await self.indexer.stop()
        await self.embeddings.close()
        await self.llm.close()

    def _track(self, memory: Memory) -> None:
        if self.indexer is None:
            return
        self.indexer.track(
            memory.agent_id,
            PendingEmbedding(memory.id, memory.content, content_hash(memory.content)),
        )

    def _degraded(self, found: list[str]) -> list[str]:
        """What a search could not use, each fact once: when no provider is configured, the
        start-up note (which says what to set) replaces the search's own line for it."""
        if self.provider_notes and not self.embeddings.providers:
            found = [line for line in found if line != NO_EMBEDDINGS]
        return list(dict.fromkeys([*self.provider_notes, *found]))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _record_access(self, scored: list[ScoredMemory], query: str) -> None:
        try:
            await self.memories.record_access(
                [(m.id, rank) for rank, m in enumerate(scored)], query, self._now()
            )
        except StorageError as exc:  # a full disk: one line, not a traceback per recall
            log.warning("recording access failed: %s", exc.message)
        except Exception:  # an access count must never fail a recall; the log says why
            log.exception("recording access failed")

    async def _require(self, memory_id: str, agent_id: str) -> Any:
        memory = await self.memories.get(memory_id)
        if memory is None or memory.agent_id != agent_id:
            raise NotFound(
                f"memory_id: no memory {memory_id} for agent {agent_id!r}", field="memory_id"
            )
        return memory

    def _filters(
        self,
        agent_id: str | None,
        layers: list[str] | None,
        categories: list[str] | None,
        include_shared: bool | None = None,
    ) -> SearchFilters:
        return SearchFilters(
            agent_id=validate.agent_id(agent_id, self.settings.agent_id),
            layers=validate.members("layers", layers, Layer),
            categories=validate.members("categories", categories, Category),
            now=self._now(),
            include_shared=(
                self.settings.include_shared if include_shared is None else include_shared
            ),
        )

    def _now(self) -> str:
        return to_iso(self.clock.now())


def _scored(kept: Memory, candidate: Candidate) -> ScoredMemory:
    """A memory as a recall returns it: its fields bounded (content cut to the token budget by
    the context builder, an oversized legacy `source` cut to the current limit)."""
    fields = kept.model_dump()
    source = fields["source"]
    if source is not None and len(source) > validate.MAX_SOURCE_CHARS:
        fields["source"] = source[: validate.MAX_SOURCE_CHARS] + "…"
    original = candidate.memory
    truncated = original is not None and original.content != kept.content
    return ScoredMemory(**fields, score=round(candidate.final, 6), truncated=truncated)


def _session_id(value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 128:
        raise InvalidInput("session_id: must be 1 to 128 characters", field="session_id")
    return value.strip()


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
