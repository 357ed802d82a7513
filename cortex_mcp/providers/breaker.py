"""Provider health: checking what a provider sent back, and a circuit breaker per provider.

A provider that keeps failing is skipped for a cool-down, so a recall does not pay its timeout
again and again; when the cool-down is over, one probe in the background decides whether it
is back (the breaker's "half-open" state). Cool-downs double while probes keep failing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

_MESSAGE_CHARS = 200


def short(message: str, *, limit: int = _MESSAGE_CHARS) -> str:
    """One line a user can read: no newlines, bounded length."""
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass
class CheckedVectors:
    """Rows a provider returned, checked: `ok[i]` says whether `vectors[i]` may be used
    (rejected rows are zeros); `problems` says why rows were rejected, one entry per kind."""

    vectors: np.ndarray
    ok: np.ndarray
    problems: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return int((~self.ok).sum())


def _row_problem(row: Any, dim: int) -> str | None:
    if not isinstance(row, list | tuple | np.ndarray):
        return f"not a list of numbers ({type(row).__name__})"
    try:
        values = np.asarray(row)
    except ValueError:  # ragged nesting
        return "non-numeric values"
    if values.dtype.kind not in "iuf":  # strings, None, bools or nested lists
        return "non-numeric values"
    if values.ndim != 1 or values.shape[0] != dim:
        return f"dimension {values.shape[0] if values.ndim == 1 else '?'} instead of {dim}"
    if not np.isfinite(values).all():
        return "NaN or infinite values"
    if not math.isfinite(norm := float(np.linalg.norm(values))) or norm == 0.0:
        return "zero vector"
    return None


def _usual_length(rows: list[Any]) -> int | None:
    lengths = [len(r) for r in rows if isinstance(r, list | tuple | np.ndarray) and len(r)]
    if not lengths:
        return None
    return max(set(lengths), key=lambda n: (lengths.count(n), -lengths.index(n)))


def check_vectors(rows: Any, count: int, dim: int | None) -> tuple[CheckedVectors, int | None]:
    """Validate `count` rows against `dim` (learnt from the rows when None).

    Returns the checked, L2-normalised vectors and the dimension used."""
    listed = list(rows) if rows is not None else []
    listed = (listed + [None] * count)[:count]
    dim = dim or _usual_length(listed)
    if dim is None:
        empty = np.zeros((count, 0), dtype=np.float32)
        return CheckedVectors(empty, np.zeros(count, dtype=bool), ["no vectors"]), None
    matrix = np.zeros((count, dim), dtype=np.float32)
    ok = np.zeros(count, dtype=bool)
    problems: list[str] = []
    for i, row in enumerate(listed):
        problem = "missing row" if row is None else _row_problem(row, dim)
        if problem is None:
            vector = np.asarray(row, dtype=np.float64)
            matrix[i] = (vector / np.linalg.norm(vector)).astype(np.float32)
            ok[i] = True
        elif problem not in problems:
            problems.append(problem)
    return CheckedVectors(matrix, ok, problems), dim


def _iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class ProviderHealth:
    """What we know about one provider, and its circuit breaker."""

    name: str
    model_key: str
    failure_threshold: int = 3
    base_cooldown_s: float = 5.0
    max_cooldown_s: float = 300.0
    consecutive_failures: int = 0
    failures_total: int = 0
    successes: int = 0
    rejected_vectors: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    last_ok_at: str | None = None
    cooldown_s: float = 0.0
    open_until: float | None = None  # time.monotonic()
    probing: bool = False
    rejecting: bool = False  # the last answers carried malformed vectors

    @property
    def is_open(self) -> bool:
        return self.open_until is not None

    def probe_due(self) -> bool:
        return self.is_open and not self.probing and time.monotonic() >= (self.open_until or 0)

    def record_success(self) -> bool:
        """Close the breaker; True when it was open (the provider is back)."""
        was_open = self.is_open
        self.successes += 1
        self.consecutive_failures = 0
        self.open_until = None
        self.cooldown_s = 0.0
        self.last_ok_at = _iso_now()
        return was_open

    def record_failure(self, message: str) -> None:
        self.failures_total += 1
        self.consecutive_failures += 1
        self.last_error = short(message)
        self.last_error_at = _iso_now()
        if self.is_open or self.consecutive_failures >= self.failure_threshold:
            self.cooldown_s = min(
                self.max_cooldown_s,
                self.cooldown_s * 2 if self.cooldown_s else self.base_cooldown_s,
            )
            self.open_until = time.monotonic() + self.cooldown_s

    def skip_reason(self) -> str:
        wait = max(0.0, (self.open_until or 0) - time.monotonic())
        return (
            f"skipped for {wait:.0f} s after {self.consecutive_failures} failures"
            f" (last: {self.last_error})"
        )

    def state(self) -> str:
        if self.is_open:
            return "open"
        return "failing" if self.consecutive_failures else "ok"

    def as_dict(self) -> dict[str, Any]:
        retry = None if self.open_until is None else max(0.0, self.open_until - time.monotonic())
        return {
            "model": self.model_key,
            "state": self.state(),
            "consecutive_failures": self.consecutive_failures,
            "failures_total": self.failures_total,
            "rejected_vectors": self.rejected_vectors,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "last_ok_at": self.last_ok_at,
            "next_probe_in_s": None if retry is None else round(retry, 1),
        }


@dataclass(frozen=True)
class ProbeResult:
    """One real call to one provider, as `cortex-mcp doctor` reports it."""

    name: str
    model_key: str
    status: str  # ok | degraded | failed
    detail: str
    took_ms: float
    dimensions: int | None = None
