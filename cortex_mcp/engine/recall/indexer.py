"""Background embedding: new memories, backfill after an outage, and re-indexing after a model
or dimension change. Writes never wait for it; search uses whatever vectors exist.

It embeds with the first provider of the cascade that is usable now, so when the first one is
down and a fallback answers recalls, the fallback's vectors exist too. It survives any fault:
the last error stays in stats and it retries with a doubling backoff (the cascade's circuit
breaker keeps those retries from calling a provider that is cooling down).

It also remembers, in this process, which memories were just written and have no vector yet:
a recall embeds the few of its agent together with its query (one provider call) and hands the
vectors back here to be saved, so a memory is found by meaning in the very next recall.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from cortex_mcp.errors import ProviderError, StorageError
from cortex_mcp.models import Clock, to_iso
from cortex_mcp.providers.cascade import EmbeddingCascade, MalformedVectors
from cortex_mcp.providers.embeddings import Embedder
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.vectors import PendingEmbedding, VectorStore

log = logging.getLogger(__name__)

_FIRST_BACKOFF_S = 1.0
_MAX_BACKOFF_S = 60.0
_MAX_TRACKED = 256
# After a write, wait this long before embedding: a burst of writes goes in one provider call,
# and the next recall usually embeds the new memory itself (with its query) in the meantime.
_SETTLE_S = 0.25


@dataclass(frozen=True)
class FreshVectors:
    """Vectors a recall computed for pending memories, to be saved by the indexer."""

    model_key: str
    items: list[tuple[PendingEmbedding, np.ndarray]]


class EmbeddingIndexer:
    def __init__(
        self,
        cascade: EmbeddingCascade,
        vectors: VectorStore,
        index: VectorIndex,
        clock: Clock,
        *,
        batch_size: int,
        timeout_s: float,
    ) -> None:
        self.cascade = cascade
        self.vectors = vectors
        self.index = index
        self.clock = clock
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.last_error: str | None = None
        self.last_error_at: str | None = None
        self.embedded = 0
        self.cache_hits = 0
        self.rejected = 0
        self.backoff_s = 0.0
        self.start_delay_s = 2.0
        self.settle_s = _SETTLE_S
        self._wake = asyncio.Event()
        self._go = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tracked: OrderedDict[str, tuple[str, PendingEmbedding]] = OrderedDict()
        cascade.on_recover.append(self.notify)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="cortex-embedding-indexer")
            self._wake.set()

    def go(self) -> None:
        """Start work now instead of after `start_delay_s` (the transport has answered)."""
        self._go.set()

    def notify(self) -> None:
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None

    # ---- memories written in this process and not embedded yet --------------------------

    def track(self, agent_id: str, pending: PendingEmbedding) -> None:
        self._tracked[pending.memory_id] = (agent_id, pending)
        self._tracked.move_to_end(pending.memory_id)
        while len(self._tracked) > _MAX_TRACKED:  # the backfill finds the rest in the store
            self._tracked.popitem(last=False)
        self.notify()

    def discard(self, memory_id: str) -> None:
        self._tracked.pop(memory_id, None)

    def pending_for(self, agent_id: str, limit: int) -> list[PendingEmbedding]:
        """The newest memories of `agent_id` written here that have no vector yet."""
        found: list[PendingEmbedding] = []
        for agent, pending in reversed(self._tracked.values()):
            if agent == agent_id:
                found.append(pending)
                if len(found) >= limit:
                    break
        return found

    async def save_fresh(self, fresh: FreshVectors) -> None:
        """Save vectors a recall computed; never raises (the backfill retries what fails)."""
        try:
            items = [(p, np.asarray(v, dtype=np.float32).tobytes()) for p, v in fresh.items]
            dim = int(fresh.items[0][1].shape[0])
            await self.vectors.save(items, fresh.model_key, dim, to_iso(self.clock.now()))
            self.index.mark_dirty()
            self.embedded += len(items)
            for pending, _ in fresh.items:
                self.discard(pending.memory_id)
        except Exception as exc:
            log.warning("saving %d vectors from a recall failed: %s", len(fresh.items), exc)

    # ---- the background loop -------------------------------------------------------------

    async def _run(self) -> None:
        # let the transport answer `initialize` before the first provider import and call
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._go.wait(), self.start_delay_s)
        await self.cascade.warm_up()
        backoff = _FIRST_BACKOFF_S
        while True:
            await self._wake.wait()
            await asyncio.sleep(self.settle_s)
            self._wake.clear()
            try:
                await self.catch_up()
                backoff, self.backoff_s = _FIRST_BACKOFF_S, 0.0
            except Exception as exc:  # the indexer must survive anything; stats say why
                if isinstance(exc, StorageError):  # disk full, read-only: one line says it
                    log.warning("embedding indexer could not save vectors: %s", exc.message)
                    self._record_error(exc.message)
                elif not isinstance(exc, ProviderError):
                    log.exception("embedding indexer failed")
                    self._record_error(f"{type(exc).__name__}: {exc}")
                self.backoff_s = backoff
                with contextlib.suppress(TimeoutError):  # a recovery or a write wakes it early
                    await asyncio.wait_for(self._wake.wait(), backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF_S)
                self._wake.set()

    async def catch_up(self, limit: int | None = None) -> int:
        """Embed every memory that has no vector from the usable provider; return how many.

        Raises ProviderError when no provider is usable or some vectors were rejected (after
        saving the good ones), so the loop backs off before trying again."""
        done = 0
        while limit is None or done < limit:
            usable = self.cascade.usable()
            if not usable:
                if not self.cascade.providers:
                    return done
                reasons = "; ".join(f"{n}: {e}" for n, e in self.cascade.failures.items())
                raise ProviderError(self._record_error(reasons or "no provider is ready"))
            provider = usable[0]
            pending = await self.vectors.missing(provider.model_key, self.batch_size)
            if not pending:
                break
            done += await self._embed_batch(provider, pending)
        return done

    async def _embed_batch(self, provider: Embedder, pending: list[PendingEmbedding]) -> int:
        model = provider.model_key
        cached = await self.vectors.cached([p.content_hash for p in pending], model)
        todo = [p for p in pending if p.content_hash not in cached]
        blobs = dict(cached)
        rejected = 0
        if todo:
            started = time.perf_counter()
            timeout = self.timeout_s * max(1, len(todo) // 16)
            try:
                result = await self.cascade.embed_with(
                    provider, [p.content for p in todo], timeout_s=timeout
                )
            except ProviderError as exc:
                if isinstance(exc, MalformedVectors):
                    self.rejected += exc.rejected
                self._record_error(f"{provider.name}: {exc.message}")
                raise
            log.debug("embedded %d in %.0f ms", len(todo), (time.perf_counter() - started) * 1000)
            for p, row, ok in zip(todo, result.vectors, result.ok, strict=True):
                if ok:
                    blobs[p.content_hash] = row.tobytes()
            rejected = int((~result.ok).sum())
        self.cache_hits += len(pending) - len(todo)
        items = [(p, blobs[p.content_hash]) for p in pending if p.content_hash in blobs]
        dim = len(items[0][1]) // 4 if items else 0
        saved = await self.vectors.save(items, model, dim, to_iso(self.clock.now()))
        self.index.mark_dirty()
        self.embedded += saved
        for p, _ in items:
            self.discard(p.memory_id)
        if rejected:
            self.rejected += rejected
            raise ProviderError(
                self._record_error(
                    f"{provider.name}: rejected {rejected} malformed vectors"
                    f" ({', '.join(result.problems)})"
                )
            )
        self.last_error = None
        return max(saved, 1)  # a memory purged meanwhile must not stall the loop

    def _record_error(self, message: str) -> str:
        self.last_error = message
        self.last_error_at = to_iso(self.clock.now())
        log.warning("embedding indexer: %s", message)
        return message

    def report(self) -> dict[str, object]:
        return {
            "running": self._task is not None and not self._task.done(),
            "embedded": self.embedded,
            "cache_hits": self.cache_hits,
            "rejected_vectors": self.rejected,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "retry_backoff_s": self.backoff_s,
            "tracked_pending": len(self._tracked),
        }
