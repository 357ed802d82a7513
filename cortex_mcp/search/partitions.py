"""An agent's vectors in memory, two ways: an exact float32 matrix, or the IVF index of int8
codes (search/ivf.py) past the memory budget. Both answer the same calls (search/vector.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cortex_mcp.search.ivf import IvfIndex


@dataclass
class ExactPartition:
    """An agent's vectors as one float32 matrix (rows appended; replaced rows overwritten)."""

    dim: int
    ids: list[str] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    matrix: np.ndarray | None = None

    kind = "numpy"

    def __len__(self) -> int:
        return len(self.positions)

    @property
    def nbytes(self) -> int:
        return len(self.ids) * self.dim * 4

    def add_block(self, ids: list[str], block: np.ndarray) -> None:
        for memory_id, row in zip(ids, block, strict=True):
            self.upsert(memory_id, row)

    def upsert(self, memory_id: str, vector: np.ndarray) -> None:
        position = self.positions.get(memory_id)
        if position is not None:
            self.stacked()[position] = vector
            return
        self.positions[memory_id] = len(self.ids)
        self.ids.append(memory_id)
        self.rows.append(np.asarray(vector, dtype=np.float32).reshape(1, self.dim))
        self.matrix = None

    def remove(self, ids: set[str]) -> None:
        if not ids & self.positions.keys():
            return
        keep = [i for i, memory_id in enumerate(self.ids) if memory_id not in ids]
        stacked = self.stacked()
        self.ids = [self.ids[i] for i in keep]
        self.matrix = stacked[keep] if keep else np.zeros((0, self.dim), dtype=np.float32)
        self.rows = [self.matrix]
        self.positions = {memory_id: i for i, memory_id in enumerate(self.ids)}

    def live_ids(self) -> list[str]:
        return list(self.ids)

    def stacked(self) -> np.ndarray:
        if self.matrix is None or self.matrix.shape[0] != len(self.ids):
            self.matrix = (
                np.vstack(self.rows) if self.rows else np.zeros((0, self.dim), dtype=np.float32)
            )
            self.rows = [self.matrix]
        return self.matrix

    def vector(self, memory_id: str) -> np.ndarray | None:
        position = self.positions.get(memory_id)
        return None if position is None else self.stacked()[position]

    def search(self, query: np.ndarray, want: int, widen: int = 1) -> list[tuple[str, float]]:
        stacked = self.stacked()
        if stacked.shape[0] == 0:
            return []
        scores = stacked @ query.astype(np.float32)
        if want < len(scores):
            # the `want` best and every vector tied with the last of them: which of a tie
            # makes the cut is then the older first, whatever the partition did
            last = -np.partition(-scores, want - 1)[want - 1]
            top = np.flatnonzero(scores >= last)
        else:
            top = np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]  # equal scores: the older first
        ids = self.ids
        return list(zip([ids[i] for i in top.tolist()], scores[top].tolist(), strict=True))


class IvfPartition:
    """IvfIndex with the partition interface; rebuilt when its exact tail grows large."""

    kind = "ivf"

    def __init__(self, index: IvfIndex, versions: np.ndarray | None = None) -> None:
        self.index = index
        self.versions = versions  # the table row version of each clustered vector, if saved

    def saved_copy(self) -> IvfIndex:
        """The clusters as they are now, sharing the arrays (a save writes this in a thread
        while searches go on: they change only the original's tail and `alive` mask)."""
        index = self.index
        copy = IvfIndex(index.dim)
        copy.centroids, copy.codes, copy.scales = index.centroids, index.codes, index.scales
        copy.offsets, copy.ids = index.offsets, index.ids
        copy.alive = index.alive.copy()
        return copy

    def __len__(self) -> int:
        return len(self.index)

    @property
    def nbytes(self) -> int:
        return self.index.nbytes

    def upsert(self, memory_id: str, vector: np.ndarray) -> None:
        self.index.upsert(memory_id, vector)

    def remove(self, ids: set[str]) -> None:
        self.index.remove(ids)

    def live_ids(self) -> list[str]:
        return self.index.live_ids()

    def vector(self, memory_id: str) -> np.ndarray | None:
        return self.index.vector(memory_id)

    def search(self, query: np.ndarray, want: int, widen: int = 1) -> list[tuple[str, float]]:
        return self.index.search(query, want, widen)

    def needs_rebuild(self) -> bool:
        return self.index.tail_size > rebuild_threshold(len(self.index))


def rebuild_threshold(size: int) -> int:
    """Vectors outside the clusters (new, changed) past which an IVF index is rebuilt."""
    return max(20_000, size // 4)


Partition = ExactPartition | IvfPartition
