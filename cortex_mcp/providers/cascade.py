"""The embedding cascade: providers tried in order, vectors checked, health and breakers kept."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.breaker import ProbeResult, ProviderHealth, check_vectors, short
from cortex_mcp.providers.embeddings import Embedder, ProviderBusy

log = logging.getLogger(__name__)


class MalformedVectors(ProviderError):
    """A provider answered, but no vector it sent back was usable."""

    def __init__(self, message: str, *, rejected: int) -> None:
        super().__init__(message)
        self.rejected = rejected


def _failure(provider: Embedder, *, advice: bool = False) -> str | None:
    """Why a provider can never become ready in this process (a local model that cannot load),
    if it says so; optional for embedders that are always ready."""
    failure = getattr(provider, "failure", None)
    return failure(advice=advice) if failure is not None else None


def _not_ready(provider: Embedder) -> str:
    """Why a provider cannot embed now, in one line a person can act on: a model that can
    never load says so with what to do (a recall's note is often all a user sees of it)."""
    advice = _failure(provider, advice=True)
    return f"failed: {advice}" if advice else "still loading"


async def _warm_up(provider: Embedder, *, wait: bool = False) -> None:
    warm_up = getattr(provider, "warm_up", None)  # optional for embedders without slow setup
    if warm_up is not None:
        await warm_up(wait=wait)


@dataclass
class EmbeddingResult:
    """Checked vectors from one provider: `ok[i]` says whether row i may be used."""

    model_key: str
    vectors: np.ndarray
    ok: np.ndarray
    provider: str
    took_ms: float
    problems: list[str] = field(default_factory=list)
    passed_over: list[str] = field(default_factory=list)  # earlier providers and why


class EmbeddingCascade:
    """Tries providers in configured order, each within its timeout, and keeps their health.

    A provider whose calls keep failing is skipped for a cool-down (its circuit is open) and
    probed in the background when the cool-down ends; `on_recover` callbacks then run (the
    indexer uses one to backfill at once)."""

    def __init__(
        self,
        providers: list[Embedder],
        timeout_s: float,
        *,
        failure_threshold: int = 3,
        cooldown_s: float = 5.0,
        max_cooldown_s: float = 300.0,
    ) -> None:
        self.providers = providers
        self.timeout_s = timeout_s
        self._breaker = (failure_threshold, cooldown_s, max_cooldown_s)
        self.health: dict[str, ProviderHealth] = {}
        for provider in providers:
            self._health_of(provider)
        self.on_recover: list[Callable[[], None]] = []
        self.calls = 0
        self._dims: dict[str, int] = {
            p.model_key: dims for p in providers if (dims := getattr(p, "dimensions", None))
        }
        self._probes: set[asyncio.Task[None]] = set()
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._retired: list[Embedder] = []

    def replace_providers(self, providers: list[Embedder], timeout_s: float) -> None:
        """Providers rebuilt from changed settings (an endpoint, model, key or timeout): calls
        already running finish on the old ones (closed with the cascade), the next call (a
        recall's or the indexer's) uses the new ones, each with a fresh breaker."""
        self._retired.extend(self.providers)
        self.providers = providers
        self.timeout_s = timeout_s
        self.health = {}
        for provider in providers:
            self._health_of(provider)
        for provider in providers:
            if dims := getattr(provider, "dimensions", None):
                self._dims[provider.model_key] = dims

    @property
    def primary(self) -> Embedder | None:
        return self.providers[0] if self.providers else None

    @property
    def failures(self) -> dict[str, str]:
        """Providers whose last call failed, or that can never load, with the reason."""
        found = {
            name: h.last_error or "failed" for name, h in self.health.items() if h.state() != "ok"
        }
        for provider in self.providers:
            if (failure := _failure(provider)) is not None:
                found[provider.name] = failure
        return found

    def usable(self) -> list[Embedder]:
        """Providers to try now: ready and not in a cool-down (due probes start here)."""
        found = []
        for provider in self.providers:
            health = self._health_of(provider)
            if health.probe_due():
                self._start_probe(provider)
            if provider.ready() and not health.is_open:
                found.append(provider)
        return found

    async def warm_up(self) -> None:
        """Import SDKs and start loading local models; never raises."""
        for provider in self.providers:
            try:
                await _warm_up(provider)
            except Exception as exc:  # a broken install must not take the server down
                log.warning("warming up embedding provider %s failed: %s", provider.name, exc)

    async def embed(self, texts: list[str], *, timeout_s: float | None = None) -> EmbeddingResult:
        """Vectors from the first provider that answers with a usable first row."""
        errors = []
        for provider in self.providers:
            health = self._health_of(provider)
            if health.probe_due():
                self._start_probe(provider)
            if health.is_open:
                errors.append(f"{provider.name}: {health.skip_reason()}")
                continue
            if not provider.ready():
                errors.append(f"{provider.name}: {_not_ready(provider)}")
                continue
            try:
                result = await self.embed_with(provider, texts, timeout_s=timeout_s)
            except ProviderError as exc:
                errors.append(f"{provider.name}: {exc.message}")
                continue
            if result.ok[0]:
                result.passed_over = errors
                return result
            errors.append(f"{provider.name}: malformed vector ({', '.join(result.problems)})")
        raise ProviderError("; ".join(errors) or "no embedding provider configured")

    async def embed_with(
        self, provider: Embedder, texts: list[str], *, timeout_s: float | None = None
    ) -> EmbeddingResult:
        """One provider, one call (warm-up excluded from its timeout); health is recorded.

        Raises ProviderError when the call fails or no row is usable."""
        health = self._health_of(provider)
        await _warm_up(provider)
        timeout = timeout_s or self.timeout_s
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):  # no task of its own: the request goes now
                rows = await provider.embed(texts)
            checked, dim = check_vectors(rows, len(texts), self._dims.get(provider.model_key))
        except (ProviderError, TimeoutError) as exc:
            message = (exc.message if isinstance(exc, ProviderError) else "") or (
                f"timed out after {timeout:g} s"
            )
            self._failed(provider, message)
            if isinstance(exc, ProviderBusy | TimeoutError):  # send less, later: see indexer
                wait = getattr(exc, "retry_after_s", None)
                raise ProviderBusy(short(message), retry_after_s=wait) from exc
            raise ProviderError(short(message)) from exc
        except Exception as exc:  # an embedder bug degrades like a provider fault
            log.exception("embedding provider %s raised", provider.name)
            self._failed(provider, f"{type(exc).__name__}: {exc}")
            raise ProviderError(short(f"{type(exc).__name__}: {exc}")) from exc
        took = (time.perf_counter() - started) * 1000
        if checked.rejected:
            health.rejected_vectors += checked.rejected
            health.rejecting = True
            log.warning(
                "embedding provider %s: rejected %d of %d vectors (%s)",
                provider.name,
                checked.rejected,
                len(texts),
                ", ".join(checked.problems),
            )
        if not checked.ok.any():
            message = f"malformed vectors ({', '.join(checked.problems)})"
            self._failed(provider, message)
            raise MalformedVectors(message, rejected=checked.rejected)
        if dim is not None:
            self._dims.setdefault(provider.model_key, dim)
        self.calls += 1
        back = health.record_success()
        if health.rejecting and not checked.rejected:  # clean vectors again after bad ones
            health.rejecting, back = False, True
        if back:
            log.info("embedding provider %s is back", provider.name)
            self._recovered()
        return EmbeddingResult(
            provider.model_key, checked.vectors, checked.ok, provider.name, took, checked.problems
        )

    async def probe(self, provider: Embedder, *, wait: bool = True) -> ProbeResult:
        """One real call (after warm-up, for doctor and the breaker): ok, degraded or failed."""
        try:
            await _warm_up(provider, wait=wait)
        except Exception as exc:
            return ProbeResult(provider.name, provider.model_key, "failed", short(str(exc)), 0.0)
        if not provider.ready():
            waiting = getattr(provider, "waiting", None)
            if (note := waiting() if waiting is not None else None) is not None:
                return ProbeResult(provider.name, provider.model_key, "degraded", note, 0.0)
            reason = _failure(provider, advice=True) or _not_ready(provider)
            return ProbeResult(provider.name, provider.model_key, "failed", reason, 0.0)
        started = time.perf_counter()
        try:
            result = await self.embed_with(provider, ["cortex-mcp health check", "ok"])
        except ProviderError as exc:
            took = (time.perf_counter() - started) * 1000
            return ProbeResult(provider.name, provider.model_key, "failed", exc.message, took)
        dims = int(result.vectors.shape[1])
        if not result.ok.all():
            detail = f"some vectors malformed ({', '.join(result.problems)})"
            return ProbeResult(
                provider.name, provider.model_key, "degraded", detail, result.took_ms, dims
            )
        detail = f"{dims} dimensions in {result.took_ms:.0f} ms"
        return ProbeResult(provider.name, provider.model_key, "ok", detail, result.took_ms, dims)

    async def probe_all(self) -> list[ProbeResult]:
        return [await self.probe(provider) for provider in self.providers]

    def health_report(self) -> dict[str, dict[str, Any]]:
        report = {name: health.as_dict() for name, health in self.health.items()}
        for provider in self.providers:
            if (failure := _failure(provider, advice=True)) is not None:
                report[provider.name].update(state="failed", last_error=failure)
        return report

    def _health_of(self, provider: Embedder) -> ProviderHealth:
        health = self.health.get(provider.name)
        if health is None:
            threshold, cooldown, max_cooldown = self._breaker
            health = self.health[provider.name] = ProviderHealth(
                provider.name,
                provider.model_key,
                failure_threshold=threshold,
                base_cooldown_s=cooldown,
                max_cooldown_s=max_cooldown,
            )
        return health

    def _failed(self, provider: Embedder, message: str) -> None:
        health = self._health_of(provider)
        was_open = health.is_open
        health.record_failure(message)
        if not health.is_open:
            log.warning("embedding provider %s failed: %s", provider.name, health.last_error)
            return
        if not was_open:
            log.warning(
                "embedding provider %s failed %d times in a row (%s): skipped for %.0f s",
                provider.name,
                health.consecutive_failures,
                health.last_error,
                health.cooldown_s,
            )
        self._schedule_probe(provider, health.cooldown_s)

    def _schedule_probe(self, provider: Embedder, delay_s: float) -> None:
        """Probe in the background when the cool-down ends, even if no call comes."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        handle = self._timers.pop(provider.name, None)
        if handle is not None:
            handle.cancel()
        self._timers[provider.name] = loop.call_later(delay_s, self._probe_if_due, provider)

    def _probe_if_due(self, provider: Embedder) -> None:
        self._timers.pop(provider.name, None)
        if self._health_of(provider).probe_due():
            self._start_probe(provider)

    def _start_probe(self, provider: Embedder) -> None:
        health = self._health_of(provider)
        health.probing = True

        async def probe() -> None:
            try:
                await self.probe(provider, wait=False)
            finally:
                health.probing = False

        task = asyncio.create_task(probe(), name=f"cortex-probe-{provider.name}")
        self._probes.add(task)
        task.add_done_callback(self._probes.discard)

    def _recovered(self) -> None:
        for callback in self.on_recover:
            try:
                callback()
            except Exception:
                log.exception("on_recover callback failed")

    async def close(self) -> None:
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in list(self._probes):
            task.cancel()
        await asyncio.gather(*self._probes, return_exceptions=True)
        for provider in [*self._retired, *self.providers]:
            closer = getattr(provider, "close", None)
            if closer is not None:
                await closer()
