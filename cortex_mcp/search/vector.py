"""Cosine KNN over the vectors kept in SQLite, one in-process index per agent.

A search only ever looks at the asking agent's own vectors (plus, when asked, the few that
other agents shared), so one agent's recall cannot return another's memory on any backend,
and a small agent on a big file is as fast as on its own file. Per agent, `auto` picks:

- exact: a float32 matrix product, while the agent's vectors fit `search.numpy_max_mb`;
- ivf: an inverted-file index of int8 codes (search/ivf.py) past it, a quarter of the memory
  and a few percent of the vectors read per search.

`vec0` (sqlite-vec's exact index, shared by all agents) stays available by setting. The
indexes follow every process's writes through one cheap watermark (highest vector rowid and a
deletion counter) and are rebuilt from the BLOB table, the source of truth, after a restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from cortex_mcp.models import SearchFilters
from cortex_mcp.search.ivf import IvfIndex, quantize
from cortex_mcp.store.memories import MemoryStore
from cortex_mcp.store.vectors import VectorStore

log = logging.getLogger(__name__)

MB = 1024 * 1024
IN_PROCESS = ("numpy", "ivf")  # backends whose vectors are in memory (no table read)


@dataclass
class _Exact:
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
        want = min(want, len(scores))
        top = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else np.arange(want)
        top = np.sort(top)  # equal scores: the older vector first, whatever the partition did
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in top]


class _Ivf:
    """IvfIndex with the partition interface; rebuilt when its exact tail grows large."""

    kind = "ivf"

    def __init__(self, index: IvfIndex) -> None:
        self.index = index

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
        return self.index.tail_size > max(20_000, len(self.index) // 4)


_Partition = _Exact | _Ivf


@dataclass
class BuildReport:
    agent_id: str
    kind: str
    vectors: int
    seconds: float


class VectorIndex:
    def __init__(
        self, vectors: VectorStore, memories: MemoryStore, *, backend: str, numpy_max_mb: int
    ) -> None:
        self.vectors = vectors
        self.memories = memories
        self.backend_setting = backend
        self.numpy_max_bytes = numpy_max_mb * MB
        self._model: tuple[str, int] | None = None
        self._partitions: dict[str, _Partition] = {}
        self._watermark: tuple[int, int] = (-1, -1)
        self._dirty = True
        self._data_version = -1
        self._lock = asyncio.Lock()
        self.builds: list[BuildReport] = []  # what was built, for stats and benchmarks

    def mark_dirty(self) -> None:
        """Our own writes do not change the data_version counter; say so explicitly."""
        self._dirty = True

    async def backend_for(self, agent_id: str, model_key: str, dim: int) -> str:
        if self.backend_setting == "vec0" and self.vectors.db.vec_loaded:
            return "vec0"
        partition = await self._partition(agent_id, model_key, dim)
        return partition.kind

    async def search(
        self, query: np.ndarray, model_key: str, k: int, filters: SearchFilters
    ) -> tuple[list[tuple[str, float]], str]:
        """Top-k (id, cosine similarity) among the memories `filters` allow, and the backend."""
        dim = int(query.shape[0])
        if (
            self.backend_setting == "vec0"
            and self.vectors.db.vec_loaded
            and await self.vectors.ensure_vec_index(model_key, dim)
        ):
            return await self._search_vec0(query, k, filters), "vec0"
        partition = await self._partition(filters.agent_id, model_key, dim)
        query = query.astype(np.float32)
        shared = await self._shared(filters, model_key, dim)
        widen = 1
        while True:
            want = max(k * 3, 32) * widen
            found = partition.search(query, want, widen)
            found.extend((i, float(v @ query)) for i, v in shared.items())
            found.sort(key=lambda hit: -hit[1])
            allowed = await self.memories.eligible([i for i, _ in found], filters)
            hits = [hit for hit in found if hit[0] in allowed]
            exhausted = len(found) < want + len(shared)
            if len(hits) >= k or exhausted or widen >= 64:
                return hits[:k], partition.kind
            widen *= 4

    async def vectors_for(
        self, ids: list[str], model_key: str, dim: int, *, refresh: bool = True
    ) -> dict[str, np.ndarray]:
        """Vectors of these memories: from the in-process indexes (`refresh=False` trusts
        them as the search just refreshed them), else from the table."""
        if refresh or self._model != (model_key, dim):
            await self._sync(model_key, dim)
        found: dict[str, np.ndarray] = {}
        for memory_id in ids:
            for partition in self._partitions.values():
                vector = partition.vector(memory_id)
                if vector is not None:
                    found[memory_id] = vector
                    break
        missing = [i for i in ids if i not in found]
        for memory_id, blob in (await self.vectors.vectors_of(missing, model_key, dim)).items():
            found[memory_id] = np.frombuffer(blob, dtype=np.float32)
        return found

    # ---- keeping the indexes current ----------------------------------------------------

    async def _partition(self, agent_id: str, model_key: str, dim: int) -> _Partition:
        await self._sync(model_key, dim)
        partition = self._partitions.get(agent_id)
        if partition is None or self._outgrown(partition):
            async with self._lock:
                partition = self._partitions.get(agent_id)
                if partition is None or self._outgrown(partition):
                    partition = await self._load(agent_id, model_key, dim)
                    self._partitions[agent_id] = partition
        return partition

    def _outgrown(self, partition: _Partition) -> bool:
        if isinstance(partition, _Ivf):
            return self.backend_setting != "numpy" and partition.needs_rebuild()
        return self._wants_ivf(len(partition), partition.dim)

    def _wants_ivf(self, count: int, dim: int) -> bool:
        if self.backend_setting == "numpy":
            return False
        if self.backend_setting == "ivf":
            return True
        return count * dim * 4 > self.numpy_max_bytes

    async def _load(self, agent_id: str, model_key: str, dim: int) -> _Partition:
        """Read an agent's vectors from the table; past the budget, build an IVF index
        (the float32 blocks are turned into int8 codes as they arrive)."""
        started = time.perf_counter()
        exact = _Exact(dim)
        codes: list[np.ndarray] = []
        scales: list[np.ndarray] = []
        ids: list[str] = []
        async for block_ids, block in self.vectors.agent_vectors(agent_id, model_key, dim):
            if not codes and not self._wants_ivf(len(exact) + len(block_ids), dim):
                exact.add_block(block_ids, block)
                continue
            if len(exact):  # past the budget: what was exact becomes codes too
                codes.append(quantize(exact.stacked())[0])
                scales.append(quantize(exact.stacked())[1])
                ids.extend(exact.ids)
                exact = _Exact(dim)
            block_codes, block_scales = quantize(block)
            codes.append(block_codes)
            scales.append(block_scales)
            ids.extend(block_ids)
        partition: _Partition = exact
        if codes:
            all_codes, all_scales = np.concatenate(codes), np.concatenate(scales)
            index = await asyncio.to_thread(IvfIndex.build, ids, all_codes, all_scales)
            partition = _Ivf(index)
        seconds = time.perf_counter() - started
        self.builds.append(BuildReport(agent_id, partition.kind, len(partition), seconds))
        if seconds > 1:
            log.info(
                "vector index for agent %s: %d vectors (%s) in %.1f s",
                agent_id,
                len(partition),
                partition.kind,
                seconds,
            )
        return partition

    async def _sync(self, model_key: str, dim: int) -> None:
        """Apply what changed since the last search: new and replaced vectors by rowid, and
        deletions (rare: purges) by comparing each loaded agent's ids with the table."""
        if self._model != (model_key, dim):
            self._model = (model_key, dim)
            self._partitions = {}
            self._watermark = await self.vectors.watermark()
            self._dirty = False
            return
        version = await self.vectors.db.data_version()
        if not self._dirty and version == self._data_version:
            return
        self._dirty = False
        self._data_version = version
        max_rowid, deletions = await self.vectors.watermark()
        last_rowid, last_deletions = self._watermark
        if max_rowid == last_rowid and deletions == last_deletions:
            return
        async with self._lock:
            if max_rowid > last_rowid:
                for _, memory_id, agent_id, blob in await self.vectors.added_since(
                    model_key, dim, last_rowid
                ):
                    partition = self._partitions.get(agent_id)
                    if partition is not None:
                        partition.upsert(memory_id, np.frombuffer(blob, dtype=np.float32))
            if deletions != last_deletions or max_rowid < last_rowid:
                await self._reconcile(model_key, dim)
            self._watermark = (max_rowid, deletions)

    async def _reconcile(self, model_key: str, dim: int) -> None:
        for agent_id, partition in self._partitions.items():
            stored = await self.vectors.agent_vector_ids(agent_id, model_key, dim)
            held = set(partition.live_ids())
            partition.remove(held - stored)
            missing = list(stored - held)
            for memory_id, blob in (await self.vectors.vectors_of(missing, model_key, dim)).items():
                partition.upsert(memory_id, np.frombuffer(blob, dtype=np.float32))

    async def _shared(
        self, filters: SearchFilters, model_key: str, dim: int
    ) -> dict[str, np.ndarray]:
        if not filters.include_shared:
            return {}
        blobs = await self.vectors.shared_vectors(filters.agent_id, model_key, dim)
        return {i: np.frombuffer(b, dtype=np.float32) for i, b in blobs.items()}

    # ---- sqlite-vec ---------------------------------------------------------------------

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
