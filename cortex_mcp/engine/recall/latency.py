"""Recall latencies of this process over a sliding window, for the dashboard's p50/p95/p99.

Kept in memory (a bounded deque of (time, ms)): a figure of the running server, gone at a
restart, costing nothing on the recall path but an append."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

WINDOWS_S = {"hour": 3600.0, "day": 86400.0}
_MAX_SAMPLES = 200_000  # ~2 recalls a second for a day; older samples drop first


class LatencyWindow:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._samples: deque[tuple[float, float]] = deque(maxlen=_MAX_SAMPLES)
        self.started = clock()

    def record(self, took_ms: float) -> None:
        self._samples.append((self._clock(), took_ms))

    def summary(self) -> dict[str, dict[str, float | int | None]]:
        """{window: {count, p50, p95, p99, max}} for each window, in milliseconds."""
        now = self._clock()
        out: dict[str, dict[str, float | int | None]] = {}
        for name, span in WINDOWS_S.items():
            values = sorted(ms for at, ms in self._samples if now - at <= span)
            out[name] = {
                "count": len(values),
                "p50": _percentile(values, 50),
                "p95": _percentile(values, 95),
                "p99": _percentile(values, 99),
                "max": values[-1] if values else None,
            }
        return out


def _percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile of sorted `values` (None when there are none)."""
    if not values:
        return None
    rank = max(1, math.ceil(pct / 100 * len(values)))
    return round(values[rank - 1], 3)
