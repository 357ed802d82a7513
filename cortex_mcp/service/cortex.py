"""`CortexService`: the services, one per noun, that every transport calls, and the
housekeeping of the whole (warm-up, drain, close). It is built by the composition root
(`cortex_mcp.runtime.open_cortex`) from parts built there; it builds nothing itself."""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, replace

from cortex_mcp.config import Settings
from cortex_mcp.engine.beliefs.reflect import Reflector
from cortex_mcp.engine.entities import given_names
from cortex_mcp.engine.entities.linker import EntityLinker
from cortex_mcp.engine.exchange.markdown import MirrorWriter
from cortex_mcp.engine.ingest.flush import Flusher
from cortex_mcp.engine.ingest.pipeline import Ingestor
from cortex_mcp.engine.ingest.profile import ProfileKeeper
from cortex_mcp.engine.lifecycle.runner import LifecycleEngine
from cortex_mcp.engine.recall.access import AccessBatcher
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer
from cortex_mcp.engine.recall.latency import LatencyWindow
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.models import ACTING, LOCAL, Caller
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.providers.rerank import GuardedReranker
from cortex_mcp.search.hybrid import HybridSearch
from cortex_mcp.service.browse import BrowseService
from cortex_mcp.service.config import ConfigService
from cortex_mcp.service.conversation import ConversationService
from cortex_mcp.service.effects import Background, Refresher
from cortex_mcp.service.entities import EntityService
from cortex_mcp.service.exchange import ExchangeService
from cortex_mcp.service.lifecycle import LifecycleService
from cortex_mcp.service.memories import MemoryService
from cortex_mcp.service.reading import MemoryReading
from cortex_mcp.service.relations import RelationService
from cortex_mcp.service.status import StatusService
from cortex_mcp.service.tokens import TokenService
from cortex_mcp.store.backend import Stores

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Engines:
    """The engines and providers the services share, as the composition root built them."""

    linker: EntityLinker
    searcher: HybridSearch
    embeddings: EmbeddingCascade
    reranker: GuardedReranker | None
    indexer: EmbeddingIndexer | None
    llm: LLMCascade
    lifecycle: LifecycleEngine
    reflector: Reflector  # the lifecycle's reflect step, and reflect on its own
    ingestor: Ingestor
    flusher: Flusher
    profiles: ProfileKeeper
    redactor: Redactor
    access: AccessBatcher
    latency: LatencyWindow
    mirrors: MirrorWriter | None
    refresher: Refresher
    background: Background
    provider_notes: list[str]
    llm_notes: list[str]


@dataclass(frozen=True)
class Services:
    """One service per noun."""

    memories: MemoryService
    reading: MemoryReading
    conversation: ConversationService
    lifecycle: LifecycleService
    exchange: ExchangeService
    relations: RelationService
    browse: BrowseService
    status: StatusService
    tokens: TokenService
    entities: EntityService
    config: ConfigService


class CortexService:
    """What transports hold: `memories` (recall, remember, forget, search), `reading` (the
    listing, one memory), `conversation` (ingest, flush, profile), `lifecycle`, `exchange`
    (import, export), `relations`, `browse` (the dashboard's reads and edits) and `status`
    (stats, health), `entities` (who memories are about, and the verbs that mend them);
    `stores` and `engines` are the parts they were built from."""

    def __init__(
        self,
        *,
        settings: Settings,
        stores: Stores,
        engines: Engines,
        services: Services,
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.engines = engines
        self.memories = services.memories
        self.reading = services.reading
        self.conversation = services.conversation
        self.lifecycle = services.lifecycle
        self.exchange = services.exchange
        self.relations = services.relations
        self.browse = services.browse
        self.status = services.status
        self.tokens = services.tokens
        self.entities = services.entities
        self.config = services.config
        self.background = engines.background
        self.refresher = engines.refresher
        self.caller: Caller = LOCAL
        self._warm_started = False

    def acting_for(self, caller: Caller) -> CortexService:
        """The same services, each acting for `caller`: an agent token's caller reads and
        writes its own agent only (naming another is refused, service by service). Cheap: a
        shallow copy of each service, built per request by the transports. What the request
        writes into the lifecycle log records this caller as who acted (models.ACTING)."""
        ACTING.set(caller)
        if caller == self.caller:
            return self
        reading = copy.copy(self.reading)
        reading.caller = caller
        memories = replace(self.memories, caller=caller)
        status = replace(self.status, caller=caller)
        scoped = copy.copy(self)
        scoped.caller = caller
        scoped.reading = reading
        scoped.memories = memories
        scoped.status = status
        scoped.conversation = replace(self.conversation, caller=caller)
        scoped.lifecycle = replace(self.lifecycle, caller=caller)
        scoped.exchange = replace(self.exchange, caller=caller)
        scoped.relations = replace(self.relations, caller=caller)
        scoped.tokens = replace(self.tokens, caller=caller)
        scoped.entities = replace(self.entities, caller=caller)
        scoped.config = replace(self.config, caller=caller)
        scoped.browse = replace(
            self.browse, caller=caller, reading=reading, memories=memories, status=status
        )
        return scoped

    async def embed_pending(self) -> int:
        """Embed every memory still missing a vector now (tests, benchmarks, CLI)."""
        indexer = self.engines.indexer
        return await indexer.catch_up() if indexer is not None else 0

    def start_warm_up(self) -> None:
        """Import provider SDKs and load local models in the background, and let the indexer
        start. Transports call this once the client's `initialize` has been answered."""
        if self._warm_started:
            return
        self._warm_started = True
        self.background.spawn(self.engines.embeddings.warm_up())
        self.background.spawn(asyncio.to_thread(given_names.warm))
        if self.engines.indexer is not None:
            self.engines.indexer.go()

    async def drain(self) -> None:
        """Wait for background writes started by earlier calls, and write the access counts
        recalls have left so far."""
        await self.background.drain()

    def resume_ingest(self) -> None:
        """Finish the turns a previous process accepted but did not extract."""
        self.background.spawn(self._resume())

    async def _resume(self) -> None:
        try:
            resumed = await self.engines.ingestor.resume_pending()
        except Exception:  # recovery must never stop the server; the log says why
            log.exception("resuming pending ingests failed")
            return
        if resumed:
            log.info("resumed %d pending ingest turn(s)", resumed)

    async def close(self) -> None:
        engines = self.engines
        await engines.ingestor.close(grace_s=self.settings.llm_timeout_s + 1)
        await self.drain()
        await engines.access.close()
        if engines.mirrors is not None:
            await engines.mirrors.close()
        if engines.indexer is not None:
            await engines.indexer.stop()
        await engines.embeddings.close()
        await engines.llm.close()
        if engines.reranker is not None:
            await engines.reranker.close()
