"""The fast channel's writes: high-signal sentences straight to core memory."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from cortex_mcp.engine.ingest.corrections import Cosine, choose_superseded
from cortex_mcp.engine.ingest.sieve import HighSignal
from cortex_mcp.errors import ProviderError
from cortex_mcp.models import Category, Layer, Memory, NewMemory, SearchFilters
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.search.text import quote
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.tokenize import index_text, speaker_of

log = logging.getLogger(__name__)

_CORRECTION_CANDIDATES = 20  # memories holding the corrected phrase, newest checked first


async def write_high_signals(
    memories: MemoryStorage,
    signals: list[HighSignal],
    agent_id: str,
    metadata: dict[str, Any],
    now: str,
    speaker: str | None = None,
    embeddings: EmbeddingCascade | None = None,
    occurred_at: str | None = None,
) -> list[Memory]:
    """Write each high signal straight to its layer (core; a pending action to working),
    deduplicated by content. A correction
    ("not X, but Y") supersedes a memory only when it is the same speaker's about the same
    thing (`corrections.choose_superseded`); when that is in doubt the old one stays."""
    written = []
    for signal in signals:
        supersedes = None
        if signal.corrected_term:
            who = (signal.speaker or "").casefold() or speaker_of(signal.content) or speaker
            supersedes = await _corrected_memory(memories, signal, agent_id, who, now, embeddings)
        new = NewMemory(
            agent_id=agent_id,
            content=signal.content,
            category=Category(signal.category),
            layer=Layer(signal.layer),
            importance=signal.importance,
            confidence=0.95,
            source="user",
            supersedes=supersedes,
            supersede_rule=f"sieve:{signal.kind}:{signal.language}",
            metadata={**metadata, **signal.metadata},
            occurred_at=occurred_at,
        )
        written.append((await memories.remember(new, now)).memory)
    return written


async def _corrected_memory(
    memories: MemoryStorage,
    signal: HighSignal,
    agent_id: str,
    speaker: str | None,
    now: str,
    embeddings: EmbeddingCascade | None,
) -> str | None:
    term = signal.corrected_term or ""
    filters = SearchFilters(agent_id=agent_id, now=now)
    hits = await memories.text_search(quote(index_text(term)), filters, _CORRECTION_CANDIDATES)
    found = await memories.get_many([memory_id for memory_id, _ in hits])
    candidates = list(found.values())
    cosine = await _cosines(embeddings, signal.content, candidates)
    verdict = choose_superseded(signal.content, term, speaker, candidates, cosine)
    if verdict.memory is None:
        log.info("correction kept beside older memories: %s", verdict.reason)
        return None
    return verdict.memory.id


async def _cosines(
    embeddings: EmbeddingCascade | None, sentence: str, candidates: list[Memory]
) -> Cosine | None:
    """Meaning of the correction against each candidate, in one call; None (the text measure
    decides) without a provider or when it fails."""
    if embeddings is None or not embeddings.providers or not candidates:
        return None
    try:
        result = await embeddings.embed([sentence, *(m.content for m in candidates)])
    except ProviderError as exc:
        log.info("correction matched by text: embeddings unavailable (%s)", exc.message)
        return None
    if not result.ok[0]:
        return None
    query = _unit(result.vectors[0])
    scores = {
        m.id: float(_unit(result.vectors[i + 1]) @ query)
        for i, m in enumerate(candidates)
        if result.ok[i + 1]
    }
    return lambda memory: scores.get(memory.id)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
