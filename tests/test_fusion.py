"""Fusion of the text and vector channels (pure functions over candidates)."""

from __future__ import annotations

import numpy as np

from cortex_mcp.config import SearchSettings
from cortex_mcp.search.fusion import Candidate, fill_cosines, fuse


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_text_hit_the_vector_pool_missed_is_scored_by_its_meaning_too() -> None:
    query = _unit(1, 0)
    both = Candidate("both", text_rank=0, bm25=-8.0)  # best text hit, outside the vector pool
    near = Candidate("near", vector_rank=0, cosine=0.9)  # best vector hit, no shared word
    candidates = [both, near]
    fill_cosines(candidates, {"both": _unit(1, 0.2), "near": _unit(0.9, 0.44)}, query)
    fuse(candidates, SearchSettings(), has_vector=True)
    assert both.cosine is not None and both.cosine > 0.95
    assert both.fused > near.fused


def test_maxnorm_scales_each_channel_by_its_best_hit_and_keeps_the_gaps() -> None:
    candidates = [
        Candidate("a", text_rank=0, bm25=-10.0, vector_rank=1, cosine=0.4),
        Candidate("b", text_rank=1, bm25=-5.0, vector_rank=0, cosine=0.8),
        Candidate("c", text_rank=2, bm25=-4.9, vector_rank=2, cosine=0.1),
    ]
    fuse(candidates, SearchSettings(), has_vector=True)
    a, b, c = candidates
    assert (a.text_score, b.text_score) == (1.0, 0.5)
    assert (a.vector_score, b.vector_score) == (0.5, 1.0)
    assert c.text_score > 0.45  # min-max would have made the pool's last text hit worth 0
    assert a.fused == b.fused == 0.75


def test_without_vectors_maxnorm_ranks_as_bm25_does() -> None:
    candidates = [
        Candidate("x", text_rank=1, bm25=-2.0),
        Candidate("y", text_rank=0, bm25=-6.0),
        Candidate("z", text_rank=2),  # a LIKE-only identifier hit: no bm25
    ]
    fuse(candidates, SearchSettings(), has_vector=False)
    ranked = sorted(candidates, key=lambda c: (-c.fused, c.text_rank))
    assert [c.memory_id for c in ranked] == ["y", "x", "z"]
    assert ranked[0].fused == 1.0
