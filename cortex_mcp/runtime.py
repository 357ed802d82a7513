"""The composition root: the one place that builds the store, providers and service."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from cortex_mcp.config import LOCAL_RERANK_MODEL, Settings
from cortex_mcp.config_live import LiveSettings
from cortex_mcp.engine.beliefs.keeper import BeliefKeeper, bank_beliefs
from cortex_mcp.engine.beliefs.reflect import Reflector
from cortex_mcp.engine.beliefs.validity import ValidityKeeper
from cortex_mcp.engine.entities.given_names import other_forms
from cortex_mcp.engine.entities.linker import EntityLinker
from cortex_mcp.engine.entities.mentions import query_entities
from cortex_mcp.engine.exchange.exporters import mirror_files
from cortex_mcp.engine.exchange.markdown import MirrorWriter
from cortex_mcp.engine.ingest.flush import Flusher
from cortex_mcp.engine.ingest.pipeline import Ingestor
from cortex_mcp.engine.ingest.profile import ProfileKeeper
from cortex_mcp.engine.lifecycle.runner import CascadeTextModel, LifecycleEngine
from cortex_mcp.engine.lifecycle.schedule import LifecycleScheduler
from cortex_mcp.engine.recall.access import AccessBatcher
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer
from cortex_mcp.engine.recall.latency import LatencyWindow
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import CortexError
from cortex_mcp.models import Clock, SystemClock, to_iso
from cortex_mcp.preflight import openai_key as _openai_key
from cortex_mcp.preflight import resolve_embedding_providers
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.embeddings import (
    HUB_URL,
    LOCAL_DEFAULT_MODEL,
    OPENAI_DEFAULT_MODEL,
    Embedder,
    LocalEmbedder,
    OpenAIEmbedder,
)
from cortex_mcp.providers.llm import (
    ANTHROPIC_DEFAULT_MODEL,
    AnthropicMessages,
    LLMCascade,
    LLMProvider,
    OpenAIChat,
)
from cortex_mcp.providers.llm import OPENAI_DEFAULT_MODEL as OPENAI_CHAT_DEFAULT
from cortex_mcp.providers.rerank import GuardedReranker, HttpReranker, LocalReranker, Reranker
from cortex_mcp.reader import build_reading, build_tokens, layer_ttl, open_stores
from cortex_mcp.search.hybrid import HybridSearch
from cortex_mcp.search.pgvector import PgVectorIndex
from cortex_mcp.search.saved_index import index_dir as saved_index_dir
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.service.browse import BrowseService
from cortex_mcp.service.config import ConfigService
from cortex_mcp.service.conversation import ConversationService
from cortex_mcp.service.cortex import CortexService, Engines, Services
from cortex_mcp.service.effects import Background, Refresher
from cortex_mcp.service.entities import EntityService
from cortex_mcp.service.exchange import ExchangeService
from cortex_mcp.service.lifecycle import LifecycleService
from cortex_mcp.service.memories import MemoryService
from cortex_mcp.service.relations import RelationService
from cortex_mcp.service.status import StatusService
from cortex_mcp.store.backend import Stores, uses_postgres
from cortex_mcp.zones import zone

log = logging.getLogger(__name__)


def _llm_key(settings: Settings, variable: str) -> str | None:
    """CORTEX_LLM_API_KEY, else the provider's own variable (OPENAI_API_KEY, ANTHROPIC_API_KEY)."""
    if settings.llm_api_key is not None:
        return settings.llm_api_key.get_secret_value()
    return os.environ.get(variable)


def resolve_llm_providers(settings: Settings) -> list[str]:
    """The LLM cascade `settings` select (used by ingest; reported by doctor)."""
    return _llm_choice(settings)[0]


def _llm_choice(settings: Settings) -> tuple[list[str], list[str]]:
    chosen: list[str] = []
    notes: list[str] = []
    openai_usable = bool(_llm_key(settings, "OPENAI_API_KEY") or settings.llm_base_url)
    anthropic_usable = bool(
        _llm_key(settings, "ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL")
    )
    for name in settings.llm_provider.split(","):
        if name == "auto":
            if openai_usable:
                chosen.append("openai")
            elif anthropic_usable:
                chosen.append("anthropic")
            else:
                notes.append(
                    "no LLM provider (set CORTEX_LLM_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY"
                    " or CORTEX_LLM_BASE_URL): ingest uses rules and keeps raw turns"
                )
        elif name == "openai" and not openai_usable:
            notes.append(
                "LLM provider openai: no CORTEX_LLM_API_KEY, OPENAI_API_KEY or CORTEX_LLM_BASE_URL"
            )
        elif name == "anthropic" and not anthropic_usable:
            notes.append("LLM provider anthropic: no CORTEX_LLM_API_KEY or ANTHROPIC_API_KEY")
        elif name != "none":
            chosen.append(name)
    return list(dict.fromkeys(chosen)), notes


def build_llm(settings: Settings) -> tuple[LLMCascade, list[str]]:
    """The extraction cascade. CORTEX_LLM_MODEL may be a comma list, one model per provider
    in order; a provider without one uses its default."""
    names, notes = _llm_choice(settings)
    models = [m.strip() for m in (settings.llm_model or "").split(",") if m.strip()]
    providers: list[LLMProvider] = []
    for index, name in enumerate(names):
        model = models[index] if index < len(models) else None
        if name == "openai":
            providers.append(
                OpenAIChat(
                    model=model or OPENAI_CHAT_DEFAULT,
                    api_key=_llm_key(settings, "OPENAI_API_KEY"),
                    base_url=settings.llm_base_url,
                    timeout_s=settings.llm_timeout_s,
                )
            )
        elif name == "anthropic":
            providers.append(
                AnthropicMessages(
                    model=model or ANTHROPIC_DEFAULT_MODEL,
                    api_key=_llm_key(settings, "ANTHROPIC_API_KEY") or "not-needed",
                    timeout_s=settings.llm_timeout_s,
                )
            )
    cascade = LLMCascade(
        providers, timeout_s=settings.llm_timeout_s, max_in_flight=settings.llm_max_in_flight
    )
    return cascade, notes


def _model_hub() -> str | None:
    """Where fastembed fetches a local model (huggingface_hub's own variables): None offline."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "TRUE", "YES", "ON"):
        return None
    return os.environ.get("HF_ENDPOINT") or HUB_URL


def build_embedders(
    settings: Settings, names: list[str], *, download: bool = True
) -> list[Embedder]:
    """The embedding providers `names`; `download=False` (doctor) lets a local model be
    reported but never fetched, so nothing is written."""
    embedders: list[Embedder] = []
    for name in names:
        if name == "openai":
            embedders.append(
                OpenAIEmbedder(
                    model=settings.embedding_model or OPENAI_DEFAULT_MODEL,
                    api_key=_openai_key(settings),
                    base_url=settings.embedding_base_url,
                    dimensions=settings.embedding_dimensions,
                    timeout_s=settings.embedding_timeout_s,
                    batch_size=settings.embedding_batch_size,
                    concurrency=settings.embedding_concurrency,
                )
            )
        elif name == "local":
            local = LocalEmbedder(
                model=settings.embedding_model or LOCAL_DEFAULT_MODEL,
                cache_dir=settings.models_dir,
                model_path=settings.embedding_model_path,
                hub_url=_model_hub(),
                timeout_s=settings.embedding_timeout_s,
                download=download,
                batch_size=settings.embedding_batch_size,
                concurrency=settings.embedding_concurrency,
            )
            embedders.append(local)
    return embedders


def build_reranker(settings: Settings) -> tuple[GuardedReranker | None, list[str]]:
    """The reranker stage's provider (None when off or not usable) and why it is not."""
    s = settings
    inner: Reranker
    if s.rerank_provider == "http" and s.rerank_base_url is not None:
        key = s.rerank_api_key.get_secret_value() if s.rerank_api_key is not None else None
        inner = HttpReranker(
            base_url=s.rerank_base_url,
            model=s.rerank_model,
            api_key=key,
            timeout_s=s.rerank_timeout_s,
        )
    elif s.rerank_provider == "local":
        if not LocalReranker.available():
            return None, ["reranker local: install cortex-mcp with its `local` extra (fastembed)"]
        inner = LocalReranker(
            model=s.rerank_model or LOCAL_RERANK_MODEL,
            cache_dir=settings.models_dir,
            hub_url=_model_hub(),
        )
    else:
        return None, []
    return GuardedReranker(inner, timeout_s=s.rerank_timeout_s), []


def build_embedding_cascade(
    settings: Settings, *, download: bool = True
) -> tuple[EmbeddingCascade, list[str]]:
    """The configured embedding providers without a database (doctor probes them, with
    `download=False`), and the notes on providers asked for that cannot be built."""
    names, notes = resolve_embedding_providers(settings)
    embedders = build_embedders(settings, names, download=download)
    return EmbeddingCascade(embedders, timeout_s=settings.embedding_timeout_s), notes


def _vector_index_type(settings: Settings) -> type[VectorIndex]:
    """On PostgreSQL, `auto` searches each agent's vectors with pgvector, where they are."""
    if settings.search.vector_backend == "auto" and uses_postgres(settings):
        return PgVectorIndex
    return VectorIndex


@asynccontextmanager
async def open_cortex(
    settings: Settings,
    *,
    clock: Clock | None = None,
    allow_vec: bool = True,
    background: bool = True,
    scheduler: bool = False,
) -> AsyncIterator[CortexService]:
    """Open everything a service needs; close it all in reverse order on exit.

    `background=False` keeps the embedding indexer from running on its own (benchmarks and
    tests then call `embed_pending()` when they want vectors). `scheduler=True` (long-running
    servers) runs the lifecycle on its cron schedule and catches up when it is overdue, and
    starts loading the saved vector indexes in the background."""
    clock = clock or SystemClock()
    async with open_stores(settings, allow_vec=allow_vec) as stores:
        db = stores.db
        live = await _live_settings(settings, stores)  # the changes made while running, laid on
        engines = _build_engines(settings, stores, clock)
        service = CortexService(
            settings=settings,
            stores=stores,
            engines=engines,
            services=_build_services(settings, stores, engines, clock, live),
        )
        if engines.indexer is not None and background and not db.read_only:
            engines.indexer.start()  # a read-only database cannot take new vectors
        if background and not db.read_only:
            service.resume_ingest()
        if background and engines.reranker is not None:
            await engines.reranker.warm_up()  # a local model loads in a background thread
        nightly = _scheduler(settings, service, clock) if scheduler else None
        model = _embedding_model(engines.embeddings)
        if scheduler and background and model is not None:  # a server: nothing waits for it
            engines.searcher.index.warm_saved(model)
        live.listeners.append(_on_change(settings, engines, nightly))
        follower = asyncio.create_task(service.config.follow()) if scheduler else None
        try:
            yield service
        finally:
            if follower is not None:
                follower.cancel()
                await asyncio.gather(follower, return_exceptions=True)
            if nightly is not None:
                await nightly.stop()
            await service.close()
            await engines.searcher.index.close()


def _build_engines(settings: Settings, stores: Stores, clock: Clock) -> Engines:
    names, notes = resolve_embedding_providers(settings)
    index = _vector_index_type(settings)(
        stores.vectors,
        stores.memories,
        backend=settings.search.vector_backend,
        numpy_max_mb=settings.search.numpy_max_mb,
        saved_dir=_saved_index_dir(settings, stores.db),
    )
    embedders = build_embedders(settings, names)
    embeddings = EmbeddingCascade(embedders, timeout_s=settings.embedding_timeout_s)
    indexer = None
    if embedders:
        timeout_s = settings.embedding_timeout_s
        indexer = EmbeddingIndexer(embeddings, stores.vectors, index, clock, timeout_s=timeout_s)
    llm, llm_notes = build_llm(settings)
    reranker, rerank_notes = build_reranker(settings)
    redactor = Redactor(stores.counters.add)
    access = AccessBatcher(stores.memories)
    mirrors = _mirrors(settings, stores, clock)
    refresher = Refresher(index, indexer, mirrors)
    profiles = ProfileKeeper(
        store=stores.profiles, memories=stores.memories, llm=llm, redactor=redactor, clock=clock
    )
    linker = EntityLinker(stores.entities, enabled=settings.link_entities)
    text_model = CascadeTextModel(llm) if llm.providers else None
    reflector = Reflector(
        stores.reflect,
        stores.beliefs,
        stores.memories,
        ValidityKeeper(stores.validity, clock),
        BeliefKeeper(stores.beliefs, clock),
        stores.lease,
        clock,
        llm=text_model,
        rewrite=redactor.clean,
    )
    return Engines(
        linker=linker,
        searcher=HybridSearch(
            stores.memories,
            index,
            embeddings,
            settings.search,
            entities=stores.entities,
            names_of=query_entities,
            forms_of=other_forms,
            validity=stores.validity,
            beliefs=stores.beliefs,
            reranker=reranker,
            rerank_top_n=settings.rerank_top_n,
        ),
        reranker=reranker,
        embeddings=embeddings,
        indexer=indexer,
        llm=llm,
        lifecycle=LifecycleEngine(
            stores.lifecycle,
            stores.lease,
            settings.lifecycle,
            layer_ttl(settings).archive,
            clock,
            llm=text_model,
            after_run=refresher.after_lifecycle,
            rewrite=redactor.clean,
            refresh_profile=profiles.refresh_if_stale,
            vector_model=lambda: _embedding_model(embeddings),
            reflect=reflector,
        ),
        reflector=reflector,
        ingestor=Ingestor(
            turns=stores.turns,
            memories=stores.memories,
            llm=llm,
            profiles=profiles,
            redactor=redactor,
            clock=clock,
            max_content_chars=settings.max_content_chars,
            on_write=indexer.notify if indexer is not None else _nothing,
            embeddings=embeddings,
            linker=linker,
            lease=timedelta(seconds=settings.llm_timeout_s * 2 * max(1, len(llm.providers)) + 60),
            user_zone=lambda: zone(settings.timezone),
        ),
        flusher=Flusher(
            memories=stores.memories,
            llm=llm,
            redactor=redactor,
            counters=stores.counters,
            clock=clock,
            max_content_chars=settings.max_content_chars,
            user_zone=lambda: zone(settings.timezone),
        ),
        profiles=profiles,
        redactor=redactor,
        access=access,
        latency=LatencyWindow(),
        mirrors=mirrors,
        refresher=refresher,
        background=Background(access, linker),
        provider_notes=notes + rerank_notes,
        llm_notes=llm_notes,
    )


async def _live_settings(settings: Settings, stores: Stores) -> LiveSettings:
    """`settings` with the changes made through the API or `cortex-mcp config` applied."""
    live = LiveSettings(settings)
    try:
        layer = await stores.settings.read()
        changed = live.apply(layer.version, layer.values)
    except CortexError as exc:  # e.g. a changed value a newer rule refuses: start without
        log.warning("settings changed while running are not applied: %s", exc.message)
        return live
    if changed:
        log.info("settings changed while running (version %d): %s", layer.version, changed)
    return live


def _on_change(
    settings: Settings, engines: Engines, nightly: LifecycleScheduler | None
) -> Callable[[list[str]], None]:
    """What is rebuilt when settings change while running; the rest (search, recall limits,
    lifecycle parameters, mirrors) reads the changed settings at its next use."""

    def rebuild(names: list[str]) -> None:
        if any(name.startswith("embedding_") for name in names):
            chosen, _ = resolve_embedding_providers(settings)
            embedders = build_embedders(settings, chosen)
            engines.embeddings.replace_providers(embedders, settings.embedding_timeout_s)
        if any(name.startswith("llm_") for name in names):
            llm, _ = build_llm(settings)
            engines.llm.replace_providers(llm.providers, settings.llm_timeout_s)
        if "log_level" in names:
            logging.getLogger().setLevel(settings.log_level)
        if nightly is not None and any(name.startswith("lifecycle.") for name in names):
            schedule = settings.lifecycle
            nightly.reschedule(
                schedule.schedule, schedule.catch_up_hours, schedule.catch_up_delay_s
            )

    return rebuild


def _build_services(
    settings: Settings,
    stores: Stores,
    engines: Engines,
    clock: Clock,
    live: LiveSettings,
) -> Services:
    refresher, background = engines.refresher, engines.background
    reflector = engines.reflector
    validity, beliefs = reflector.validity, reflector.keeper
    memories = MemoryService(
        settings=settings,
        memories=stores.memories,
        linker=engines.linker,
        searcher=engines.searcher,
        indexer=engines.indexer,
        redactor=engines.redactor,
        access=engines.access,
        latency=engines.latency,
        lifecycle=engines.lifecycle,
        refresher=refresher,
        background=background,
        clock=clock,
        entities=stores.entities,
        validity=validity,
        beliefs=beliefs,
        reflector=reflector,
    )
    reading = build_reading(settings, stores, background.drain)
    status = StatusService(
        settings=settings,
        stores=stores,
        embeddings=engines.embeddings,
        indexer=engines.indexer,
        llm=engines.llm,
        provider_notes=engines.provider_notes,
        llm_notes=engines.llm_notes,
        clock=clock,
    )
    return Services(
        memories=memories,
        reading=reading,
        conversation=ConversationService(
            settings=settings,
            ingestor=engines.ingestor,
            flusher=engines.flusher,
            profiles=engines.profiles,
            redactor=engines.redactor,
            llm=engines.llm,
            refresher=refresher,
            linker=engines.linker,
            clock=clock,
        ),
        lifecycle=LifecycleService(
            settings=settings,
            engine=engines.lifecycle,
            drain=background.drain,
            reflector=reflector,
            clock=clock,
        ),
        exchange=ExchangeService(
            settings=settings,
            exports=stores.exports,
            redactor=engines.redactor,
            indexer=engines.indexer,
            refresher=refresher,
            clock=clock,
            linker=engines.linker,
            beliefs=stores.beliefs,
        ),
        relations=RelationService(
            settings=settings,
            relations=stores.relations,
            redactor=engines.redactor,
            refresher=refresher,
            clock=clock,
        ),
        browse=BrowseService(
            settings=settings,
            stores=stores,
            reading=reading,
            memories=memories,
            status=status,
            searcher=engines.searcher,
            embeddings=engines.embeddings,
            llm=engines.llm,
            provider_notes=engines.provider_notes,
            llm_notes=engines.llm_notes,
            latency=engines.latency,
            clock=clock,
        ),
        status=status,
        tokens=build_tokens(settings, stores, clock),
        entities=EntityService(
            settings=settings,
            entities=stores.entities,
            memories=stores.memories,
            redactor=engines.redactor,
            refresher=refresher,
            clock=clock,
        ),
        config=ConfigService(live=live, store=stores.settings),
    )


def _nothing() -> None:
    """No indexer to wake."""


def _saved_index_dir(settings: Settings, db: object) -> Path | None:
    """Where built vector indexes are saved: beside the SQLite file, when it is writable.
    PostgreSQL (no file of ours beside it; several servers) rebuilds them after a restart."""
    if uses_postgres(settings) or getattr(db, "read_only", True):
        return None
    if settings.db_path.name == ":memory:":
        return None
    return saved_index_dir(settings.db_path)


def _mirrors(settings: Settings, stores: Stores, clock: Clock) -> MirrorWriter | None:
    """The Markdown mirrors of the default agent's memory, when CORTEX_EXPORT_DIR is set."""
    if settings.export_dir is None:
        return None
    mirrors = settings.mirrors

    async def render() -> dict[str, str]:
        exported_at = to_iso(clock.now())
        agent = settings.agent_id
        beliefs = await bank_beliefs(stores.beliefs, agent, clock.now())
        return await mirror_files(
            stores.exports, agent, exported_at, mirrors.memory_md_words, beliefs=beliefs
        )

    return MirrorWriter(settings.export_dir, render, mirrors.debounce_s)


def _scheduler(
    settings: Settings, service: CortexService, clock: Clock
) -> LifecycleScheduler | None:
    lifecycle = settings.lifecycle
    if service.stores.db.read_only:
        return None
    nightly = LifecycleScheduler(
        service.lifecycle.run,
        service.engines.lifecycle.last_success,
        expression=lifecycle.schedule,
        catch_up_hours=lifecycle.catch_up_hours,
        catch_up_delay_s=lifecycle.catch_up_delay_s,
        clock=clock,
    )
    nightly.start()  # not while the schedule is off: a change may turn it on
    return nightly


def _embedding_model(embeddings: EmbeddingCascade) -> str | None:
    """The key of the current (primary) embedding model, None without a provider."""
    primary = embeddings.primary
    return None if primary is None else str(primary.model_key)
