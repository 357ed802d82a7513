"""Memories a stage brings in beside the channels' (a window's, an entity's links, a slot's
facts, a holder's beliefs): read, kept only when live (and, for ids that come from outside a
filtered query, within the search's filters), with their cosine when the query has a vector,
as the fuse stage fills it."""

from __future__ import annotations

from collections.abc import Iterable

from cortex_mcp.search.fusion import Candidate, fill_cosines
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import MemoryStorage


async def read_live(
    state: SearchState,
    memories: MemoryStorage,
    index: VectorIndex,
    fresh: list[Candidate],
    *,
    check_filters: bool = False,
) -> list[Candidate]:
    """The candidates of `fresh` whose memory is live (and eligible, with `check_filters`),
    each with its memory and, when there is a query vector, its cosine."""
    if not fresh:
        return []
    ids = [c.memory_id for c in fresh]
    rows = await memories.get_many(ids, reuse=True)
    allowed = await memories.eligible(ids, state.filters) if check_filters else None
    live = [
        c
        for c in fresh
        if rows.get(c.memory_id) is not None and (allowed is None or c.memory_id in allowed)
    ]
    for c in live:
        c.memory = rows[c.memory_id]
    vector = state.query_vector
    if live and vector is not None:
        found = [c.memory_id for c in live]
        vectors = await index.vectors_for(
            found, state.model_key, int(vector.shape[0]), refresh=False
        )
        fill_cosines(live, vectors, vector)
    return live


async def add_by_id(
    state: SearchState, memories: MemoryStorage, index: VectorIndex, ids: Iterable[str]
) -> int:
    """The memories of `ids` the candidates lack, added when live and within the filters;
    how many."""
    known = {c.memory_id for c in state.candidates}
    fresh = [Candidate(memory_id) for memory_id in sorted(set(ids)) if memory_id not in known]
    live = await read_live(state, memories, index, fresh, check_filters=True)
    state.candidates.extend(live)
    return len(live)
