"""Value types shared by every layer. A leaf: imports nothing of the project."""

from __future__ import annotations

import enum
import os
import re
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

# What an agent id must not hold: control characters (Cc), format characters (Cf: the bidi
# controls that make one id display as another, zero-width characters, the BOM, tags),
# surrogates and the line and paragraph separators (Unicode 14's, a fixed list so that every
# Python applies the same rule). Ids reach logs, file names, SQL and a reader's screen.
_AGENT_ID_FORBIDDEN_RANGES = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C),
    (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
    (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xD800, 0xDFFF),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)  # fmt: skip


def _class_char(code: int) -> str:
    # \uXXXX reads the same in Python's and ECMAScript's regular expressions; a character
    # beyond the BMP is written as itself (both read it so with Unicode patterns)
    return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)


# the ranges as the inside of a regular-expression character class, for published patterns;
# without the surrogates, which no JSON text, UTF-8 header or URL can carry (refused before as
# invalid Unicode) and which regular-expression engines other than Python's refuse to read
AGENT_ID_FORBIDDEN_CLASS = "".join(
    _class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}"
    for low, high in _AGENT_ID_FORBIDDEN_RANGES
    if (low, high) != (0xD800, 0xDFFF)
)
_AGENT_ID_FORBIDDEN = re.compile(f"[{AGENT_ID_FORBIDDEN_CLASS}\\ud800-\\udfff]")
AGENT_ID_RULE = (
    "must not contain control characters or format characters (U+0000-U+001F, U+007F-U+009F;"
    " bidi controls such as U+202E; zero-width characters; line separators)"
)


def agent_id_problem(text: str) -> str | None:
    """What breaks the agent id rule in `text` (the first character it refuses), or None."""
    found = _AGENT_ID_FORBIDDEN.search(text)
    if found is None:
        return None
    return f"{AGENT_ID_RULE}: U+{ord(found.group()):04X} found"


class _Model(BaseModel):
    """A value type whose validator is built when it is first used, not at import: `list`
    and `show` make two or three of these, a server all of them once."""

    model_config = ConfigDict(defer_build=True)


class Layer(enum.StrEnum):
    working = "working"
    core = "core"
    archive = "archive"


class Category(enum.StrEnum):
    identity = "identity"
    preference = "preference"
    decision = "decision"
    fact = "fact"
    insight = "insight"
    todo = "todo"
    correction = "correction"
    skill = "skill"
    relationship = "relationship"
    project_state = "project_state"
    context = "context"
    summary = "summary"
    profile = "profile"


class EntityKind(enum.StrEnum):
    """What an entity is: who or what memories are about."""

    person = "person"
    pet = "pet"
    place = "place"
    organization = "organization"
    project = "project"
    thing = "thing"


class LinkRole(enum.StrEnum):
    """How a memory is tied to an entity: who said it, who it is about, or only named in it."""

    speaker = "speaker"
    subject = "subject"
    mentioned = "mentioned"


class MemoryKind(enum.StrEnum):
    """What kind of statement a memory is (the design documents' retain prefixes W, B, O, S)."""

    world = "world"
    experience = "experience"
    opinion = "opinion"
    observation = "observation"


class AliasOrigin(enum.StrEnum):
    """Where an alias of an entity came from: a former name (a rename, a merge), a linking rule
    ("my sister Anna" makes "my sister" one), a person's verb, or the LLM's extraction."""

    name = "name"
    rule = "rule"
    user = "user"
    llm = "llm"


class EntityAlias(_Model):
    alias: str  # as written
    origin: AliasOrigin
    # the entity whose words made it an alias ("my sister" said by Tom): a kinship alias means
    # someone else when another speaker says it; None: the agent's own user
    speaker_id: str | None = None


class Entity(_Model):
    """Who or what memories are about, per agent: a canonical name, its aliases and what the
    links say (how many live memories name it, the first and last moment they are about)."""

    id: str
    agent_id: str
    name: str
    kind: EntityKind
    aliases: list[str] = Field(default_factory=list)
    alias_details: list[EntityAlias] = Field(default_factory=list)
    summary: str = ""
    first_seen: str | None = None
    last_seen: str | None = None
    mention_count: int = 0
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class EntityMatch:
    """An entity a store lookup found for one normalised key (`tokenize.normalize_name`): by its
    canonical name, or by an alias (then `speaker_id` says whose words the alias is, if anyone's)."""

    key: str
    entity_id: str
    name: str
    kind: EntityKind
    by: str  # "name" | "alias"
    speaker_id: str | None = None


@dataclass(frozen=True)
class EntityLink:
    memory_id: str
    entity_id: str
    role: LinkRole


@dataclass
class EntityLinks:
    """One entity's links as recall reads them: (memory id, entity id, role, occurred_at) of
    its live memories, speakers and subjects first, then the newest; and the kinds of the other
    entities linked beside each of them."""

    moments: list[tuple[str, str, LinkRole, str]]
    beside: dict[str, set[EntityKind]]


@dataclass(frozen=True)
class EntityRef:
    """An entity a link plan names: by id when the resolution found it, else by the name it is
    created with (or found by, when another writer created it meanwhile)."""

    name: str
    kind: EntityKind = EntityKind.person
    entity_id: str | None = None


@dataclass(frozen=True)
class PlannedLink:
    entity: EntityRef
    role: LinkRole


@dataclass(frozen=True)
class PlannedAlias:
    """A phrase a rule (or the LLM) made an alias of an entity: "my sister" of Anna, in the
    words of `speaker` (None: the agent's own user)."""

    entity: EntityRef
    alias: str
    origin: AliasOrigin
    speaker: EntityRef | None = None


@dataclass(frozen=True)
class UnresolvedRef:
    """An alias phrase that names several entities: linked to none, kept with its candidates."""

    phrase: str
    key: str
    role: LinkRole
    candidates: tuple[str, ...]  # the candidates' names


@dataclass(frozen=True)
class LinkPlan:
    """What linking one memory writes (`engine/entities/resolve.py` plans, the store applies)."""

    memory_id: str
    links: tuple[PlannedLink, ...] = ()
    aliases: tuple[PlannedAlias, ...] = ()
    unresolved: tuple[UnresolvedRef, ...] = ()


@dataclass
class LinkReport:
    """What linking did to one memory: the entities it now names (by name), those created, and
    the alias phrases it left unresolved, each with its candidates' names."""

    memory_id: str
    entities: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    unresolved: dict[str, list[str]] = field(default_factory=dict)


# the order a memory's links to one entity keep the strongest of
ROLE_STRENGTH = {LinkRole.speaker: 3, LinkRole.subject: 2, LinkRole.mentioned: 1}


class ValidityStatus(enum.StrEnum):
    """Where a fact stands: still true, replaced by a newer one of the same slot, or disputed
    by a statement of equal standing (shown together, never a silent winner)."""

    current = "current"
    superseded = "superseded"
    contested = "contested"


class BeliefSummary(_Model):
    """A belief's standing as a hit shows it: its confidence, computed from its evidence
    (engine/beliefs/confidence.py), how many memories speak for and against it, when the last
    one was said, and its trend (new | strengthening | stable | weakening | stale)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    id: str
    holder: str
    statement: str
    confidence: float
    for_: int = Field(alias="for")
    against: int
    last_evidence_at: str | None = None
    trend: str
    revisions: int = 0


@dataclass(frozen=True)
class SlotClaim:
    """A single-valued fact a memory states: whose (`holder`, a normalised key), which slot,
    what value, and who said it (engine/beliefs/slots.py reads them)."""

    holder: str
    slot: str
    value: str
    speaker: str | None = None


class Clock(Protocol):
    def now(self) -> datetime: ...


# What a caller may do (OAuth scopes; agent tokens and the admin token hold them too):
# read an agent's memories (recall, search, list, resources), change them (remember, forget,
# ingest, import, edit), and act as the operator (every agent, tokens, settings, system).
READ_SCOPE = "memories:read"
WRITE_SCOPE = "memories:write"
ADMIN_SCOPE = "admin"
AGENT_SCOPES = frozenset({READ_SCOPE, WRITE_SCOPE})
EVERY_SCOPE = frozenset({READ_SCOPE, WRITE_SCOPE, ADMIN_SCOPE})


@dataclass(frozen=True)
class Caller:
    """Who is asking, resolved once per request from its credential by the transport.

    - `local`: the person at this machine (the CLI, a stdio server): any agent, and a call
      naming none may act on every agent (lifecycle runs, exports);
    - `admin`: a remote holder of CORTEX_API_TOKEN (or anyone, on a tokenless loopback
      server): any agent it names, else the server's own;
    - an agent token's holder (`agent_id` set): that agent only, whatever it names.
    """

    kind: str = "local"  # "local" | "admin" | "agent"
    agent_id: str | None = None
    token_id: str | None = None  # the agent token (or dashboard session's token) used
    scopes: frozenset[str] = field(default_factory=lambda: EVERY_SCOPE)  # what it may do
    subject: str | None = None  # an identity provider's user (its `sub`), with its issuer
    issuer: str | None = None
    # the other agents it may name (an identity provider's group claim); `agent_id` is the one
    # it acts for when it names none
    also: tuple[str, ...] = ()

    @classmethod
    def for_agent(
        cls, agent_id: str, token_id: str | None = None, scopes: frozenset[str] | None = None
    ) -> Caller:
        return cls("agent", agent_id, token_id, AGENT_SCOPES if scopes is None else scopes)

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    def may(self, scope: str) -> bool:
        """Whether this caller holds `scope` (READ_SCOPE, WRITE_SCOPE, ADMIN_SCOPE)."""
        return scope in self.scopes


LOCAL = Caller("local")
ADMIN = Caller("admin")

# Who the request being handled acts as (`CortexService.acting_for` sets it), read where a
# lifecycle-log entry is written so each records who acted; unset: the person at this
# machine (the CLI, stdio) or the server's own schedule.
ACTING: ContextVar[Caller | None] = ContextVar("cortex_acting", default=None)
ACTOR_KEY = "actor"  # where a log entry's details say who acted


def actor_of(caller: Caller | None) -> dict[str, str]:
    """Who acted, as a log entry records it: an agent token's id, an identity provider's
    subject and issuer (or a trusted proxy's user), "admin" or "local"; never a secret."""
    if caller is None or caller.kind == "local":
        return {"kind": "local"}
    actor = {"kind": caller.kind}
    if caller.agent_id is not None:
        actor["agent"] = caller.agent_id
    if caller.subject is not None:
        actor["subject"] = caller.subject
        actor["issuer"] = caller.issuer or ""
    elif caller.token_id is not None:
        actor["token_id"] = caller.token_id
    return actor


def with_actor(details: dict[str, Any]) -> dict[str, Any]:
    """`details` with who acted (kept when it already says, as an imported entry does)."""
    if ACTOR_KEY in details:
        return details
    return {**details, ACTOR_KEY: actor_of(ACTING.get())}


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def new_id(random_bytes: bytes | None = None) -> str:
    """A UUIDv7 (RFC 9562): 48-bit millisecond timestamp, then random bits; sorts by time.
    `random_bytes`: 10 bytes from the OS drawn by the caller (a bulk import draws them in
    blocks, one system call for thousands of ids)."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(random_bytes or os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version
    value |= ((rand >> 68) & 0xFFF) << 64  # rand_a, 12 bits
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)  # rand_b
    text = f"{value:032x}"  # what str(uuid.UUID(int=value)) writes, without building one
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


# The actions this server writes into the lifecycle log (the audit log); an imported entry must
# name one of them. An entry an import wrote carries `origin: "import"` in its details, which the
# readers show as the entry's `origin` ("server" for the server's own): a document cannot make
# an entry look like one the server wrote.
LOG_ACTIONS = (
    "archive", "belief", "compress", "correct", "expire", "forget", "merge", "promote", "purge",
    "reflect", "remember", "restore", "supersede", "update", "validity",
)  # fmt: skip
LOG_ORIGIN_KEY = "origin"
IMPORTED_ORIGIN = "import"
SERVER_ORIGIN = "server"


# The moments a caller may give, on every way in (a date or date-time, once its offset is
# applied): stored times are fixed-width text, so the year has four digits, and the end leaves
# room below year 10000 for what is reckoned from a moment (the end of a day, "next year", a
# window around it, a lifecycle's TTL). `engine/validate.py` holds the rule that uses them.
EARLIEST_MOMENT = datetime(1000, 1, 1, tzinfo=UTC)
END_OF_MOMENTS = datetime(9000, 1, 1, tzinfo=UTC)  # the first moment after the range


def to_iso(moment: datetime) -> str:
    """Fixed-width UTC text, so timestamps compare correctly as strings in SQL (isoformat
    writes a year before 1000 with four digits too; strftime's %Y does not)."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def from_iso(text: str) -> datetime:
    """Inverse of to_iso; fromisoformat reads the trailing Z as UTC and is ~20x faster than
    strptime, which showed up in every recall (one call per candidate)."""
    return datetime.fromisoformat(text)


class Memory(_Model):
    id: str
    agent_id: str
    layer: Layer
    category: Category
    content: str
    source: str | None = None
    importance: float
    confidence: float
    decay_score: float
    access_count: int
    last_accessed: str | None = None
    created_at: str
    updated_at: str
    expires_at: str | None = None
    superseded_by: str | None = None
    forgotten_at: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    shared: bool = False
    # the moment the memory is about or was said (a turn's date, a dated note); the stored time
    # (`created_at`) unless a writer knows better. Same form as created_at (`to_iso`).
    occurred_at: str = ""
    # what kind of statement it is (`memory_kind`), who it is about (entity names, filled by
    # the reads that show a memory), and `source` where it came from (`memory_source`)
    kind: MemoryKind | None = None
    entities: list[str] = Field(default_factory=list)
    # while the fact holds: from `valid_from` (its own time unless known better) until
    # `valid_to` (None while current); `slot` names the single-valued slot it states
    # ("<holder>/<slot>"), whose newer fact closes it (engine/beliefs/validity.py)
    valid_from: str = ""
    valid_to: str | None = None
    status: ValidityStatus = ValidityStatus.current
    slot: str | None = None
    # the belief this memory states, with its evidence's standing (engine/beliefs/keeper.py),
    # filled by the reads that show a memory
    belief: BeliefSummary | None = None

    @model_validator(mode="after")
    def _derived_fields(self) -> Memory:
        if not self.occurred_at:
            self.occurred_at = self.created_at
        if self.kind is None:
            self.kind = memory_kind(self.category, self.metadata)
        self.source = memory_source(self.source, self.metadata)
        if not self.valid_from:
            self.valid_from = self.occurred_at
        return self

    def updated(self, **changes: Any) -> Self:
        """A copy with `changes` (values of the fields' own types), made as `model_copy(update=)`
        makes it at about half its cost: a recall copies each memory it returns to add the names
        and beliefs it shows."""
        return _copied(self, type(self), changes)


# A memory's kind, when no `## Retain` prefix (W world, B experience, O opinion, S observation,
# kept as metadata `retain`) says it: from its category (docs/entities.md has the table)
_CATEGORY_KINDS = {
    Category.identity: MemoryKind.experience,
    Category.context: MemoryKind.experience,
    Category.preference: MemoryKind.opinion,
    Category.decision: MemoryKind.opinion,
    Category.insight: MemoryKind.observation,
    Category.summary: MemoryKind.observation,
    Category.profile: MemoryKind.observation,
}
_RETAIN_KINDS = {kind.value: kind for kind in MemoryKind}


def memory_kind(category: Category, metadata: dict[str, Any]) -> MemoryKind:
    """World, experience, opinion or observation: the Retain prefix's, else the category's."""
    retained = metadata.get("retain") if metadata else None
    if isinstance(retained, str) and retained in _RETAIN_KINDS:
        return _RETAIN_KINDS[retained]
    return _CATEGORY_KINDS.get(category, MemoryKind.world)


def memory_source(stored: str | None, metadata: dict[str, Any]) -> str | None:
    """Where a memory came from, as a reader can follow it: the Markdown file and line it was
    imported from (`memory/2025-11-27.md#L12`), the conversation session it was said in and
    who said it (`session:<id> (user)`), else what its writer stored."""
    if not metadata:
        return stored
    where = metadata.get("imported_from")
    if isinstance(where, str) and where:
        line = metadata.get("line")
        return f"{where}#L{line}" if isinstance(line, int) else where
    session = metadata.get("session_id")
    if isinstance(session, str) and session:
        said_in = f"session:{session}"
        if not stored or stored.startswith(said_in):  # derived already (a copy of a memory)
            return stored or said_in
        return f"{said_in} ({stored})"
    return stored


class NewMemory(_Model):
    """What a write asks for; the store fills in ids, hashes and times."""

    agent_id: str
    content: str
    category: Category = Category.fact
    layer: Layer = Layer.core
    importance: float = 0.7
    confidence: float = 0.8
    source: str | None = None
    supersedes: str | None = None
    supersede_rule: str = "explicit"  # which rule chose `supersedes` (kept in lifecycle_log)
    metadata: dict[str, Any] = Field(default_factory=dict)
    shared: bool = False
    occurred_at: str | None = None  # `to_iso` text; None: the time it is stored


class MemoryChanges(_Model):
    """Fields an owner may change in place (content changes go through a correction)."""

    category: Category | None = None
    importance: float | None = None
    layer: Layer | None = None
    shared: bool | None = None


class ScoredMemory(Memory):
    score: float
    truncated: bool = False  # content cut to fit the caller's token budget

    @classmethod
    def of(cls, memory: Memory, score: float, truncated: bool = False, **changes: Any) -> Self:
        """`memory` with its score (and `changes`, values of its own types), its values copied
        as `model_copy` copies them instead of validated again: they were when `memory` was
        built. A recall returns ten; validating them again was ~6 us each."""
        return _copied(memory, cls, {**changes, "score": score, "truncated": truncated})


_ModelT = TypeVar("_ModelT", bound=BaseModel)


def _copied(model: BaseModel, cls: type[_ModelT], changes: dict[str, Any]) -> _ModelT:
    """`model`'s values with `changes` as a `cls` (`model`'s class or a subclass adding the
    fields `changes` sets), built as pydantic's own copy builds one: no validation."""
    copy = cls.__new__(cls)
    object.__setattr__(copy, "__dict__", {**model.__dict__, **changes})
    object.__setattr__(copy, "__pydantic_extra__", None)
    object.__setattr__(copy, "__pydantic_fields_set__", {*model.model_fields_set, *changes})
    object.__setattr__(copy, "__pydantic_private__", None)
    return copy


class EntityPage(_Model):
    """What memory holds about one entity, at the head of a recall about it ("tell me about
    Anna", or `about`): `memory_ids` are the linked memories the recall shows, best first."""

    id: str
    name: str
    kind: EntityKind
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    memory_ids: list[str] = Field(default_factory=list)
    first_seen: str | None = None
    last_seen: str | None = None


class EntityCandidate(_Model):
    """One of the entities an ambiguous name or alias could mean."""

    id: str
    name: str
    kind: EntityKind


class RecallMeta(_Model):
    took_ms: float
    degraded: list[str] = Field(default_factory=list)
    skipped_reason: str | None = None
    channels: list[str] = Field(default_factory=list)
    tokens: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    # the moment the recall reckoned from (the request's `now`, else the clock): the context's
    # "3 weeks ago" is counted from it
    now: str | None = None
    # the time zone the query's dates were read in and the context's dates are shown in (an
    # IANA name, or an offset such as "+08:00" that `now` named)
    timezone: str | None = None
    # the window the query named: start and end (ISO UTC, the end exclusive), its words
    # (`expression`), what it was read as in the user's zone (`read_as`: "March 2026") and
    # whether any memory is from then (`boosted`)
    time: dict[str, str | bool] | None = None
    # words of the query that can only be about time but were read as no window ("Q1")
    time_unread: str | None = None
    # the entity the recall is about ("tell me about Anna", `about`): its page
    entity: EntityPage | None = None
    # a name or alias that fits several entities: them, and no page (never a guess)
    entity_candidates: list[EntityCandidate] = Field(default_factory=list)


class SearchMeta(_Model):
    """What a search understood: the moment and zone it reckoned in, the window the query's
    time words were read as (as `RecallMeta.time`), or the time words it could not read."""

    now: str
    timezone: str
    time: dict[str, str | bool] | None = None
    time_unread: str | None = None


class SearchAnswer(_Model):
    memories: list[ScoredMemory]
    meta: SearchMeta


class RecallResult(_Model):
    context: str
    memories: list[ScoredMemory]
    meta: RecallMeta


class RememberResult(_Model):
    id: str
    layer: Layer
    deduplicated: bool
    superseded: list[str] = Field(default_factory=list)
    # secrets replaced by [REDACTED:kind] before storing: kind -> how many (never the values)
    redacted: dict[str, int] = Field(default_factory=dict)


class ForgetStatus(enum.StrEnum):
    forgotten = "forgotten"
    corrected = "corrected"
    purged = "purged"
    already_forgotten = "already_forgotten"  # a soft forget of a forgotten memory: no change


class ForgetResult(_Model):
    id: str
    status: ForgetStatus
    new_id: str | None = None


class SearchFilters(_Model):
    """Which memories a search may return."""

    agent_id: str
    layers: list[Layer] | None = None
    categories: list[Category] | None = None
    now: str
    include_superseded: bool = False
    include_shared: bool = False  # also memories other agents marked shared
    include_history: bool = False  # rank superseded facts as the current ones (the history)
    # only memories whose `occurred_at` is in [since, until) (`to_iso` text; None: unbounded)
    since: str | None = None
    until: str | None = None


class LifecycleAction(_Model):
    """One step a lifecycle run takes (or, in a preview, would take)."""

    phase: str  # promote | merge | archive | compress
    kind: str  # promote | expire | merge | archive | compress
    agent_id: str
    ids: list[str]  # the memories the step acts on
    into: str | None = None  # merge: the memory that stays; None when a new one is written
    score: float | None = None
    reason: str = ""
    period: str | None = None  # compress: the month the archived memories come from
    llm: bool = False  # the text of a new memory comes from the LLM


class EntitySummaryChange(_Model):
    """An entity page summary reflect writes: from its most important current facts."""

    id: str
    name: str
    summary: str
    memory_ids: list[str] = Field(default_factory=list)  # the facts it was written from
    method: str = "extractive"  # extractive | llm


class CoreProposal(_Model):
    """An edit to core reflect proposes (never applies): `promote` a memory into core, or
    `archive` a core memory, with the reason; a person accepts or rejects it."""

    id: str
    memory_id: str
    action: str  # promote | archive
    reason: str
    status: str = "pending"  # pending | accepted | rejected
    created_at: str | None = None
    decided_at: str | None = None


class ReflectReport(_Model):
    """What a reflect run did, or a preview would do (the same plan)."""

    status: str  # preview | done | nothing new | busy
    agent_id: str | None = None
    since: str | None = None  # memories said before this were left out (`--since`)
    memories: int = 0  # new since the last run
    validity_changes: int = 0
    belief_changes: int = 0
    entities: list[EntitySummaryChange] = Field(default_factory=list)
    proposals: list[CoreProposal] = Field(default_factory=list)
    llm_calls: int = 0
    took_ms: float = 0.0
    notes: list[str] = Field(default_factory=list)


class LifecycleReport(_Model):
    status: str  # preview | done | busy
    run_id: int | None = None  # the run, when one agent's run did the work
    run_ids: list[int] = Field(default_factory=list)  # every agent's run: one each
    now: str
    agent_id: str | None = None
    resumed: bool = False
    actions: list[LifecycleAction] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    skipped: list[LifecycleAction] = Field(default_factory=list)
    created: dict[str, str] = Field(default_factory=dict)  # action key -> new memory id
    holder: str | None = None  # busy: since when another run holds the lease (no host, no PID)
    busy_agents: list[str] = Field(default_factory=list)  # skipped: another run holds their lease
    reflect: list[ReflectReport] = Field(default_factory=list)  # each agent's reflect step
    took_ms: float = 0.0
    notes: list[str] = Field(default_factory=list)
