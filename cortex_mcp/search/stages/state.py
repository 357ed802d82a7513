"""What the stages of one search share: the question, the candidates so far, and what each
stage noted (timings, what it could not use, facts for the search debugger)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from cortex_mcp.config import SearchSettings
from cortex_mcp.models import SearchFilters
from cortex_mcp.search.fusion import Candidate
from cortex_mcp.search.text import TextQuery
from cortex_mcp.search.time_expressions import TimeQuery
from cortex_mcp.store.vectors import PendingEmbedding


@dataclass
class SearchState:
    text: str
    filters: SearchFilters
    limit: int
    now: datetime
    settings: SearchSettings
    mode: str = "hybrid"  # hybrid, text or vector (the last two for benchmarks and debugging)
    # memories with no vector yet: embedded in the query's provider call and scored with the rest
    pending: Sequence[PendingEmbedding] = ()
    debug: bool = False  # keep each candidate's score after every stage (the search debugger)
    # which score the candidates have so far: none before fuse, then "fused", and "final" from
    # the signals stage on (the debugger shows no score before one exists)
    scored: str = ""
    time: TimeQuery | None = None  # the window the question names, and its other words (parse)
    query: TextQuery | None = None  # what the text channel searches: the other words (parse)
    pool: int = 0  # candidates each channel brings
    candidates: list[Candidate] = field(default_factory=list)  # best first from signals on
    query_vector: np.ndarray | None = None
    # the question without the names it gives and its vector, embedded with the query in one
    # call (vector channel): the entity stage ranks a named person's memories by it
    topic_text: str | None = None
    topic_vector: np.ndarray | None = None
    model_key: str = ""
    channels: list[str] = field(default_factory=list)
    providers: dict[str, Any] = field(default_factory=dict)
    # vectors computed for pending memories along with the query: (model, [(pending, vector)])
    fresh_model: str = ""
    fresh: list[tuple[PendingEmbedding, np.ndarray]] = field(default_factory=list)
    # the query's embedding, started before the search (`HybridSearch.embed_soon`): the vector
    # channel awaits it instead of asking the provider itself
    embedding: asyncio.Task[Any] | None = None
    # work a stage started when the search began (stage name -> task), awaited when it runs
    started: dict[str, asyncio.Task[Any]] = field(default_factory=dict)
    # what a stage worked out when the search began, having nothing to wait for (stage name ->
    # it): no task to start and await
    ready: dict[str, Any] = field(default_factory=dict)
    # entities the caller resolved already (an entity page's), id -> name: the entity stage
    # lifts their memories as if the query named them
    entities: dict[str, str] = field(default_factory=dict)
    # the memories linked to each entity the entity stage lifted (entity id -> memory ids)
    entity_links: dict[str, AbstractSet[str]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    stages: list[tuple[str, float]] = field(default_factory=list)  # (stage, ms) in order run
    degraded: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)  # what a stage understood, for debugging

    def score_so_far(self, candidate: Candidate) -> float | None:
        if self.scored == "final":
            return candidate.final
        return candidate.fused if self.scored == "fused" else None

    @property
    def ranked(self) -> list[Candidate]:
        return self.candidates

    @property
    def text_query(self) -> TextQuery:
        if self.query is None:
            raise RuntimeError("the parse stage has not run")
        return self.query

    def sort(self) -> None:
        """Best first: by score, ties by the text channel's rank."""
        self.candidates.sort(
            key=lambda c: (-c.final, c.text_rank if c.text_rank is not None else 1 << 30)
        )


class Stage(Protocol):
    name: str

    async def run(self, state: SearchState) -> None: ...
