"""An agent's IVF index saved beside the database, so that a restart reads it back instead of
redoing the k-means and the int8 encoding (tens of seconds at half a million vectors).

One file per agent, model and dimension count: `<database>.vectors/<hash of the three>.npz`,
written under a temporary name and renamed, so a reader sees a whole file or none. The header
names the format, the agent, the model and the dimensions and holds a CRC32 of every array: a
file that fails any check (stale format, another agent's or model's, truncated, corrupt) is
ignored with one line in the log and the index is built again. Each vector keeps the version of
the table row it came from (store/vectors.py `row_version`), so a load can apply exactly what was added, changed
or removed since the save (search/index_build.py); the table stays the source of truth.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cortex_mcp.folders import FOLDER_MODE
from cortex_mcp.search.ivf import IvfIndex
from cortex_mcp.store.files import FILE_MODE

log = logging.getLogger(__name__)

FORMAT = 1
_ARRAYS = ("centroids", "codes", "scales", "offsets", "alive", "versions", "ids")


@dataclass
class SavedIndex:
    index: IvfIndex
    versions: np.ndarray  # int64, the table row version of each vector in index order


def index_dir(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".vectors")


def index_path(directory: Path, agent_id: str, model_key: str, dim: int) -> Path:
    key = hashlib.sha256(f"{agent_id}\0{model_key}\0{dim}".encode()).hexdigest()[:24]
    return directory / f"{key}.npz"


def save(path: Path, agent_id: str, model_key: str, index: IvfIndex, versions: np.ndarray) -> int:
    """Write the clusters of `index` (not its tail: the table has those); return the size.
    A removed vector (purged, or written again since the build) is written as zeros, so a
    purged memory's vector does not stay on disk."""
    joined = "\n".join(index.ids)
    if joined.count("\n") != max(len(index.ids) - 1, 0):
        raise ValueError("a memory id holds a line break")
    alive = index.alive.copy()
    codes, scales = index.codes, index.scales
    if not alive.all():
        codes = np.where(alive[:, None], codes, np.int8(0))
        scales = np.where(alive, scales, np.float32(0))
    arrays: dict[str, np.ndarray] = {
        "centroids": index.centroids,
        "codes": codes,
        "scales": scales,
        "offsets": index.offsets,
        "alive": alive,
        "versions": np.where(alive, np.asarray(versions, dtype=np.int64), -1),
        "ids": np.frombuffer(joined.encode(), dtype=np.uint8),
    }
    header = {
        "format": FORMAT,
        "agent_id": agent_id,
        "model": model_key,
        "dim": index.dim,
        "vectors": len(index.ids),
        "crc32": {name: _crc(array) for name, array in arrays.items()},
    }
    path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:  # only the owner reads it, as the database (the vectors say much of the memories)
        with os.fdopen(
            os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE), "wb"
        ) as out:
            header_bytes = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
            # numpy's stub reads **arrays as if it could hold the bool `allow_pickle`
            np.savez(out, header=header_bytes, **arrays)  # type: ignore[arg-type]
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path.stat().st_size


def load(path: Path, agent_id: str, model_key: str, dim: int) -> SavedIndex | None:
    """The saved index, or None (logged once) when the file is missing or fails a check."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as stored:
            header = json.loads(bytes(stored["header"]).decode())
            problem = _foreign(header, agent_id, model_key, dim)
            if problem is None:
                arrays = {name: stored[name] for name in _ARRAYS}
                problem = _corrupt(header, arrays)
            if problem is None:
                ids = bytes(arrays["ids"]).decode().split("\n") if len(arrays["codes"]) else []
                problem = None if len(ids) == len(arrays["codes"]) else "inconsistent ids"
    except Exception as exc:  # a truncated or garbled file: any of numpy's, zip's, json's
        problem = f"unreadable ({type(exc).__name__})"
    if problem is not None:
        log.warning("saved vector index %s ignored (%s): it will be rebuilt", path.name, problem)
        return None
    return SavedIndex(_index(arrays, ids, dim), arrays["versions"])


def saved_agents(directory: Path, model_key: str) -> list[tuple[str, int]]:
    """(agent, dim) of the files saved for this model (their headers only: no arrays read)."""
    found = []
    for path in sorted(directory.glob("*.npz")) if directory.is_dir() else []:
        try:
            with np.load(path, allow_pickle=False) as stored:
                header = json.loads(bytes(stored["header"]).decode())
            if header.get("format") == FORMAT and header.get("model") == model_key:
                found.append((str(header["agent_id"]), int(header["dim"])))
        except Exception:  # a bad file is reported when it is loaded (or never: unused)
            continue
    return found


def _foreign(header: Any, agent_id: str, model_key: str, dim: int) -> str | None:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return "another format"
    if header.get("agent_id") != agent_id:
        return "another agent's"
    if header.get("model") != model_key or header.get("dim") != dim:
        return "another model's"
    return None


def _corrupt(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> str | None:
    sums = header.get("crc32") or {}
    if any(sums.get(name) != _crc(array) for name, array in arrays.items()):
        return "checksum mismatch"
    n, clusters = int(header.get("vectors", -1)), arrays["centroids"].shape[0]
    shapes_agree = (
        arrays["codes"].shape == (n, arrays["centroids"].shape[1])
        and arrays["scales"].shape == (n,)
        and arrays["versions"].shape == (n,)
        and arrays["alive"].shape == (n,)
        and arrays["offsets"].shape == (clusters + 1,)
        and (n == 0 or int(arrays["offsets"][-1]) == n)
    )
    return None if shapes_agree else "inconsistent shapes"


def _index(arrays: dict[str, np.ndarray], ids: list[str], dim: int) -> IvfIndex:
    index = IvfIndex(dim)
    index.centroids = arrays["centroids"]
    index.codes = arrays["codes"]
    index.scales = arrays["scales"]
    index.offsets = arrays["offsets"]
    index.ids = ids
    index.alive = arrays["alive"].astype(bool)
    index.positions = {
        memory_id: i
        for i, (memory_id, alive) in enumerate(zip(ids, index.alive.tolist(), strict=True))
        if alive
    }
    return index


def _crc(array: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(array).data)
