"""How many embedding requests the indexer keeps in flight with one provider."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class InFlightLimit:
    """Requests kept in flight with one provider: its own setting at most, halved each time
    it answers busy, and one more after a run of clean batches (the way TCP shares a link)."""

    ceiling: int
    current: int = 0
    _clean: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        self.current = self.current or self.ceiling

    def busy(self) -> int:
        """Halve (not below one); return the limit it was."""
        was, self.current, self._clean = self.current, max(1, self.current // 2), 0
        return was

    def clean(self) -> None:
        self._clean += 1
        if self.current < self.ceiling and self._clean >= 4 * self.current:
            self.current, self._clean = self.current + 1, 0
