"""Which agent each imported item is written to.

A restore gives every memory and relation back to the agent it names (an item naming none goes
to the caller's agent), and each log entry to the agent whose memories it names. Naming an agent
for the import (`agent_id`, `--agent`) remaps a file of one agent into it; merging the agents of
a file into one takes `merge_agents_into`. An agent token writes its own agent only: a file of
one agent is remapped into it, a file of several is merged into it only when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cortex_mcp.engine import validate
from cortex_mcp.errors import CortexError, Forbidden, InvalidInput
from cortex_mcp.models import Caller

MAX_NAMED_AGENTS = 1000  # distinct agents one import may name
_SHOWN = 5  # agents listed in a message

Mode = Literal["restore", "remap", "merge", "token"]


@dataclass(frozen=True)
class Destination:
    """`into`: the agent every item is written to, whatever it names (remap, merge, an agent
    token's own agent); None: each item to the agent it names, `default` when it names none."""

    default: str
    into: str | None
    mode: Mode

    def of(self, named: str | None) -> str:
        return self.into or named or self.default

    def refusal(self, named: list[str]) -> CortexError | None:
        """Why an import naming these agents (sorted) may not go ahead, if it may not."""
        if len(named) <= 1 or self.mode in ("restore", "merge"):
            return None
        holds = f"this file holds the memories of {len(named)} agents ({listing(named)})"
        if self.mode == "remap":
            return InvalidInput(
                f"agent_id: {holds}; agent_id (--agent, or the X-Cortex-Agent header) remaps a"
                " file of one agent. Leave it out to give each agent its own memories back, or"
                " merge them into one agent with merge_agents_into (--merge-agents-into)",
                field="agent_id",
            )
        return Forbidden(
            f"merge_agents_into: {holds}; this token imports into agent {self.into!r} only and"
            " may not write the others: import a file of one agent, or merge them into"
            f" {self.into!r} with merge_agents_into (--merge-agents-into)",
            field="merge_agents_into",
        )


def destination(
    caller: Caller, agent_id: str | None, merge_into: str | None, default: str
) -> Destination:
    """Where an import of `caller` goes: `merge_into` takes every item, else `agent_id` (a
    remap), else an agent token's own agent, else each item's own agent. An agent token may
    name no agent but its own (refused before anything is read)."""
    own = validate.agent_for(caller, None, default)
    if merge_into is not None:
        if agent_id is not None:
            validate.agent_for(caller, agent_id, default)  # a token naming another: refused
        into = validate.agent_for(caller, merge_into, default)
        return Destination(own, into, "merge")
    if agent_id is not None:
        return Destination(own, validate.agent_for(caller, agent_id, default), "remap")
    if caller.is_agent:
        return Destination(own, own, "token")
    return Destination(own, None, "restore")


def named_agent(raw: object) -> str | None:
    """The agent an item names (None when it names none); InvalidInput when it is no agent id."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidInput(f"agent_id: must be a string, got {type(raw).__name__}")
    if not raw.strip():
        return None
    return validate.agent_id(raw, "")


def listing(agents: list[str]) -> str:
    shown = ", ".join(agents[:_SHOWN])
    return shown + (f" and {len(agents) - _SHOWN} more" if len(agents) > _SHOWN else "")
