"""The lifecycle as callers see it: preview what a run would do, run it, read the audit log."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.lifecycle.runner import LifecycleEngine, PhaseCallback, parse_moment
from cortex_mcp.models import LOCAL, Caller, LifecycleReport


@dataclass(kw_only=True)
class LifecycleService:
    """Preview, run and log: delegations to the lifecycle engine. `drain` is what a run waits
    for first (writes still in flight, so that the run sees them)."""

    settings: Settings
    engine: LifecycleEngine
    drain: Callable[[], Awaitable[None]]
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def preview(self, now: str | None = None, agent_id: str | None = None) -> LifecycleReport:
        agent = validate.agent_scope(self.caller, agent_id, self.settings.agent_id)
        return await self.engine.preview(parse_moment(now), agent)

    async def run(
        self,
        now: str | None = None,
        agent_id: str | None = None,
        on_phase: PhaseCallback | None = None,
    ) -> LifecycleReport:
        agent = validate.agent_scope(self.caller, agent_id, self.settings.agent_id)
        await self.drain()
        return await self.engine.run(parse_moment(now), agent, on_phase)

    async def log(self, limit: int = 100, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The audit log: one agent's entries, or every agent's when `agent_id` is None and the
        caller is the local operator (the CLI); a remote caller gets its agent's (or the
        server's) only."""
        size = validate.int_range("limit", limit, 1, 10_000)
        agent = validate.agent_scope(self.caller, agent_id, self.settings.agent_id)
        return await self.engine.store.log(size, agent)
