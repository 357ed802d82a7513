"""Exact cosine KNN over the vectors kept in SQLite.

Two backends give the same results: a numpy matrix product over an in-process copy of the
BLOB vectors (refreshed when another process commits), and sqlite-vec's vec0 index. numpy
measured several times faster at every size we tried, so `auto` uses it while the matrix fits
the memory budget (`search.numpy_max_mb`) and falls back to vec0 past it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from cortex_mcp.models import SearchFilters
from cortex_mcp.store.memories import MemoryStore
from cortex_mcp.store.vectors import VectorStore

log = logging.getLogger(__name__)


@dataclass
class _Matrix:
    model_key: str
    dim: int
    ids: list[str] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    matrix: np.ndarray | None = None
    max_rowid: int = 0
    count: int = 0
    data_version: int = -1
    _positions: dict[str, int] = field(default_factory=dict)

    def positions(self) -> dict[str, int]:
        """Row of each id, built once per growth of the matrix (not once per recall)."""
        if len(self._positions) != len(self.ids):
            self._positions = {memory_id: i for i, memory_id in enumerate(self.ids)}
        return self._positions

    def stacked(self) -> np.ndarray:
        if self.matrix is None or self.matrix.shape[0] != len(self.ids):
            self.matrix = (
                np.vstack(self.rows) if self.rows else np.zeros((0, self.dim), dtype=np.float32)
            )
            self.rows = [self.matrix]
        return self.matrix


class VectorIndex:
    def __init__(
        self, vectors: VectorStore, memories: MemoryStore, *, backend: str, numpy_max_mb: int
    ) -> None:
        self.vectors = vectors
        self.memories = memories
        self.backend_setting = backend
        self.numpy_max_bytes = numpy_max_mb * 1024 * 1024
        self._matrix: _Matrix | None = None
        self._dirty = True

    def mark_dirty(self) -> None:
        """Our own writes do not change the data_version counter; say so explicitly."""
        self._dirty = True

    async def backend_for(self, model_key: str, dim: int) -> str:
        if not self.vectors.db.vec_loaded:
            return "numpy"
        if self.backend_setting != "auto":
            return self.backend_setting
        matrix = self._matrix
        if matrix is not None and matrix.model_key == model_key and matrix.dim == dim:
            count = matrix.count  # refreshed on every numpy search
        else:
            count, _ = await self.vectors.shape(model_key, dim)
        return "numpy" if count * dim * 4 <= self.numpy_max_bytes else "vec0"

    async def search(
        self, query: np.ndarray, model_key: str, k: int, filters: SearchFilters
    ) -> tuple[list[tuple[str, float]], str]:
        """Top-k (id, cosine similarity) among the memories `filters` allow, and the backend."""
        dim = int(query.shape[0])
        backend = await self.backend_for(model_key, dim)
        if backend == "vec0" and await self.vectors.ensure_vec_index(model_key, dim):
            self._matrix = None  # past the memory budget: do not keep both
            return await self._search_vec0(query, k, filters), "vec0"
        return await self._search_numpy(query, model_key, k, filters), "numpy"

    async def vectors_for(
        self, ids: list[str], model_key: str, dim: int, *, refresh: bool = True
    ) -> dict[str, np.ndarray]:
        """`refresh=False` reuses the matrix as the search just refreshed it (same recall):
        it saves a round trip to the database thread (the data-version check)."""
        matrix = self._matrix
        if refresh or matrix is None or matrix.model_key != model_key or matrix.dim != dim:
            matrix = await self._refresh(model_key, dim)
        positions = matrix.positions()
        stacked = matrix.stacked()
        return {i: stacked[positions[i]] for i in ids if i in positions}

    async def _search_numpy(
        self, query: np.ndarray, model_key: str, k: int, filters: SearchFilters
    ) -> list[tuple[str, float]]:
        matrix = await self._refresh(model_key, int(query.shape[0]))
        stacked = matrix.stacked()
        if stacked.shape[0] == 0:
            return []
        scores = np.dot(stacked, query.astype(np.float32))
        return await self._filtered_top(scores, matrix.ids, k, filters)

    async def _filtered_top(
        self, scores: np.ndarray, ids: list[str], k: int, filters: SearchFilters
    ) -> list[tuple[str, float]]:
        want = min(len(ids), max(k * 3, 32))
        while True:
            top = (
                np.argpartition(-scores, want - 1)[:want]
                if want < len(ids)
                else np.arange(len(ids))
            )
            top = top[np.argsort(-scores[top], kind="stable")]
            candidate_ids = [ids[i] for i in top]
            allowed = await self.memories.eligible(candidate_ids, filters)
            hits = [(ids[i], float(scores[i])) for i in top if ids[i] in allowed]
            if len(hits) >= k or want >= len(ids):
                return hits[:k]
            want = min(len(ids), want * 4)

    async def _search_vec0(
        self, query: np.ndarray, k: int, filters: SearchFilters
    ) -> list[tuple[str, float]]:
        blob = query.astype(np.float32).tobytes()
        want = max(k * 3, 32)
        total, _ = await self.vectors.shape(*(await self._vec_model()))
        while True:
            found = await self.vectors.knn(blob, min(want, 4096))
            allowed = await self.memories.eligible([i for i, _ in found], filters)
            hits = [(i, 1.0 - distance) for i, distance in found if i in allowed]
            if len(hits) >= k or len(found) < want or want >= min(total, 4096):
                return hits[:k]
            want *= 4

    async def _vec_model(self) -> tuple[str, int]:
        value = await self.vectors.db.get_meta("vec_index") or "|0"
        model, dim = value.rsplit("|", 1)
        return model, int(dim)

    async def _refresh(self, model_key: str, dim: int) -> _Matrix:
        matrix = self._matrix
        if matrix is None or matrix.model_key != model_key or matrix.dim != dim:
            matrix = self._matrix = _Matrix(model_key, dim)
        version = await self.vectors.db.data_version()
        if not self._dirty and version == matrix.data_version:
            return matrix
        count, max_rowid = await self.vectors.shape(model_key, dim)
        if max_rowid < matrix.max_rowid or count < matrix.count:
            matrix = self._matrix = _Matrix(model_key, dim)  # rows were deleted: reload
        if count != matrix.count or max_rowid != matrix.max_rowid:
            await self._append_new(matrix)
            if matrix.count != count:  # replaced rows: start over once
                matrix = self._matrix = _Matrix(model_key, dim)
                await self._append_new(matrix)
        matrix.data_version = version
        self._dirty = False
        return matrix

    async def _append_new(self, matrix: _Matrix) -> None:
        fresh = await self.vectors.load(matrix.model_key, matrix.dim, matrix.max_rowid)
        if not fresh:
            return
        block = np.frombuffer(b"".join(v.vector for v in fresh), dtype=np.float32)
        matrix.rows.append(block.reshape(len(fresh), matrix.dim))
        matrix.ids.extend(v.memory_id for v in fresh)
        matrix.max_rowid = fresh[-1].rowid
        matrix.count += len(fresh)
        matrix.matrix = None
