"""Embedding providers: OpenAI (and any OpenAI-compatible server), local ONNX, and the cascade.

Vectors are L2-normalised float32, so a dot product is a cosine similarity.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cortex_mcp.errors import ProviderError

log = logging.getLogger(__name__)

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
LOCAL_DEFAULT_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"


class Embedder(Protocol):
    """One embedding model. `model_key` names the vector space (model and dimensions)."""

    name: str
    model_key: str

    async def embed(self, texts: list[str]) -> np.ndarray: ...

    def ready(self) -> bool: ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


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
        self.model_key = f"{model}@{dimensions}" if dimensions else model
        self._client_args = {
            "api_key": api_key or "not-needed",
            "base_url": base_url,
            "timeout": timeout_s,
            "max_retries": 0,
        }
        self._client: Any = None  # the SDK import costs ~0.3 s: not before `initialize`

    def _sdk_client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(**self._client_args)
        return self._client

    def ready(self) -> bool:
        return True

    async def embed(self, texts: list[str]) -> np.ndarray:
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        parts = [await self._embed_batch(batch) for batch in batches]
        return normalise_rows(np.vstack(parts))

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        import openai

        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
        try:
            response = await self._sdk_client().embeddings.create(
                model=self.model, input=texts, **extra
            )
        except openai.OpenAIError as exc:
            raise ProviderError(
                f"{self.name} embeddings failed: {type(exc).__name__}: {exc}"
            ) from exc
        ordered = sorted(response.data, key=lambda item: item.index)
        return np.asarray([item.embedding for item in ordered], dtype=np.float32)

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
        vectors = await asyncio.to_thread(
            lambda: list(self._model.embed(texts, batch_size=self.batch_size))
        )
        return normalise_rows(np.asarray(vectors))


@dataclass
class EmbeddingResult:
    model_key: str
    vectors: np.ndarray
    provider: str
    took_ms: float


@dataclass
class EmbeddingCascade:
    """Tries providers in configured order, each within its timeout; records failures."""

    providers: list[Embedder]
    timeout_s: float
    failures: dict[str, str] = field(default_factory=dict)
    calls: int = 0

    @property
    def primary(self) -> Embedder | None:
        return self.providers[0] if self.providers else None

    async def embed(self, texts: list[str], *, timeout_s: float | None = None) -> EmbeddingResult:
        errors = []
        for provider in self.providers:
            if not provider.ready():
                errors.append(f"{provider.name}: not ready")
                continue
            started = time.perf_counter()
            try:
                vectors = await asyncio.wait_for(provider.embed(texts), timeout_s or self.timeout_s)
            except (ProviderError, TimeoutError) as exc:
                message = str(exc) or "timed out"
                self.failures[provider.name] = message
                errors.append(f"{provider.name}: {message}")
                log.warning("embedding provider %s failed: %s", provider.name, message)
                continue
            self.calls += 1
            self.failures.pop(provider.name, None)
            took = (time.perf_counter() - started) * 1000
            return EmbeddingResult(provider.model_key, vectors, provider.name, took)
        raise ProviderError("; ".join(errors) or "no embedding provider configured")

    async def close(self) -> None:
        for provider in self.providers:
            closer = getattr(provider, "close", None)
            if closer is not None:
                await closer()
