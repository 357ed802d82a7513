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
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from cortex_mcp.models import SearchFilters
from cortex_mcp.search import saved_index
from cortex_mcp.search.index_build import (
    BuildReport,
    BuildState,
    BuildStopped,
    IndexBuilder,
    IndexNotReady,
    failure_note,
)
from cortex_mcp.search.partitions import ExactPartition, IvfPartition, Partition
from cortex_mcp.store.interfaces import MemoryStorage, VectorStorage

log = logging.getLogger(__name__)

MB = 1024 * 1024
IN_PROCESS = ("numpy", "ivf")  # backends whose vectors are in memory (no table read)
INLINE_VECTORS = 20_000  # an exact index this small is read while the search waits (~30 MB)
RETRY_S = 30.0  # after a failed build, the next attempt waits this long


class VectorIndex:
    def __init__(
        self,
        vectors: VectorStorage,
        memories: MemoryStorage,
        *,
        backend: str,
        numpy_max_mb: int,
        saved_dir: Path | None = None,
    ) -> None:
        self.vectors = vectors
        self.memories = memories
        self.backend_setting = backend
        self.numpy_max_bytes = numpy_max_mb * MB
        self.builder = IndexBuilder(vectors, saved_dir, self._wants_ivf)
        self._model: tuple[str, int] | None = None
        self._partitions: dict[str, Partition] = {}
        self._builds: dict[str, BuildState] = {}
        self._failures: dict[str, tuple[str, float]] = {}
        self._watermark: tuple[int, int] = (-1, -1)
        self._dirty = True
        self._lock = asyncio.Lock()
        # one build or load at a time: of 2 cores, one keeps serving (and they would only
        # share the disk and the readers); FIFO, so an agent a recall asked for waits for one
        self._slot = asyncio.Lock()
        self._warming: asyncio.Task[None] | None = None
        self._scrubs: dict[str, asyncio.Task[None]] = {}
        self.builds: list[BuildReport] = []  # what was built or loaded, for stats and benchmarks

    def mark_dirty(self) -> None:
        """Our own writes since the last refresh: a search that follows a refresh reads the
        watermark again."""
        self._dirty = True

    async def refresh(self) -> bool:
        """Apply what changed since the last search, as a search does first; whether it did
        (not before the first search, nor with sqlite-vec). A caller that runs this while the
        query is embedded passes what it returned as `refreshed` to the search that follows,
        which then has nothing left to read (unless this process wrote meanwhile)."""
        if self._model is None or self.backend_setting == "vec0":
            return False
        await self._sync(*self._model)
        return True

    async def search(
        self,
        query: np.ndarray,
        model_key: str,
        k: int,
        filters: SearchFilters,
        *,
        refreshed: bool = False,
    ) -> tuple[list[tuple[str, float]], str]:
        """Top-k (id, cosine similarity) among the memories `filters` allow, and the backend.
        IndexNotReady while the agent's index is being built (the build goes on meanwhile).
        `refreshed`: `refresh()` has just run."""
        dim = int(query.shape[0])
        if (
            self.backend_setting == "vec0"
            and self.vectors.db.vec_loaded
            and await self.vectors.ensure_vec_index(model_key, dim)
        ):
            return await self._search_vec0(query, k, filters), "vec0"
        if not (refreshed and self._model == (model_key, dim) and not self._dirty):
            await self._sync(model_key, dim)
        partition = await self._partition(filters.agent_id, model_key, dim)
        query = query.astype(np.float32)
        shared = await self._shared(filters, model_key, dim)
        widen = 1
        while True:
            want = _first_pool(k, partition.kind) * widen
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

    def describe(self, agent_id: str) -> dict[str, Any]:
        """The agent's index as cortex_search_debug shows it."""
        state = self._builds.get(agent_id)
        partition = self._partitions.get(agent_id)
        described: dict[str, Any] = {"state": "not loaded"}
        if partition is not None:
            described = {"state": "ready", "kind": partition.kind, "vectors": len(partition)}
            last = next((b for b in reversed(self.builds) if b.agent_id == agent_id), None)
            if last is not None:
                described.update(source=last.source, seconds=round(last.seconds, 3))
        if state is not None:
            doing = "queued" if state.queued else "rebuilding" if state.replacing else state.phase
            described.update(build={"state": doing, "progress": round(state.done, 3)})
            if partition is None:
                described["state"] = state.phase
        elif agent_id in self._failures:
            described["failed"] = self._failures[agent_id][0]
        return described

    async def settled(self) -> None:
        """Wait until no build or save is running (benchmarks and tests: like `embed_pending`)."""
        if self._warming is not None:
            await asyncio.gather(self._warming, return_exceptions=True)
        while self._builds or self._scrubs:
            running = [s.task for s in list(self._builds.values()) if s.task]
            await asyncio.gather(*running, *self._scrubs.values(), return_exceptions=True)
            self._scrubs = {a: t for a, t in self._scrubs.items() if not t.done()}

    async def warm(self, model_key: str, dim: int, agents: list[str]) -> None:
        """Load (or build) these agents' indexes one after another; an agent a recall asks
        for meanwhile goes next."""
        await self._sync(model_key, dim)
        for agent_id in agents:
            if self._model != (model_key, dim):
                return
            if agent_id not in self._partitions and agent_id not in self._builds:
                task = self._start(agent_id).task
                if task is not None:  # always: _start starts it
                    await asyncio.gather(task, return_exceptions=True)

    def warm_saved(self, model_key: str) -> None:
        """At server start: load the indexes saved for this model in the background, so the
        first recall of each agent is hybrid sooner (nothing waits for this)."""
        if self.builder.saved_dir is None or self.backend_setting in ("numpy", "vec0"):
            return
        self._warming = asyncio.create_task(self._warm_saved(model_key), name="cortex-warm-index")

    async def _warm_saved(self, model_key: str) -> None:
        directory = self.builder.saved_dir
        assert directory is not None
        try:
            found = await asyncio.to_thread(saved_index.saved_agents, directory, model_key)
            dims = {dim for _, dim in found}
            if len(dims) == 1 and self._model in (None, (model_key, *dims)):
                await self.warm(model_key, dims.pop(), [agent for agent, _ in found])
        except Exception as exc:  # only a slower first recall
            log.warning("saved vector indexes not loaded at start: %r", exc)

    async def close(self) -> None:
        """Stop the builds (a k-means thread stops at its next step) and wait for them."""
        if self._warming is not None:
            self._warming.cancel()
            await asyncio.gather(self._warming, return_exceptions=True)
        for state in self._builds.values():
            state.stopped = True
        await self.settled()

    # ---- building in the background -----------------------------------------------------

    async def _partition(self, agent_id: str, model_key: str, dim: int) -> Partition:
        """The agent's partition, brought up to date by the caller (`_sync`)."""
        partition = self._partitions.get(agent_id)
        if partition is not None:
            if self._outgrown(partition) and agent_id not in self._builds:
                self._start(agent_id, replacing=True)  # the current one serves meanwhile
            return partition
        state = self._builds.get(agent_id)
        if state is None:
            failed = self._failures.get(agent_id)
            if failed is not None and time.monotonic() - failed[1] < RETRY_S:
                raise IndexNotReady(failure_note(failed[0]))
            inline = await self._fits_inline(agent_id, dim)
            if agent_id in self._partitions:  # installed while we counted
                return self._partitions[agent_id]
            state = self._builds.get(agent_id) or self._start(agent_id, inline=inline)
        if state.inline and state.task is not None:
            await asyncio.shield(state.task)
            if agent_id in self._partitions:
                return self._partitions[agent_id]
            if agent_id in self._failures:
                raise IndexNotReady(failure_note(self._failures[agent_id][0]))
        raise IndexNotReady(state.note())

    async def _fits_inline(self, agent_id: str, dim: int) -> bool:
        if self.backend_setting == "ivf":
            return False
        size = await self.vectors.agent_size(agent_id)
        return size <= INLINE_VECTORS and not self._wants_ivf(size, dim)

    def _start(self, agent_id: str, *, inline: bool = False, replacing: bool = False) -> BuildState:
        assert self._model is not None
        state = BuildState(agent_id, self._model, inline=inline, replacing=replacing)
        state.queued = not inline and self._slot.locked()
        if not inline and self.builder.has_saved(agent_id, *self._model):
            state.phase = "loading"  # said from the first answer on, before the task runs
        self._builds[agent_id] = state
        state.task = asyncio.create_task(self._run(state), name=f"cortex-vector-index-{agent_id}")
        return state

    async def _run(self, state: BuildState) -> None:
        agent_id = state.agent_id
        try:
            async with self._slot if not state.inline else contextlib.nullcontext():
                state.queued = False
                since = await self.vectors.watermark()
                built = await self.builder.build(state)
                await self._install(state, built.partition, since)
                seconds = time.perf_counter() - state.started  # from now on it serves
                if state.save is not None and not state.stopped:
                    state.phase = "saving"
                    await asyncio.to_thread(state.save)
            report = BuildReport(agent_id, built.partition.kind, len(built.partition), seconds)
            report.source = built.source
            self.builds.append(report)
            self._failures.pop(agent_id, None)
            if seconds > 1:
                log.info(
                    "vector index for agent %s: %d vectors (%s, %s) in %.1f s",
                    agent_id,
                    report.vectors,
                    report.kind,
                    report.source,
                    seconds,
                )
        except BuildStopped:
            pass
        except Exception as exc:  # the text channel still answers; the log and debug say why
            log.warning("vector index for agent %s could not be built: %r", agent_id, exc)
            self._failures[agent_id] = (type(exc).__name__, time.monotonic())
        finally:
            if self._builds.get(agent_id) is state:
                del self._builds[agent_id]

    async def _install(
        self, state: BuildState, partition: Partition, since: tuple[int, int]
    ) -> None:
        """Bring a finished partition up to the table (what was written while it was built
        or loaded), then let searches use it."""
        async with self._lock:
            if state.stopped or self._model != state.model:
                return  # closed, or the model changed meanwhile: that index is no use
            model_key, dim = state.model
            max_rowid, deletions = await self.vectors.watermark()
            if max_rowid > since[0]:
                for _, memory_id, agent_id, blob in await self.vectors.added_since(
                    model_key, dim, since[0]
                ):
                    if agent_id == state.agent_id:
                        partition.upsert(memory_id, np.frombuffer(blob, dtype=np.float32))
            if deletions != since[1] or max_rowid < since[0]:
                await self._reconcile_one(state.agent_id, partition, model_key, dim)
            self._partitions[state.agent_id] = partition

    # ---- keeping the indexes current ----------------------------------------------------

    def _outgrown(self, partition: Partition) -> bool:
        if isinstance(partition, IvfPartition):
            return self.backend_setting != "numpy" and partition.needs_rebuild()
        return self._wants_ivf(len(partition), partition.dim)

    def _wants_ivf(self, count: int, dim: int) -> bool:
        if self.backend_setting == "numpy":
            return False
        if self.backend_setting == "ivf":
            return True
        return count * dim * 4 > self.numpy_max_bytes

    async def _sync(self, model_key: str, dim: int) -> None:
        """Apply what changed since the last search: new and replaced vectors by rowid, and
        deletions (rare: purges) by comparing each loaded agent's ids with the table."""
        if self._model != (model_key, dim):
            self._model = (model_key, dim)
            self._partitions = {}
            for state in self._builds.values():
                state.stopped = True  # their install sees the model changed
            self._failures = {}
            self._watermark = await self.vectors.watermark()
            self._dirty = False
            return
        # the watermark itself is the check (two index lookups, read inline on SQLite): a
        # counter of the store's commits would change with every access count as well
        self._dirty = False
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
            await self._reconcile_one(agent_id, partition, model_key, dim)

    async def _reconcile_one(
        self, agent_id: str, partition: Partition, model_key: str, dim: int
    ) -> None:
        stored = await self.vectors.agent_vector_ids(agent_id, model_key, dim)
        held = set(partition.live_ids())
        removed = held - stored
        partition.remove(removed)
        if removed and isinstance(partition, IvfPartition) and partition.versions is not None:
            self._scrub(agent_id, partition, model_key, dim)
        missing = list(stored - held)
        for memory_id, blob in (await self.vectors.vectors_of(missing, model_key, dim)).items():
            partition.upsert(memory_id, np.frombuffer(blob, dtype=np.float32))

    def _scrub(self, agent_id: str, partition: IvfPartition, model_key: str, dim: int) -> None:
        """Write the agent's saved index again without what was just removed (a purged
        memory's vector must not stay on disk); several in a row write once or twice."""
        path = self.builder.saved_path(agent_id, model_key, dim)
        if path is None or not path.exists():
            return
        save = self.builder.saver(path, agent_id, model_key, partition)
        previous = self._scrubs.get(agent_id)

        async def scrub() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            if self._scrubs.get(agent_id) is asyncio.current_task():  # else a later one will
                await asyncio.to_thread(save)

        self._scrubs[agent_id] = asyncio.create_task(scrub(), name="cortex-vector-index-scrub")

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


def _first_pool(k: int, kind: str) -> int:
    """How many nearest vectors are checked against the filters first (more, 4x each time,
    while too few pass). The exact partition's pool keeps every vector tied with its last
    (partitions.py), so its first `k` that pass are those of any larger pool: it need only
    spare room for the few the filters reject (forgotten, superseded), each checked id a
    lookup in the store. An IVF index scans more clusters for a larger pool: its pool stays."""
    if kind == ExactPartition.kind:
        return k + max(k // 4, 8)
    return max(k * 3, 32)
