"""Relations: one agent's (subject, predicate, object) triples, listed, added and deleted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import NotFound
from cortex_mcp.models import LOCAL, Caller, Clock, to_iso
from cortex_mcp.service.effects import Refresher
from cortex_mcp.service.requests import AgentRequest, RelationListRequest, RelationRequest
from cortex_mcp.store.relations import RelationStore, Triple

_NEWEST = RelationListRequest()
_OWN = AgentRequest()  # the server's own agent


@dataclass(kw_only=True)
class RelationService:
    """List, add, delete: each validated, secrets redacted, for one agent."""

    settings: Settings
    relations: RelationStore
    redactor: Redactor
    refresher: Refresher
    clock: Clock
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def list(self, request: RelationListRequest = _NEWEST) -> dict[str, Any]:
        """The agent's relations (subject, predicate, object), most recently updated first."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        return {"relations": await self.relations.for_agent(agent, request.limit)}

    async def add(self, request: RelationRequest) -> dict[str, Any]:
        """Store one (subject, predicate, object) for the agent, secrets redacted; adding a
        known triple refreshes it. Returns the stored relation."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        parts = [
            validate.text(name, value, limit, verbatim=True)
            for name, value, limit in (
                ("subject", request.subject, validate.MAX_RELATION_PART_CHARS),
                ("predicate", request.predicate, validate.MAX_PREDICATE_CHARS),
                ("object", request.object, validate.MAX_RELATION_PART_CHARS),
            )
        ]
        cleaned = await self.redactor.clean_relation(*parts)
        triple = Triple(cleaned[0], cleaned[1], cleaned[2], confidence=1.0)
        relation = await self.relations.add(agent, triple, to_iso(self.clock.now()))
        self.refresher.mirror()
        return relation

    async def delete(self, relation_id: str, request: AgentRequest = _OWN) -> dict[str, Any]:
        """Delete one of the agent's relations; another agent's is "not found" like a missing one."""
        target = validate.relation_id(relation_id, "id")
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        if not await self.relations.delete(target, agent):
            raise NotFound(f"id: no relation {target} for agent {agent!r}", field="id")
        self.refresher.mirror()
        return {"id": target, "deleted": True}
