"""The nested settings groups (``CORTEX_SEARCH__*``, ``CORTEX_LAYERS__*``,
``CORTEX_LIFECYCLE__*``, ``CORTEX_MIRRORS__*``); `config.Settings` holds one of each, and
`config` re-exports them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator


class SearchSettings(BaseModel):
    """Ranking knobs (env: ``CORTEX_SEARCH__FUSION=rrf`` and so on)."""

    fusion: Literal["maxnorm", "minmax", "weighted", "rrf"] = Field(
        "maxnorm", description="how the text and vector rankings combine"
    )
    # equal on purpose: see search/fusion.py and bench/locomo_recall.py
    vector_weight: float = Field(0.5, ge=0, le=1, description="weight of the vector ranking")
    text_weight: float = Field(0.5, ge=0, le=1, description="weight of the text (BM25) ranking")
    rrf_k: int = Field(60, ge=1, description="k of reciprocal-rank fusion (fusion=rrf)")
    pool_factor: int = Field(
        4, ge=1, le=20, description="candidates per channel, as a multiple of max_results"
    )
    layer_weights: dict[str, float] = Field(
        {"core": 1.0, "working": 0.8, "archive": 0.5},
        description="score multiplier per layer (a JSON object)",
    )
    recency_window_days: float = Field(
        7.0, ge=0, description="memories younger than this get the recency boost"
    )
    recency_boost: float = Field(0.1, ge=0, description="the most recency adds to a score")
    # the most a memory's recall history can add (a tie-breaker: see fusion.access_factor)
    access_boost: float = Field(
        0.05, ge=0, le=1, description="the most a memory's recall history adds (tie-breaker)"
    )
    access_boost_cap: int = Field(
        10, ge=0, description="accesses at which that boost is reached (log scale)"
    )
    temporal_decay: bool = Field(False, description="true: older memories score less")
    half_life_days: float = Field(30.0, gt=0, description="half-life of that decay")
    mmr: bool = Field(False, description="true: diversify results (maximal marginal relevance)")
    mmr_lambda: float = Field(
        0.7, ge=0, le=1, description="relevance against diversity in MMR (1: relevance only)"
    )
    vector_backend: Literal["auto", "numpy", "ivf", "vec0"] = Field(
        "auto",
        description="per agent: exact in memory (numpy), an approximate int8 index (ivf),"
        " or sqlite-vec (vec0); auto: numpy within numpy_max_mb, ivf past it; on PostgreSQL,"
        " auto is pgvector per agent (exact, then the agent's own HNSW index past 10,000)",
    )
    numpy_max_mb: int = Field(
        256, ge=0, description="an agent's vectors past this many MB: auto switches to ivf"
    )


class LayerSettings(BaseModel):
    working_ttl_hours: float = Field(
        48.0,
        gt=0,
        description="a working memory not promoted by then moves to the archive at the next lifecycle run (still recalled, weighed as archive)",
    )
    archive_ttl_days: float = Field(
        90.0,
        gt=0,
        description="one stored in the archive layer after this (forgotten ones never expire)",
    )


class LifecycleSettings(BaseModel):
    """The nightly lifecycle (env: ``CORTEX_LIFECYCLE__SCHEDULE="0 4 * * *"`` and so on)."""

    schedule: str = Field(
        "0 3 * * *", description='cron (local time) of the nightly lifecycle, or "off"'
    )
    catch_up_hours: float = Field(
        48.0, gt=0, description="a server started this long after the last run runs one soon"
    )
    catch_up_delay_s: float = Field(60.0, ge=0, description="how soon: seconds after the start")
    promote_threshold: float = Field(
        0.6, ge=0, le=1, description="score a working memory needs to be promoted to core"
    )
    promote_min_age_hours: float = Field(
        24.0, ge=0, description="working memories younger than this are not promoted"
    )
    merge_threshold: float = Field(
        0.85, gt=0, le=1, description="similarity at which two memories merge (cosine)"
    )
    archive_threshold: float = Field(
        0.2, ge=0, le=1, description="decay score under which a core memory is archived"
    )
    decay_lambda: float = Field(0.03, ge=0, description="daily rate of that decay")
    min_core_age_days: float = Field(
        30.0,
        ge=0,
        description="a core memory stored less recently is not archived for decay",
    )
    core_max_entries: int = Field(
        2000, ge=10, description="most core memories; the lowest scored are archived past it"
    )
    delete_compressed_archive: bool = Field(
        False, description="true: delete archive memories once a monthly summary covers them"
    )
    llm_max_calls: int = Field(
        20, ge=0, description="LLM calls one run may make (merge and compress)"
    )
    llm_batch_items: int = Field(60, ge=2, description="memories per LLM summary call")
    lease_seconds: float = Field(
        600.0, ge=5, description="a run's lease across processes (renewed while it runs)"
    )

    @field_validator("schedule", mode="after")
    @classmethod
    def _cron_or_off(cls, value: str) -> str:
        text = " ".join(value.split())
        if text.lower() not in ("", "off") and len(text.split()) != 5:
            raise ValueError(
                "must be a 5-field cron expression (minute hour day month weekday) or off"
            )
        return text


class MirrorSettings(BaseModel):
    """Markdown mirrors written under ``CORTEX_EXPORT_DIR``."""

    memory_md_words: int = Field(
        3000, ge=100, description="MEMORY.md is cut to about this many words"
    )
    debounce_s: float = Field(
        2.0, ge=0, description="mirrors are rewritten this long after the last change"
    )
