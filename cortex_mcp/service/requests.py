"""One request model per operation: what the service takes, and what the MCP tool's input schema
(`transports/arguments.py`), the REST body or query string, the OpenAPI document and the CLI's
defaults are generated from. Limits, descriptions and defaults are written here once. The
memory operations come first, then the other nouns' (conversation, lifecycle, relations,
exchange, tokens, reading).

Two marks travel in a field's JSON schema and are settled when a schema is published:
`SETTING` (a maxLength that is the named setting's value on this server, checked against that
value when a body is validated with it as context) and `DECIMAL_MARK` (a number also read from a
plain decimal string, as models often send one). `REST_ONLY` fields are left out of the tools.

Built with `build` (the CLI, the tools), a request that breaks a rule raises `InvalidInput` naming
the field and the rule, like every other check; REST validates bodies with `model_validate_json`
and answers its own 422; a query string is read with `model_validate` (its booleans and
integers written as text, `QueryFlag` and `QueryInt`)."""

from __future__ import annotations

import re
from types import UnionType
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from cortex_mcp.config import Settings
from cortex_mcp.config_live import LIVE, flatten
from cortex_mcp.engine import validate
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import (
    AGENT_ID_FORBIDDEN_CLASS,
    END_OF_MOMENTS,
    Category,
    Layer,
    agent_id_problem,
)
from cortex_mcp.zones import MAX_ZONE_CHARS, ZONE_PATTERN, zone

SETTING = "x-cortex-setting"
DECIMAL_MARK = "x-cortex-decimal-text"
REST_ONLY = "x-cortex-rest-only"

_FORBIDDEN = AGENT_ID_FORBIDDEN_CLASS
_AGENT_CHAR = f"[^{_FORBIDDEN}]"
# every character str.strip() removes, spelt out (a generator may read \s as ASCII only)
BLANK_CLASS = (
    "\\t\\n\\u000b\\u000c\\r\\u001c-\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
# what `validate.moment` reads, published (a subset: years 1001-8998, so that no offset takes
# it out of the range of valid moments; days up to 28, whole offsets' hours below 14): no value
# the document allows is refused. The descriptions say the whole rule (MOMENT_TERMS).
MOMENT_PATTERN = (
    r"^(?:100[1-9]|10[1-9][0-9]|1[1-9][0-9]{2}|[2-7][0-9]{3}|8[0-8][0-9]{2}|89[0-8][0-9]|899[0-8])"
    r"-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"(?:T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-](?:0[0-9]|1[0-3]):[0-5][0-9])?)?$"
)
MOMENT_TERMS = f" (UTC unless it names an offset); it {validate.RANGE_RULE}"
_MOMENT_TEXT = {"pattern": MOMENT_PATTERN}
# text with a character str.strip() keeps, and no NUL (published; the service says the rule)
NOT_BLANK_TEXT = f"^[^\\u0000]*[^{BLANK_CLASS}\\u0000][^\\u0000]*$"
_NOT_BLANK = {"pattern": NOT_BLANK_TEXT}
# a memory id as the document promises it: a canonical UUID (the server reads more spellings)
_UUID_TEXT = {
    "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
}
_DECIMAL_TOO = {DECIMAL_MARK: True}


def _within_content_setting(value: str, info: ValidationInfo) -> str:
    """The content limit is the server's setting (the field's maxLength is its ceiling)."""
    limit = (info.context or {}).get("max_content_chars")
    if limit is not None and len(value) > limit:
        raise ValueError(
            f"{len(value)} characters is over the limit of {limit} (CORTEX_MAX_CONTENT_CHARS);"
            " split it into separate facts"
        )
    return value


def _as_number(value: object) -> object:
    return validate.decimal_string(value)


def _as_integer(value: object) -> object:
    value = validate.decimal_string(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 5.0 is the integer 5, in JSON Schema as in the tools
    return value


def _agent_rule(value: str) -> str:
    """The published pattern's rule, with the message `validate.agent_id` gives."""
    problem = agent_id_problem(value)
    if problem is not None:
        raise ValueError(problem)
    if not value.strip():
        raise ValueError("must contain a character that is not blank")
    return value


# 1-128 characters, at least one not blank, no control or format characters (agent ids end up
# in logs, file names and on screens)
AgentId = Annotated[
    str,
    AfterValidator(_agent_rule),
    Field(
        min_length=1,
        max_length=validate.MAX_AGENT_ID_CHARS,
        # the rule _agent_rule checks, published (it gives the message the tools give)
        json_schema_extra={
            "pattern": f"^{_AGENT_CHAR}*[^{BLANK_CLASS}{_FORBIDDEN}]{_AGENT_CHAR}*$"
        },
        description="Memory owner; default: this server's agent (CORTEX_AGENT_ID)",
    ),
]
Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=validate.MAX_QUERY_CHARS,
        json_schema_extra=_NOT_BLANK,
        description="What to look for",
    ),
]
About = Annotated[
    str,
    Field(
        min_length=1,
        max_length=validate.MAX_ENTITY_NAME_CHARS,
        json_schema_extra=_NOT_BLANK,
        description="A person, pet or place by name or alias: the recall answers with its page"
        " (meta.entity) and the memories about it",
    ),
]
MemoryId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=validate.MAX_ID_CHARS,
        json_schema_extra=_UUID_TEXT,
        description="A memory id (UUID)",
    ),
]
Source = Annotated[
    str,
    Field(max_length=validate.MAX_SOURCE_CHARS, description="Where it came from (a short label)"),
]
Reason = Annotated[
    str, Field(max_length=validate.MAX_REASON_CHARS, description="Why, for the audit log")
]
Content = Annotated[
    str,
    AfterValidator(_within_content_setting),
    Field(
        min_length=1,
        max_length=validate.MAX_CONTENT_CEILING,
        json_schema_extra={SETTING: "max_content_chars", **_NOT_BLANK},
        description="One self-contained fact",
    ),
]
# Numbers read as a JSON number or a plain decimal string; never a boolean, "1e999" or "0x10"
Importance = Annotated[
    float,
    Field(ge=0, le=1, json_schema_extra=_DECIMAL_TOO, description="0 trivial .. 1 vital"),
    BeforeValidator(_as_number),
]
MaxResults = Annotated[
    int, Field(ge=1, le=50, json_schema_extra=_DECIMAL_TOO), BeforeValidator(_as_integer)
]
MaxTokens = Annotated[
    int,
    Field(
        ge=50,
        le=100_000,
        json_schema_extra=_DECIMAL_TOO,
        description="Token budget of the reply's memories and `context`",
    ),
    BeforeValidator(_as_integer),
]
Layers = Annotated[list[Layer], Field(max_length=len(Layer), description="Only these layers")]
Categories = Annotated[
    list[Category], Field(max_length=len(Category), description="Only these categories")
]


def _moment_rule(value: str) -> str:
    validate.moment(value)
    return value.strip()


_MOMENT_CHARS = 40  # the longest ISO date-time `validate.moment` reads is 32
OccurredAt = Annotated[
    str,
    AfterValidator(_moment_rule),
    Field(
        max_length=_MOMENT_CHARS,
        json_schema_extra=_MOMENT_TEXT,
        description="When it happened or was said: an ISO date or date-time"
        + MOMENT_TERMS
        + "; default: now",
    ),
]
SaidAt = Annotated[
    str,
    AfterValidator(_moment_rule),
    Field(
        max_length=_MOMENT_CHARS,
        json_schema_extra=_MOMENT_TEXT,
        description="When the conversation was (an ISO date or date-time, e.g. the session's"
        " date): the memories written from it take it as their own time; default: each"
        " message's `timestamp`, else now. An ISO date or date-time" + MOMENT_TERMS,
    ),
]
Since = Annotated[
    str,
    AfterValidator(_moment_rule),
    Field(
        max_length=_MOMENT_CHARS,
        json_schema_extra=_MOMENT_TEXT,
        description="Only memories that happened at or after this ISO date or date-time"
        + MOMENT_TERMS,
    ),
]
Until = Annotated[
    str,
    AfterValidator(_moment_rule),
    Field(
        max_length=_MOMENT_CHARS,
        json_schema_extra=_MOMENT_TEXT,
        description="Only memories that happened before this ISO date-time (a date: to the"
        " end of that day)" + MOMENT_TERMS,
    ),
]
Now = Annotated[
    str,
    AfterValidator(_moment_rule),
    Field(
        max_length=_MOMENT_CHARS,
        json_schema_extra=_MOMENT_TEXT,
        description="The moment 'today', 'last week' and ages are reckoned from: an ISO date"
        " or date-time" + MOMENT_TERMS + "; default: the server's clock",
    ),
]


def _zone_rule(value: str) -> str:
    return zone(value).key


TimeZone = Annotated[
    str,
    AfterValidator(_zone_rule),
    Field(
        min_length=1,
        max_length=MAX_ZONE_CHARS,
        pattern=ZONE_PATTERN,
        description="The user's IANA time zone (Asia/Tokyo, America/Los_Angeles): 'today', 'last"
        " week' and dates without an offset are read in it; default: the server's"
        " (CORTEX_TIMEZONE)",
    ),
]


class Period(BaseModel):
    """`since` and `until` of a search: `until` must come after `since`."""

    model_config = ConfigDict(defer_build=True)

    @field_validator("until", check_fields=False)
    @classmethod
    def _until_after_since(cls, until: str | None, info: ValidationInfo) -> str | None:
        since = info.data.get("since")
        if until and since and validate.period_end(until) <= validate.moment(since):
            raise ValueError(f"must be later than since ({since})")
        return until


IncludeShared = Annotated[
    bool | None,
    Field(
        description="Also other agents' memories marked shared (default: CORTEX_INCLUDE_SHARED)",
        json_schema_extra={REST_ONLY: True},
    ),
]

IncludeHistory = Annotated[
    bool,
    Field(
        description="Rank facts that a newer one replaced (superseded) as high as current ones,"
        " oldest first for a slot question; default: what is true now first"
    ),
]


class Request(BaseModel):
    """Unknown fields are refused, so a misspelt `agentId` cannot silently fall back to the
    default agent. `schema_name` names the model in the OpenAPI document."""

    # validators are built when first used (a command makes one or two requests of 30)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    schema_name: ClassVar[str]

    @model_validator(mode="after")
    def _no_nul(self) -> Request:
        """No text holds NUL, a query neither (the document says so of every text: one rule
        for what is stored and what is only searched for)."""
        return refuse_nul(self)

    @classmethod
    def default(cls, name: str) -> Any:
        """Field `name`'s default as a command line shows and parses it (an enum's value)."""
        value = cls.model_fields[name].default
        return getattr(value, "value", value)

    @classmethod
    def tool_fields(cls) -> list[str]:
        """The fields an MCP tool takes: all but the REST-only ones, in declaration order."""
        return [
            name
            for name, field in cls.model_fields.items()
            if not isinstance(field.json_schema_extra, dict)
            or REST_ONLY not in field.json_schema_extra
        ]


def refuse_nul(model: M) -> M:
    """`model` when none of its texts holds a NUL; else InvalidInput naming where (a 400 on
    REST, a tool error on MCP: the same rule `validate.no_nul` applies inside the service)."""
    validate.no_nul_inside("", model.model_dump(mode="python"))
    return model


M = TypeVar("M", bound=BaseModel)


def build(request: type[R], **fields: Any) -> R:
    """`request` built from keyword values (the CLI, the tools, one service calling another):
    InvalidInput naming the field and the rule when one breaks it."""
    try:
        return request(**fields)
    except ValidationError as exc:
        raise _invalid(exc) from None


def _invalid(exc: ValidationError) -> InvalidInput:
    """The first error, or for a value that fits no member of a union (a message's content:
    text or blocks) the member's that went deepest: `messages.0.content.1`, not the text
    member's 'Input should be a valid string'."""
    paths = [[p for p in e["loc"] if not _is_member_tag(p)] for e in exc.errors()]
    deepest = max(range(len(paths)), key=lambda i: len(paths[i]))
    field = ".".join(str(part) for part in paths[deepest]) or "arguments"
    return InvalidInput(f"{field}: {rule_of(exc.errors()[deepest])}", field=field)


def rule_of(error: ErrorDetails) -> str:
    """What a validation error says, without pydantic's "Value error, " before a rule of our
    own ("until: must be later than since (2026-06-02)")."""
    if error["type"] == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    return error["msg"]


_MEMBER_TAGS = {"str", "int", "float", "bool", "none", "list", "dict"}


def _is_member_tag(part: str | int) -> bool:
    """Whether a part of an error's location names a union's member ("constrained-str",
    "list[ContentBlock]"), not a field."""
    return isinstance(part, str) and (part in _MEMBER_TAGS or not part.isidentifier())


R = TypeVar("R", bound=Request)


class RecallRequest(Period, Request):
    """Find memories relevant to a query, as a ready-to-paste context block."""

    schema_name: ClassVar[str] = "RecallBody"
    query: Annotated[Query, Field(description="What to look for, in any language")]
    max_results: Annotated[MaxResults, Field(description="Most memories to return")] = 5
    layers: Layers | None = None
    categories: Categories | None = None
    max_tokens: MaxTokens = 2000
    agent_id: AgentId | None = None
    include_shared: IncludeShared = None
    include_history: IncludeHistory = False
    format: Annotated[
        Literal["plain", "prompt"],
        Field(
            description='"prompt": the context framed for a prompt (a <relevant-memories> block'
            " marked as untrusted data, escaped)",
            json_schema_extra={REST_ONLY: True},
        ),
    ] = "plain"
    since: Since | None = None
    until: Until | None = None
    now: Now | None = None
    timezone: TimeZone | None = None
    about: About | None = None


class SearchRequest(Period, Request):
    """Ranked memories for a query, without the recall gate (no small-talk skip, no context
    block, no access counting); `debug` adds the search debugger's report."""

    schema_name: ClassVar[str] = "SearchBody"
    query: Query
    agent_id: AgentId | None = None
    limit: Annotated[MaxResults, Field(description="Most memories to return")] = 10
    layers: Layers | None = None
    categories: Categories | None = None
    include_shared: IncludeShared = None
    include_history: IncludeHistory = False
    debug: Annotated[bool, Field(description="Add every ranking stage per hit")] = False
    since: Since | None = None
    until: Until | None = None
    now: Now | None = None
    timezone: TimeZone | None = None


class SearchDebugRequest(Period, Request):
    """Explain a search: every ranking stage for each hit, with timings."""

    schema_name: ClassVar[str] = "SearchDebugBody"
    query: Annotated[Query, Field(description="The query to explain")]
    max_results: Annotated[MaxResults, Field(description="Hits to explain")] = 10
    agent_id: AgentId | None = None
    since: Since | None = None
    until: Until | None = None
    now: Now | None = None
    timezone: TimeZone | None = None


class RememberRequest(Request):
    """Store one durable memory."""

    schema_name: ClassVar[str] = "RememberBody"
    content: Content
    category: Annotated[Category, Field(description="Kind of memory")] = Category.fact
    importance: Importance = 0.7
    layer: Annotated[Layer, Field(description="core (permanent), working (48 h) or archive")] = (
        Layer.core
    )
    supersedes: (
        Annotated[MemoryId, Field(description="Id of a memory this one replaces")] | None
    ) = None
    source: Source | None = None
    agent_id: AgentId | None = None
    shared: Annotated[
        bool,
        Field(
            description="Other agents may recall it when their server shares"
            " (CORTEX_INCLUDE_SHARED)",
            json_schema_extra={REST_ONLY: True},
        ),
    ] = False
    occurred_at: OccurredAt | None = None
    timezone: TimeZone | None = None


class ForgetRequest(Request):
    """Retract a memory by id: soft by default, corrected with `correction`, erased with
    `purge`."""

    schema_name: ClassVar[str] = "ForgetBody"
    memory_id: Annotated[
        MemoryId, Field(description="Id of the memory (from cortex_recall or cortex_remember)")
    ]
    reason: Reason | None = None
    correction: Annotated[Content, Field(description="The corrected fact")] | None = None
    purge: Annotated[bool, Field(description="Erase the content everywhere")] = False
    agent_id: AgentId | None = None


# ---- query strings -------------------------------------------------------------------------


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


QueryFlag = Annotated[bool, BeforeValidator(_flag_text)]
# A bounded query integer is Annotated[int, Field(ge, le), BeforeValidator(_integer_text)]: with
# the validator inside, pydantic would publish the bounds as "ge"/"le", which no client reads.
AsQueryInt = BeforeValidator(_integer_text)


# ---- reading and editing memories ------------------------------------------------------------


MAX_LIST_PAGE = 500  # memories in one page of a listing


class ListRequest(Period, Request):
    """A page of live memories, newest first (GET /memories)."""

    schema_name: ClassVar[str] = "ListQuery"
    agent_id: AgentId | None = None
    layer: Annotated[Layer, Field(description="Only this layer")] | None = None
    category: Annotated[Category, Field(description="Only this category")] | None = None
    limit: Annotated[
        int, Field(ge=1, le=MAX_LIST_PAGE, description="Most memories to return"), AsQueryInt
    ] = 50
    offset: Annotated[
        int, Field(ge=0, le=1_000_000, description="Memories to skip"), AsQueryInt
    ] = 0
    include_shared: Annotated[
        QueryFlag | None,
        Field(
            description="Also other agents' memories marked shared (default: CORTEX_INCLUDE_SHARED)"
        ),
    ] = None
    since: Since | None = None
    until: Until | None = None
    sort: (
        Annotated[
            Literal["stored", "occurred"],
            Field(
                description="Newest first by when they were stored or when they happened"
                " (default: happened when since or until is given, else stored)"
            ),
        ]
        | None
    ) = None


class AgentRequest(Request):
    """An operation that names nothing but whose memories: a memory's page, the stats, a
    relation to delete (their ids are in the path)."""

    schema_name: ClassVar[str] = "AgentQuery"
    agent_id: AgentId | None = None


class UpdateRequest(Request):
    """Change a memory's category, importance, layer or sharing (PATCH /memories/{id})."""

    schema_name: ClassVar[str] = "PatchBody"
    category: Annotated[Category, Field(description="Kind of memory")] | None = None
    importance: Importance | None = None
    layer: (
        Annotated[Layer, Field(description="core (permanent), working (48 h) or archive")] | None
    ) = None
    shared: Annotated[bool, Field(description="Other agents may recall it")] | None = None
    agent_id: AgentId | None = None


class ForgetQuery(Request):
    """`forget` as DELETE /memories/{id} takes it (the id in the path; no correction): turned
    into a `ForgetRequest` by `as_forget`."""

    schema_name: ClassVar[str] = "ForgetQuery"
    agent_id: AgentId | None = None
    reason: Reason | None = None
    purge: Annotated[QueryFlag, Field(description="Erase the content everywhere")] = False

    def as_forget(self, memory_id: str) -> ForgetRequest:
        return build(
            ForgetRequest,
            memory_id=memory_id,
            reason=self.reason,
            purge=self.purge,
            agent_id=self.agent_id,
        )


# ---- conversation: chat messages, as agent frameworks send them (docs/http.md) ---------------
MAX_TEXT_CHARS = 100_000  # one message or one text block
MAX_BLOCKS = 500  # blocks in one message's content
MAX_TURN_MESSAGES = 200  # messages in one /ingest turn
MAX_FLUSH_MESSAGES = 2000

# enforced here: not blank; a NUL is the service's refusal, which names the rule (400)
SessionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=validate.MAX_SESSION_ID_CHARS,
        pattern=r"\S",
        json_schema_extra=_NOT_BLANK,
        description="The conversation's id (a retried turn in a session adds nothing)",
    ),
]
ChatText = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


# what `validate.timestamp_moment` refuses, published: a number from the end of the range on
# (in milliseconds: smaller numbers are seconds, all within it), a text that starts as a date
# in year 9000 or later or on its eve (an offset may carry it past); other text is a time
# within the range or none at all
_BEFORE_THE_END_MS = {"exclusiveMaximum": int(END_OF_MOMENTS.timestamp()) * 1000}
_NOT_PAST_THE_RANGE = {"pattern": f"^(?![{BLANK_CLASS}]*(?:9[0-9]{{3}}|8999-12-31))[^\\u0000]*$"}


def _timestamp_rule(value: float | str | None) -> float | str | None:
    validate.timestamp_moment(value)  # a time past the range of valid moments is refused
    return value


class ContentBlock(BaseModel):
    """One block of a message's content. Only `{type: "text", text}` carries text; other types
    (tool_use, tool_result, toolCall, thinking, image, ...) are accepted and dropped."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    type: Annotated[str, Field(min_length=1, max_length=64)]
    text: ChatText | None = None


class Message(BaseModel):
    """One chat message; other keys a client's message objects carry are ignored. Any role is
    accepted (user, assistant, system, tool, toolResult, developer, ...): user and assistant
    make the turn, the others are context or ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    role: Annotated[str, Field(min_length=1, max_length=64)]
    content: ChatText | Annotated[list[ContentBlock], Field(max_length=MAX_BLOCKS)] | None = None
    timestamp: Annotated[
        Annotated[float, Field(json_schema_extra=_BEFORE_THE_END_MS)]
        | Annotated[str, Field(max_length=40, json_schema_extra=_NOT_PAST_THE_RANGE)]
        | None,
        AfterValidator(_timestamp_rule),
        Field(
            description="When it was said: epoch seconds or milliseconds, or an ISO date-time"
            " (a value that reads as no time, or as one before 2000, is ignored); a time at"
            f" or after {END_OF_MOMENTS:%Y-%m-%dT%H:%M:%SZ} is refused"
        ),
    ] = None


class IngestRequest(Request):
    """A turn as two strings, or as chat `messages` (its last user message(s) and the replies
    after them fill whichever string is not given)."""

    schema_name: ClassVar[str] = "IngestBody"
    user_message: Annotated[ChatText, Field(description="What the user said")] | None = None
    assistant_message: (
        Annotated[ChatText, Field(description="What the assistant answered")] | None
    ) = None
    messages: (
        Annotated[
            list[Message],
            Field(
                min_length=1,
                max_length=MAX_TURN_MESSAGES,
                description="The turn's chat messages, as the client's history holds them",
            ),
        ]
        | None
    ) = None
    agent_id: AgentId | None = None
    session_id: SessionId | None = None
    said_at: SaidAt | None = None
    timezone: TimeZone | None = None


class FlushRequest(Request):
    """A session's messages, kept before the client compacts its context."""

    schema_name: ClassVar[str] = "FlushBody"
    messages: Annotated[
        list[Message],
        Field(
            min_length=1,
            max_length=MAX_FLUSH_MESSAGES,
            description="The session's chat messages",
        ),
    ]
    agent_id: AgentId | None = None
    session_id: SessionId | None = None
    reason: Reason | None = None
    said_at: SaidAt | None = None
    timezone: TimeZone | None = None


# ---- lifecycle -----------------------------------------------------------------------------


class LifecycleRequest(Request):
    """A lifecycle run or preview. It covers the caller's agent (body, X-Cortex-Agent, else the
    server's own); only the operator runs it for every agent (`cortex-mcp lifecycle`, the
    schedule)."""

    schema_name: ClassVar[str] = "LifecycleBody"
    agent_id: AgentId | None = None


class ReflectRequest(Request):
    """A reflect run (or its preview) over the memories new since the last run: slots closed,
    beliefs given their new evidence, touched entities' summaries refreshed, edits to core
    proposed (docs/beliefs.md#reflect)."""

    schema_name: ClassVar[str] = "ReflectBody"
    agent_id: AgentId | None = None
    since: Annotated[
        str | None,
        Field(
            max_length=16,
            pattern=r"^[0-9]{1,5}[dhm]$",
            description="Only memories said in this last period: 7d, 12h or 30m",
        ),
    ] = None
    preview: Annotated[bool, Field(description="Plan only: what a run would change")] = False


class ProposalListRequest(Request):
    """Reflect's proposed edits to core (GET /reflect/proposals): the pending ones, or those
    with another status, or all."""

    schema_name: ClassVar[str] = "ProposalQuery"
    agent_id: AgentId | None = None
    status: Annotated[
        Literal["pending", "accepted", "rejected", "all"],
        Field(description="Which proposals: pending (default), accepted, rejected or all"),
    ] = "pending"


class ProposalDecision(Request):
    """Accept (apply) or reject one of reflect's proposed edits to core."""

    schema_name: ClassVar[str] = "ProposalDecision"
    agent_id: AgentId | None = None
    accept: bool


class LifecycleLogRequest(Request):
    """The lifecycle's audit log, newest first."""

    schema_name: ClassVar[str] = "LogQuery"
    agent_id: AgentId | None = None
    limit: Annotated[
        int, Field(ge=1, le=10_000, description="The newest N entries"), AsQueryInt
    ] = 100


# ---- relations -----------------------------------------------------------------------------


class RelationListRequest(Request):
    """The agent's relations, most recently updated first."""

    schema_name: ClassVar[str] = "RelationsQuery"
    agent_id: AgentId | None = None
    limit: Annotated[
        int, Field(ge=1, le=10_000, description="Most relations to return"), AsQueryInt
    ] = 200


class RelationRequest(Request):
    """One (subject, predicate, object) to store; adding a known one refreshes it."""

    schema_name: ClassVar[str] = "RelationBody"
    subject: Annotated[
        str,
        Field(
            min_length=1,
            max_length=validate.MAX_RELATION_PART_CHARS,
            json_schema_extra=_NOT_BLANK,
            description="Who or what it is about",
        ),
    ]
    predicate: Annotated[
        str,
        Field(
            min_length=1,
            max_length=validate.MAX_PREDICATE_CHARS,
            json_schema_extra=_NOT_BLANK,
            description='How they relate ("works at")',
        ),
    ]
    object: Annotated[
        str,
        Field(
            min_length=1,
            max_length=validate.MAX_RELATION_PART_CHARS,
            json_schema_extra=_NOT_BLANK,
            description="To whom or what",
        ),
    ]
    agent_id: AgentId | None = None


# ---- exchange ------------------------------------------------------------------------------


class ExportRequest(Request):
    """An export answered rather than written to a file: json `{format, document}`, markdown
    `{format, files}`; either can be posted back to import."""

    schema_name: ClassVar[str] = "ExportBody"
    format: Annotated[str, Field(pattern=r"^(json|markdown)$")] = "json"
    agent_id: AgentId | None = None


class ImportRequest(Request):
    """What `POST /export` answers can be posted back as is: `{format: "json", document}` or
    `{format: "markdown", files}`. Or `content`: a text in `format` (json: our export, jsonl:
    the MCP memory server's memory.jsonl, markdown: a MEMORY.md, openclaw: one daily note).
    Exactly one of `document`, `files`, `content`. Each memory, relation and log entry goes
    back to the agent it names (one naming none: the caller's agent); `agent_id` (or
    X-Cortex-Agent) remaps a document of one agent into it, `merge_agents_into` merges a
    document of several into one. An agent token imports into its own agent only."""

    model_config = ConfigDict(  # exactly one of the three, as the document can say it
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"not": {"type": "null"}}}}
                for name in ("document", "files", "content")
            ]
        },
    )
    schema_name: ClassVar[str] = "ImportBody"

    format: Annotated[str, Field(pattern=r"^(json|jsonl|markdown|openclaw)$")] = "json"
    content: Annotated[str, Field(min_length=1)] | None = None
    document: dict[str, Any] | None = None
    files: Annotated[dict[str, str], Field(min_length=1, max_length=10_000)] | None = None
    agent_id: Annotated[
        AgentId | None,
        Field(
            description="Write every item into this agent, whatever agent the document names"
            " (a document of one agent only); default: each item's own agent"
        ),
    ] = None
    merge_agents_into: Annotated[
        AgentId | None,
        Field(
            description="Write the items of every agent the document names into this one"
            " agent (the report's merged_into says so); over agent_id when both are given"
        ),
    ] = None

    @model_validator(mode="after")
    def _one_payload(self) -> ImportRequest:
        given = [n for n in ("content", "document", "files") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of document, files or content")
        return self


# ---- tokens --------------------------------------------------------------------------------

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


class TokenRequest(Request):
    """A new agent token (the admin only): it is answered once, never shown again."""

    schema_name: ClassVar[str] = "TokenBody"
    agent: AgentId
    name: TokenName | None = None
    read_only: bool = Field(
        False, description="true: the token may read its agent's memories, never change them"
    )
    expires: str | None = Field(
        None,
        pattern=r"^[1-9][0-9]{0,4}[hdw]$",
        description="how long the token lives: a number and h, d or w (12h, 30d, 2w);"
        " unset: until it is revoked",
    )


def _change_field(dotted: str, info: FieldInfo) -> tuple[Any, Any]:
    """A live setting as a change document's field: its type and limits (a secret as text),
    null allowed (back to the file's or the default value)."""
    kind: Any = info.annotation
    if isinstance(kind, UnionType):
        kind = next(member for member in get_args(kind) if member is not type(None))
    if kind is SecretStr:
        kind = str
    if dotted in CHANGE_RULES:
        kind = CHANGE_RULES[dotted]
    elif kind is int:
        kind = Annotated[kind, *info.metadata, BeforeValidator(_whole_number)]
    elif info.metadata:
        kind = Annotated[kind, *info.metadata]
    return kind | None, Field(None, description=info.description)


def _whole_number(value: object) -> object:
    """5.0 is the integer 5, in JSON Schema as in the tools."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _change_fields(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        dotted = f"{prefix}{name}"
        nested = info.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            inner = _change_fields(nested, f"{dotted}.")
            if inner:
                group = create_model(  # type: ignore[call-overload]
                    f"{nested.__name__.removesuffix('Settings')}Change",
                    __config__=ConfigDict(extra="forbid", frozen=True, defer_build=True),
                    **inner,
                )
                described = Field(None, description=f"{name}: the ones that change live")
                fields[name] = (group | None, described)
        elif dotted in LIVE:
            fields[name] = _change_field(dotted, info)
    return fields


_LOG_LEVELS = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
_LLM_NAMES = "(auto|openai|anthropic|none)"
# rules of the settings model the schema can state (its validators'); a cron's fields in
# range are checked when the change is applied
CHANGE_RULES: dict[str, Any] = {
    "log_level": _LOG_LEVELS,
    "llm_provider": Annotated[str, StringConstraints(pattern=rf"^{_LLM_NAMES}(,{_LLM_NAMES})*$")],
    "lifecycle.schedule": Annotated[
        str, StringConstraints(pattern=r"^([Oo][Ff][Ff]|\S+( \S+){4})$")
    ],
}
_SettingsChange: Any = create_model(  # type: ignore[call-overload]
    "SettingsChange", __base__=Request, **_change_fields(Settings)
)


class SettingsChangeRequest(_SettingsChange):  # type: ignore[misc]
    """Settings to change while the server runs, as a partial document in the config file's
    shape (`{"search": {"fusion": "rrf"}, "log_level": "DEBUG"}`); null puts one back to the
    config file's or the default value. Only the settings that change while running are
    named here; every value is checked by the settings model and nothing is changed unless
    all are valid (`GET /api/v1/config` lists every setting)."""

    schema_name: ClassVar[str] = "SettingsChangeBody"

    @model_validator(mode="before")
    @classmethod
    def _known_and_live(cls, data: Any) -> Any:
        """An unknown name, or one that changes only at a restart, refused by name (before
        the schema's generic 'extra inputs are not permitted')."""
        if isinstance(data, dict):
            flatten(data)
        return data

    @property
    def changes(self) -> dict[str, Any]:
        return flatten(self.model_dump(exclude_unset=True))


class RevokeRequest(Request):
    """The token to revoke (the admin only), by id or name."""

    schema_name: ClassVar[str] = "RevokeBody"
    token: TokenName


# ---- entities (issue 33) --------------------------------------------------------------------

MAX_ENTITY_NAME_CHARS = 200  # an entity's name or an alias
MAX_ENTITY_PAGE = 500  # entities in one page of a listing

EntityName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_ENTITY_NAME_CHARS,
        json_schema_extra=_NOT_BLANK,
        description='A name or an alias ("Anna", "my sister", "田中さん")',
    ),
]


class EntityListRequest(Request):
    """A page of the agent's entities, the most mentioned first (GET /entities)."""

    schema_name: ClassVar[str] = "EntitiesQuery"
    agent_id: AgentId | None = None
    prefix: Annotated[
        str,
        Field(
            max_length=MAX_ENTITY_NAME_CHARS,
            description="Only entities whose name or an alias starts with this (any case or width)",
        ),
    ] = ""
    limit: Annotated[
        int, Field(ge=1, le=MAX_ENTITY_PAGE, description="Most entities to return"), AsQueryInt
    ] = 50
    offset: Annotated[
        int, Field(ge=0, le=1_000_000, description="Entities to skip"), AsQueryInt
    ] = 0


class EntityRequest(Request):
    """One entity's page: the entity and the ids of its linked memories (GET /entities/{id})."""

    schema_name: ClassVar[str] = "EntityQuery"
    agent_id: AgentId | None = None
    limit: Annotated[
        int,
        Field(ge=1, le=MAX_LIST_PAGE, description="Most linked memory ids to return"),
        AsQueryInt,
    ] = 100


class AliasRequest(Request):
    """A person's alias for an entity (POST /entities/{id}/aliases)."""

    schema_name: ClassVar[str] = "AliasBody"
    alias: EntityName
    agent_id: AgentId | None = None


class RenameRequest(Request):
    """A new canonical name for an entity; the old one stays as an alias (POST
    /entities/{id}/rename)."""

    schema_name: ClassVar[str] = "RenameBody"
    name: EntityName
    agent_id: AgentId | None = None


class MergeRequest(Request):
    """Merge one entity into another (POST /entities/merge): its links and aliases move, its
    name becomes an alias; `dry_run` lists what would move and changes nothing."""

    schema_name: ClassVar[str] = "MergeBody"
    source: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_ENTITY_NAME_CHARS,
            json_schema_extra=_NOT_BLANK,
            description="The entity that goes (its id, or its name)",
        ),
    ]
    into: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_ENTITY_NAME_CHARS,
            json_schema_extra=_NOT_BLANK,
            description="The entity that stays (its id, or its name)",
        ),
    ]
    dry_run: Annotated[bool, Field(description="List what would move, change nothing")] = False
    agent_id: AgentId | None = None


class EntityLogRequest(Request):
    """The entity verbs logged for the agent, newest first, or the references an ambiguous
    alias left unresolved (GET /entities/log, GET /entities/unresolved)."""

    schema_name: ClassVar[str] = "EntityLogQuery"
    agent_id: AgentId | None = None
    limit: Annotated[
        int, Field(ge=1, le=MAX_ENTITY_PAGE, description="Most entries to return"), AsQueryInt
    ] = 50


class UndoRequest(Request):
    """Undo one logged entity verb (POST /entities/undo): the latest not yet undone on its
    entities."""

    schema_name: ClassVar[str] = "UndoBody"
    log_id: Annotated[
        int,
        Field(
            ge=1,
            le=2**53,
            json_schema_extra=_DECIMAL_TOO,
            description="The entity log entry to undo",
        ),
        BeforeValidator(_as_integer),
    ]
    agent_id: AgentId | None = None
