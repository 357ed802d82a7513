"""LLM providers for extraction: OpenAI chat completions (any OpenAI-compatible server:
Ollama, vLLM, LM Studio, OpenRouter), Anthropic Messages, and the cascade over them.

Each call has a timeout. The SDKs' own retries are off: a provider is retried once only when it
answers "busy" (429/503/529) with a Retry-After short enough to fit the budget; anything else
moves on to the next provider. A semaphore bounds the calls in flight across all concurrent
ingests of the process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from cortex_mcp.errors import ProviderError

log = logging.getLogger(__name__)

OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
ANTHROPIC_DEFAULT_MODEL = "claude-3-5-haiku-latest"
SHORT_RETRY_AFTER_S = 2.0
_BUSY_STATUSES = {429, 503, 529}


@dataclass(frozen=True)
class Completion:
    text: str
    provider: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    took_ms: float


class BusyError(ProviderError):
    """The provider asked to come back later; `retry_after_s` is its Retry-After (or None)."""

    def __init__(self, message: str, retry_after_s: float | None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class LLMProvider(Protocol):
    name: str
    model: str

    def prepare(self) -> None:
        """Import the SDK and build its client (slow the first time: kept out of timeouts)."""

    async def complete(self, system: str, user: str, *, max_tokens: int) -> Completion: ...

    async def close(self) -> None: ...


def retry_after_seconds(headers: Any) -> float | None:
    """Retry-After as the SDKs read it: ``retry-after-ms`` first, then seconds."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            return None  # an HTTP date: treat as long
    return None


def _sdk_failure(name: str, exc: Exception) -> ProviderError:
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status in _BUSY_STATUSES:
        after = retry_after_seconds(getattr(response, "headers", None))
        return BusyError(f"{name}: busy (HTTP {status}, retry-after {after})", after)
    label = f"HTTP {status}" if status else type(exc).__name__
    return ProviderError(f"{name}: {label}: {str(exc)[:200]}")


class OpenAIChat:
    """Chat completions through the official `openai` SDK."""

    name = "openai"

    def __init__(
        self, *, model: str, api_key: str | None, base_url: str | None, timeout_s: float
    ) -> None:
        self.model = model
        self._api_key = api_key or "not-needed"
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._client: Any = None
        self._building = threading.Lock()

    def prepare(self) -> None:
        self._sdk()

    def _sdk(self) -> Any:
        with self._building:  # concurrent first calls must not each build a client
            if self._client is None:
                from openai import AsyncOpenAI

                self._client = AsyncOpenAI(
                    api_key=self._api_key,
                    base_url=self._base_url,
                    timeout=self._timeout_s,
                    max_retries=0,
                )
        return self._client

    async def complete(self, system: str, user: str, *, max_tokens: int) -> Completion:
        import openai

        started = time.perf_counter()
        try:
            response = await self._sdk().chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0.1,
                max_tokens=max_tokens,
            )
        except openai.OpenAIError as exc:
            raise _sdk_failure(self.name, exc) from exc
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice else None) or ""
        usage = response.usage
        return Completion(
            text=text,
            provider=self.name,
            model=self.model,
            prompt_tokens=int(usage.prompt_tokens) if usage else 0,
            completion_tokens=int(usage.completion_tokens) if usage else 0,
            took_ms=(time.perf_counter() - started) * 1000,
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


class AnthropicMessages:
    """The Messages API through the official `anthropic` SDK (ANTHROPIC_BASE_URL works too)."""

    name = "anthropic"

    def __init__(self, *, model: str, api_key: str | None, timeout_s: float) -> None:
        self.model = model
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._client: Any = None
        self._building = threading.Lock()

    def prepare(self) -> None:
        self._sdk()

    def _sdk(self) -> Any:
        with self._building:
            if self._client is None:
                from anthropic import AsyncAnthropic

                self._client = AsyncAnthropic(
                    api_key=self._api_key, timeout=self._timeout_s, max_retries=0
                )
        return self._client

    async def complete(self, system: str, user: str, *, max_tokens: int) -> Completion:
        import anthropic

        started = time.perf_counter()
        try:
            response = await self._sdk().messages.create(
                model=self.model,
                system=system,
                messages=[{"role": "user", "content": user}],
                max_tokens=max_tokens,
            )
        except anthropic.AnthropicError as exc:
            raise _sdk_failure(self.name, exc) from exc
        text = "".join(getattr(block, "text", "") for block in response.content)
        return Completion(
            text=text,
            provider=self.name,
            model=self.model,
            prompt_tokens=int(response.usage.input_tokens),
            completion_tokens=int(response.usage.output_tokens),
            took_ms=(time.perf_counter() - started) * 1000,
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


@dataclass
class LLMCascade:
    """Tries providers in configured order within `timeout_s` each; at most `max_in_flight`
    calls run at once in this process, however many ingests are waiting."""

    providers: list[LLMProvider]
    timeout_s: float
    max_in_flight: int = 4
    calls: int = 0
    failures: dict[str, str] = field(default_factory=dict)
    failure_count: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    _gate: asyncio.Semaphore | None = None
    _prepared: set[str] = field(default_factory=set)
    _retired: list[LLMProvider] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.providers]

    def _semaphore(self) -> asyncio.Semaphore:
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.max_in_flight)
        return self._gate

    async def complete(self, system: str, user: str, *, max_tokens: int = 1200) -> Completion:
        if not self.providers:
            raise ProviderError("no LLM provider configured")
        async with self._semaphore():
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                return await self._cascade(system, user, max_tokens)
            finally:
                self.in_flight -= 1

    async def _cascade(self, system: str, user: str, max_tokens: int) -> Completion:
        errors = []
        for provider in self.providers:
            try:
                completion = await self._with_short_retry(provider, system, user, max_tokens)
            except ProviderError as exc:
                self.failure_count += 1
                self.failures[provider.name] = exc.message
                errors.append(exc.message)
                log.warning("LLM provider %s failed: %s", provider.name, exc.message)
                continue
            self.failures.pop(provider.name, None)
            self.prompt_tokens += completion.prompt_tokens
            return completion
        raise ProviderError("; ".join(errors))

    async def _with_short_retry(
        self, provider: LLMProvider, system: str, user: str, max_tokens: int
    ) -> Completion:
        if provider.name not in self._prepared:
            await asyncio.to_thread(provider.prepare)
            self._prepared.add(provider.name)
        deadline = time.monotonic() + self.timeout_s
        for attempt in (1, 2):
            remaining = deadline - time.monotonic()
            try:
                self.calls += 1
                return await asyncio.wait_for(
                    provider.complete(system, user, max_tokens=max_tokens), remaining
                )
            except TimeoutError:
                raise ProviderError(
                    f"{provider.name}: no answer within {self.timeout_s:g}s (CORTEX_LLM_TIMEOUT_S)"
                ) from None
            except BusyError as exc:
                wait = exc.retry_after_s
                remaining = deadline - time.monotonic()
                short = wait is not None and wait <= min(SHORT_RETRY_AFTER_S, remaining - 0.5)
                if attempt == 2 or not short:
                    raise
                self.retries += 1
                log.info("LLM provider %s busy; retrying in %.2fs", provider.name, wait)
                await asyncio.sleep(wait or 0.0)
        raise AssertionError("unreachable")

    def note_bad_answer(self, provider: str, message: str) -> None:
        """An answer that failed validation counts as that provider's failure."""
        self.failure_count += 1
        self.failures[provider] = f"{provider}: {message}"

    async def warm_up(self) -> None:
        """Import the SDKs in a thread, ahead of the first call (after start-up)."""
        for provider in self.providers:
            if provider.name not in self._prepared:
                await asyncio.to_thread(provider.prepare)
                self._prepared.add(provider.name)

    def replace_providers(self, providers: list[LLMProvider], timeout_s: float) -> None:
        """Providers rebuilt from changed settings: calls already running finish on the old
        ones (closed with the cascade), the next call uses the new ones."""
        self._retired.extend(self.providers)
        self.providers = providers
        self.timeout_s = timeout_s
        self.failures = {}

    async def close(self) -> None:
        for provider in [*self._retired, *self.providers]:
            await provider.close()
