"""REST routes the dashboard reads and edits through (also open to any REST client): the memory
table with keyset paging, agents, timeline, a memory's full page, restore and correct, search
under two settings, lifecycle runs, the extraction log, the profile and the system report.

Each route is thin: validate (the models below), call the facade, answer. Every route acts
for one agent (query/body `agent_id`, else `X-Cortex-Agent`, else the server's agent)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cortex_mcp.models import READ_SCOPE, Category, ForgetResult, Layer
from cortex_mcp.service.requests import (
    MOMENT_TERMS,
    AgentId,
    AgentRequest,
    Content,
    MaxResults,
    Query,
    Reason,
    Request,
    Since,
    Until,
)
from cortex_mcp.transports.endpoints import Call, Endpoint
from cortex_mcp.transports.rest_responses import Anything

# when a memory was stored: the rule and pattern of every date a caller gives
StoredFrom = Annotated[
    Since,
    Field(description="Only memories stored at or after this ISO date or date-time" + MOMENT_TERMS),
]
StoredBefore = Annotated[
    Until,
    Field(description="Only memories stored before this ISO date or date-time" + MOMENT_TERMS),
]
OccurredFrom = Annotated[
    Since,
    Field(
        description="Only memories that happened at or after this ISO date or date-time"
        + MOMENT_TERMS
    ),
]
OccurredBefore = Annotated[
    Until,
    Field(
        description="Only memories that happened before this ISO date or date-time" + MOMENT_TERMS
    ),
]


class BrowseQuery(Request):
    agent_id: AgentId | None = None
    sort: Literal["created_at", "occurred_at", "updated_at", "importance", "access_count"] = (
        "created_at"
    )
    order: Literal["asc", "desc"] = "desc"
    limit: Annotated[int, Field(ge=1, le=500)] = 50
    cursor: Annotated[str, Field(min_length=1, max_length=400)] | None = None
    layer: Layer | None = None
    category: Category | None = None
    status: Literal["live", "forgotten", "superseded", "all"] = "live"
    since: StoredFrom | None = None
    until: StoredBefore | None = None
    occurred_since: OccurredFrom | None = None
    occurred_until: OccurredBefore | None = None
    q: Annotated[str, Field(max_length=2000)] | None = None


class TimelineQuery(Request):
    """Live memories by when they happened; `days`: only the last `days` days; `fit`: auto
    leaves a few far outliers off the chart (counted in off_chart), all shows every one."""

    agent_id: AgentId | None = None
    days: Annotated[int, Field(ge=1, le=3660)] | None = None
    fit: Literal["auto", "all"] = "auto"


class RestoreBody(Request):
    layer: Layer = Layer.core
    agent_id: AgentId | None = None


class CorrectBody(Request):
    content: Content
    reason: Reason | None = None
    agent_id: AgentId | None = None


class Variant(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["hybrid", "text", "vector"] = "hybrid"
    fusion: Literal["maxnorm", "minmax", "weighted", "rrf"] | None = None
    mmr: bool | None = None
    temporal_decay: bool | None = None


class CompareBody(Request):
    query: Query
    variants: Annotated[list[Variant], Field(min_length=1, max_length=2)]
    limit: MaxResults = 10
    agent_id: AgentId | None = None


class RunsQuery(Request):
    agent_id: AgentId | None = None
    limit: Annotated[int, Field(ge=1, le=200)] = 20


_LARGEST_ROW_ID = 2**63 - 1  # SQLite's largest integer (and PostgreSQL's bigint)


class TurnsQuery(Request):
    agent_id: AgentId | None = None
    limit: Annotated[int, Field(ge=1, le=200)] = 20
    before: Annotated[int, Field(ge=1, le=_LARGEST_ROW_ID)] | None = None


ProfileText = Annotated[str, Field(max_length=2000)]
ProfileList = Annotated[list[Annotated[str, Field(max_length=500)]], Field(max_length=100)]


class ProfileBody(Request):
    """Manual edits; an empty value clears that manual field (the generated one shows again),
    null leaves it as it is. `exclude` lists generated items to hide."""

    summary: ProfileText | None = None
    language_preferences: ProfileText | None = None
    domains: ProfileList | None = None
    high_value_signals: ProfileList | None = None
    low_value_signals: ProfileList | None = None
    active_projects: ProfileList | None = None
    exclude: ProfileList | None = None
    agent_id: AgentId | None = None


class SystemQuery(Request):
    agent_id: AgentId | None = None
    health: bool = True


class MemoryPage(BaseModel):
    """{memories, next_cursor, total, total_capped}: pass next_cursor back (same sort and
    filters) for the next page; total is counted on the first page only, and with a text or
    date filter only up to 10,000 (total_capped true: more match)."""

    memories: list[dict[str, Any]]
    next_cursor: str | None
    total: int | None = None
    total_capped: bool = False


async def browse(call: Call) -> Any:
    q: BrowseQuery = call.query
    return await call.service.browse.browse_memories(
        call.agent_id,
        sort=q.sort,
        order=q.order,
        limit=q.limit,
        cursor=q.cursor,
        layer=q.layer.value if q.layer else None,
        category=q.category.value if q.category else None,
        status=q.status,
        since=q.since,
        until=q.until,
        occurred_since=q.occurred_since,
        occurred_until=q.occurred_until,
        q=q.q,
    )


async def agents(call: Call) -> Any:
    return await call.service.browse.agents(call.agent_id)


async def timeline(call: Call) -> Any:
    q: TimelineQuery = call.query
    return await call.service.browse.timeline(call.agent_id, q.days, q.fit)


async def memory_page(call: Call) -> Any:
    return await call.service.browse.memory_page(call.path["id"], call.agent_id)


async def restore(call: Call) -> Any:
    b: RestoreBody = call.body
    return await call.service.memories.restore(call.path["id"], b.layer.value, call.agent_id)


async def correct(call: Call) -> ForgetResult:
    b: CorrectBody = call.body
    return await call.service.memories.correct(call.path["id"], b.content, b.reason, call.agent_id)


async def compare(call: Call) -> Any:
    b: CompareBody = call.body
    variants = [v.model_dump() for v in b.variants]
    return await call.service.browse.search_compare(b.query, variants, b.limit, call.agent_id)


async def runs(call: Call) -> Any:
    return await call.service.browse.lifecycle_runs(call.agent_id, call.query.limit)


async def turns(call: Call) -> Any:
    q: TurnsQuery = call.query
    return await call.service.browse.extraction_log(call.agent_id, q.limit, q.before)


async def profile(call: Call) -> Any:
    return await call.service.conversation.profile(call.agent_id)


async def edit_profile(call: Call) -> Any:
    b: ProfileBody = call.body
    changes = b.model_dump(exclude={"agent_id"}, exclude_unset=True, exclude_none=True)
    return await call.service.conversation.edit_profile(changes, call.agent_id)


async def system(call: Call) -> Any:
    return await call.service.browse.system_report(call.agent_id, call.query.health)


_BY_ID = (400, 401, 404, 413, 422)
_DETAIL = "/memories/{id}/detail"

DASHBOARD_ENDPOINTS: list[Endpoint] = [
    Endpoint("GET", "/agents", agents, "list_agents", query=AgentRequest, response=Anything),
    Endpoint("GET", "/browse", browse, "browse_memories", query=BrowseQuery, response=MemoryPage),
    Endpoint("GET", "/timeline", timeline, "timeline", query=TimelineQuery, response=Anything),
    Endpoint("GET", _DETAIL, memory_page, "memory_page", query=AgentRequest, response=Anything,
             errors=_BY_ID),
    Endpoint("POST", "/memories/{id}/restore", restore, "restore_memory", RestoreBody,
             response=Anything, errors=_BY_ID),
    Endpoint("POST", "/memories/{id}/correct", correct, "correct_memory", CorrectBody,
             response=ForgetResult, errors=_BY_ID),
    Endpoint("POST", "/search/compare", compare, "search_compare", CompareBody,
             response=Anything, scope=READ_SCOPE),
    Endpoint("GET", "/lifecycle/runs", runs, "lifecycle_runs", query=RunsQuery,
             response=Anything),
    Endpoint("GET", "/turns", turns, "extraction_log", query=TurnsQuery, response=Anything),
    Endpoint("GET", "/profile", profile, "get_profile", query=AgentRequest, response=Anything),
    Endpoint("PATCH", "/profile", edit_profile, "edit_profile", ProfileBody, response=Anything),
    Endpoint("GET", "/system", system, "system_report", query=SystemQuery, response=Anything),
]  # fmt: skip
