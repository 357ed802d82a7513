"""The lifecycle as callers see it: preview what a run would do (its reflect step too), run it,
read the audit log; reflect on its own, and reflect's proposals to core, accepted or rejected."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.beliefs.reflect import Reflector
from cortex_mcp.engine.lifecycle.runner import LifecycleEngine, PhaseCallback, parse_moment
from cortex_mcp.errors import InvalidInput, NotFound
from cortex_mcp.models import (
    LOCAL,
    Caller,
    Clock,
    CoreProposal,
    Layer,
    LifecycleReport,
    MemoryChanges,
    ReflectReport,
    to_iso,
)
from cortex_mcp.service.requests import (
    LifecycleLogRequest,
    LifecycleRequest,
    ProposalDecision,
    ProposalListRequest,
    ReflectRequest,
)

_EVERY_AGENT = LifecycleRequest()  # the operator's: every agent (a remote caller: its own)
_NEWEST = LifecycleLogRequest()
_PENDING = ProposalListRequest()


@dataclass(kw_only=True)
class LifecycleService:
    """Preview, run and log: delegations to the lifecycle engine. `drain` is what a run waits
    for first (writes still in flight, so that the run sees them). `now`, the moment a run or
    preview is reckoned from, is the operator's (the CLI, tests): no transport takes it."""

    settings: Settings
    engine: LifecycleEngine
    drain: Callable[[], Awaitable[None]]
    reflector: Reflector
    clock: Clock
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

    async def reflect(self, request: ReflectRequest) -> ReflectReport:
        """One agent's reflect run, or its preview (the same plan, nothing written)."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        await self.drain()
        since = parse_period(request.since) if request.since else None
        return await self.reflector.reflect(agent, since=since, preview=request.preview)

    async def proposals(self, request: ProposalListRequest = _PENDING) -> list[CoreProposal]:
        """Reflect's proposed edits to core: the pending ones, or those of `request.status`."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        status = None if request.status == "all" else request.status
        found = await self.reflector.store.proposals(agent, status)
        return [
            CoreProposal(
                id=p.id,
                memory_id=p.memory_id,
                action=p.action,
                reason=p.reason,
                status=p.status,
                created_at=p.created_at,
                decided_at=p.decided_at,
            )
            for p in found
        ]

    async def decide(self, proposal_id: str, request: ProposalDecision) -> CoreProposal:
        """Accept a pending proposal (its edit applied: the memory moved to core, or to the
        archive) or reject it; each logged. Never applied without this."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        store = self.reflector.store
        proposal = await store.proposal(agent, proposal_id)
        if proposal is None:
            raise NotFound(f"proposal {proposal_id!r} not found", field="id")
        if proposal.status != "pending":
            raise InvalidInput(f"proposal {proposal_id!r} is already {proposal.status}", field="id")
        now = to_iso(self.clock.now())
        if request.accept:
            layer = Layer.core if proposal.action == "promote" else Layer.archive
            await self.reflector.memories.update(
                proposal.memory_id, agent, MemoryChanges(layer=layer), now
            )
        status = "accepted" if request.accept else "rejected"
        await store.decide(agent, proposal, status, now)
        every = await self.proposals(ProposalListRequest(agent_id=agent, status="all"))
        [decided] = [p for p in every if p.id == proposal_id]
        return decided

    async def log(self, request: LifecycleLogRequest = _NEWEST) -> list[dict[str, Any]]:
        """The audit log: one agent's entries, or every agent's when `agent_id` is None and the
        caller is the local operator (the CLI); a remote caller gets its agent's (or the
        server's) only."""
        agent = validate.agent_scope(self.caller, request.agent_id, self.settings.agent_id)
        return await self.engine.store.log(request.limit, agent)


_PERIOD = re.compile(r"^([0-9]{1,5})([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_period(text: str) -> timedelta:
    """`7d`, `12h`, `30m` as a timedelta; anything else refused naming `since`."""
    found = _PERIOD.match(text.strip())
    if found is None:
        raise InvalidInput(
            f"since: must be a period such as 7d, 12h or 30m, got {text!r}", field="since"
        )
    return timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
