"""Embedding providers: OpenAI (and any OpenAI-compatible server) and local ONNX.

Embedders return raw rows; the cascade (cascade.py) checks them and L2-normalises them, so a
dot product is a cosine similarity.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cortex_mcp.errors import ProviderError
from cortex_mcp.folders import create_private_folders
from cortex_mcp.providers.breaker import short

log = logging.getLogger(__name__)

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
OPENAI_BASE_URL = "https://api.openai.com/v1"  # as the openai SDK: unless OPENAI_BASE_URL says
LOCAL_DEFAULT_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
# where fastembed downloads models from (huggingface_hub's default; HF_ENDPOINT overrides it)
HUB_URL = "https://huggingface.co"

# Texts per request and requests in flight (background indexing) unless set: OpenAI takes up to
# 2,048 inputs and 300K tokens a request (128 memories of the longest size fit), and serves
# requests in parallel; a local model on the CPU is fastest with one moderate batch at a time.
OPENAI_BATCH_SIZE, OPENAI_CONCURRENCY = 128, 4
LOCAL_BATCH_SIZE, LOCAL_CONCURRENCY = 64, 1

# How servers say a request held too many or too long inputs (OpenAI, vLLM, Ollama, TEI)
_TOO_LARGE = re.compile(r"too (many|large|long)|maximum|batch size|max\S* .{0,20}input", re.I)


class ProviderBusy(ProviderError):
    """The provider is there but over its capacity (HTTP 429 or 5xx, or too slow): callers
    should send less at once and back off (at least `retry_after_s` when it said so)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Embedder(Protocol):
    """One embedding model. `model_key` names the vector space (model and dimensions).

    `embed` returns one row per text, unchecked (the cascade checks and normalises them);
    `warm_up` does the slow one-time work (SDK import, model load) outside any timed call."""

    name: str
    model_key: str
    batch_size: int  # texts per request
    concurrency: int  # requests the background indexer may keep in flight

    async def embed(self, texts: list[str]) -> Any: ...

    async def warm_up(self, *, wait: bool = False) -> None: ...

    def ready(self) -> bool: ...


def _describe_http_error(exc: Exception, timeout_s: float) -> str:
    """A one-line reason for a failed embeddings request (or a body we could not read)."""
    import httpx2

    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return f"timed out after {timeout_s:g} s"
    if isinstance(exc, _StatusError):
        return f"HTTP {exc.status}: {exc.message}"
    if isinstance(exc, httpx2.HTTPError | OSError):  # OSError: a plain HTTP connection's
        return f"cannot connect ({exc})"
    if isinstance(exc, ValueError):  # json.JSONDecodeError among them
        return "answered a body that is not JSON"
    if isinstance(exc, AttributeError | TypeError | KeyError):
        return "answered something other than an embeddings list"
    return f"{type(exc).__name__}: {exc}"


class _StatusError(Exception):
    """The server answered an HTTP error status; `message` is its error's own message."""

    def __init__(self, status: int, message: str, headers: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def _status_error(response: Any) -> _StatusError:
    """The error a non-2xx answer carries: OpenAI's `{"error": {"message": ...}}`, else its text."""
    text = response.text.strip()
    message = ""
    try:
        body = json.loads(text)
        error = body.get("error", body) if isinstance(body, dict) else None
        found = error.get("message") if isinstance(error, dict) else None
        message = found if isinstance(found, str) else ""
    except ValueError:
        pass
    return _StatusError(
        response.status_code, short(message or text or response.reason_phrase), response.headers
    )


def _rows(body: Any, count: int) -> list[Any]:
    """One row per input from an embeddings response body: base64 little-endian float32
    (what we ask for) or a list of numbers (what some servers send anyway)."""
    rows: list[Any] = [None] * count
    for item in body["data"]:
        index, embedding = item.get("index"), item.get("embedding")
        if not isinstance(index, int) or not 0 <= index < count:
            continue
        if isinstance(embedding, str):
            embedding = np.frombuffer(base64.b64decode(embedding), dtype="<f4")
        rows[index] = embedding
    return rows


class _TooLarge(ProviderError):
    """The server refused a request as too large (too many inputs, or too many tokens)."""


def _http_error(exc: Exception, timeout_s: float) -> ProviderError:
    """The ProviderError for a failed request: too large, busy (429, 5xx, timeout) or other."""
    import httpx2

    message = _describe_http_error(exc, timeout_s)
    if isinstance(exc, _StatusError):
        if exc.status == 413 or (exc.status == 400 and _TOO_LARGE.search(exc.message)):
            return _TooLarge(message)
        if exc.status == 429 or exc.status >= 500:
            return ProviderBusy(message, retry_after_s=_retry_after(exc.headers))
    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return ProviderBusy(message)
    return ProviderError(message)


def _retry_after(headers: Any) -> float | None:
    """The seconds a `Retry-After` header asks for (a date form is ignored)."""
    try:
        seconds = float(headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if 0 <= seconds < 3600 else None


class OpenAIEmbedder:
    """OpenAI's embeddings endpoint (`POST {base_url}/embeddings`, bearer key); `base_url`
    serves Ollama, vLLM, LM Studio, OpenRouter or Gemini's OpenAI-compatible endpoint the
    same way. A plain HTTP client, not the openai SDK: every recall embeds its query, and the
    SDK's request building (options, headers, idempotency key, response wrapper) cost ~0.4 ms
    of the server's CPU per recall on top of the HTTP exchange itself."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        dimensions: int | None,
        timeout_s: float,
        batch_size: int | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size or OPENAI_BATCH_SIZE
        self.concurrency = concurrency or OPENAI_CONCURRENCY
        self.timeout_s = timeout_s
        self.base_url = base_url
        self.model_key = f"{model}@{dimensions}" if dimensions else model
        self._api_key = api_key or "not-needed"
        self._client: Any = None  # importing the HTTP stack is slow: in warm_up, not in a call
        self._warming: asyncio.Lock | None = None

    def _build_client(self) -> Any:
        """A server on plain HTTP (a local or LAN one) is posted to by `PlainHttpClient`
        (~0.4 ms less CPU a recall), any other by httpx."""
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        base_url = base_url.rstrip("/") + "/"
        headers = {"Authorization": f"Bearer {self._api_key}", "Accept": "application/json"}
        from cortex_mcp.providers import http11  # imported with the client, as httpx is

        if http11.serves(base_url):
            return http11.PlainHttpClient(base_url, headers, self.timeout_s)
        import httpx2

        return httpx2.AsyncClient(
            base_url=base_url, headers=headers, timeout=self.timeout_s, follow_redirects=True
        )

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
        """Requests of `batch_size` texts; one the server refuses as too large is sent again
        in halves, and every later request is that small too."""
        await self.warm_up()
        rows: list[Any] = []
        start = 0
        while start < len(texts):
            chunk = texts[start : start + self.batch_size]
            try:
                rows.extend(await self._embed_batch(chunk))
            except _TooLarge as refused:
                if len(chunk) == 1:
                    raise ProviderError(refused.message) from refused
                self._shrink(len(chunk) // 2, refused.message)
                continue
            start += len(chunk)
        return rows

    def _shrink(self, size: int, reason: str) -> None:
        if size < self.batch_size:  # another request in flight may have shrunk it already
            log.warning(
                "embedding provider %s refused %d texts in one request (%s):"
                " sending %d per request from now on",
                self.name,
                size * 2,
                reason,
                size,
            )
            self.batch_size = size

    async def _embed_batch(self, texts: list[str]) -> list[Any]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "base64"}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        try:
            response = await self._client.post("embeddings", json=body)
            if response.status_code >= 400:
                raise _status_error(response)
            return _rows(json.loads(response.content), len(texts))
        except Exception as exc:  # any HTTP or body fault is the provider's, never a crash
            raise _http_error(exc, self.timeout_s) from exc

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class LocalModelError(ProviderError):
    """The local model cannot be loaded in this process: `cause` says why, `fix` what to do."""

    def __init__(self, cause: str, fix: str) -> None:
        super().__init__(f"{cause}: {fix}")
        self.cause = cause
        self.fix = fix


class _NotDownloaded(ProviderError):
    """Doctor only: the model is not on this machine yet, and the hub answers (no failure)."""


# What to do when the model can neither be found here nor fetched from the model hub
_OFFLINE_FIX = (
    "copy the model folder from a machine that has it and set CORTEX_EMBEDDING_MODEL_PATH to it,"
    " or use an embedding server (CORTEX_EMBEDDING_BASE_URL)"
)


class LocalEmbedder:
    """A model run on this machine by fastembed (the optional `local` extra): from a folder
    copied by hand (`model_path`, CORTEX_EMBEDDING_MODEL_PATH), else from `cache_dir`
    (``~/.cortex/models``), where it is downloaded once from the model hub.

    It loads in a background thread, so it never delays start-up; until it is loaded, `embed`
    raises and callers degrade to text search. A load that cannot succeed (no copy here and no
    network to the hub, or a folder that holds no model) fails for good in one line that names
    the cause and what to do, and `failure()` says so from then on. With `download=False`
    (doctor) nothing is written: a model not downloaded yet is only reported."""

    name = "local"
    kind = "embedder"  # in log lines
    offline_fix = _OFFLINE_FIX

    def __init__(
        self,
        *,
        model: str,
        cache_dir: Path,
        model_path: Path | None = None,
        hub_url: str | None = HUB_URL,
        timeout_s: float = 5.0,
        download: bool = True,
        batch_size: int | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.model = model
        self.model_key = f"local:{model}"
        self.cache_dir = cache_dir
        self.model_path = model_path
        self.hub_url = hub_url  # None: offline (HF_HUB_OFFLINE), the hub is not asked
        self.timeout_s = timeout_s
        self.download = download
        self.batch_size = batch_size or LOCAL_BATCH_SIZE
        self.concurrency = concurrency or LOCAL_CONCURRENCY
        self._model: Any = None
        self._error: LocalModelError | None = None
        self._waiting: str | None = None
        self._loading = threading.Lock()

    def model_class(self) -> Any:
        from fastembed import TextEmbedding

        return TextEmbedding

    @staticmethod
    def available() -> bool:
        """Whether fastembed is installed (without importing it: its import writes files)."""
        return importlib.util.find_spec("fastembed") is not None

    def start_loading(self) -> None:
        threading.Thread(target=self._load, name=f"cortex-local-{self.kind}", daemon=True).start()

    async def warm_up(self, *, wait: bool = False) -> None:
        """Load the model: in the background, or (`wait`, for doctor) until it is loaded."""
        if self._model is not None or self._error is not None:
            return
        if wait:
            await asyncio.to_thread(self._load)
        elif not self._loading.locked():
            self.start_loading()

    def failure(self, *, advice: bool = False) -> str | None:
        """Why the model can never load in this process (None while it loads or once loaded):
        the cause, and with `advice` what to do about it."""
        if self._error is None:
            return None
        return self._error.message if advice else f"failed: {self._error.cause}"

    def waiting(self) -> str | None:
        """Doctor: why the model was not loaded when that is no failure (not downloaded yet)."""
        return self._waiting

    def _load(self) -> None:
        with self._loading:
            if self._model is not None or self._error is not None:
                return
            started = time.perf_counter()
            try:
                self._model = self._open()
            except _NotDownloaded as exc:
                self._waiting = exc.message
                return
            except LocalModelError as exc:
                self._error = exc
            except Exception as exc:  # a broken install or model must never crash the server
                self._error = LocalModelError(
                    f"cannot load {self.model} ({type(exc).__name__}: {exc})", self.offline_fix
                )
            if self._error is not None:  # doctor prints it as its own line
                level = logging.WARNING if self.download else logging.DEBUG
                log.log(level, "local %s %s failed: %s", self.kind, self.model, self._error.message)
                return
            log.info(
                "local %s %s loaded in %.1fs", self.kind, self.model, time.perf_counter() - started
            )

    def _open(self) -> Any:
        """The fastembed model, or LocalModelError (or _NotDownloaded when not downloading)."""
        if self.model_path is not None:
            return self._from_folder(self.model_path)
        if self.cache_dir.is_dir() and (cached := self._from_cache(self.cache_dir)) is not None:
            return cached
        if self.download:
            create_private_folders(self.cache_dir)
        where = f"the model is not in {self.cache_dir}"
        if self.hub_url is None:
            raise LocalModelError(f"HF_HUB_OFFLINE is set and {where}", self.offline_fix)
        unreachable = hub_unreachable(self.hub_url, self.timeout_s)
        if unreachable is not None:
            host = urllib.parse.urlsplit(self.hub_url).netloc or self.hub_url
            raise LocalModelError(
                f"no network to the model hub ({host}: {unreachable}) and {where}",
                self.offline_fix,
            )
        if not self.download:
            raise _NotDownloaded(
                f"not downloaded yet: the server fetches it from {self.hub_url} into"
                f" {self.cache_dir} when it starts"
            )
        _quiet_fastembed()
        try:
            return self.model_class()(self.model, cache_dir=str(self.cache_dir))
        except Exception as exc:  # the download failed after the hub answered
            raise LocalModelError(
                f"cannot download {self.model} from {self.hub_url} ({type(exc).__name__}: {exc})",
                self.offline_fix,
            ) from exc

    def _from_cache(self, folder: Path) -> Any:
        """The model from a download folder when it is complete there, else None (no network)."""
        _quiet_fastembed()
        try:
            return self.model_class()(self.model, cache_dir=str(folder), local_files_only=True)
        except Exception:  # not there (or partly): the caller fetches it or says why it cannot
            return None

    def _from_folder(self, folder: Path) -> Any:
        """CORTEX_EMBEDDING_MODEL_PATH: one model's folder (its tokenizer.json beside the model
        file), or a copy of another machine's whole `~/.cortex/models`."""
        fix = (
            f"point CORTEX_EMBEDDING_MODEL_PATH at a copy of {self.model}'s folder (tokenizer.json"
            " and the model file) or of a `~/.cortex/models` where it loaded, or set"
            " CORTEX_EMBEDDING_MODEL to the model that folder holds"
        )
        if not folder.is_dir():
            raise LocalModelError(f"CORTEX_EMBEDDING_MODEL_PATH {folder} is not a folder", fix)
        if not (folder / "tokenizer.json").is_file():
            cached = self._from_cache(folder)
            if cached is None:
                raise LocalModelError(f"no copy of {self.model} in {folder}", fix)
            return cached
        _quiet_fastembed()
        try:
            return self.model_class()(
                self.model, cache_dir=str(folder), specific_model_path=str(folder)
            )
        except Exception as exc:
            raise LocalModelError(
                f"cannot load {self.model} from {folder} ({type(exc).__name__}: {short(str(exc))})",
                fix,
            ) from exc

    def ready(self) -> bool:
        return self._model is not None

    async def embed(self, texts: list[str]) -> list[np.ndarray]:
        if self._model is None:
            raise ProviderError(f"local embedder {self.failure() or 'is still loading'}")
        try:
            vectors = await asyncio.to_thread(
                lambda: list(self._model.embed(texts, batch_size=self.batch_size))
            )
        except Exception as exc:  # a model fault degrades recall like any provider fault
            raise ProviderError(f"local embedder failed: {type(exc).__name__}: {exc}") from exc
        return vectors


def _quiet_fastembed() -> None:
    """fastembed logs each failed download attempt at ERROR through loguru; the one line that
    LocalEmbedder logs (the cause and what to do) replaces them."""
    try:
        from loguru import logger
    except ImportError:  # an older fastembed without loguru logs through `logging`
        return
    logger.disable("fastembed")


def hub_unreachable(url: str, timeout_s: float) -> str | None:
    """None when the model hub at `url` answers HTTP at all within `timeout_s`, else why not
    (a name that does not resolve, a refused connection, no answer). The wait is bounded even
    when resolving the name hangs."""
    outcome: list[str | None] = []

    def ask() -> None:
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, method="HEAD"), timeout=timeout_s
            ):
                outcome.append(None)
        except urllib.error.HTTPError:  # it answered, with an error: the hub is reachable
            outcome.append(None)
        except urllib.error.URLError as exc:
            reason = exc.reason
            outcome.append(getattr(reason, "strerror", None) or str(reason))
        except (OSError, ValueError) as exc:  # a timeout while reading, a malformed URL
            outcome.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=ask, name="cortex-hub-check", daemon=True)
    thread.start()
    thread.join(timeout_s)
    return outcome[0] if outcome else f"no answer within {timeout_s:g} s"
