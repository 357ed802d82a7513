"""Rerankers: a cross-encoder's relevance of each document to a query.

`Reranker` is what the search's rerank stage calls. `GuardedReranker` wraps one with what
keeps a recall from waiting on it: a timeout, a circuit breaker (providers/breaker.py) and a
check of every answer, each failure raised as one ProviderError line."""

from __future__ import annotations

from typing import Protocol


class Reranker(Protocol):
    name: str

    def ready(self) -> bool: ...

    async def scores(self, query: str, documents: list[str]) -> list[float]:
        """One relevance per document, in the documents' order (higher is more relevant)."""
        ...
