"""Pairs of vectors with cosine >= a threshold, without comparing all pairs.

Up to `_EXACT` vectors every pair is compared (a blocked matrix product). Beyond, an inverted
file: about sqrt(n) centroids from a few rounds of spherical k-means on a sample, each vector
filed under its nearest centroid, and each vector compared with the vectors filed under its
`_PROBES` nearest centroids. Near-duplicates (cosine >= 0.85) sit close together and nearly
always share their nearest centroid; probing three cells catches those on a border. The cost is
n x _PROBES x n / sqrt(n) products: n^1.5, a few seconds at 100K. Seeded, so a preview and the
run after it find the same pairs.
"""

from __future__ import annotations

import numpy as np

_EXACT = 4096
_PROBES = 3
_ROUNDS = 4
_SAMPLE = 20000
_BLOCK = 1024
_SEED = 20240611


def close_pairs(unit: np.ndarray, threshold: float) -> np.ndarray:
    """(k, 2) row pairs (i < j) of `unit` (rows of length 1) with cosine >= `threshold`."""
    n = len(unit)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    if n <= _EXACT:
        return _exact(unit, threshold)
    centroids = _centroids(unit, int(np.sqrt(n)))
    nearest = _nearest(unit, centroids, _PROBES)
    members_of = _inverted(nearest[:, :1], len(centroids))
    askers_of = _inverted(nearest, len(centroids))
    found = []
    for members, askers in zip(members_of, askers_of, strict=True):
        if len(members) == 0:
            continue
        for start in range(0, len(askers), _BLOCK):
            rows = askers[start : start + _BLOCK]
            hits = np.nonzero(unit[rows] @ unit[members].T >= threshold)
            left, right = rows[hits[0]], members[hits[1]]
            found.append(np.minimum(left, right)[left != right] * n)
            found[-1] += np.maximum(left, right)[left != right]
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.unique(np.concatenate(found))
    return np.stack([pairs // n, pairs % n], axis=1)


def _inverted(cells: np.ndarray, count: int) -> list[np.ndarray]:
    """For each cell, the rows that name it in `cells` (one row per vector)."""
    flat = cells.ravel()
    order = np.argsort(flat, kind="stable")
    rows = order // cells.shape[1]
    bounds = np.searchsorted(flat[order], np.arange(count + 1))
    return [rows[bounds[c] : bounds[c + 1]] for c in range(count)]


def _exact(unit: np.ndarray, threshold: float) -> np.ndarray:
    found = []
    for start in range(0, len(unit), _BLOCK):
        block = unit[start : start + _BLOCK] @ unit.T
        rows, cols = np.nonzero(block >= threshold)
        rows = rows + start
        keep = rows < cols
        found.append(np.stack([rows[keep], cols[keep]], axis=1))
    return np.concatenate(found).astype(np.int64)


def _centroids(unit: np.ndarray, count: int) -> np.ndarray:
    """Spherical k-means on a sample: unit-length centres of `count` cells."""
    rng = np.random.default_rng(_SEED)
    sample = unit[rng.choice(len(unit), size=min(len(unit), _SAMPLE), replace=False)]
    centroids = sample[rng.choice(len(sample), size=count, replace=False)].copy()
    for _ in range(_ROUNDS):
        owner = _nearest(sample, centroids, 1)[:, 0]
        order = np.argsort(owner, kind="stable")
        cells, starts = np.unique(owner[order], return_index=True)
        sums = np.add.reduceat(sample[order], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0
        centroids[cells[filled]] = sums[filled] / norms[filled, None]
    return centroids


def _nearest(unit: np.ndarray, centroids: np.ndarray, count: int) -> np.ndarray:
    """The `count` most similar centroids of each row, most similar first."""
    out = np.empty((len(unit), count), dtype=np.int64)
    for start in range(0, len(unit), 8192):
        sims = unit[start : start + 8192] @ centroids.T
        top = np.argpartition(-sims, count - 1, axis=1)[:, :count]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[start : start + 8192] = np.take_along_axis(top, order, axis=1)
    return out
