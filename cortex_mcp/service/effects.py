"""What the services set in motion besides their answer: background tasks a call starts and
waits for on `drain`, and what a write refreshes (the vector index, the embedding backlog, the
Markdown mirrors). Both are built once by the composition root and handed to every service that
writes, so that no service reaches into another's state."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from cortex_mcp.engine.entities.linker import EntityLinker
from cortex_mcp.engine.exchange.markdown import MirrorWriter
from cortex_mcp.engine.recall.access import AccessBatcher
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer
from cortex_mcp.models import Memory
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.vectors import PendingEmbedding
from cortex_mcp.tokenize import content_hash


class Background:
    """Tasks started by a call that its caller does not wait for (a recall's fresh vectors, the
    resume of pending ingests), the links of memories just written and the access counts
    recalls leave; `drain` waits for them all."""

    def __init__(self, access: AccessBatcher, linker: EntityLinker) -> None:
        self.access = access
        self.linker = linker
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for the tasks started so far, and write the access counts recalls have left."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self.linker.drain()
        await self.access.flush()


class Refresher:
    """What a write refreshes: the new memory queued for embedding, the vector index marked
    stale after bulk changes, the Markdown mirrors rewritten (debounced)."""

    def __init__(
        self,
        index: VectorIndex,
        indexer: EmbeddingIndexer | None,
        mirrors: MirrorWriter | None,
    ) -> None:
        self.index = index
        self.indexer = indexer
        self.mirrors = mirrors

    def track(self, memory: Memory) -> None:
        """Queue one new memory for embedding ahead of the backlog scan."""
        if self.indexer is not None:
            pending = PendingEmbedding(memory.id, memory.content, content_hash(memory.content))
            self.indexer.track(memory.agent_id, pending)

    def discard(self, memory_id: str) -> None:
        if self.indexer is not None:
            self.indexer.discard(memory_id)

    def written(self) -> None:
        """Memories were written by an engine (ingest, flush): wake the indexer."""
        if self.indexer is not None:
            self.indexer.notify()

    def mirror(self) -> None:
        if self.mirrors is not None:
            self.mirrors.notify()

    def bulk_changed(self) -> None:
        """Many memories changed (import, lifecycle, restore, purge): vectors to refresh and
        embed, mirrors to rewrite."""
        self.index.mark_dirty()
        self.written()
        self.mirror()

    async def after_lifecycle(self) -> None:
        """The lifecycle engine's `after_run` hook."""
        self.bulk_changed()
