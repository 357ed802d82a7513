"""Readable renderings: the core-memory snapshot and the search-debug report."""

from __future__ import annotations

from typing import Any

from cortex_mcp.config import SearchSettings
from cortex_mcp.models import Category, Memory
from cortex_mcp.search.fusion import Candidate
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.tokenize import count_tokens

# Sections of MEMORY.md in the seed design, and the categories each one holds.
SECTIONS: list[tuple[str, tuple[Category, ...]]] = [
    ("User profile", (Category.identity, Category.profile)),
    ("Preferences and habits", (Category.preference, Category.skill)),
    ("Key decisions", (Category.decision,)),
    (
        "Projects and facts",
        (Category.project_state, Category.fact, Category.insight, Category.todo),
    ),
    ("Relationships", (Category.relationship,)),
    ("Corrections", (Category.correction,)),
    ("History summaries", (Category.summary, Category.context)),
]


def core_snapshot(memories: list[Memory], max_tokens: int) -> str:
    """Core memory grouped into sections, most important first, within `max_tokens`; each entry
    carries its id so an agent reviewing it can forget or correct it."""
    lines = ["# Core memory", ""]
    used = count_tokens(lines[0])
    omitted = 0
    for title, categories in SECTIONS:
        members = [m for m in memories if m.category in categories]
        if not members:
            continue
        heading = f"## {title}"
        entries = []
        for memory in members:
            entry = f"- {memory.content} _({memory.occurred_at[:10]}, id {memory.id})_"
            cost = count_tokens(entry) + 1
            if used + cost + count_tokens(heading) > max_tokens:
                omitted += 1
                continue
            entries.append(entry)
            used += cost
        if entries:
            used += count_tokens(heading)
            lines.extend([heading, *entries, ""])
    if len(lines) == 2:
        lines.append("_No core memories yet._")
    if omitted:
        lines.append(f"_{omitted} more core memories left out to stay within {max_tokens} tokens._")
    return "\n".join(lines).rstrip() + "\n"


def debug_report(outcome: SearchState, settings: SearchSettings) -> dict[str, Any]:
    """What the search understood, each stage in order with its time, and per hit the score
    it had after every stage (`outcome` from a search run with debug=True)."""
    query = outcome.text_query
    return {
        "query": {
            "raw": outcome.text,
            "time_window": _window(outcome),
            "searched_text": query.raw,
            "terms": query.terms,
            "fts_expression": query.match,
            "like_patterns": query.like_patterns,
            # the names the question gives and the entities they resolved to (the entity stage)
            "entity": outcome.facts.get("entity"),
        },
        "settings": settings.model_dump(),
        "pool": outcome.pool,
        "channels": outcome.channels,
        "providers": outcome.providers,
        "stages": [{"name": name, "ms": ms} for name, ms in outcome.stages],
        "facts": outcome.facts,
        "timings_ms": outcome.timings_ms,
        "hits": [_hit(rank, c) for rank, c in enumerate(outcome.ranked, start=1)],
    }


def _window(outcome: SearchState) -> dict[str, str] | None:
    window = outcome.time.window if outcome.time is not None else None
    if window is None:
        return None
    return {
        "expression": window.expression,
        "start": window.start.isoformat(),
        "end": window.end.isoformat(),
        "granularity": window.granularity,
    }


def _hit(rank: int, c: Candidate) -> dict[str, Any]:
    memory = c.memory
    return {
        "rank": rank,
        "id": c.memory_id,
        "content": memory.content if memory else None,
        "layer": memory.layer.value if memory else None,
        "created_at": memory.created_at if memory else None,
        "occurred_at": memory.occurred_at if memory else None,
        "text": {"rank": c.text_rank, "bm25": c.bm25, "normalised": round(c.text_score, 6)},
        "vector": {
            "rank": c.vector_rank,
            "cosine_distance": None if c.cosine is None else round(1 - c.cosine, 6),
            "score": round(c.vector_score, 6),
        },
        "fused": round(c.fused, 6),
        "layer_weight": c.layer_weight,
        "recency": round(c.recency, 6),
        "access": round(c.access, 6),
        "decay": round(c.decay, 6),
        "time_boost": round(c.time_boost, 6),
        "entity_boost": round(c.entity_boost, 6),
        "belief_boost": round(c.belief_boost, 6),
        "rerank_score": None if c.rerank_score is None else round(c.rerank_score, 6),
        "mmr_step": c.mmr_step,
        "final": round(c.final, 6),
        "stages": {stage: round(score, 6) for stage, score in c.stage_scores.items()},
    }
