"""Text near-duplicate measure for the lifecycle when no vectors are at hand.

Dice coefficient over word unigrams and bigrams (CJK split per character, like the search
index), so "The user lives in Tokyo" and "User lives in Tokyo." score 0.875. Never all pairs:
`best` looks at the texts sharing one of a text's rarest words (an inverted index), `clusters`
at the pairs MinHash bands put in one bucket (`blocking`).
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

import numpy as np

from cortex_mcp.engine.lifecycle.blocking import candidate_pairs
from cortex_mcp.tokenize import index_text

_WORD = re.compile(r"\w+", re.UNICODE)
_PROBES = 4  # rarest words used to find candidates; a candidate must share two of them
_MAX_POSTING = 400  # words more common than this are useless as probes
_BLOCK = 512  # rows of the cosine matrix computed at a time


def shingles(text: str) -> frozenset[str]:
    words = _WORD.findall(index_text(text).casefold())
    return frozenset([*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))])


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def _comparable(a: int, b: int, floor: float = 0.5) -> bool:
    """Sets this different in size cannot reach a useful Dice score."""
    return min(a, b) >= floor * max(a, b)


class TextSimilarity:
    def __init__(self) -> None:
        self._keys: list[str] = []
        self._sets: list[frozenset[str]] = []
        self._postings: dict[str, list[int]] = defaultdict(list)

    def add(self, key: str, text: str) -> None:
        position = len(self._keys)
        items = shingles(text)
        self._keys.append(key)
        self._sets.append(items)
        for item in items:
            if " " not in item:
                self._postings[item].append(position)

    def _candidates(self, items: frozenset[str]) -> set[int]:
        words = [w for w in items if " " not in w and len(self._postings.get(w, ())) > 0]
        words.sort(key=lambda w: (len(self._postings[w]), w))
        found: set[int] = set()
        for word in words[:_PROBES]:
            posting = self._postings[word]
            if len(posting) <= _MAX_POSTING:
                found.update(posting)
        return found

    def best(self, text: str) -> tuple[str | None, float]:
        """The most similar indexed text and its similarity (0 when none shares a word)."""
        items = shingles(text)
        best_key, best_score = None, 0.0
        for position in sorted(self._candidates(items)):
            score = dice(items, self._sets[position])
            if score > best_score:
                best_key, best_score = self._keys[position], score
        return best_key, best_score

    def clusters(
        self, threshold: float, vectors: dict[str, np.ndarray] | None = None
    ) -> list[list[str]]:
        """Groups of keys linked by similarity >= threshold (union-find), in insertion order.
        A pair whose keys both have a vector is compared by cosine, any other pair by text."""
        parent = list(range(len(self._keys)))
        unit = _unit_vectors(self._keys, vectors or {})

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i, j in candidate_pairs(self._sets, threshold).tolist():
            both_have_vectors = i in unit and j in unit
            if not both_have_vectors and dice(self._sets[i], self._sets[j]) >= threshold:
                parent[root(j)] = root(i)
        for i, j in _cosine_pairs(unit, threshold):
            parent[root(j)] = root(i)
        groups: dict[int, list[str]] = defaultdict(list)
        for i, key in enumerate(self._keys):
            groups[root(i)].append(key)
        return [keys for keys in groups.values() if len(keys) > 1]


def _unit_vectors(keys: list[str], vectors: dict[str, np.ndarray]) -> dict[int, np.ndarray]:
    """Positions with a vector, normalised; vectors of another size than the first are
    left out (a mixed store during a model switch compares those pairs by text)."""
    unit: dict[int, np.ndarray] = {}
    size = None
    for position, key in enumerate(keys):
        vector = vectors.get(key)
        if vector is None:
            continue
        flat = np.asarray(vector, dtype=np.float32).ravel()
        norm = float(np.linalg.norm(flat))
        size = flat.shape[0] if size is None else size
        if norm > 0 and flat.shape[0] == size:
            unit[position] = flat / norm
    return unit


def _cosine_pairs(unit: dict[int, np.ndarray], threshold: float) -> list[tuple[int, int]]:
    """Pairs (i < j) of positions whose cosine similarity reaches the threshold."""
    if len(unit) < 2:
        return []
    positions = np.array(sorted(unit))
    matrix = np.stack([unit[p] for p in positions.tolist()])
    pairs: list[tuple[int, int]] = []
    for start in range(0, len(positions), _BLOCK):
        block = matrix[start : start + _BLOCK] @ matrix.T
        rows, cols = np.nonzero(block >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            if start + row < col:
                pairs.append((int(positions[start + row]), int(positions[col])))
    return pairs
