"""The facade's shared state: the stores, engines and providers it was built with, background
tasks, and the small helpers every capability group uses."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.exchange.markdown import MirrorWriter
from cortex_mcp.engine.health import IntegrityWatch
from cortex_mcp.engine.ingest.flush import Flusher
from cortex_mcp.engine.ingest.pipeline import Ingestor
from cortex_mcp.engine.ingest.profile import ProfileKeeper
from cortex_mcp.engine.lifecycle.runner import LifecycleEngine
from cortex_mcp.engine.recall.access import AccessBatcher
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer
from cortex_mcp.engine.recall.latency import LatencyWindow
from cortex_mcp.engine.redact import Redactor
from cortex_mcp.models import (
    Category,
    Clock,
    Layer,
    Memory,
    SearchFilters,
    to_iso,
)
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.search.hybrid import HybridSearch
from cortex_mcp.service.reading import MemoryReading
from cortex_mcp.store import Database
from cortex_mcp.store.backend import store_classes
from cortex_mcp.store.counters import Counters
from cortex_mcp.store.exports import ExportStore
from cortex_mcp.store.memories import MemoryStore
from cortex_mcp.store.vectors import PendingEmbedding, VectorStore
from cortex_mcp.tokenize import content_hash

log = logging.getLogger(__name__)


class ServiceCore(MemoryReading):
    """What every capability group shares, and the reads of stored memories."""

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
        stores = store_classes(db)  # SQLite's or PostgreSQL's, as the composition root opened
        super().__init__(
            settings=settings,
            memories=memories,
            exports=exports or stores.exports(db),
            relations=stores.relations(db),
        )
        self.db = db
        self.vectors = vectors
        self.searcher = search
        self.embeddings = embeddings
        self.indexer = indexer
        self.clock = clock
        self.provider_notes = provider_notes
        self.counters = counters or stores.counters(db)
        self.redactor = Redactor(self.counters.add)
        self.lifecycle = lifecycle
        self.mirrors = mirrors
        self.llm = llm or LLMCascade([], timeout_s=settings.llm_timeout_s)
        self.llm_notes = llm_notes or []
        self.turns = stores.turns(db, memories)
        self.profiles = ProfileKeeper(
            store=stores.profiles(db),
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
            embeddings=embeddings,
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
        self.recall_latency = LatencyWindow()  # the dashboard's p50/p95/p99
        self.access = AccessBatcher(memories)
        self._warm_started = False

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
        """Wait for background writes started by earlier calls, and write the access counts
        recalls have left so far."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        await self.access.flush()

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
        await self.access.close()
        if self.mirrors is not None:
            await self.mirrors.close()
        if self.indexer is not None:
            await self.indexer.stop()
        await self.embeddings.close()
        await self.llm.close()

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

    def _track(self, memory: Memory) -> None:
        if self.indexer is None:
            return
        self.indexer.track(
            memory.agent_id,
            PendingEmbedding(memory.id, memory.content, content_hash(memory.content)),
        )

    def _degraded(self, found: list[str]) -> list[str]:
        """What a search could not use, each fact once and short ("no embedding provider: text
        search only"). What to set to fix it is for the person running the server: doctor,
        stats and the MCP server's instructions say it, not every recall a model reads."""
        return list(dict.fromkeys(found))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

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
