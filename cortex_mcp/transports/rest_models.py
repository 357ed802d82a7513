"""Request bodies and query strings of the REST routes beyond the memory operations (whose bodies
are their request models, `service/requests.py`); the responses are in rest_responses.py.

Every limit comes from `engine.validate` (the rules the service applies on every transport) or
from a setting, so the OpenAPI document states exactly what is enforced: a limit that depends on
a setting is marked with `requests.SETTING` and filled in with the server's value when the
document is served (tests/test_rest_limits.py compares the document with what the server
accepts).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from cortex_mcp.engine import validate
from cortex_mcp.engine.validate import DECIMAL_TEXT, MAX_DECIMAL_CHARS
from cortex_mcp.models import Category, Layer
from cortex_mcp.service.requests import (
    DECIMAL_MARK,
    NOT_BLANK_TEXT,
    AgentId,
    Importance,
    Reason,
    SaidAt,
    Since,
    Until,
    refuse_nul,
)

_NOT_BLANK: dict[str, Any] = {"pattern": NOT_BLANK_TEXT}  # published; the service says the rule
# enforced here: not blank; a NUL is the service's refusal, which names the rule (400)
SessionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=validate.MAX_SESSION_ID_CHARS,
        pattern=r"\S",
        json_schema_extra=_NOT_BLANK,
    ),
]


def _flag_text(value: object) -> object:
    """A query-string boolean is exactly "true" or "false" (not "1", "yes" or "on")."""
    if isinstance(value, str):
        if value not in ("true", "false"):
            raise ValueError('must be "true" or "false"')
        return value == "true"
    return value


def _integer_text(value: object) -> object:
    """A query-string integer is decimal digits (not "5.0", "+5" or "5_000")."""
    if isinstance(value, str):
        if not re.fullmatch(r"-?[0-9]{1,20}", value):
            raise ValueError("must be an integer written in decimal digits")
        return int(value)
    return value


DECIMAL_MARK_PATTERN = rf"^\s*{DECIMAL_TEXT}\s*$"


def or_decimal_text(schema: dict[str, Any]) -> None:
    """Publish a marked number as it is read: a JSON number, or a plain decimal string whose
    pattern admits only values within the number's bounds (the server reads more forms, such
    as exponents: the pattern is the part of them a client can rely on)."""
    del schema[DECIMAL_MARK]
    kind = schema["type"]
    schema["type"] = [kind, "string"]
    schema["pattern"] = _bounded_decimal_pattern(kind, schema.get("minimum"), schema.get("maximum"))
    schema["maxLength"] = MAX_DECIMAL_CHARS


def _bounded_decimal_pattern(kind: str, low: Any, high: Any) -> str:
    if not (isinstance(low, int) and isinstance(high, int) and 0 <= low <= high):
        return DECIMAL_MARK_PATTERN
    whole = _integer_range(low, high)
    if kind == "integer":
        return rf"^\s*0*(?:{whole})\s*$"
    if low == high:
        return rf"^\s*0*(?:{whole})(?:\.0*)?\s*$"
    below = _integer_range(low, high - 1)  # any fraction after these stays within bounds
    return rf"^\s*0*(?:(?:{whole})(?:\.0*)?|(?:{below})\.[0-9]*)\s*$"


def _integer_range(low: int, high: int) -> str:
    """A regular expression (alternatives) for exactly the decimal integers low..high."""
    alternatives: list[str] = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        first = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        last = min(high, 10**digits - 1)
        if first <= last:
            alternatives += _same_length(str(first), str(last))
    return "|".join(alternatives)


def _same_length(first: str, last: str) -> list[str]:
    if first == last:
        return [first]
    rest = len(first) - 1
    if first[1:] == "0" * rest and last[1:] == "9" * rest:
        return [f"[{first[0]}-{last[0]}]" + "[0-9]" * rest]
    if first[0] == last[0]:
        return [first[0] + "(?:" + "|".join(_same_length(first[1:], last[1:])) + ")"]
    out = [first[0] + "(?:" + "|".join(_same_length(first[1:], "9" * rest)) + ")"]
    if int(last[0]) - int(first[0]) > 1:
        out.append(f"[{int(first[0]) + 1}-{int(last[0]) - 1}]" + "[0-9]" * rest)
    out.append(last[0] + "(?:" + "|".join(_same_length("0" * rest, last[1:])) + ")")
    return out


QueryFlag = Annotated[bool, BeforeValidator(_flag_text)]
# (a bounded query integer is Annotated[int, Field(ge, le), BeforeValidator(_integer_text)]: with
# the validator inside, pydantic would publish the bounds as "ge"/"le", which no client reads)


class Body(BaseModel):
    """Unknown fields are refused, so a misspelt `agentId` cannot silently fall back to the
    default agent."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _no_nul(self) -> Body:
        return refuse_nul(self)


class PatchBody(Body):
    category: Category | None = None
    importance: Importance | None = None
    layer: Layer | None = None
    shared: bool | None = None
    agent_id: AgentId | None = None


class ForgetQuery(Body):
    agent_id: AgentId | None = None
    reason: Reason | None = None
    purge: QueryFlag = False


class AgentQuery(Body):
    agent_id: AgentId | None = None


class ListQuery(Body):
    agent_id: AgentId | None = None
    layer: Layer | None = None
    category: Category | None = None
    limit: Annotated[int, Field(ge=1, le=500), BeforeValidator(_integer_text)] = 50
    offset: Annotated[int, Field(ge=0, le=1_000_000), BeforeValidator(_integer_text)] = 0
    include_shared: QueryFlag | None = None
    since: Since | None = None
    until: Until | None = None


# ---- chat messages, as agent frameworks send them (docs/http.md) -----------------------------
MAX_TEXT_CHARS = 100_000  # one message or one text block
MAX_BLOCKS = 500  # blocks in one message's content
MAX_TURN_MESSAGES = 200  # messages in one /ingest turn
MAX_FLUSH_MESSAGES = 2000


class ContentBlock(BaseModel):
    """One block of a message's content. Only `{type: "text", text}` carries text; other types
    (tool_use, tool_result, toolCall, thinking, image, ...) are accepted and dropped."""

    model_config = ConfigDict(extra="ignore")
    type: Annotated[str, Field(min_length=1, max_length=64)]
    text: Annotated[str, Field(max_length=MAX_TEXT_CHARS)] | None = None


class Message(BaseModel):
    """One chat message; other keys a client's message objects carry are ignored. Any role is
    accepted (user, assistant, system, tool, toolResult, developer, ...): user and assistant
    make the turn, the others are context or ignored."""

    model_config = ConfigDict(extra="ignore")
    role: Annotated[str, Field(min_length=1, max_length=64)]
    content: (
        Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
        | Annotated[list[ContentBlock], Field(max_length=MAX_BLOCKS)]
        | None
    ) = None
    timestamp: Annotated[
        float | Annotated[str, Field(max_length=40)] | None,
        Field(
            description="When it was said: epoch seconds or milliseconds, or an ISO date-time"
            " (a value that reads as no time is ignored)"
        ),
    ] = None


class IngestBody(Body):
    """A turn as two strings, or as chat `messages` (its last user message(s) and the replies
    after them fill whichever string is not given)."""

    user_message: Annotated[str, Field(max_length=MAX_TEXT_CHARS)] | None = None
    assistant_message: Annotated[str, Field(max_length=MAX_TEXT_CHARS)] | None = None
    messages: Annotated[list[Message], Field(min_length=1, max_length=MAX_TURN_MESSAGES)] | None = (
        None
    )
    agent_id: AgentId | None = None
    session_id: SessionId | None = None
    said_at: SaidAt | None = None


class FlushBody(Body):
    messages: Annotated[list[Message], Field(min_length=1, max_length=MAX_FLUSH_MESSAGES)]
    agent_id: AgentId | None = None
    session_id: SessionId | None = None
    reason: Reason | None = None
    said_at: SaidAt | None = None


class LifecycleBody(Body):
    """The run covers the caller's agent (body, X-Cortex-Agent, else the server's own); only
    the operator runs it for every agent (`cortex-mcp lifecycle`, the schedule)."""

    agent_id: AgentId | None = None


class RelationsQuery(Body):
    agent_id: AgentId | None = None
    limit: Annotated[int, Field(ge=1, le=10_000), BeforeValidator(_integer_text)] = 200


class LogQuery(Body):
    agent_id: AgentId | None = None
    limit: Annotated[int, Field(ge=1, le=10_000), BeforeValidator(_integer_text)] = 100


class ExportBody(Body):
    format: Annotated[str, Field(pattern=r"^(json|markdown)$")] = "json"
    agent_id: AgentId | None = None


class ImportBody(Body):
    """What `POST /export` answers can be posted back as is: `{format: "json", document}` or
    `{format: "markdown", files}`. Or `content`: a text in `format` (json: our export, jsonl:
    the MCP memory server's memory.jsonl, markdown: a MEMORY.md, openclaw: one daily note).
    Exactly one of `document`, `files`, `content`. Memories go to the caller's agent."""

    model_config = ConfigDict(  # exactly one of the three, as the document can say it
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
                for name in ("document", "files", "content")
            ]
        },
    )

    format: Annotated[str, Field(pattern=r"^(json|jsonl|markdown|openclaw)$")] = "json"
    content: Annotated[str, Field(min_length=1)] | None = None
    document: dict[str, Any] | None = None
    files: Annotated[dict[str, str], Field(min_length=1, max_length=10_000)] | None = None
    agent_id: AgentId | None = None

    @model_validator(mode="after")
    def _one_payload(self) -> ImportBody:
        given = [n for n in ("content", "document", "files") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of document, files or content")
        return self


class RelationBody(Body):
    subject: Annotated[str, Field(min_length=1, max_length=500, json_schema_extra=_NOT_BLANK)]
    predicate: Annotated[str, Field(min_length=1, max_length=200, json_schema_extra=_NOT_BLANK)]
    object: Annotated[str, Field(min_length=1, max_length=500, json_schema_extra=_NOT_BLANK)]
    agent_id: AgentId | None = None


# a token's name, or what a revoke names (an id or a name): not blank, no control character
TokenName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        pattern=r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$",
        json_schema_extra={"description": "not blank, no control characters"},
    ),
]


class TokenBody(Body):
    """A new agent token (the admin only): it is answered once, never shown again."""

    agent: AgentId
    name: TokenName | None = None


class RevokeBody(Body):
    """The token to revoke (the admin only), by id or name."""

    token: TokenName
