"""Background embedding: new memories, backfill after an outage, and re-indexing after a model
or dimension change. Writes never wait for it; search uses whatever vectors exist."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import numpy as np

from cortex_mcp.errors import ProviderError
from cortex_mcp.models import Clock, to_iso
from cortex_mcp.providers.embeddings import Embedder
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.vectors import PendingEmbedding, VectorStore

log = logging.getLogger(__name__)

_MAX_BACKOFF_S = 60.0


class EmbeddingIndexer:
    def __init__(
        self,
        embedder: Embedder,
        vectors: VectorStore,
        index: VectorIndex,
        clock: Clock,
        *,
        batch_size: int,
        timeout_s: float,
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.index = index
        self.clock = clock
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.last_error: str | None = None
        self.embedded = 0
        self.cache_hits = 0
        self.start_delay_s = 2.0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="cortex-embedding-indexer")
            self._wake.set()

    def notify(self) -> None:
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        # let the transport answer `initialize` before the first provider import and call
        await asyncio.sleep(self.start_delay_s)
        backoff = 1.0
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.catch_up()
                backoff = 1.0
            except ProviderError:
                await asyncio.sleep(backoff)  # provider down: retry later, writes go on
                backoff = min(backoff * 2, _MAX_BACKOFF_S)
                self._wake.set()

    async def catch_up(self, limit: int | None = None) -> int:
        """Embed every memory that has no vector from the current model; return how many."""
        done = 0
        while limit is None or done < limit:
            pending = await self.vectors.missing(self.embedder.model_key, self.batch_size)
            if not pending:
                break
            done += await self._embed_batch(pending)
        return done

    async def _embed_batch(self, pending: list[PendingEmbedding]) -> int:
        model = self.embedder.model_key
        cached = await self.vectors.cached([p.content_hash for p in pending], model)
        todo = [p for p in pending if p.content_hash not in cached]
        blobs = dict(cached)
        if todo:
            if not self.embedder.ready():
                raise ProviderError(f"{self.embedder.name} is not ready")
            started = time.perf_counter()
            try:
                matrix = await asyncio.wait_for(
                    self.embedder.embed([p.content for p in todo]),
                    self.timeout_s * max(1, len(todo) // 16),
                )
            except (ProviderError, TimeoutError) as exc:
                self.last_error = str(exc) or "timed out"
                log.warning("embedding %d memories failed: %s", len(todo), self.last_error)
                raise ProviderError(self.last_error) from exc
            log.debug("embedded %d in %.0f ms", len(todo), (time.perf_counter() - started) * 1000)
            for p, row in zip(todo, np.asarray(matrix, dtype=np.float32), strict=True):
                blobs[p.content_hash] = row.tobytes()
        self.cache_hits += len(pending) - len(todo)
        dim = len(next(iter(blobs.values()))) // 4
        items = [(p, blobs[p.content_hash]) for p in pending]
        saved = await self.vectors.save(items, model, dim, to_iso(self.clock.now()))
        self.index.mark_dirty()
        self.embedded += saved
        self.last_error = None
        return max(saved, 1)  # a memory purged meanwhile must not stall the loop
