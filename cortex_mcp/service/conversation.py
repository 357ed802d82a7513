"""Ingest, flush and profile: what the service does with conversation turns."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.entities.linker import EntityLinker
from cortex_mcp.engine.ingest.flush import Flusher, FlushResult
from cortex_mcp.engine.ingest.messages import checked_messages, last_turn, said_at
from cortex_mcp.engine.ingest.pipeline import Ingestor, IngestResult
from cortex_mcp.engine.ingest.profile import ProfileKeeper, readable
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import LOCAL, Caller, Clock, to_iso
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.service.effects import Refresher
from cortex_mcp.service.requests import FlushRequest, IngestRequest
from cortex_mcp.zones import zone


@dataclass(kw_only=True)
class ConversationService:
    """Ingest, flush, profile, edit_profile: delegations to the ingest engines."""

    settings: Settings
    ingestor: Ingestor
    flusher: Flusher
    profiles: ProfileKeeper
    redactor: Redactor
    llm: LLMCascade
    refresher: Refresher
    linker: EntityLinker
    clock: Clock
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def ingest(self, request: IngestRequest, *, wait: bool = True) -> IngestResult:
        """One conversation turn in: high signals to core, extracted memories to working.
        `messages` (chat messages, content as text or blocks) gives the turn as a client's
        history holds it: its last user message(s) and the assistant's replies fill whichever
        of `user_message` and `assistant_message` is not given.
        `wait=False` stores the raw turn durably and returns at once (extraction continues in
        the background; a crash resumes it at the next start).
        `said_at` (an ISO date or date-time): when the turn was said, else its last user
        message's `timestamp`, else when it is received; the memories written from it take
        it as their own time (`occurred_at`). `timezone` (else CORTEX_TIMEZONE) is the user's:
        a `said_at` without an offset is read in it."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        session = await self.redactor.clean_optional(_session_id(request.session_id))
        said = request.said_at
        where = self.zone_for(request.timezone)
        when = to_iso(validate.moment_of("said_at", said, where)) if said else None
        user_message, assistant_message = request.user_message, request.assistant_message
        if request.messages is not None:
            checked = checked_messages([m.model_dump() for m in request.messages])
            user, assistant = last_turn(checked)
            when = when or said_at(checked)
            user_message = user if user_message is None else user_message
            assistant_message = assistant if assistant_message is None else assistant_message
        if user_message is None:
            raise InvalidInput(
                "user_message: give user_message or messages (a turn's chat messages)",
                field="user_message",
            )
        return await self.ingestor.ingest(
            user_message, assistant_message, agent, session, wait=wait, said_at=when, zone=where
        )

    async def flush(self, request: FlushRequest) -> FlushResult:
        """Keep a session's highlights before the client compacts its context. `said_at` (an
        ISO date or date-time, e.g. the session's date) dates what is kept when its messages
        carry no `timestamp` of their own."""
        agent = validate.agent_for(self.caller, request.agent_id, self.settings.agent_id)
        said, reason = request.said_at, request.reason
        where = self.zone_for(request.timezone)
        when = to_iso(validate.moment_of("said_at", said, where)) if said else None
        session = await self.redactor.clean_optional(_session_id(request.session_id))
        if reason is not None:
            validate.no_nul("reason", reason)
        messages = [m.model_dump() for m in request.messages]
        outcome = await self.flusher.flush(
            messages, agent, session, reason, session_at=when, zone=where
        )
        await self.linker.link_memories(agent, outcome.memories, to_iso(self.clock.now()))
        self.refresher.written()
        return FlushResult(flushed=outcome.memories, degraded=outcome.degraded)

    def zone_for(self, timezone: str | None) -> tzinfo:
        """The user's zone: the request's `timezone`, else the server's CORTEX_TIMEZONE."""
        return zone(timezone if timezone is not None else self.settings.timezone)

    async def profile(self, agent_id: str | None = None, refresh: bool = False) -> dict[str, Any]:
        """The user profile (cached; rebuilt by rules when stale, by the LLM on refresh)."""
        agent = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
        if refresh:
            profile = await self.profiles.synthesise(agent)
            if profile.get("source", {}).get("built_by") == "rules":
                profile["note"] = (
                    "rebuilt by rules: the LLM provider failed (the log says why)"
                    if self.llm.providers
                    else "rebuilt by rules: no LLM provider is configured (set OPENAI_API_KEY,"
                    " ANTHROPIC_API_KEY or CORTEX_LLM_BASE_URL to have a model write it)"
                )
        else:
            profile = await self.profiles.current(agent) or {"agent_id": agent}
        return {**profile, "text": readable(profile)}

    async def edit_profile(
        self, changes: dict[str, Any], agent_id: str | None = None
    ) -> dict[str, Any]:
        """Manual profile edits: kept apart from what is generated and never overwritten."""
        agent = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
        profile = await self.profiles.edit(agent, changes)
        return {**profile, "text": readable(profile)}


def _session_id(value: str | None) -> str | None:
    if value is None:
        return None
    limit = validate.MAX_SESSION_ID_CHARS
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise InvalidInput(f"session_id: must be 1 to {limit} characters", field="session_id")
    return validate.no_nul("session_id", value).strip()
