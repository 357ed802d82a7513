"""Background embedding: new memories, backfill after an outage, and re-indexing after a model
or dimension change. Writes never wait for it; search uses whatever vectors exist.

It embeds with the first provider of the cascade that is usable now, so when the first one is
down and a fallback answers recalls, the fallback's vectors exist too. It survives any fault:
the last error stays in stats and it retries with a doubling backoff (the cascade's circuit
breaker keeps those retries from calling a provider that is cooling down).

It reads what to embed from the embedding queue kept in the store (most-recalled first, then
newest), in batches of the provider's size, with up to the provider's number of requests in
flight. A provider that answers busy (HTTP 429 or 5xx, or too slowly) gets half as many at once
and the loop backs off; clean batches win the concurrency back one request at a time. Nothing
leaves the queue until its vector is saved. A memory a recall found without a vector goes to
the front (`prioritise`).

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
from dataclasses import dataclass, field

import numpy as np

from cortex_mcp.engine.recall.throttle import InFlightLimit
from cortex_mcp.errors import ProviderError, StorageError
from cortex_mcp.models import Clock, to_iso
from cortex_mcp.providers.cascade import EmbeddingCascade, MalformedVectors
from cortex_mcp.providers.embeddings import Embedder, ProviderBusy
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.search.vector_text import vector_text
from cortex_mcp.store.interfaces import VectorStorage
from cortex_mcp.store.vectors import PendingEmbedding

log = logging.getLogger(__name__)

_FIRST_BACKOFF_S = 1.0
_MAX_BACKOFF_S = 60.0
_MAX_TRACKED = 256
_MAX_URGENT = 1024
_DEFAULT_BATCH = 64  # for an embedder that does not say
# After a write, wait this long before embedding: a burst of writes goes in one provider call,
# and the next recall usually embeds the new memory itself (with its query) in the meantime.
_SETTLE_S = 0.25


@dataclass(frozen=True)
class FreshVectors:
    """Vectors a recall computed for pending memories, to be saved by the indexer."""

    model_key: str
    items: list[tuple[PendingEmbedding, np.ndarray]]


@dataclass
class _Fetched:
    """A batch's vectors, from the cache or the provider, not saved yet."""

    pending: list[PendingEmbedding]
    blobs: dict[str, bytes]  # content hash -> vector
    asked: int  # how many the provider was asked for (the rest came from the cache)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)


class EmbeddingIndexer:
    def __init__(
        self,
        cascade: EmbeddingCascade,
        vectors: VectorStorage,
        index: VectorIndex,
        clock: Clock,
        *,
        timeout_s: float,
    ) -> None:
        self.cascade = cascade
        self.vectors = vectors
        self.index = index
        self.clock = clock
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
        self._urgent: OrderedDict[str, None] = OrderedDict()
        self._limits: dict[str, InFlightLimit] = {}
        self._queued_for: str | None = None  # the model the store's queue was last filled for
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

    def prioritise(self, memory_ids: list[str]) -> None:
        """Embed these next (a recall found them without a vector); those that have one by
        then are skipped."""
        for memory_id in reversed(memory_ids):
            self._urgent[memory_id] = None
            self._urgent.move_to_end(memory_id, last=False)
        while len(self._urgent) > _MAX_URGENT:
            self._urgent.popitem()
        if memory_ids:
            self.notify()

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
                wait = min(max(backoff, getattr(exc, "retry_after_s", None) or 0), _MAX_BACKOFF_S)
                self.backoff_s = wait
                if isinstance(exc, ProviderBusy):  # it asked for less: new writes do not hurry it
                    await asyncio.sleep(wait)
                else:
                    with contextlib.suppress(TimeoutError):  # a recovery or a write wakes it early
                        await asyncio.wait_for(self._wake.wait(), wait)
                backoff = min(backoff * 2, _MAX_BACKOFF_S)
                self._wake.set()

    async def catch_up(self, limit: int | None = None) -> int:
        """Embed every memory that has no vector from the usable provider; return how many.

        Raises ProviderError when no provider is usable or a batch failed (after saving the
        batches that did not), so the loop backs off before trying again."""
        done = 0
        while limit is None or done < limit:
            usable = self.cascade.usable()
            if not usable:
                if not self.cascade.providers:
                    return done
                reasons = "; ".join(f"{n}: {e}" for n, e in self.cascade.failures.items())
                raise ProviderError(self._record_error(reasons or "no provider is ready"))
            provider = usable[0]
            if self._queued_for != provider.model_key:  # a new model: old vectors need redoing
                await self.vectors.requeue_other_models(provider.model_key)
                self._queued_for = provider.model_key
            embedded = await self._drain(provider, None if limit is None else limit - done)
            if not embedded:
                break
            done += embedded
        return done

    def limit_for(self, provider: Embedder) -> InFlightLimit:
        limit = self._limits.get(provider.name)
        if limit is None:
            ceiling = max(1, int(getattr(provider, "concurrency", 1)))
            limit = self._limits[provider.name] = InFlightLimit(ceiling)
        return limit

    async def _drain(self, provider: Embedder, limit: int | None) -> int:
        """Keep up to the provider's limit of requests in flight until the queue is empty (or
        `limit` memories are done); raise the first failure once the others have landed.

        A batch frees its request slot when the provider answers: its vectors are saved
        while the next request is already out."""
        requests: dict[asyncio.Task[_Fetched], list[str]] = {}
        saves: dict[asyncio.Task[int], list[str]] = {}
        allowed = self.limit_for(provider)
        done = 0
        failure: BaseException | None = None
        try:
            while True:
                while failure is None and len(requests) < allowed.current:
                    busy = [*requests.values(), *saves.values()]
                    if len(saves) > allowed.current:  # the disk is behind: let it catch up
                        break
                    if limit is not None and done + sum(map(len, busy)) >= limit:
                        break
                    batch = await self._next_batch(provider, {m for ids in busy for m in ids})
                    if not batch:
                        break
                    request = asyncio.create_task(self._fetch(provider, batch))
                    requests[request] = [p.memory_id for p in batch]
                if not requests and not saves:
                    break
                finished, _ = await asyncio.wait(
                    [*requests, *saves], return_when=asyncio.FIRST_COMPLETED
                )
                errors: list[BaseException] = []
                for request in [r for r in requests if r in finished]:
                    ids = requests.pop(request)
                    if (error := request.exception()) is not None:
                        errors.append(error)
                        continue
                    saves[asyncio.create_task(self._store(provider, request.result()))] = ids
                    allowed.clean()
                for save in [s for s in saves if s in finished]:
                    saves.pop(save)
                    if (error := save.exception()) is not None:
                        errors.append(error)
                        continue
                    done += save.result()
                for error in errors:
                    failure = failure or error
                    if isinstance(error, ProviderBusy):
                        self._slow_down(provider, allowed, error)
        finally:
            unfinished = [*requests, *saves]
            for task in unfinished:
                task.cancel()
            await asyncio.gather(*unfinished, return_exceptions=True)
        if failure is not None:
            raise failure
        return done

    async def _next_batch(self, provider: Embedder, skip: set[str]) -> list[PendingEmbedding]:
        """The provider's batch size of memories: those recalls asked for first, then the top
        of the store's queue."""
        size = max(1, int(getattr(provider, "batch_size", _DEFAULT_BATCH)))
        batch: list[PendingEmbedding] = []
        if self._urgent:
            wanted = [m for m in self._urgent if m not in skip][:size]
            for memory_id in wanted:
                self._urgent.pop(memory_id, None)
            batch = await self.vectors.pending_by_ids(provider.model_key, wanted)
        if len(batch) < size:
            taken = skip | {p.memory_id for p in batch}
            batch += await self.vectors.pending(provider.model_key, size - len(batch), taken)
        return batch

    def _slow_down(self, provider: Embedder, allowed: InFlightLimit, error: BaseException) -> None:
        was = allowed.busy()
        if was != allowed.current:
            log.warning(
                "embedding indexer: %s answered busy (%s): %d request(s) in flight from now"
                " on (was %d), retrying after a back-off; no memory is dropped",
                provider.name,
                getattr(error, "message", error),
                allowed.current,
                was,
            )

    async def _fetch(self, provider: Embedder, pending: list[PendingEmbedding]) -> _Fetched:
        """Vectors for a batch: the cached ones, and one provider request for the rest."""
        cached = await self.vectors.cached([p.content_hash for p in pending], provider.model_key)
        todo = [p for p in pending if p.content_hash not in cached]
        fetched = _Fetched(pending, dict(cached), len(todo))
        if not todo:
            return fetched
        started = time.perf_counter()
        timeout = self.timeout_s * max(1, len(todo) // 16)
        try:
            result = await self.cascade.embed_with(
                provider, [vector_text(p.content) for p in todo], timeout_s=timeout
            )
        except ProviderError as exc:
            if isinstance(exc, MalformedVectors):
                self.rejected += exc.rejected
            self._record_error(f"{provider.name}: {exc.message}")
            raise
        log.debug("embedded %d in %.0f ms", len(todo), (time.perf_counter() - started) * 1000)
        for p, row, ok in zip(todo, result.vectors, result.ok, strict=True):
            if ok:
                fetched.blobs[p.content_hash] = row.tobytes()
        fetched.rejected, fetched.problems = int((~result.ok).sum()), result.problems
        return fetched

    async def _store(self, provider: Embedder, fetched: _Fetched) -> int:
        """Save a batch's vectors; raise ProviderError (after saving) if some were malformed."""
        pending, blobs = fetched.pending, fetched.blobs
        self.cache_hits += len(pending) - fetched.asked
        items = [(p, blobs[p.content_hash]) for p in pending if p.content_hash in blobs]
        dim = len(items[0][1]) // 4 if items else 0
        saved = await self.vectors.save(items, provider.model_key, dim, to_iso(self.clock.now()))
        self.index.mark_dirty()
        self.embedded += saved
        for p, _ in items:
            self.discard(p.memory_id)
        if fetched.rejected:
            self.rejected += fetched.rejected
            raise ProviderError(
                self._record_error(
                    f"{provider.name}: rejected {fetched.rejected} malformed vectors"
                    f" ({', '.join(fetched.problems)})"
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
            "requests_in_flight_limit": {
                name: limit.current for name, limit in self._limits.items()
            },
        }
