"""An inverted-file (IVF) index over unit vectors in numpy: the vector backend past the exact
scan's memory budget.

Spherical k-means splits the vectors into about sqrt(n) clusters; a search scores the
centroids, then scans only the vectors of the best clusters. Vectors are kept as int8 codes
with one scale per vector (a quarter of float32's memory; the cosine moves by about 1e-3), in
cluster order so a probed cluster is one contiguous slice. New vectors go to a small exact
tail until it is worth folding them in; removed ones are masked. Pure numpy: no dependency,
and a rebuild at 1M vectors takes seconds (measured in bench/recall_scale.py), where
an HNSW graph took minutes on the same machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

KMEANS_ROUNDS = 8
SAMPLE_PER_CLUSTER = 48
MIN_SCANNED = 4096  # a search reads at least this many vectors (all of a small index)
SCANNED_FRACTION = 0.03  # ...and at least this share of a large one
_CHUNK = 16384
KMEANS_SHARE = 0.5  # of a build's time, about (the rest assigns every vector to a cluster)


class IvfIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.centroids = np.zeros((0, dim), dtype=np.float32)
        self.codes = np.zeros((0, dim), dtype=np.int8)
        self.scales = np.zeros(0, dtype=np.float32)
        self.offsets = np.zeros(1, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.ids: list[str] = []
        self.positions: dict[str, int] = {}
        self.tail_ids: list[str] = []
        self.tail_rows: list[np.ndarray] = []
        self.tail_positions: dict[str, int] = {}
        self._tail: np.ndarray | None = None

    # ---- building -----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        ids: list[str],
        codes: np.ndarray,
        scales: np.ndarray,
        seed: int = 0,
        progress: Callable[[float], None] | None = None,
    ) -> IvfIndex:
        """From int8 codes and their scales (see `quantize`), ids in the same order.
        `progress` hears the share done (0 to 1) as the build goes."""
        index = cls(codes.shape[1])
        n = len(ids)
        if n == 0:
            return index
        told = progress or (lambda share: None)
        rng = np.random.default_rng(seed)
        clusters = max(1, min(4096, round(math.sqrt(n))))
        sample = rng.choice(n, size=min(n, clusters * SAMPLE_PER_CLUSTER), replace=False)
        index.centroids = _kmeans(
            _decode(codes[np.sort(sample)], scales[np.sort(sample)]),
            clusters,
            rng,
            lambda share: told(KMEANS_SHARE * share),
        )
        parts = []
        for i in range(0, n, _CHUNK):
            parts.append(index._nearest(_decode(codes[i : i + _CHUNK], scales[i : i + _CHUNK])))
            told(KMEANS_SHARE + (1 - KMEANS_SHARE) * min(1.0, (i + _CHUNK) / n))
        assignment = np.concatenate(parts)
        order = np.argsort(assignment, kind="stable")
        index.codes = codes[order]
        index.scales = scales[order]
        index.offsets = np.searchsorted(assignment[order], np.arange(clusters + 1)).astype(np.int64)
        index.alive = np.ones(n, dtype=bool)
        index.ids = [ids[i] for i in order]
        index.positions = {memory_id: i for i, memory_id in enumerate(index.ids)}
        return index

    def _nearest(self, vectors: np.ndarray) -> np.ndarray:
        return np.argmax(vectors @ self.centroids.T, axis=1)

    # ---- changes ------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.alive.sum()) + len(self.tail_positions)

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self.tail_positions or memory_id in self.positions

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + self.scales.nbytes + len(self.tail_ids) * self.dim * 4

    @property
    def tail_size(self) -> int:
        return len(self.tail_ids)

    def upsert(self, memory_id: str, vector: np.ndarray) -> None:
        """A new or re-embedded memory: exact in the tail until the next rebuild."""
        self.remove([memory_id])
        self.tail_positions[memory_id] = len(self.tail_ids)
        self.tail_ids.append(memory_id)
        self.tail_rows.append(vector.astype(np.float32))
        self._tail = None

    def remove(self, ids: Iterable[str]) -> None:
        for memory_id in ids:
            position = self.positions.pop(memory_id, None)
            if position is not None:
                self.alive[position] = False
            tail = self.tail_positions.pop(memory_id, None)
            if tail is not None:
                self.tail_rows[tail] = np.zeros(self.dim, dtype=np.float32)
                self.tail_ids[tail] = ""
                self._tail = None

    def live_ids(self) -> list[str]:
        return [*self.positions, *self.tail_positions]

    # ---- reads --------------------------------------------------------------------------

    def vector(self, memory_id: str) -> np.ndarray | None:
        tail = self.tail_positions.get(memory_id)
        if tail is not None:
            return self.tail_rows[tail]
        position = self.positions.get(memory_id)
        if position is None:
            return None
        return self.codes[position].astype(np.float32) * self.scales[position]

    def search(self, query: np.ndarray, want: int, widen: int = 1) -> list[tuple[str, float]]:
        """About the `want` nearest live vectors by cosine; `widen` scans that many times more
        clusters (the caller widens when filters reject too many)."""
        query = query.astype(np.float32)
        hits = self._search_clusters(query, want, widen)
        hits.extend(self._search_tail(query))
        hits.sort(key=lambda hit: -hit[1])
        return hits[:want]

    def _search_clusters(self, query: np.ndarray, want: int, widen: int) -> list[tuple[str, float]]:
        clusters = self.centroids.shape[0]
        if clusters == 0:
            return []
        sizes = np.diff(self.offsets)
        target = max(MIN_SCANNED, want * 8, int(SCANNED_FRACTION * len(self.ids))) * widen
        order = np.argsort(-(self.centroids @ query))
        probed = int(np.searchsorted(np.cumsum(sizes[order]), target)) + 1
        chosen = np.sort(order[: min(probed, clusters)])
        spans = [(int(self.offsets[c]), int(self.offsets[c + 1])) for c in chosen]
        positions = np.concatenate(
            [np.arange(a, b) for a, b in spans if b > a] or [np.zeros(0, int)]
        )
        if positions.size == 0:
            return []
        block = np.concatenate([self.codes[a:b] for a, b in spans if b > a])
        scores = (block.astype(np.float32) @ query) * self.scales[positions]
        scores[~self.alive[positions]] = -np.inf
        take = min(want, positions.size)
        top = np.argpartition(-scores, take - 1)[:take]
        return [(self.ids[positions[i]], float(scores[i])) for i in top if np.isfinite(scores[i])]

    def _search_tail(self, query: np.ndarray) -> list[tuple[str, float]]:
        if not self.tail_positions:
            return []
        if self._tail is None:
            self._tail = np.vstack(self.tail_rows)
        scores = self._tail @ query
        return [(self.tail_ids[i], float(scores[i])) for i in self.tail_positions.values()]


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and one float scale per vector: vector ~= codes * scale."""
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.rint(vectors / scales[:, None]).astype(np.int8)
    return codes, scales


def _decode(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    return codes.astype(np.float32) * scales[:, None]


def _kmeans(
    sample: np.ndarray,
    clusters: int,
    rng: np.random.Generator,
    progress: Callable[[float], None],
) -> np.ndarray:
    """Spherical k-means (cosine): centroids are normalised means."""
    sample = _normalised(sample)
    centroids = sample[rng.choice(len(sample), size=clusters, replace=False)].copy()
    for round_ in range(KMEANS_ROUNDS):
        progress(round_ / KMEANS_ROUNDS)
        assignment = np.concatenate(
            [
                np.argmax(sample[i : i + _CHUNK] @ centroids.T, axis=1)
                for i in range(0, len(sample), _CHUNK)
            ]
        )
        counts = np.bincount(assignment, minlength=clusters)
        order = np.argsort(assignment, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        sums = np.zeros_like(centroids)
        filled = counts > 0
        sums[filled] = np.add.reduceat(sample[order], starts[filled], axis=0)
        empty = ~filled
        sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()))]
        centroids = _normalised(sums)
    return centroids


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)
