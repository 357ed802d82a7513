"""The search pipeline: named stages run in order over one `SearchState`, each timed.

    parse -> channels (text, vector) -> fuse -> signals -> time -> entity -> rerank -> diversity
    -> budget

Each stage is a module of `search/stages/`; a new stage is a module there and one line in
`HybridSearch.stages`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

from cortex_mcp.config import SearchSettings
from cortex_mcp.models import SearchFilters
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.rerank import Reranker
from cortex_mcp.search.stages.belief import BeliefStage
from cortex_mcp.search.stages.budget import Budget
from cortex_mcp.search.stages.channels import Channels
from cortex_mcp.search.stages.diversity import Diversity
from cortex_mcp.search.stages.entity import EntityStage, FormsOf, NamesOf, no_forms
from cortex_mcp.search.stages.fuse import Fuse
from cortex_mcp.search.stages.parse import Parse, read_query
from cortex_mcp.search.stages.rerank import Rerank
from cortex_mcp.search.stages.signals import Signals
from cortex_mcp.search.stages.state import SearchState, Stage
from cortex_mcp.search.stages.text_channel import TextChannel
from cortex_mcp.search.stages.time import TimeStage
from cortex_mcp.search.stages.validity import ValidityStage
from cortex_mcp.search.stages.vector_channel import Embedding, VectorChannel, drop
from cortex_mcp.search.topic import without_names
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.beliefs import BeliefStore
from cortex_mcp.store.interfaces import EntityStorage, MemoryStorage
from cortex_mcp.store.validity import ValidityStore
from cortex_mcp.store.vectors import PendingEmbedding


class HybridSearch:
    def __init__(
        self,
        memories: MemoryStorage,
        index: VectorIndex,
        embeddings: EmbeddingCascade,
        settings: SearchSettings,
        entities: EntityStorage,
        names_of: NamesOf,
        validity: ValidityStore,
        beliefs: BeliefStore,
        reranker: Reranker | None = None,
        rerank_top_n: int = 20,
        forms_of: FormsOf = no_forms,
    ) -> None:
        """`names_of`: the names and alias phrases a query names (the linking rules');
        `forms_of`: the other forms of a given name a person may be known by."""
        self.memories = memories
        self.index = index
        self.embeddings = embeddings
        self.settings = settings
        self.text_channel = TextChannel(memories)
        self.entity_stage = EntityStage(entities, names_of, memories, index, forms_of)
        self.vector_channel = VectorChannel(memories, index, embeddings, self._topic)
        self.channels = Channels(self.text_channel, self.vector_channel)
        self.stages: list[Stage] = [
            Parse(),
            self.channels,
            Fuse(memories, index),
            Signals(),
            TimeStage(memories, index, self.text_channel),
            self.entity_stage,
            ValidityStage(memories, index, validity),
            BeliefStage(memories, index, beliefs),
            Rerank(reranker, rerank_top_n),
            Diversity(index),
            Budget(),
        ]

    def _topic(self, text: str) -> str | None:
        """The question without the names the entity stage reads in it."""
        return without_names(text, self.entity_stage.names_of(text))

    def embed_soon(self, text: str, pending: Sequence[PendingEmbedding] = ()) -> Embedding | None:
        """The query's embedding (with `pending`'s), started now for a search that starts
        later: pass it to `search` (same `text` and `pending`). None without a provider."""
        return self.vector_channel.embed_soon(text, pending)

    async def search(
        self,
        text: str,
        filters: SearchFilters,
        limit: int,
        now: datetime,
        *,
        mode: str = "hybrid",
        settings: SearchSettings | None = None,
        pending: Sequence[PendingEmbedding] = (),
        debug: bool = False,
        entities: dict[str, str] | None = None,
        embedding: Embedding | None = None,
    ) -> SearchState:
        """`mode` is hybrid, text or vector (the last two for benchmarks and debugging).

        `pending` are memories with no vector yet: they are embedded in the same provider call
        as the query and scored with the indexed ones (the vectors come back in the state).
        `debug` keeps every candidate's score after each stage. `entities` (id -> name) are
        lifted as if the query named them (an entity page's). `embedding`: the query's, from
        `embed_soon`."""
        state = SearchState(
            text, filters, limit, now, settings or self.settings, mode, pending, debug
        )
        state.embedding = embedding
        return await self.run(state, entities)

    def begin(
        self,
        text: str,
        filters: SearchFilters,
        limit: int,
        now: datetime,
        *,
        pending: Sequence[PendingEmbedding] = (),
        embedding: Embedding | None = None,
    ) -> SearchState:
        """A search whose question is read and whose text channel is searching already, for a
        caller with more to do before the other stages (`run` them next, or `release` it): the
        database works meanwhile."""
        state = SearchState(text, filters, limit, now, self.settings, "hybrid", pending)
        state.embedding = embedding
        state.time, state.query = read_query(text, now)
        state.pool = limit * self.settings.pool_factor
        self.channels.start_text(state)
        return state

    async def run(self, state: SearchState, entities: dict[str, str] | None = None) -> SearchState:
        """The stages over `state` (a new one, or one `begin` gave)."""
        state.entities = dict(entities or {})
        try:
            if self.entity_stage in self.stages:
                self.entity_stage.begin(state)
            for stage in self.stages:
                started = time.perf_counter()
                await stage.run(state)
                took = round((time.perf_counter() - started) * 1000, 3)
                state.stages.append((stage.name, took))
                state.timings_ms[stage.name] = took
                if state.debug:
                    for candidate in state.candidates:
                        if (score := state.score_so_far(candidate)) is not None:
                            candidate.stage_scores[stage.name] = score
        finally:  # what was started for a stage that did not run (one failed before it)
            self.release(state)
        return state

    @staticmethod
    def release(state: SearchState) -> None:
        """Stop what `state` started and no stage took (a search that failed or never ran)."""
        for task in [state.embedding, *state.started.values()]:
            drop(task)
        state.embedding = None
        state.started.clear()
