"""Embedding providers: OpenAI (and any OpenAI-compatible server) and local ONNX.

Embedders return raw rows; the cascade (cascade.py) checks them and L2-normalises them, so a
dot product is a cosine similarity.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cortex_mcp.errors import ProviderError

log = logging.getLogger(__name__)

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
LOCAL_DEFAULT_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"


class Embedder(Protocol):
    """One embedding model. `model_key` names the vector space (model and dimensions).

    `embed` returns one row per text, unchecked (the cascade checks and normalises them);
    `warm_up` does the slow one-time work (SDK import, model load) outside any timed call."""

    name: str
    model_key: str

    async def embed(self, texts: list[str]) -> Any: ...

    async def warm_up(self, *, wait: bool = False) -> None: ...

    def ready(self) -> bool: ...


def _describe_sdk_error(exc: Exception, timeout_s: float) -> str:
    """A one-line reason for an OpenAI SDK failure (or a body the SDK could not parse)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout_s:g} s"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect ({exc.__cause__ or exc})"
    if isinstance(exc, ValueError):  # json.JSONDecodeError among them
        return "answered a body that is not JSON"
    if isinstance(exc, AttributeError | TypeError | KeyError):
        return "answered something other than an embeddings list"
    return f"{type(exc).__name__}: {exc}"


class OpenAIEmbedder:
    """OpenAI's embeddings endpoint through the official SDK; `base_url` serves Ollama,
    vLLM, LM Studio, OpenRouter or Gemini's OpenAI-compatible endpoint the same way."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        dimensions: int | None,
        timeout_s: float,
        batch_size: int,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.base_url = base_url
        self.model_key = f"{model}@{dimensions}" if dimensions else model
        self._client_args = {
            "api_key": api_key or "not-needed",
            "base_url": base_url,
            "timeout": timeout_s,
            "max_retries": 0,
        }
        self._client: Any = None  # the SDK import costs ~0.3-1 s: in warm_up, not in a call
        self._warming: asyncio.Lock | None = None

    def _build_client(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(**self._client_args)

    async def warm_up(self, *, wait: bool = False) -> None:
        if self._client is not None:
            return
        self._warming = self._warming or asyncio.Lock()
        async with self._warming:
            if self._client is None:
                self._client = await asyncio.to_thread(self._build_client)

    def ready(self) -> bool:
        return True  # the cascade awaits warm_up() before timing a call

    async def embed(self, texts: list[str]) -> list[Any]:
        await self.warm_up()
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        rows: list[Any] = []
        for batch in batches:
            rows.extend(await self._embed_batch(batch))
        return rows

    async def _embed_batch(self, texts: list[str]) -> list[Any]:
        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
        try:
            response = await self._client.embeddings.create(model=self.model, input=texts, **extra)
            rows: list[Any] = [None] * len(texts)
            for item in response.data:
                if isinstance(item.index, int) and 0 <= item.index < len(texts):
                    rows[item.index] = item.embedding
        except Exception as exc:  # any SDK or body fault is the provider's, never a crash
            raise ProviderError(_describe_sdk_error(exc, self.timeout_s)) from exc
        return rows

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


class LocalEmbedder:
    """An ONNX model through fastembed (the optional `local` extra), cached under
    ``~/.cortex/models``. It loads in a background thread, so it never delays start-up;
    until it is loaded, `embed` raises and callers degrade to text search."""

    name = "local"

    def __init__(self, *, model: str, cache_dir: Path, batch_size: int) -> None:
        self.model = model
        self.model_key = f"local:{model}"
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self._model: Any = None
        self._error: str | None = None
        self._loading = threading.Lock()

    @staticmethod
    def available() -> bool:
        try:
            import fastembed  # type: ignore[import-not-found]  # noqa: F401
        except ImportError:
            return False
        return True

    def start_loading(self) -> None:
        threading.Thread(target=self._load, name="cortex-local-embedder", daemon=True).start()

    async def warm_up(self, *, wait: bool = False) -> None:
        """Load the model: in the background, or (`wait`, for doctor) until it is loaded."""
        if self._model is not None or self._error is not None:
            return
        if wait:
            await asyncio.to_thread(self._load)
        elif not self._loading.locked():
            self.start_loading()

    def _load(self) -> None:
        with self._loading:
            if self._model is not None or self._error is not None:
                return
            try:
                from fastembed import TextEmbedding

                self.cache_dir.mkdir(parents=True, exist_ok=True)
                started = time.perf_counter()
                self._model = TextEmbedding(self.model, cache_dir=str(self.cache_dir))
                log.info(
                    "local embedder %s loaded in %.1fs", self.model, time.perf_counter() - started
                )
            except Exception as exc:  # a missing model or offline hub must never crash the server
                self._error = f"{type(exc).__name__}: {exc}"
                log.warning("local embedder %s unavailable: %s", self.model, self._error)

    def ready(self) -> bool:
        return self._model is not None

    async def embed(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            raise ProviderError(f"local embedder {self._error or 'is still loading'}")
        try:
            vectors = await asyncio.to_thread(
                lambda: list(self._model.embed(texts, batch_size=self.batch_size))
            )
        except Exception as exc:  # a model fault degrades recall like any provider fault
            raise ProviderError(f"local embedder failed: {type(exc).__name__}: {exc}") from exc
        return vectors
