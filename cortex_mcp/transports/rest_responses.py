"""Response bodies of the REST routes, as published in the OpenAPI document (docs/http.md).

The first group describes routes whose handlers return the service's plain dicts as they are;
each of those is strict (`additionalProperties: false`), so a key the service starts to return
without being described here fails tests/test_openapi_responses.py. The second group is the
other routes' responses. Request bodies and query strings are the services' request models
(service/requests.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeAliasType

from cortex_mcp.models import CoreProposal, Entity, Memory, ScoredMemory, SearchMeta

# Any JSON value: what an imported lifecycle-log entry may carry in `details`.
Json = TypeAliasType("Json", "str | int | float | bool | list[Json] | dict[str, Json] | None")
HealthStatus = Literal["ok", "degraded", "failed"]


class Described(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- GET /stats ---------------------------------------------------------------------------
class SqliteInfo(Described):
    driver: str
    version: str
    fts5: bool
    sqlite_vec: bool


class MemoryCounts(Described):
    """The agent's memories; the three *_rows counts are the whole database's."""

    total: int
    by_layer: dict[str, int]
    forgotten: int
    superseded: int
    fts_rows: int
    access_log_rows: int
    lifecycle_log_rows: int


class ProviderState(Described):
    model: str
    state: str
    consecutive_failures: int
    failures_total: int
    rejected_vectors: int
    last_error: str | None
    last_error_at: str | None
    last_ok_at: str | None
    next_probe_in_s: float | None


class IndexerState(Described):
    running: bool
    embedded: int
    cache_hits: int
    rejected_vectors: int
    last_error: str | None
    last_error_at: str | None
    retry_backoff_s: float
    tracked_pending: int
    requests_in_flight_limit: dict[str, int]  # per provider; lowered while it answers busy


class EmbeddingStats(Described):
    providers: list[str]
    model: str | None
    ready: bool
    failures: dict[str, str]
    indexer_error: str | None
    health: dict[str, ProviderState]
    indexer: IndexerState | None


class TurnCounts(Described):
    """`done`: finished turns by outcome ("" for a turn without one)."""

    pending: int
    done: dict[str, int]


class IngestStats(Described):
    turns: TurnCounts
    counts: dict[str, int]
    flush: dict[str, int]
    relations: int


class LlmStats(Described):
    providers: list[str]
    notes: list[str]
    counts: dict[str, int]
    failures: dict[str, str]
    in_flight: int


class HealthPart(Described):
    part: str
    status: HealthStatus
    detail: str


class HealthCheck(Described):
    status: HealthStatus
    parts: list[HealthPart]


class Stats(Described):
    """Counts are the caller's agent's; vector, cache and provider counters the server's."""

    version: str
    db_path: str
    schema_version: int
    sqlite: SqliteInfo
    agent_id: str
    memories: MemoryCounts
    vectors: dict[str, int]
    embedding_cache_rows: int
    embeddings: EmbeddingStats
    degraded: list[str]
    redactions: dict[str, int]
    ingest: IngestStats
    llm: LlmStats
    health: HealthCheck


# ---- /memories/{id} -----------------------------------------------------------------------
class AccessRecord(Described):
    query_hash: str
    rank: int
    accessed_at: str


class MemoryRelation(Described):
    """A relation extracted from this memory."""

    id: str
    subject: str
    predicate: str
    object: str
    confidence: float
    created_at: str


class MemoryDetail(Described):
    memory: Memory
    correction_chain: list[Memory]
    access_history: list[AccessRecord]
    relations: list[MemoryRelation]
    history: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the audit-log entries naming it, newest first (details.actor: who acted)",
    )


# ---- /lifecycle/log -----------------------------------------------------------------------
class LifecycleLogEntry(Described):
    id: int
    action: str
    memory_ids: list[str]
    details: dict[str, Json]
    executed_at: str
    # "server": this server did it; "import": an import wrote it (the document's word only)
    origin: Literal["server", "import"]


class LifecycleLog(Described):
    entries: list[LifecycleLogEntry]


# ---- /reflect/proposals -------------------------------------------------------------------
class ProposalList(Described):
    proposals: list[CoreProposal]


# ---- /relations ---------------------------------------------------------------------------
class ListedRelation(Described):
    id: str
    subject: str
    predicate: str
    object: str
    confidence: float
    source_memory_id: str | None
    updated_at: str


class RelationList(Described):
    relations: list[ListedRelation]


class StoredRelation(ListedRelation):
    created_at: str


class DeletedRelation(Described):
    id: str
    deleted: bool


# ---- /entities ----------------------------------------------------------------------------
class EntityList(Described):
    entities: list[Entity]
    total: int
    limit: int
    offset: int


class EntityPage(Described):
    entity: Entity
    memory_ids: list[str]


class SettledReference(Described):
    memory_id: str
    phrase: str
    role: str


class EntityChange(Described):
    """An alias added or removed, or a rename: what changed, the log entry an undo names, the
    references an alias no longer ambiguous linked, and the entity as it is now."""

    changed: bool
    log_id: int | None
    linked: list[SettledReference] = Field(default_factory=list)
    entity: Entity | None
    # a rename's
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    old_name_alias: bool | None = None
    was_alias: dict[str, Json] | None = None


class EntityRef(Described):
    id: str
    name: str


class MergeReport(Described):
    source: EntityRef
    into: EntityRef
    memories_moved: list[str]
    aliases_moved: list[str]
    name_becomes_alias: bool
    dry_run: bool
    log_id: int | None


class EntityLogEntry(Described):
    id: int
    action: str
    entity_ids: list[str]
    details: dict[str, Json]
    executed_at: str
    undone_at: str | None


class EntityLog(Described):
    entries: list[EntityLogEntry]


class Candidate(Described):
    id: str
    name: str


class UnresolvedReference(Described):
    memory_id: str
    phrase: str
    role: str
    created_at: str
    candidates: list[Candidate]


class UnresolvedList(Described):
    unresolved: list[UnresolvedReference]


class Undone(Described):
    undone: int
    action: str
    entity_ids: list[str]


# ---- the other routes' responses ----------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


class Health(BaseModel):
    """Without a token: nothing but liveness (details are in the authenticated /stats)."""

    model_config = ConfigDict(extra="forbid")
    status: str
    version: str


class SearchResponse(BaseModel):
    results: list[ScoredMemory]
    # what the search understood: its reference time and zone, the period the query's time
    # words were read as (`time.read_as`) or the words it could not read (`time_unread`)
    meta: SearchMeta | None = None
    debug: dict[str, Any] | None = None


class MemoryList(BaseModel):
    memories: list[Memory]
    limit: int
    offset: int


class IngestResponse(BaseModel):
    """With fire-and-forget (REST), `status` is "pending": the raw turn is stored, extraction
    runs in the background, and `extracted` fills in later (visible to recall, not here)."""

    extracted: list[Memory]
    high_signals: list[Memory]
    turn_id: str
    status: str
    outcome: str | None = None
    duplicate: bool = False
    degraded: list[str] = []


class FlushResponse(BaseModel):
    flushed: list[Memory]
    degraded: list[str] = []


class Relation(BaseModel):
    id: str
    agent_id: str
    subject: str
    predicate: str
    object: str
    confidence: float
    source_memory_id: str | None = None
    created_at: str
    updated_at: str


class LogEntry(BaseModel):
    action: str
    memory_ids: list[str]
    details: dict[str, Any]
    executed_at: str


class ExportedAlias(BaseModel):
    alias: str
    origin: str
    speaker: str | None = None  # whose words (an entity's name); None: the agent's user


class ExportedLink(BaseModel):
    memory_id: str
    role: str


class ExportedEntity(BaseModel):
    agent_id: str | None = None
    name: str
    kind: str
    summary: str = ""
    aliases: list[ExportedAlias]
    links: list[ExportedLink]


class ExportDocument(BaseModel):
    format: Literal["cortex-mcp-export"]
    version: int
    exported_at: str
    agent_id: str | None
    memories: list[Memory]
    relations: list[Relation]
    lifecycle_log: list[LogEntry]
    entities: list[ExportedEntity] = Field(default_factory=list)


class ExportResponse(BaseModel):
    """json: `document`; markdown: `files` (relative path -> text). Post it to /import."""

    format: Literal["json", "markdown"]
    document: ExportDocument | None = None
    files: dict[str, str] | None = None


class ImportResponse(BaseModel):
    files: list[str]
    memories: int
    relations: int
    logs: int
    existing: int
    dropped_ids: int = Field(
        description="ids of other agents' memories taken out of the items' lists of ids (a"
        " summary's covers, a merge's merged_from, a log entry's memory_ids, before and after):"
        " an agent's items name only its own memories"
    )
    from_agents: list[str] = Field(description="the agents the document names")
    agents: dict[str, int] = Field(
        description="each agent written into, and how many new memories it got"
    )
    merged_into: str | None = Field(
        description="the agent the document's agents were merged into (merge_agents_into)"
    )
    entities: int = Field(0, description="entities imported (with their aliases and links)")


class Anything(BaseModel):
    """A JSON object whose keys the route's description lists."""

    model_config = ConfigDict(extra="allow")


class TokenCreated(BaseModel):
    """The new token, shown this once."""

    id: str
    name: str
    agent: str
    token: str
    read_only: bool
    expires_at: str | None


class TokenInfo(BaseModel):
    id: str
    name: str | None
    agent: str | None
    created_at: str
    last_used_at: str | None
    revoked_at: str | None
    read_only: bool
    expires_at: str | None


class TokenList(BaseModel):
    """The live agent tokens (never a token itself)."""

    tokens: list[TokenInfo]


class TokenRevoked(BaseModel):
    id: str
    name: str | None
    agent: str | None
    revoked: bool


class SettingRow(BaseModel):
    name: str = Field(description="dotted name, as in the config file (search.fusion)")
    value: Any = Field(description="the value in effect; a secret's is masked (or null)")
    source: Literal["default", "file", "api", "environment"]
    live: bool = Field(description="whether it changes while running (else at a restart)")
    secret: bool
    kind: Literal["boolean", "integer", "number", "map", "text"]
    variable: str = Field(description="the environment variable that sets it (and wins)")
    description: str
    api_value: Any = Field(
        None, description="a change kept but not in effect: the environment sets this one"
    )


class SettingsList(BaseModel):
    version: int = Field(description="raised by every change; 0: none yet")
    settings: list[SettingRow]


class SettingOverride(BaseModel):
    name: str
    variable: str


class SettingsChanged(SettingsList):
    changed: list[str] = Field(description="the settings whose value in effect changed")
    overridden: list[SettingOverride] = Field(
        description="changes kept but not in effect: an environment variable sets these"
    )
