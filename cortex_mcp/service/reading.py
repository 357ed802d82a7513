"""Reading one agent's memories: the listing, an id from its first characters, one memory with
its correction chain. It needs the settings and three stores, nothing else: the service holds
it, and the people's `list` and `show` open it alone (`cortex_mcp.reader`), so that a scripted
command starts without the engines, providers or numpy."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.errors import InvalidInput, NotFound
from cortex_mcp.models import LOCAL, Caller, to_iso
from cortex_mcp.service.requests import AgentRequest, ListRequest
from cortex_mcp.store.interfaces import EntityStorage, ExportStorage, MemoryStorage
from cortex_mcp.store.relations import RelationStore
from cortex_mcp.zones import zone

_CANDIDATES = 5  # ids listed when a prefix is ambiguous
_NEWEST = ListRequest()
_OWN = AgentRequest()  # the server's own agent


class MemoryReading:
    """The reads a person or a client makes of stored memories, each validated."""

    def __init__(
        self,
        *,
        settings: Settings,
        memories: MemoryStorage,
        exports: ExportStorage,
        relations: RelationStore,
        entities: EntityStorage,
        drain: Callable[[], Awaitable[None]] | None = None,
        caller: Caller = LOCAL,
        history: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = None,
    ) -> None:
        self.settings = settings
        self._history = history  # the audit-log entries naming a memory (who acted on it)
        self.memories = memories
        self.entities = entities
        self.exports = exports
        self.relations = relations
        self._drain = drain
        self.caller = caller  # who is asking (CortexService.acting_for)

    async def drain(self) -> None:
        """Wait for writes still in flight (a recall's access counts), so that a memory's
        details include them; a reader alone starts none."""
        if self._drain is not None:
            await self._drain()

    async def list_memories(
        self, request: ListRequest = _NEWEST, *, forgotten: bool = False
    ) -> dict[str, Any]:
        """Live memories, newest first (or, with `forgotten`, the operator's, the forgotten
        ones, most recently forgotten first): {memories, limit, offset}. `since`/`until`: ISO
        dates or date-times bounding their own time (`occurred_at`; a date `until` takes in
        that day, the user's: CORTEX_TIMEZONE); `sort`: by when they were stored or happened
        (default: happened when the period is bounded)."""
        r = request
        where = zone(self.settings.timezone)  # dates without an offset are the user's
        shared = self.settings.include_shared if r.include_shared is None else r.include_shared
        rows = await self.exports.list_memories(
            validate.agent_for(self.caller, r.agent_id, self.settings.agent_id),
            r.layer.value if r.layer else None,
            r.category.value if r.category else None,
            r.limit,
            r.offset,
            shared,
            forgotten,
            since=to_iso(validate.moment_of("since", r.since, where)) if r.since else None,
            until=to_iso(validate.period_end_of("until", r.until, where)) if r.until else None,
            by_occurred=r.sort == "occurred" or (r.sort is None and bool(r.since or r.until)),
        )
        memories = [m.model_dump(mode="json") for m in rows]
        return {"memories": memories, "limit": r.limit, "offset": r.offset}

    async def memory_detail(self, memory_id: str, request: AgentRequest = _OWN) -> dict[str, Any]:
        """One memory of the request's agent (default: this server's) with its correction chain
        and access history. Another agent's memory is "not found", exactly like a missing one,
        unless that agent marked it shared and shared recall is on (CORTEX_INCLUDE_SHARED)."""
        await self.drain()
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        target = validate.memory_id(memory_id, "id")
        memory = await self.memories.get(target)
        visible = memory is not None and (
            memory.agent_id == agent or (memory.shared and self.settings.include_shared)
        )
        if memory is None or not visible:
            raise NotFound(f"id: no memory {target} for agent {agent!r}", field="id")
        chain = await self.memories.chain(memory)  # its own agent's only
        names = await self.entities.entities_of(memory.agent_id, [memory.id])
        memory = memory.model_copy(update={"entities": names.get(memory.id, [])})
        return {
            "memory": memory.model_dump(),
            "correction_chain": [m.model_dump() for m in chain],
            "access_history": await self.memories.access_history(memory.id),
            "relations": await self.relations.for_memory(memory.id),
            "history": await self._history(memory.id) if self._history is not None else [],
        }

    async def resolve_memory_id(
        self, text: str, agent_id: str | None = None, include_shared: bool | None = None
    ) -> str:
        """The one id of the agent's memories (forgotten ones too) that starts with `text`, as
        git resolves a short commit id, else the one that ends with it (UUIDv7 ids made close
        together share their first 8 to 12 characters, never their last): NotFound when none
        does, InvalidInput listing the candidates when several do."""
        agent = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
        part = validate.id_prefix(text)
        shared = self.settings.include_shared if include_shared is None else include_shared
        found = await self.memories.ids_starting_with(part, agent, shared, _CANDIDATES + 1)
        verb = "start"
        if not found:
            found = await self.memories.ids_ending_with(part, agent, shared, _CANDIDATES + 1)
            verb = "end"
        if not found:
            raise NotFound(
                f"id: no memory starts with {part} (or ends with it) for agent {agent!r}",
                field="id",
            )
        if len(found) > 1:
            count = str(len(found)) if len(found) <= _CANDIDATES else f"more than {_CANDIDATES}"
            raise InvalidInput(
                f"id: {part} is ambiguous: {count} memories {verb} with it"
                f" ({', '.join(found[:_CANDIDATES])}); type more of the id, or its last"
                " characters",
                field="id",
            )
        return found[0]
