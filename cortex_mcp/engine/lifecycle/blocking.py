"""Which pairs of texts are worth comparing, found without comparing all pairs.

MinHash with locality-sensitive bands over the shingles the Dice measure reads (words, word
bigrams, CJK characters and character bigrams): sets with Jaccard similarity J share one band's
bucket with probability 1 - (1 - J^ROWS)^BANDS, 0.996 for the merge threshold (Dice 0.85 is
Jaccard 0.74). In each band, members are sorted by bucket (then by the next band's bucket)
and each meets its `_WINDOW` following neighbours in the same bucket: a bucket of up to
`_WINDOW + 1` compares all its pairs, a bucket one template fills (thousands of alike lines)
stays linear. Pairs whose signatures estimate a Jaccard well under the threshold's are dropped
before the exact Dice. Every step is a numpy pass over the signatures: n log n in all.

Shingles are numbered by CRC-32 of their text, so the candidates depend only on the texts
(a preview and a run in another process agree), never on Python's salted string hash."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

BANDS, ROWS = 16, 4
HASHES = BANDS * ROWS  # they also estimate Jaccard (within 0.06 at the threshold's)
_WINDOW = 8  # each member of a bucket meets this many neighbours (all, in a small bucket)
_MARGIN = 0.2  # estimated Jaccard this far under the threshold's is still checked exactly
_SEED = 20240611


def jaccard_floor(dice_threshold: float) -> float:
    """The Jaccard similarity of sets whose Dice coefficient is `dice_threshold`."""
    return dice_threshold / (2 - dice_threshold)


def candidate_pairs(sets: Sequence[frozenset[str]], dice_threshold: float) -> np.ndarray:
    """Pairs (i < j) of positions whose sets may reach `dice_threshold`, each once, as an
    (k, 2) array: sharing a band's bucket (as neighbours in it), with an estimated Jaccard
    within `_MARGIN` of the threshold's."""
    signatures = minhash_signatures(sets)
    live = np.flatnonzero([bool(s) for s in sets])
    if len(live) < 2:
        return np.empty((0, 2), dtype=np.int64)
    keys = [_band_key(signatures[live], band) for band in range(BANDS)]
    found = []
    for band in range(BANDS):
        order = np.lexsort((keys[(band + 1) % BANDS], keys[band]))
        ordered = keys[band][order]
        for step in range(1, min(_WINDOW, len(order) - 1) + 1):
            same = ordered[step:] == ordered[:-step]
            left, right = live[order[:-step][same]], live[order[step:][same]]
            found.append(np.minimum(left, right) * len(sets) + np.maximum(left, right))
    pairs = np.sort(np.concatenate(found))
    pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))[: len(pairs)]]
    first, second = pairs // len(sets), pairs % len(sets)
    agree = np.zeros(len(pairs), dtype=np.int64)
    for start in range(0, len(pairs), 65536):
        part = slice(start, start + 65536)
        agree[part] = (signatures[first[part]] == signatures[second[part]]).sum(axis=1)
    keep = agree >= (jaccard_floor(dice_threshold) - _MARGIN) * HASHES
    return np.stack([first[keep], second[keep]], axis=1)


def minhash_signatures(sets: Sequence[frozenset[str]]) -> np.ndarray:
    """(len(sets), HASHES) minimum hashes; an empty set's row is all maximal."""
    sizes = np.fromiter((len(items) for items in sets), dtype=np.int64, count=len(sets))
    flat = [zlib.crc32(item.encode()) for items in sets for item in items]
    signatures = np.full((len(sets), HASHES), np.iinfo(np.uint32).max, dtype=np.uint32)
    if not flat:
        return signatures
    values = np.array(flat, dtype=np.uint64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    filled = sizes > 0
    rng = np.random.default_rng(_SEED)
    a = rng.integers(1, 1 << 63, size=HASHES, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 1 << 63, size=HASHES, dtype=np.uint64)
    for k in range(HASHES):
        hashed = (a[k] * values + b[k]) >> np.uint64(32)  # multiply-shift hashing
        signatures[filled, k] = np.minimum.reduceat(hashed, starts[filled])
    return signatures


def _band_key(signatures: np.ndarray, band: int) -> np.ndarray:
    """One 64-bit key per row for the band's ROWS values (a collision only adds candidates)."""
    columns = signatures[:, band * ROWS : (band + 1) * ROWS].astype(np.uint64)
    key = np.zeros(len(signatures), dtype=np.uint64)
    for column in columns.T:
        key = key * np.uint64(0x9E3779B97F4A7C15) + column
    return key
