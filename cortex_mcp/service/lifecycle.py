"""The lifecycle as callers see it: preview what a run would do, run it, read the audit log."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.lifecycle.runner import LifecycleEngine, PhaseCallback, parse_moment
from cortex_mcp.models import LOCAL, Caller, LifecycleReport
from cortex_mcp.service.requests import LifecycleLogRequest, LifecycleRequest

_EVERY_AGENT = LifecycleRequest()  # the operator's: every agent (a remote caller: its own)
_NEWEST = LifecycleLogRequest()


@dataclass(kw_only=True)
class LifecycleService:
    """Preview, run and log: delegations to the lifecycle engine. `drain` is what a run waits
    for first (writes still in flight, so that the run sees them). `now`, the moment a run or
    preview is reckoned from, is the operator's (the CLI, tests): no transport takes it."""

    settings: Settings
    engine: LifecycleEngine
    drain: Callable[[], Awaitable[None]]
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def preview(
        self, request: LifecycleRequest = _EVERY_AGENT, *, now: str | None = None
    ) -> LifecycleReport:
        agent = validate.agent_scope(self.caller, request.agent_id, self.settings.agent_id)
        return await self.engine.preview(parse_moment(now), agent)

    async def run(
        self,
        request: LifecycleRequest = _EVERY_AGENT,
        *,
        now: str | None = None,
        on_phase: PhaseCallback | None = None,
    ) -> LifecycleReport:
        agent = validate.agent_scope(self.caller, request.agent_id, self.settings.agent_id)
        await self.drain()
        return await self.engine.run(parse_moment(now), agent, on_phase)

    async def log(self, request: LifecycleLogRequest = _NEWEST) -> list[dict[str, Any]]:
        """The audit log: one agent's entries, or every agent's when `agent_id` is None and the
        caller is the local operator (the CLI); a remote caller gets its agent's (or the
        server's) only."""
        agent = validate.agent_scope(self.caller, request.agent_id, self.settings.agent_id)
        return await self.engine.store.log(request.limit, agent)
