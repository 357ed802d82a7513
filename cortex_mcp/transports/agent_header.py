"""The X-Cortex-Agent header, where an HTTP client (REST or MCP) may name its agent.

HTTP header values are bytes; Starlette and the MCP SDK hand them over decoded as latin-1.
The header is read as UTF-8 instead (the latin-1 text encoded back gives the bytes sent), so
an agent named in the header is the agent of the same name in a body, a query or a tool
argument; bytes that are not UTF-8 are refused, as is an id the agent id rule refuses, and an
agent token naming another agent there is refused naming the header (not `agent_id`, which the
client did not send)."""

from __future__ import annotations

from cortex_mcp.engine import validate
from cortex_mcp.errors import Forbidden, InvalidInput
from cortex_mcp.models import Caller, agent_id_problem

AGENT_HEADER = "x-cortex-agent"
FIELD = "X-Cortex-Agent"


def header_agent(raw: str | None, caller: Caller | None = None) -> str | None:
    """The agent the header's value (as the framework decoded it) names, trimmed; None when
    there is no header. InvalidInput naming the header when it breaks a rule; Forbidden when
    `caller` is an agent token and the header names another agent."""
    if raw is None:
        return None
    try:
        text = raw.encode("latin-1").decode("utf-8")
    except UnicodeError:
        raise InvalidInput(
            f"{FIELD}: is not valid UTF-8 (send the agent id as UTF-8 bytes)", field=FIELD
        ) from None
    problem = agent_id_problem(text)
    if problem is not None:
        raise InvalidInput(f"{FIELD}: {problem}", field=FIELD)
    agent = text.strip()
    if not agent or len(agent) > validate.MAX_AGENT_ID_CHARS:
        raise InvalidInput(
            f"{FIELD}: must be 1 to {validate.MAX_AGENT_ID_CHARS} characters, not all blank",
            field=FIELD,
        )
    if caller is not None and caller.is_agent and agent != caller.agent_id:
        raise Forbidden(
            f"{FIELD}: this token acts only for agent {caller.agent_id!r}; it may not name"
            " another agent (leave the header out, or use a token of that agent)",
            field=FIELD,
        )
    return agent
