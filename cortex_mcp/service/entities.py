"""Entities: one agent's people, pets, places and things, listed, shown with the memories
linked to them, and mended (alias add/remove, rename, merge with a dry run, undo), each verb
logged in the entity log. An entity is named by its id or by its name (or an alias naming it
alone), so `cortex-mcp entity Anna` and `GET /entities/{id}` read the same page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import InvalidInput, NotFound
from cortex_mcp.models import LOCAL, AliasOrigin, Caller, Clock, Entity, to_iso
from cortex_mcp.service.effects import Refresher
from cortex_mcp.service.requests import (
    MAX_ENTITY_NAME_CHARS,
    AgentRequest,
    AliasRequest,
    EntityListRequest,
    EntityLogRequest,
    EntityRequest,
    MergeRequest,
    RenameRequest,
    UndoRequest,
)
from cortex_mcp.store.interfaces import EntityStorage, MemoryStorage

_MAX_REF_CHARS = 200


@dataclass(kw_only=True)
class EntityService:
    """List, page, alias, remove_alias, rename, merge, log, unresolved, undo: for one agent."""

    settings: Settings
    entities: EntityStorage
    memories: MemoryStorage
    redactor: Redactor
    refresher: Refresher
    clock: Clock
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    def _agent(self, agent_id: str | None) -> str:
        return validate.agent_for(self.caller, agent_id, self.settings.agent_id)

    def _now(self) -> str:
        return to_iso(self.clock.now())

    async def list(self, request: EntityListRequest) -> dict[str, Any]:
        """A page of the agent's entities (name prefix, the most mentioned first)."""
        agent = self._agent(request.agent_id)
        validate.no_nul("prefix", request.prefix)
        found, total = await self.entities.list_entities(
            agent, request.prefix, request.limit, request.offset
        )
        return {
            "entities": [e.model_dump(mode="json") for e in found],
            "total": total,
            "limit": request.limit,
            "offset": request.offset,
        }

    async def entity(self, ref: str, agent_id: str | None = None) -> Entity:
        """The agent's entity `ref` names: its id, else its name or an alias naming it alone.
        An alias of several entities is refused with their names and ids."""
        agent = self._agent(agent_id)
        text = validate.text("id", ref, _MAX_REF_CHARS, verbatim=True).strip()
        by_id = await self.entities.get_entity(agent, text)
        if by_id is not None:
            return by_id
        named = await self.entities.entity_named(agent, text)
        if not named:
            raise NotFound(f"id: no entity {text!r} for agent {agent!r}", field="id")
        if len(named) > 1:
            candidates = ", ".join(f"{e.name} ({e.id})" for e in named)
            raise InvalidInput(
                f"id: {text!r} is an alias of several entities: {candidates}; name one by its id",
                field="id",
            )
        return named[0]

    async def page(
        self, ref: str, request: EntityRequest, *, memories: bool = False
    ) -> dict[str, Any]:
        """The entity and the ids of the agent's live memories linked to it (speakers and
        subjects first, then the most recent); with `memories`, those memories too."""
        entity = await self.entity(ref, request.agent_id)
        ids = await self.entities.memory_ids_of(entity.agent_id, entity.id, request.limit)
        page: dict[str, Any] = {"entity": entity.model_dump(mode="json"), "memory_ids": ids}
        if memories:
            found = await self.memories.get_many(ids)
            page["memories"] = [found[i].model_dump(mode="json") for i in ids if i in found]
        return page

    async def add_alias(self, ref: str, request: AliasRequest) -> dict[str, Any]:
        entity = await self.entity(ref, request.agent_id)
        alias = await self._clean("alias", request.alias)
        done = await self.entities.add_alias(
            entity.agent_id, entity.id, alias, AliasOrigin.user, self._now()
        )
        return await self._changed(entity, done)

    async def remove_alias(self, ref: str, alias: str, request: AgentRequest) -> dict[str, Any]:
        entity = await self.entity(ref, request.agent_id)
        text = validate.text("alias", alias, MAX_ENTITY_NAME_CHARS, verbatim=True)
        done = await self.entities.remove_alias(entity.agent_id, entity.id, text, self._now())
        return await self._changed(entity, done)

    async def rename(self, ref: str, request: RenameRequest) -> dict[str, Any]:
        entity = await self.entity(ref, request.agent_id)
        name = await self._clean("name", request.name)
        done = await self.entities.rename(entity.agent_id, entity.id, name, self._now())
        return await self._changed(entity, done)

    async def merge(self, request: MergeRequest) -> dict[str, Any]:
        """Merge `source` into `into` (ids or names); the dry run reports exactly what the run
        would do (it is the run, rolled back)."""
        source = await self.entity(request.source, request.agent_id)
        into = await self.entity(request.into, request.agent_id)
        done = await self.entities.merge(
            source.agent_id, source.id, into.id, self._now(), dry_run=request.dry_run
        )
        if not request.dry_run:
            self.refresher.mirror()
        return done

    async def log(self, request: EntityLogRequest) -> dict[str, Any]:
        agent = self._agent(request.agent_id)
        return {"entries": await self.entities.log(agent, request.limit)}

    async def unresolved(self, request: EntityLogRequest) -> dict[str, Any]:
        """References an ambiguous alias left unlinked, each with its candidates."""
        agent = self._agent(request.agent_id)
        return {"unresolved": await self.entities.unresolved(agent, request.limit)}

    async def undo(self, request: UndoRequest) -> dict[str, Any]:
        agent = self._agent(request.agent_id)
        done = await self.entities.undo(agent, request.log_id, self._now())
        self.refresher.mirror()
        return done

    async def _clean(self, name: str, value: str) -> str:
        text = validate.text(name, value, MAX_ENTITY_NAME_CHARS, verbatim=True).strip()
        return await self.redactor.clean(text)

    async def _changed(self, entity: Entity, done: dict[str, Any]) -> dict[str, Any]:
        self.refresher.mirror()
        after = await self.entities.get_entity(entity.agent_id, entity.id)
        shown = after.model_dump(mode="json") if after is not None else None
        return {**done, "entity": shown}
