"""Health, one line per part: what works, what is degraded and why, what failed and why.

`cortex-mcp doctor` prints these lines and `cortex://stats` carries them, from the same checks:
the database read-only, and one real call to each configured embedding provider within its
timeout. A part that was asked for and does not work is `failed`; one that works with less
than it could (text search only, a read-only file) is `degraded`.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from dataclasses import asdict, dataclass
from typing import Literal

from cortex_mcp.config import Settings
from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.breaker import short
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade, LLMProvider
from cortex_mcp.store.connection import ConnectorInfo
from cortex_mcp.store.inspect import DatabaseReport
from cortex_mcp.store.interfaces import DatabaseHandle

Status = Literal["ok", "degraded", "failed"]


@dataclass(frozen=True)
class PartHealth:
    part: str
    status: Status
    detail: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def line(self) -> str:
        return f"{self.part:<12}{self.status:<10}{self.detail}"


def worst(parts: list[PartHealth]) -> Status:
    statuses = {part.status for part in parts}
    for status in ("failed", "degraded"):
        if status in statuses:
            return status  # type: ignore[return-value]
    return "ok"


async def embedding_health(
    cascade: EmbeddingCascade, notes: list[str], endpoint: str | None
) -> list[PartHealth]:
    """One real call to each configured provider (in parallel, each within its timeout);
    `notes` are the providers asked for that could not even be built (a missing key)."""
    parts = [
        PartHealth("embeddings", "failed" if _was_asked_for(note) else "degraded", note)
        for note in notes
    ]
    probes = await asyncio.gather(*(cascade.probe(p) for p in cascade.providers))
    for probe in probes:
        where = f" at {endpoint}" if endpoint and probe.name == "openai" else ""
        # a local model's failure is one longer line: the cause and the two ways out
        detail = f"{probe.name} {probe.model_key}{where}: {short(probe.detail, limit=400)}"
        if probe.status != "ok":
            detail += f" (timeout {cascade.timeout_s:g} s)"
        parts.append(PartHealth("embeddings", probe.status, detail))  # type: ignore[arg-type]
    if not parts:
        parts.append(PartHealth("embeddings", "ok", "off (CORTEX_EMBEDDING_PROVIDER=none)"))
    return parts


def _was_asked_for(note: str) -> bool:
    """Notes for a provider named in CORTEX_EMBEDDING_PROVIDER (failed) start with its name;
    the zero-configuration note (nothing found for `auto`) is only degraded."""
    return note.startswith("embedding provider ")


_LLM_PROBE_SYSTEM = "You are a health check. Answer with the single word OK."


async def llm_health(
    cascade: LLMCascade, notes: list[str], endpoints: dict[str, str]
) -> list[PartHealth]:
    """One real, tiny call to each configured LLM provider (in parallel, each within the
    cascade's timeout); `notes` are providers asked for that could not be built."""
    parts = [
        PartHealth("llm", "failed" if note.startswith("LLM provider ") else "degraded", note)
        for note in notes
    ]
    parts += await asyncio.gather(
        *(_probe_llm(p, cascade.timeout_s, endpoints.get(p.name)) for p in cascade.providers)
    )
    if not parts:
        parts.append(PartHealth("llm", "ok", "off (CORTEX_LLM_PROVIDER=none): ingest uses rules"))
    return parts


async def _probe_llm(provider: LLMProvider, timeout_s: float, endpoint: str | None) -> PartHealth:
    where = f" at {endpoint}" if endpoint else ""
    name = f"{provider.name} {provider.model}{where}"
    try:
        await asyncio.to_thread(provider.prepare)  # the SDK import stays out of the timeout
        done = await asyncio.wait_for(
            provider.complete(_LLM_PROBE_SYSTEM, "Are you there?", max_tokens=5), timeout_s
        )
    except TimeoutError:
        return PartHealth("llm", "failed", f"{name}: no answer within {timeout_s:g} s")
    except ProviderError as exc:
        return PartHealth(
            "llm", "failed", f"{name}: {short(exc.message)} (timeout {timeout_s:g} s)"
        )
    return PartHealth("llm", "ok", f"{name}: answered in {done.took_ms:.0f} ms")


def llm_record(cascade: LLMCascade, notes: list[str]) -> list[PartHealth]:
    """The LLM providers as the running server last saw them (no call: each costs money)."""
    parts = [
        PartHealth("llm", "failed" if note.startswith("LLM provider ") else "degraded", note)
        for note in notes
    ]
    for provider in cascade.providers:
        failure = cascade.failures.get(provider.name)
        if failure:
            parts.append(
                PartHealth(
                    "llm",
                    "failed",
                    f"{provider.name} {provider.model}: last call failed: {short(failure)}",
                )
            )
        else:
            parts.append(
                PartHealth("llm", "ok", f"{provider.name} {provider.model}: no failure since start")
            )
    if not parts:
        parts.append(PartHealth("llm", "ok", "off (CORTEX_LLM_PROVIDER=none): ingest uses rules"))
    return parts


def llm_endpoints(settings: Settings) -> dict[str, str]:
    """Where each LLM provider sends text: the setting, the SDKs' own variables, the vendor."""
    return {
        "openai": settings.llm_base_url
        or os.environ.get("OPENAI_BASE_URL")
        or "https://api.openai.com/v1",
        "anthropic": os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com",
    }


def sqlite_health(info: ConnectorInfo) -> list[PartHealth]:
    vec = (
        PartHealth("sqlite-vec", "ok", f"{info.vec_version}: vector search inside SQLite")
        if info.vec_available
        else PartHealth("sqlite-vec", "ok", "not loadable here: vectors are searched with numpy")
    )
    fts5 = (
        PartHealth("fts5", "ok", "full-text search available")
        if info.fts5
        else PartHealth("fts5", "failed", "this SQLite has no FTS5: text search cannot work")
    )
    return [PartHealth("sqlite", "ok", f"{info.sqlite_version} via {info.module}"), fts5, vec]


def database_health(report: DatabaseReport) -> PartHealth:
    return PartHealth("database", report.status, report.detail)


class IntegrityWatch:
    """SQLite's full integrity check of an open database, run again at most every
    `interval_s` (it reads the whole file: ~0.7 s for 10K memories on a busy 2-core machine),
    so reading `cortex://stats` often stays cheap."""

    def __init__(self, interval_s: float = 600.0) -> None:
        self.interval_s = interval_s
        self._verdict: str | None = None
        self._checked_at = -math.inf

    async def verdict(self, db: DatabaseHandle) -> str:
        if time.monotonic() - self._checked_at >= self.interval_s:
            self._verdict = await db.integrity_check()
            self._checked_at = time.monotonic()
        return self._verdict or "not checked"

    async def health(self, db: DatabaseHandle, *, show_where: bool = True) -> PartHealth:
        """The database a running server holds open: its integrity, and whether this
        process may write it; where it is (its path, a PostgreSQL URL without its password)
        unless `show_where` is off (an agent token's caller is not told)."""
        where = str(db.path) if show_where else "the database"
        verdict = await self.verdict(db)
        if verdict != "ok":
            return PartHealth("database", "failed", f"{where} is corrupt: {short(verdict)}")
        age = time.monotonic() - self._checked_at
        summary = f"{where}: schema {await db.schema_version()}, integrity ok ({age:.0f} s ago)"
        if db.read_only:
            return PartHealth("database", "degraded", f"{summary}; read-only: writes are refused")
        return PartHealth("database", "ok", summary)


def embedding_endpoint(settings: Settings) -> str:
    """Where the openai provider sends text: the setting, the SDK's own variable, or OpenAI."""
    return (
        settings.embedding_base_url
        or os.environ.get("OPENAI_BASE_URL")
        or "https://api.openai.com/v1"
    )
