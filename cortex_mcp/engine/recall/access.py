"""Access counts a recall leaves behind, written in batches: one transaction per interval for
every recall in it, never one per recall (under load they queued in front of remembers)."""

from __future__ import annotations

import asyncio
import logging

from cortex_mcp.errors import StorageError
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.memories import Accesses

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 1.0
_MAX_PENDING = 10_000  # recalls kept while the disk refuses writes; the oldest go first


class AccessBatcher:
    """Collects recalls' hits in memory and writes them `interval_s` after the first one
    arrived, on `flush()` (a reader that needs them now) and on `close()`. What a SIGKILL
    loses is at most the last interval's counts; a clean shutdown loses none."""

    def __init__(self, memories: MemoryStorage, interval_s: float = FLUSH_INTERVAL_S) -> None:
        self.memories = memories
        self.interval_s = interval_s
        self._pending: list[Accesses] = []
        self._timer: asyncio.Task[None] | None = None
        self._flushing = asyncio.Lock()
        self.last_error: str | None = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    def record(self, hits: list[tuple[str, int]], query: str, now: str) -> None:
        if not hits:
            return
        self._pending.append(Accesses(hits, query, now))
        if len(self._pending) > _MAX_PENDING:
            del self._pending[: len(self._pending) - _MAX_PENDING]
        if self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._flush_later(), name="access-counts")

    async def flush(self) -> None:
        """Write everything recorded so far (one transaction)."""
        async with self._flushing:
            batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                await self.memories.record_accesses(batch)
            except StorageError as exc:  # a full disk: keep them for the next recall, one line
                self._pending[:0] = batch
                self.last_error = exc.message
                log.warning("recording access failed: %s", exc.message)
                return
            except Exception as exc:  # an access count must never fail a recall; the log says why
                self.last_error = str(exc)
                log.exception("recording access failed")
                return
            self.last_error = None

    async def close(self) -> None:
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
            await asyncio.gather(self._timer, return_exceptions=True)
        self._timer = None
        await self.flush()

    async def _flush_later(self) -> None:
        self.last_error = None
        # what arrived during a flush waits for the next interval; a failure waits for a recall
        while self._pending and self.last_error is None:
            await asyncio.sleep(self.interval_s)
            await self.flush()
