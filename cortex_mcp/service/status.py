"""Core snapshot, stats and health: what resources, probes and `doctor` read of a running server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cortex_mcp import __version__
from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.health import (
    IntegrityWatch,
    embedding_endpoint,
    embedding_health,
    llm_record,
    sqlite_health,
    worst,
)
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer
from cortex_mcp.engine.recall.report import core_snapshot
from cortex_mcp.models import LOCAL, Caller, Clock, Layer, to_iso
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.service.requests import AgentRequest
from cortex_mcp.store import connector_info
from cortex_mcp.store.backend import Stores

_OWN = AgentRequest()  # the server's own agent


@dataclass(kw_only=True)
class StatusService:
    """What resources and probes read: core snapshot, stats, health, change counters."""

    settings: Settings
    stores: Stores
    embeddings: EmbeddingCascade
    indexer: EmbeddingIndexer | None
    llm: LLMCascade
    provider_notes: list[str]
    llm_notes: list[str]
    clock: Clock
    integrity: IntegrityWatch = field(default_factory=IntegrityWatch)
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def core_markdown(self, agent_id: str | None = None, max_tokens: int = 2000) -> str:
        agent = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
        core = await self.stores.memories.list_layer(
            agent, Layer.core, to_iso(self.clock.now()), limit=500
        )
        return core_snapshot(core, max_tokens)

    async def stats(
        self, request: AgentRequest = _OWN, *, all_agents: bool = False
    ) -> dict[str, Any]:
        """Health and counts. Memory, turn and relation counts are the agent's (default: this
        server's); `all_agents` (the operator's CLI, never a remote caller) adds the total
        over every agent. Vector, cache and provider counters are the server's."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        info = connector_info()
        primary = self.embeddings.primary
        report: dict[str, Any] = {
            "version": __version__,
            "db_path": str(self.stores.db.path),
            "schema_version": await self.stores.db.schema_version(),
            "sqlite": {
                "driver": info.module,
                "version": info.sqlite_version,
                "fts5": info.fts5,
                "sqlite_vec": self.stores.db.vec_loaded,
            },
            "agent_id": agent,
            "memories": await self.stores.memories.counts(agent),
            "vectors": await self.stores.vectors.counts(),
            "embedding_cache_rows": await self.stores.vectors.cache_size(),
            "embeddings": {
                "providers": [p.name for p in self.embeddings.providers],
                "model": primary.model_key if primary else None,
                "ready": bool(primary and primary.ready()),
                "failures": dict(self.embeddings.failures),
                "indexer_error": self.indexer.last_error if self.indexer else None,
                "health": self.embeddings.health_report(),
                "indexer": self.indexer.report() if self.indexer else None,
            },
            "degraded": list(self.provider_notes),
            "redactions": await self.stores.counters.read("redacted"),
            "ingest": {
                "turns": await self.stores.turns.counts(agent),
                "counts": await self.stores.counters.read("ingest"),
                "flush": await self.stores.counters.read("flush"),
                "relations": await self.stores.relations.count(agent),
            },
            "llm": {
                "providers": self.llm.names,
                "notes": list(self.llm_notes),
                "counts": await self.stores.counters.read("llm"),
                "failures": dict(self.llm.failures),
                "in_flight": self.llm.in_flight,
            },
            "health": await self.health_check(),
        }
        if all_agents and self.caller.kind == "local":
            report["all_agents"] = {"memories": (await self.stores.memories.counts())["total"]}
        return _own_view(report) if self.caller.is_agent else report

    def health(self) -> dict[str, Any]:
        """For liveness probes, answered without a token: status and version only (no path,
        no provider names; details are in the authenticated `stats`)."""
        return {"status": "ok" if self.stores.db.is_open else "unavailable", "version": __version__}

    async def health_check(self) -> dict[str, Any]:
        """What `cortex-mcp doctor` checks, for this running server: SQLite, the open
        database's integrity, and one real call to each embedding provider (`health` above
        is the cheap liveness answer)."""
        parts = sqlite_health(connector_info())
        # where the database and the embedding endpoint are is the operator's to know
        server_side = not self.caller.is_agent
        parts.append(await self.integrity.health(self.stores.db, show_where=server_side))
        endpoint = embedding_endpoint(self.settings) if server_side else None
        parts += await embedding_health(self.embeddings, self.provider_notes, endpoint)
        parts += llm_record(self.llm, self.llm_notes)
        return {"status": worst(parts), "parts": [part.as_dict() for part in parts]}

    async def core_version(self) -> tuple[Any, ...]:
        """A value that changes when core memory changes, in this process or another."""
        return await self.stores.memories.core_fingerprint()

    async def change_counter(self) -> tuple[int, int]:
        """Cheap: changes on every commit (ours or another process's); no table read."""
        return self.stores.db.commits, await self.stores.db.data_version()


# Counts over the whole database: an agent token's caller is not told them (they would say how
# much the other agents hold and do)
_SERVER_WIDE = ("db_path", "vectors", "embedding_cache_rows", "redactions")
_SERVER_WIDE_COUNTS = ("fts_rows", "access_log_rows", "lifecycle_log_rows")


def _own_view(report: dict[str, Any]) -> dict[str, Any]:
    """`stats` as an agent token's caller sees it: its agent's counts, the server's health."""
    shown = {k: v for k, v in report.items() if k not in _SERVER_WIDE}
    shown["memories"] = {
        k: v for k, v in report["memories"].items() if k not in _SERVER_WIDE_COUNTS
    }
    shown["ingest"] = {k: v for k, v in report["ingest"].items() if k in ("turns", "relations")}
    shown["llm"] = {k: v for k, v in report["llm"].items() if k != "counts"}
    return shown
