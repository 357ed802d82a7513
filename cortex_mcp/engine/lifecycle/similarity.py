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
from cortex_mcp.engine.lifecycle.vector_blocking import close_pairs
from cortex_mcp.tokenize import index_text

_WORD = re.compile(r"\w+", re.UNICODE)
_PROBES = 4  # rarest words used to find candidates; a candidate must share two of them
_MAX_POSTING = 400  # words more common than this are useless as probes


def shingles(text: str) -> frozenset[str]:
    words = _WORD.findall(index_text(text).casefold())
    return frozenset([*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))])


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


class TextSimilarity:
    """Texts indexed for `best` (rarest-word postings, Dice computed with numpy over the
    candidates' shingle numbers) and for `clusters` (MinHash bands)."""

    def __init__(self, *, searchable: bool = True) -> None:
        self._searchable = searchable  # False: only `clusters` is asked (no postings needed)
        self._keys: list[str] = []
        self._sets: list[frozenset[str]] = []
        self._postings: dict[str, list[int]] = defaultdict(list)
        self._numbers: dict[str, int] = {}  # shingle -> its number in `_flat`
        self._flat = _Growing()  # every text's shingle numbers, one after another
        self._starts = _Growing()
        self._sizes = _Growing()
        self._marks = np.zeros(1024, dtype=bool)  # the query's shingles, by number

    def add(self, key: str, text: str, items: frozenset[str] | None = None) -> None:
        """Index `text` (or its already computed `items`) under `key`."""
        position = len(self._keys)
        items = shingles(text) if items is None else items
        self._keys.append(key)
        self._sets.append(items)
        if not self._searchable:
            return
        numbers = self._numbers
        self._starts.append([len(self._flat)])
        self._sizes.append([len(items)])
        self._flat.append([numbers.setdefault(item, len(numbers)) for item in items])
        for item in items:
            if " " not in item:
                self._postings[item].append(position)

    def _candidates(self, items: frozenset[str]) -> np.ndarray:
        """Sorted positions of the texts sharing one of the `_PROBES` rarest words of `items`
        (words in more than `_MAX_POSTING` texts count among the rarest but find nothing)."""
        postings = self._postings
        words = [w for w in items if " " not in w and w in postings]
        words.sort(key=lambda w: (len(postings[w]), w))
        chosen = [postings[w] for w in words[:_PROBES] if len(postings[w]) <= _MAX_POSTING]
        return np.unique(np.fromiter(itertools.chain(*chosen), dtype=np.int64))

    def best(self, text: str, items: frozenset[str] | None = None) -> tuple[str | None, float]:
        """The most similar indexed text and its similarity (0 when none shares a word);
        the first indexed of equals."""
        items = shingles(text) if items is None else items
        positions = self._candidates(items)
        if not len(positions):
            return None, 0.0
        scores = self._dice_with(items, positions)
        best = int(np.argmax(scores))
        return self._keys[positions[best]], float(scores[best])

    def _dice_with(self, items: frozenset[str], positions: np.ndarray) -> np.ndarray:
        """Dice of `items` with each indexed text at `positions`, as `dice` computes it."""
        starts, sizes = self._starts.view()[positions], self._sizes.view()[positions]
        segments = np.cumsum(sizes) - sizes
        gather = np.arange(int(sizes.sum())) + np.repeat(starts - segments, sizes)
        if len(self._marks) < len(self._numbers):
            self._marks = np.zeros(2 * len(self._numbers), dtype=bool)
        mine = [self._numbers[i] for i in items if i in self._numbers]
        self._marks[mine] = True
        hits = self._marks[self._flat.view()[gather]].astype(np.int64)
        self._marks[mine] = False
        return 2 * np.add.reduceat(hits, segments) / (sizes + len(items))

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


class _Growing:
    """An int64 array that grows by doubling (appends in amortised constant time)."""

    def __init__(self) -> None:
        self._data = np.empty(256, dtype=np.int64)
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def append(self, values: list[int]) -> None:
        end = self._used + len(values)
        if end > len(self._data):
            grown = np.empty(max(end, 2 * len(self._data)), dtype=np.int64)
            grown[: self._used] = self._data[: self._used]
            self._data = grown
        self._data[self._used : end] = values
        self._used = end

    def view(self) -> np.ndarray:
        return self._data[: self._used]


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
    pairs = positions[close_pairs(matrix, threshold)]
    return [(int(i), int(j)) for i, j in pairs.tolist()]
