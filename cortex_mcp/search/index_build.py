"""Building an agent's vector index off the request path, or reading back its saved copy.

A build reads the agent's vectors in blocks from the table (the source of truth), keeps them
exact while they fit the budget and as int8 codes past it, and runs the IVF k-means in a
thread (numpy releases the GIL for the heavy parts, so the event loop keeps serving). A built
IVF index is saved (search/saved_index.py) with the version of each row it read; a load then
asks the table for the agent's current row versions and applies only the difference: vectors
removed, changed or added since the save. A copy too far behind is rebuilt instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cortex_mcp.search import saved_index
from cortex_mcp.search.ivf import IvfIndex, quantize
from cortex_mcp.search.partitions import (
    ExactPartition,
    IvfPartition,
    Partition,
    rebuild_threshold,
)
from cortex_mcp.store.interfaces import VectorStorage

log = logging.getLogger(__name__)

READ_SHARE = 0.4  # of a build's time, about, spent reading the table (the rest: k-means)
_FETCH = 500  # vectors read per query when a load catches up


@dataclass
class BuildReport:
    agent_id: str
    kind: str
    vectors: int
    seconds: float
    source: str = "built"  # or "saved": read back from its file, no k-means


class IndexNotReady(Exception):
    """The agent's vector index is being built or loaded: the text channel answers alone."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def failure_note(cause: str) -> str:
    return f"vector index for this agent could not be built ({cause}): text search only"


class BuildStopped(Exception):
    """The index was closed (or the model changed) while the build ran."""


@dataclass
class BuildState:
    """One agent's build or load in progress (at most one per agent at a time)."""

    agent_id: str
    model: tuple[str, int]
    inline: bool = False  # small: the search waits for it (a read of a few MB)
    replacing: bool = False  # an index already serves while this one is built
    phase: str = "building"
    done: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    stopped: bool = False
    queued: bool = False  # waiting for the build slot (one build at a time)
    task: asyncio.Task[None] | None = None
    save: Callable[[], None] | None = None  # writes the built index's file (in a thread)

    def told(self, share: float) -> None:
        """Progress from the build (also from its thread); stops it once it was stopped."""
        if self.stopped:
            raise BuildStopped
        self.done = max(self.done, min(share, 1.0))

    def note(self) -> str:
        if self.queued:
            return (
                "vector index for this agent is queued behind another agent's build:"
                " text search only until it is ready"
            )
        doing = "loading from its saved copy" if self.phase == "loading" else "building"
        return (
            f"vector index for this agent is {doing} ({int(self.done * 100)}%):"
            " text search only until it is ready"
        )


@dataclass
class Built:
    partition: Partition
    source: str  # "built" or "saved"


class IndexBuilder:
    def __init__(
        self,
        vectors: VectorStorage,
        saved_dir: Path | None,
        wants_ivf: Callable[[int, int], bool],
    ) -> None:
        self.vectors = vectors
        self.saved_dir = saved_dir
        self.wants_ivf = wants_ivf
        self.saved_bytes: dict[str, int] = {}  # agent -> size of its saved file, once written

    def saved_path(self, agent_id: str, model_key: str, dim: int) -> Path | None:
        if self.saved_dir is None:
            return None
        return saved_index.index_path(self.saved_dir, agent_id, model_key, dim)

    def has_saved(self, agent_id: str, model_key: str, dim: int) -> bool:
        path = self.saved_path(agent_id, model_key, dim)
        return path is not None and path.exists()

    async def build(self, state: BuildState) -> Built:
        agent_id, (model_key, dim) = state.agent_id, state.model
        path = self.saved_path(agent_id, model_key, dim)
        if path is not None and not (state.inline or state.replacing) and path.exists():
            state.phase = "loading"
            partition = await self._load(state, path)
            if partition is not None:
                return Built(partition, "saved")
            state.phase, state.done = "building", 0.0
        return Built(await self._build(state, path), "built")

    # ---- from the table -----------------------------------------------------------------

    async def _build(self, state: BuildState, path: Path | None) -> Partition:
        agent_id, (model_key, dim) = state.agent_id, state.model
        size = max(await self.vectors.agent_size(agent_id), 1)
        exact = ExactPartition(dim)
        codes: list[np.ndarray] = []
        scales: list[np.ndarray] = []
        ids: list[str] = []
        versions: list[int] = []
        read = 0
        blocks = self.vectors.agent_vectors(agent_id, model_key, dim, versioned=path is not None)
        async for block_ids, block_versions, block in blocks:
            read += len(block_ids)
            state.told(READ_SHARE * read / size)
            versions.extend(block_versions)
            if not codes and not self.wants_ivf(len(exact) + len(block_ids), dim):
                exact.add_block(block_ids, block)
                continue
            if len(exact):  # past the budget: what was exact becomes codes too
                exact_codes, exact_scales = await asyncio.to_thread(quantize, exact.stacked())
                codes.append(exact_codes)
                scales.append(exact_scales)
                ids.extend(exact.ids)
                exact = ExactPartition(dim)
            block_codes, block_scales = await asyncio.to_thread(quantize, block)
            codes.append(block_codes)
            scales.append(block_scales)
            ids.extend(block_ids)
        if not codes:
            return exact
        index = await asyncio.to_thread(
            IvfIndex.build,
            ids,
            np.concatenate(codes),
            np.concatenate(scales),
            progress=lambda share: state.told(READ_SHARE + (1 - READ_SHARE) * share),
        )
        if path is None:
            return IvfPartition(index)
        aligned = await asyncio.to_thread(_in_index_order, index, ids, versions)
        partition = IvfPartition(index, aligned)
        state.save = self.saver(path, agent_id, model_key, partition)
        return partition

    def saver(
        self, path: Path, agent_id: str, model_key: str, partition: IvfPartition
    ) -> Callable[[], None]:
        """Writes the partition's clusters as they are now (call it in a thread)."""
        copy, versions = partition.saved_copy(), partition.versions
        assert versions is not None

        def save() -> None:
            try:
                self.saved_bytes[agent_id] = saved_index.save(
                    path, agent_id, model_key, copy, versions
                )
            except (OSError, ValueError) as exc:  # only a slower restart
                log.warning("vector index for agent %s not saved (%s)", agent_id, exc)

        return save

    # ---- from the saved copy ------------------------------------------------------------

    async def _load(self, state: BuildState, path: Path) -> Partition | None:
        agent_id, (model_key, dim) = state.agent_id, state.model
        saved = await asyncio.to_thread(saved_index.load, path, agent_id, model_key, dim)
        state.told(0.4)
        if saved is None:
            return None
        current = await self.vectors.agent_versions(agent_id, model_key, dim)
        state.told(0.8)
        if not self.wants_ivf(len(current), dim):
            return None  # the agent fits the exact budget now (or the setting changed)
        stale, fresh = await asyncio.to_thread(_difference, saved, current)
        if len(stale) > len(saved.index.positions) // 2:
            log.warning(
                "saved vector index %s ignored (most of its vectors are gone: another database's, or much was purged):"
                " it will be rebuilt",
                path.name,
            )
            return None
        if len(stale) + len(fresh) > rebuild_threshold(len(current)):
            log.info(
                "saved vector index of agent %s is %d vectors behind: rebuilding",
                agent_id,
                len(stale) + len(fresh),
            )
            return None
        index = saved.index
        index.remove(stale)  # gone, or written again since the save: not from the copy
        partition = IvfPartition(index, saved.versions)
        if stale:  # write the file again without them (a purged vector leaves the disk)
            state.save = self.saver(path, agent_id, model_key, partition)
        wanted = [memory_id for memory_id in stale if memory_id in current] + fresh
        for start in range(0, len(wanted), _FETCH):
            chunk = wanted[start : start + _FETCH]
            found = await self.vectors.vectors_of(chunk, model_key, dim)
            for memory_id, blob in found.items():
                index.upsert(memory_id, np.frombuffer(blob, dtype=np.float32))
        state.told(1.0)
        return partition


def _in_index_order(index: IvfIndex, read_ids: list[str], read_versions: list[int]) -> np.ndarray:
    version_of = dict(zip(read_ids, read_versions, strict=True))
    return np.fromiter((version_of[i] for i in index.ids), np.int64, len(index.ids))


def _difference(
    saved: saved_index.SavedIndex, current: dict[str, int]
) -> tuple[list[str], list[str]]:
    """(ids in the copy that are gone or were written again, ids the copy does not have)."""
    held = saved.index.positions  # the live ones only
    stale = [
        memory_id
        for memory_id, version in zip(saved.index.ids, saved.versions.tolist(), strict=True)
        if memory_id in held and current.get(memory_id) != version
    ]
    fresh = [memory_id for memory_id in current if memory_id not in held]
    return stale, fresh
