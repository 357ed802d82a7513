"""Rerankers: a cross-encoder's relevance of each document to a query.

`Reranker` is what the search's rerank stage calls: `HttpReranker` posts to any `/rerank`
endpoint in the shape Cohere, Jina, Voyage, TEI and Infinity serve, `LocalReranker` runs
fastembed's cross-encoder here. `GuardedReranker` wraps either with what keeps a recall from
waiting on it: a timeout, a circuit breaker (providers/breaker.py) and a check of every
answer; each failure is one ProviderError line and the stage keeps the order it had."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from pathlib import Path
from typing import Any, Protocol

from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.breaker import ProviderHealth, short
from cortex_mcp.providers.embeddings import LocalEmbedder

log = logging.getLogger(__name__)


class Reranker(Protocol):
    name: str

    def ready(self) -> bool: ...

    async def scores(self, query: str, documents: list[str]) -> list[float]:
        """One relevance per document, in the documents' order (higher is more relevant)."""
        ...


class BadAnswer(ProviderError):
    """The reranker answered, but not with one number for each document."""


def read_scores(body: Any, count: int) -> list[float]:
    """The relevance of each of `count` documents from a /rerank answer: `{"results": [...]}`
    (Cohere, Jina, Infinity), `{"data": [...]}` (Voyage) or a bare list (TEI), each item
    `{"index", "relevance_score"}` or `{"index", "score"}`. A document the answer leaves out
    (a server that returns only its top ones) ranks after every scored one."""
    items = body.get("results", body.get("data")) if isinstance(body, dict) else body
    if not isinstance(items, list) or not items:
        raise BadAnswer("answer has no list of results")
    scores = [-math.inf] * count
    seen: set[int] = set()
    for item in items:
        if not isinstance(item, dict):
            raise BadAnswer("a result is not an object")
        index = item.get("index")
        value = item.get("relevance_score", item.get("score"))
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise BadAnswer(f"result index {short(repr(index), limit=40)} is not 0..{count - 1}")
        if index in seen:
            raise BadAnswer(f"result index {index} given twice")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise BadAnswer(f"score {short(repr(value), limit=40)} is not a finite number")
        seen.add(index)
        scores[index] = float(value)
    return scores


class HttpReranker:
    """POST `{base_url}/rerank` with `{model, query, documents, top_n}`. TEI's own route
    names the documents `texts`: when a server refuses the request for want of `texts`, the
    documents are sent under both names from then on."""

    name = "http"

    def __init__(
        self, *, base_url: str, model: str | None, api_key: str | None, timeout_s: float
    ) -> None:
        import httpx2

        self.url = base_url.rstrip("/") + "/rerank"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.AsyncClient(headers=headers, timeout=timeout_s)
        self._errors = (httpx2.HTTPError,)
        self._texts_too = False

    def ready(self) -> bool:
        return True

    async def scores(self, query: str, documents: list[str]) -> list[float]:
        body: dict[str, Any] = {"query": query, "documents": documents, "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        response = await self._post(body)
        if response.status_code in (400, 422) and "texts" in response.text and not self._texts_too:
            self._texts_too = True
            response = await self._post(body)
        if response.status_code >= 400:
            raise ProviderError(f"HTTP {response.status_code}: {short(response.text, limit=120)}")
        try:
            answer = json.loads(response.content)
        except ValueError:
            raise BadAnswer("answer is not JSON") from None
        return read_scores(answer, len(documents))

    async def _post(self, body: dict[str, Any]) -> Any:
        if self._texts_too:
            body = {**body, "texts": body["documents"]}
        try:
            return await self._client.post(self.url, json=body)
        except self._errors as exc:
            raise ProviderError(f"{type(exc).__name__}: {short(str(exc), limit=120)}") from exc

    async def close(self) -> None:
        await self._client.aclose()


class LocalReranker(LocalEmbedder):
    """fastembed's `TextCrossEncoder` run here (the `local` extra), found and loaded like the
    local embedding model (downloaded once into the models folder, loaded in a background
    thread); until it is loaded the stage passes and says so."""

    name = "local"
    kind = "reranker"
    offline_fix = (
        "copy ~/.cortex/models from a machine where the reranker loaded, or use a /rerank"
        " server (CORTEX_RERANK_PROVIDER=http)"
    )

    def __init__(self, *, model: str, cache_dir: Path, hub_url: str | None) -> None:
        super().__init__(model=model, cache_dir=cache_dir, hub_url=hub_url)
        self.model_key = f"local-rerank:{model}"

    def model_class(self) -> Any:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        return TextCrossEncoder

    async def scores(self, query: str, documents: list[str]) -> list[float]:
        model = self._model
        if model is None:
            raise ProviderError(f"model {self.failure() or 'is still loading'}")
        try:
            values = await asyncio.to_thread(lambda: list(model.rerank(query, documents)))
        except Exception as exc:  # a model fault degrades the stage like any provider fault
            raise ProviderError(f"{type(exc).__name__}: {short(str(exc), limit=120)}") from exc
        if len(values) != len(documents):
            raise BadAnswer(f"{len(values)} scores for {len(documents)} documents")
        return read_scores([{"index": i, "score": v} for i, v in enumerate(values)], len(values))


class GuardedReranker:
    """A reranker called within `timeout_s`, skipped while its breaker is open (after
    `failure_threshold` failures in a row; one call tries it again when the cool-down ends),
    its answers checked. Every failure is a ProviderError whose message says why."""

    def __init__(
        self,
        inner: Reranker,
        *,
        timeout_s: float,
        failure_threshold: int = 3,
        cooldown_s: float = 5.0,
        max_cooldown_s: float = 300.0,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.timeout_s = timeout_s
        self.health = ProviderHealth(
            name=inner.name,
            model_key=getattr(inner, "model", None) or inner.name,
            failure_threshold=failure_threshold,
            base_cooldown_s=cooldown_s,
            max_cooldown_s=max_cooldown_s,
        )

    def ready(self) -> bool:
        return self.inner.ready()

    async def scores(self, query: str, documents: list[str]) -> list[float]:
        health = self.health
        if health.is_open and (health.probing or time.monotonic() < (health.open_until or 0)):
            raise ProviderError(health.skip_reason())
        if not self.inner.ready():
            raise ProviderError(self._not_ready())
        health.probing = health.is_open  # the one call that tries it again
        try:
            scores = await asyncio.wait_for(self.inner.scores(query, documents), self.timeout_s)
        except TimeoutError:
            return self._failed(f"no answer within {self.timeout_s:g} s")
        except ProviderError as exc:
            return self._failed(exc.message)
        finally:
            health.probing = False
        if len(scores) != len(documents):
            return self._failed(f"{len(scores)} scores for {len(documents)} documents")
        health.record_success()
        return scores

    def _failed(self, message: str) -> list[float]:
        self.health.record_failure(message)
        raise ProviderError(message)

    def _not_ready(self) -> str:
        failure = getattr(self.inner, "failure", None)
        reason = failure() if failure is not None else None
        return f"model {reason}" if reason else "model still loading"

    def report(self) -> dict[str, Any]:
        return {"provider": self.name, **self.health.as_dict()}

    async def warm_up(self) -> None:
        warm_up = getattr(self.inner, "warm_up", None)
        if warm_up is not None:
            await warm_up()

    async def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            await close()
