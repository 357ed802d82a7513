"""The fast channel's writes: high-signal sentences straight to core memory."""

from __future__ import annotations

import logging
from typing import Any

from cortex_mcp.engine.ingest.corrections import choose_superseded
from cortex_mcp.engine.ingest.sieve import HighSignal
from cortex_mcp.models import Category, Layer, Memory, NewMemory, SearchFilters
from cortex_mcp.search.text import quote
from cortex_mcp.store.memories import MemoryStore
from cortex_mcp.tokenize import index_text, speaker_of

log = logging.getLogger(__name__)

_CORRECTION_CANDIDATES = 20  # memories holding the corrected phrase, newest checked first


async def write_high_signals(
    memories: MemoryStore,
    signals: list[HighSignal],
    agent_id: str,
    metadata: dict[str, Any],
    now: str,
    speaker: str | None = None,
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
            supersedes = await _corrected_memory(memories, signal, agent_id, who, now)
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
        )
        written.append((await memories.remember(new, now)).memory)
    return written


async def _corrected_memory(
    memories: MemoryStore, signal: HighSignal, agent_id: str, speaker: str | None, now: str
) -> str | None:
    term = signal.corrected_term or ""
    filters = SearchFilters(agent_id=agent_id, now=now)
    hits = await memories.text_search(quote(index_text(term)), filters, _CORRECTION_CANDIDATES)
    found = await memories.get_many([memory_id for memory_id, _ in hits])
    verdict = choose_superseded(signal.content, term, speaker, list(found.values()))
    if verdict.memory is None:
        log.info("correction kept beside older memories: %s", verdict.reason)
        return None
    return verdict.memory.id
