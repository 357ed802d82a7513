"""The rules an imported item passes before it is written: the same as `remember` for every
field, applied to memories, relations and lifecycle-log entries alike.

Each memory and relation is written to the agent its `Destination` gives it (`agents.py`): the
one it names in a restore, else the one the import names. An id that is malformed, or that
another agent's memory already uses, gets a new id (references to it inside the document
follow); anything else that breaks a rule raises `BadItem` naming the item and the field, and
the import writes nothing.
"""

from __future__ import annotations

import enum
import functools
import json
import math
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cortex_mcp.engine import validate
from cortex_mcp.engine.exchange.agents import MAX_NAMED_AGENTS, Destination, named_agent
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import (
    EARLIEST_MOMENT,
    END_OF_MOMENTS,
    IMPORTED_ORIGIN,
    LOG_ACTIONS,
    LOG_ORIGIN_KEY,
    AliasOrigin,
    Category,
    EntityKind,
    Layer,
    LinkRole,
    ValidityStatus,
    new_id,
    to_iso,
)

MAX_METADATA_CHARS = 20_000  # a memory's metadata, as JSON, but for its lists of ids
MAX_DETAILS_CHARS = 20_000  # a lifecycle-log entry's details, as JSON, but for its lists of ids
# memory ids in one list: those a log entry names, and the lists below. The lifecycle writes
# lists as long as a month's archive (a summary's `covers`, a compression's `before`), so an
# export of what it wrote must import again: such a list is bounded by its length, not by
# the characters of the object it is in.
MAX_LOG_IDS = 1_000_000
MAX_ENTITY_ALIASES = 1_000
MAX_ENTITY_NAME_CHARS = 200  # as service.requests says it
MAX_ENTITY_SUMMARY_CHARS = 2_000
ID_LISTS = {
    "metadata": ("covers", "merged_from"),
    "details": ("before", "after"),
}
MAX_ACCESS_COUNT = 10**12
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
# what a memory is about may lie long before computers (a birthday, a family story) or long
# after the export (a plan): it takes the range every date a caller gives takes, as remember
# does (models.EARLIEST_MOMENT .. END_OF_MOMENTS)
LATEST_OCCURRED = END_OF_MOMENTS - timedelta(microseconds=1)
CLOCK_SKEW = timedelta(days=1)  # how far past "now" a recorded time may lie
LATEST_EXPIRY = timedelta(days=366 * 100)

_ID_RANDOM_BYTES = 10  # what models.new_id takes
_AGENTS_REMEMBERED = 1_000  # agent_id texts an admission keeps the reading of


@functools.lru_cache(maxsize=8)
def _iso(moment: datetime) -> str:
    return to_iso(moment)


def _small_flat(data: dict[str, Any], limit: int) -> bool:
    """A flat object of short text and whole numbers surely within `limit` as JSON (an
    escape takes at most 6 characters per character), without encoding it."""
    bound = 2
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, str | int | None):
            return False
        bound += 6 * len(key) + (6 * len(value) if isinstance(value, str) else 24) + 8
    return bound <= limit


class BadItem(Exception):
    """An item that breaks a rule: `where` is `path:line` or `memories[12]`."""

    def __init__(self, where: str, field: str, message: str) -> None:
        super().__init__(f"{where}: {field}: {message}")
        self.where = where
        self.field = field
        self.message = message


@dataclass
class Renames:
    """Ids the import replaces, keyed by the id as the document writes it (canonical when it
    is a UUID): malformed ids and ids another agent's memory already uses."""

    memories: dict[str, str] = field(default_factory=dict)

    def memory(self, key: str) -> str:
        return self.memories.get(key, key)


_CANONICAL_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STORED_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")  # models.to_iso


def id_key(raw: str) -> str:
    """The form an id is compared in: a UUID canonical (lower case, hyphens), else as given."""
    if _CANONICAL_ID.fullmatch(raw):  # what our exports write: no parsing needed
        return raw
    text = raw.strip()
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return text


def is_uuid(raw: str) -> bool:
    if _CANONICAL_ID.fullmatch(raw):
        return True
    try:
        uuid.UUID(raw.strip())
    except ValueError:
        return False
    return True


class Admission:
    """Turns raw items (dicts from any importer) into rows for the agents of `destination`;
    `named` collects the agents the items name."""

    def __init__(
        self,
        destination: Destination,
        now: datetime,
        max_content_chars: int,
        renames: Renames,
        *,
        checking: bool = False,
    ) -> None:
        self.destination = destination
        self.named: set[str] = set()
        self.checking = checking  # the first pass: nothing is written, no new ids needed
        self.now = now
        self.max_content_chars = max_content_chars
        self.renames = renames
        self._latest = now + CLOCK_SKEW
        self._now_iso = to_iso(now)
        self._random, self._random_at = b"", 0
        self._agents: dict[str, str | None] = {}  # an item's agent_id text -> the agent it names

    # ---- memories ------------------------------------------------------------------------

    def memory(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        """The memory's row (the columns of `Memory`, enums as their values)."""
        rule = _Rules(where)
        agent = self._agent(data, rule)
        created, occurred = self._times(data, rule)
        return {
            "id": self.memory_id(data.get("id"), rule),
            "agent_id": agent,
            "layer": rule.member(data, "layer", Layer),
            "category": rule.member(data, "category", Category),
            "content": rule.content(data.get("content"), self.max_content_chars),
            "source": rule.optional_text(data, "source", validate.MAX_SOURCE_CHARS),
            "importance": rule.unit(data, "importance", 0.7),
            "confidence": rule.unit(data, "confidence", 0.8),
            "decay_score": rule.unit(data, "decay_score", 1.0),
            "access_count": rule.count(data, "access_count"),
            "last_accessed": rule.time(data, "last_accessed", self._latest),
            "created_at": created,
            "updated_at": rule.time(data, "updated_at", self._latest) or created,
            "expires_at": rule.time(data, "expires_at", self.now + LATEST_EXPIRY),
            "superseded_by": self.reference(data.get("superseded_by"), rule, "superseded_by"),
            "forgotten_at": rule.time(data, "forgotten_at", self._latest),
            "metadata": self.follow_renames(
                rule.json_object(data, "metadata", MAX_METADATA_CHARS, ID_LISTS["metadata"]),
                ID_LISTS["metadata"],
            ),
            "shared": rule.flag(data, "shared"),
            "occurred_at": occurred,
            **self._validity(data, rule),
        }

    def _validity(self, data: dict[str, Any], rule: _Rules) -> dict[str, Any]:
        """While the fact held (an export's or a bank/ page's `valid_from`, `valid_to`) and its
        status; absent, the fact is current from its own time and the rules settle it again."""
        status = (
            "current" if data.get("status") is None else rule.member(data, "status", ValidityStatus)
        )
        return {
            "valid_from": rule.time(data, "valid_from", LATEST_OCCURRED, earliest=EARLIEST_MOMENT),
            "valid_to": rule.time(data, "valid_to", LATEST_OCCURRED, earliest=EARLIEST_MOMENT),
            "status": status,
        }

    def _times(self, data: dict[str, Any], rule: _Rules) -> tuple[str, str]:
        """(created_at, occurred_at). An item with a created_at and no occurred_at (a file of
        another tool, a Markdown note's date, which our export writes from occurred_at)
        means its own time by it: any moment of the range of valid moments, as remember
        takes; it is the stored time too when a store could have written it then (1970 ..
        now), else the import's now."""
        if data.get("occurred_at") is None and data.get("created_at") is not None:
            own = rule.time(data, "created_at", LATEST_OCCURRED, earliest=EARLIEST_MOMENT)
            assert own is not None
            recorded = _iso(EARLIEST) <= own <= _iso(self._latest)
            return (own if recorded else self._now_iso), own
        created = rule.time(data, "created_at", self._latest) or self._now_iso
        occurred = rule.time(data, "occurred_at", LATEST_OCCURRED, earliest=EARLIEST_MOMENT)
        return created, occurred or created

    def _agent(self, data: dict[str, Any], rule: _Rules) -> str:
        """The agent the item is written to; the one it names is noted in `named`."""
        raw = data.get("agent_id")
        if isinstance(raw, str) and raw in self._agents:  # every item of a file names one or two
            named = self._agents[raw]
        else:
            _no_nul_in_agent(data, rule)
            try:
                named = named_agent(raw)
            except InvalidInput as exc:
                raise rule.fail("agent_id", exc.message.removeprefix("agent_id: ")) from None
            if isinstance(raw, str) and len(self._agents) < _AGENTS_REMEMBERED:
                self._agents[raw] = named
        if named is not None and named not in self.named:
            if len(self.named) >= MAX_NAMED_AGENTS:
                raise rule.fail("agent_id", f"an import names at most {MAX_NAMED_AGENTS} agents")
            self.named.add(named)
        return self.destination.of(named)

    def memory_id(self, raw: Any, rule: _Rules) -> str:
        """The id to write: the document's when it is a well-formed UUID no other agent uses,
        else a new one (decided once per import in `Renames`)."""
        if raw is None or raw == "":
            return "" if self.checking else self._new_id()
        if type(raw) is str and _CANONICAL_ID.fullmatch(raw):  # what our exports write
            return self.renames.memories.get(raw, raw)
        key = rule.id_text(raw, "id")
        if key in self.renames.memories:
            return self.renames.memories[key]
        if not is_uuid(key):
            self.renames.memories[key] = self._new_id()
            return self.renames.memories[key]
        return key

    def _new_id(self) -> str:
        """A new id, its random bits from a block drawn from the OS for many ids at once."""
        if self._random_at >= len(self._random):
            self._random, self._random_at = os.urandom(_ID_RANDOM_BYTES * 1024), 0
        start, self._random_at = self._random_at, self._random_at + _ID_RANDOM_BYTES
        return new_id(self._random[start : self._random_at])

    def follow_renames(self, raw: dict[str, Any], id_lists: tuple[str, ...]) -> dict[str, Any]:
        """The lists of ids in `raw` (a summary's covers...) naming the memories' new ids where
        the import renamed them, so an import into another agent never points at the memories
        of the agent it was exported from."""
        if not self.renames.memories or not any(key in raw for key in id_lists):
            return raw
        followed = {
            key: [self.renames.memory(id_key(i)) for i in raw[key]]
            for key in id_lists
            if key in raw and _id_list(raw[key])
        }
        return {**raw, **followed}

    def reference(self, raw: Any, rule: _Rules, name: str) -> str | None:
        """Another memory this one names (superseded_by, a relation's source)."""
        if raw is None or raw == "":
            return None
        return self.renames.memory(rule.id_text(raw, name))

    # ---- relations -----------------------------------------------------------------------

    def relation(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        rule = _Rules(where)
        agent = self._agent(data, rule)
        raw_id = data.get("id")
        relation_id = rule.id_text(raw_id, "id") if raw_id not in (None, "") else ""
        created = rule.time(data, "created_at", self._latest) or self._now_iso
        return {
            "id": relation_id if is_uuid(relation_id) else None,
            "agent_id": agent,
            "subject": rule.text(data, "subject", validate.MAX_RELATION_PART_CHARS),
            "predicate": rule.text(data, "predicate", validate.MAX_PREDICATE_CHARS),
            "object": rule.text(data, "object", validate.MAX_RELATION_PART_CHARS),
            "confidence": rule.unit(data, "confidence", None),
            "source_memory_id": self.reference(
                data.get("source_memory_id"), rule, "source_memory_id"
            ),
            "created_at": created,
            "updated_at": rule.time(data, "updated_at", self._latest) or created,
        }

    # ---- entities ------------------------------------------------------------------------

    def entity(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        """An entity as an export writes it: name, kind, summary, aliases (each with where it
        came from and whose words it is, by name) and links to the document's memories."""
        rule = _Rules(where)
        aliases, links = data.get("aliases", []), data.get("links", [])
        if not isinstance(aliases, list) or len(aliases) > MAX_ENTITY_ALIASES:
            raise BadItem(where, "aliases", f"must be a list of at most {MAX_ENTITY_ALIASES}")
        if not isinstance(links, list) or len(links) > MAX_LOG_IDS:
            raise BadItem(where, "links", f"must be a list of at most {MAX_LOG_IDS}")
        return {
            "agent_id": self._agent(data, rule),
            "name": rule.text(data, "name", MAX_ENTITY_NAME_CHARS),
            "kind": rule.member(data, "kind", EntityKind),
            "summary": rule.optional_text(data, "summary", MAX_ENTITY_SUMMARY_CHARS) or "",
            "aliases": _each(aliases, "aliases", where, self._alias),
            "links": _each(links, "links", where, self._link),
        }

    def _alias(self, raw: Any, where: str) -> dict[str, Any]:
        rule = _Rules(where)
        if not isinstance(raw, dict):
            raise rule.fail("alias", "must be a JSON object")
        return {
            "alias": rule.text(raw, "alias", MAX_ENTITY_NAME_CHARS),
            "origin": rule.member(raw, "origin", AliasOrigin),
            "speaker": rule.optional_text(raw, "speaker", MAX_ENTITY_NAME_CHARS),
        }

    def _link(self, raw: Any, where: str) -> dict[str, Any]:
        rule = _Rules(where)
        if not isinstance(raw, dict):
            raise rule.fail("memory_id", "must be a JSON object")
        return {
            "memory_id": self.renames.memory(rule.id_text(raw.get("memory_id"), "memory_id")),
            "role": rule.member(raw, "role", LinkRole),
        }

    # ---- lifecycle log -------------------------------------------------------------------

    def log(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        rule = _Rules(where)
        ids = data.get("memory_ids")
        if not isinstance(ids, list) or len(ids) > MAX_LOG_IDS:
            raise BadItem(where, "memory_ids", f"must be a list of at most {MAX_LOG_IDS} ids")
        named = [self.renames.memory(rule.id_text(i, "memory_ids")) for i in ids]
        action = data.get("action")
        if not isinstance(action, str) or action not in LOG_ACTIONS:
            shown = validate.preview(action) if isinstance(action, str) else repr(action)[:60]
            raise BadItem(
                where, "action", f"unknown value {shown}; use one of: {', '.join(LOG_ACTIONS)}"
            )
        executed = rule.time(data, "executed_at", self.now + LATEST_EXPIRY)  # read, then:
        if executed is None:
            raise BadItem(where, "executed_at", "is required (a time like 2026-03-01T03:00:00Z)")
        if executed > self._now_iso:
            raise BadItem(
                where,
                "executed_at",
                f"{executed} is in the future (now is {self._now_iso}): a log entry records"
                " what has happened",
            )
        details = self.follow_renames(
            rule.json_object(data, "details", MAX_DETAILS_CHARS, ID_LISTS["details"]),
            ID_LISTS["details"],
        )
        return {
            "action": action,
            "memory_ids": named,
            # whatever the document says, this entry is the import's, not the server's
            "details": {**details, LOG_ORIGIN_KEY: IMPORTED_ORIGIN},
            "executed_at": executed,
        }


def _no_nul_in_agent(data: dict[str, Any], rule: _Rules) -> None:
    """A NUL in the document's agent marks a forged document, whether it is used or not."""
    agent = data.get("agent_id")
    if isinstance(agent, str) and "\x00" in agent:
        raise BadItem(rule.where, "agent_id", "contains a NUL character")


_MEMBERS: dict[type, frozenset[str]] = {
    Layer: frozenset(m.value for m in Layer),
    Category: frozenset(m.value for m in Category),
    EntityKind: frozenset(m.value for m in EntityKind),
    AliasOrigin: frozenset(m.value for m in AliasOrigin),
    LinkRole: frozenset(m.value for m in LinkRole),
    ValidityStatus: frozenset(m.value for m in ValidityStatus),
}


def _each(
    items: list[Any], name: str, where: str, admit: Callable[[Any, str], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each element of a list an item holds, admitted; a failure names it (`aliases[2].origin`)."""
    admitted = []
    for index, raw in enumerate(items):
        try:
            admitted.append(admit(raw, where))
        except BadItem as exc:
            raise BadItem(where, f"{name}[{index}].{exc.field}", exc.message) from None
    return admitted


class _Rules:
    """Field checks for one item; each failure names the item and the field."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, name: str, message: str) -> BadItem:
        return BadItem(self.where, name, message)

    def id_text(self, raw: Any, name: str) -> str:
        if not isinstance(raw, str):
            raise self.fail(name, f"must be a string id, got {type(raw).__name__}")
        if "\x00" in raw:
            raise self.fail(name, "contains a NUL character")
        if len(raw) > validate.MAX_ID_CHARS:
            raise self.fail(name, f"{len(raw)} characters is too long for an id")
        return id_key(raw)

    def content(self, raw: Any, limit: int) -> str:
        if not isinstance(raw, str):
            raise self.fail("content", "must be a string")
        try:
            return validate.content(raw, limit)
        except InvalidInput as exc:
            raise self.fail("content", exc.message.removeprefix("content: ")) from None

    def text(self, data: dict[str, Any], name: str, limit: int) -> str:
        raw = data.get(name)
        if not isinstance(raw, str):
            raise self.fail(name, "must be a string")
        try:
            return validate.text(name, raw, limit, verbatim=True)
        except InvalidInput as exc:
            raise self.fail(name, exc.message.removeprefix(f"{name}: ")) from None

    def optional_text(self, data: dict[str, Any], name: str, limit: int) -> str | None:
        raw = data.get(name)
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise self.fail(name, "must be a string or null")
        if "\x00" in raw:
            raise self.fail(name, validate.NUL_RULE)
        if len(raw) > limit:
            raise self.fail(name, f"{len(raw)} characters is over the limit of {limit}")
        return raw if raw.strip() else None

    def member(self, data: dict[str, Any], name: str, kind: type[enum.StrEnum]) -> str:
        raw = data.get(name)
        if isinstance(raw, str) and raw in _MEMBERS[kind]:
            return raw  # every member's value is in _MEMBERS: anything else is unknown
        allowed = ", ".join(m.value for m in kind)
        shown = validate.preview(raw) if isinstance(raw, str) else repr(raw)[:60]
        raise self.fail(name, f"unknown value {shown}; use one of: {allowed}")

    def unit(self, data: dict[str, Any], name: str, default: float | None) -> float:
        raw = data.get(name, default)
        if type(raw) is float and 0.0 <= raw <= 1.0:  # the usual case (NaN fails the test)
            return raw
        if raw is None:
            raise self.fail(name, "is required (a number between 0 and 1)")
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise self.fail(name, f"must be a number between 0 and 1, got {type(raw).__name__}")
        value = float(raw)
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise self.fail(name, f"must be between 0 and 1, got {value}")
        return value

    def count(self, data: dict[str, Any], name: str) -> int:
        raw = data.get(name, 0)
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise self.fail(name, f"must be a whole number, got {type(raw).__name__}")
        if not 0 <= raw <= MAX_ACCESS_COUNT:
            raise self.fail(name, f"must be between 0 and {MAX_ACCESS_COUNT}, got {raw}")
        return raw

    def flag(self, data: dict[str, Any], name: str) -> bool:
        raw = data.get(name, False)
        if not isinstance(raw, bool):
            raise self.fail(name, "must be true or false")
        return raw

    def time(
        self, data: dict[str, Any], name: str, latest: datetime, earliest: datetime = EARLIEST
    ) -> str | None:
        """An ISO 8601 time between `earliest` (1970) and `latest`, written in the store's
        fixed-width UTC form (times are compared as text in SQL)."""
        raw = data.get(name)
        if raw is None:
            return None
        stored = isinstance(raw, str) and _STORED_TIME.fullmatch(raw)
        if stored and _iso(earliest) <= raw <= _iso(latest):  # our own form: compared as text
            return raw
        if not isinstance(raw, str) or len(raw) > 40:
            raise self.fail(name, "must be an ISO 8601 time such as 2026-03-01T03:00:00Z")
        try:
            moment = datetime.fromisoformat(raw.strip())
        except ValueError:
            raise self.fail(
                name, f"{validate.preview(raw)} is not an ISO 8601 time (2026-03-01T03:00:00Z)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        if not earliest <= moment <= latest:
            raise self.fail(name, f"{raw} is outside {earliest.date()} .. {latest.date()} (UTC)")
        return to_iso(moment)

    def json_object(
        self, data: dict[str, Any], name: str, limit: int, id_lists: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """A JSON object within `limit` characters, not counting the keys of `id_lists` that
        hold a list of ids (see `ID_LISTS`)."""
        raw = data.get(name)
        if raw is None or raw == {}:
            return {}
        if not isinstance(raw, dict):
            raise self.fail(name, "must be a JSON object")
        where = validate.nul_path(raw, name)
        if where is not None:
            raise self.fail(where, validate.NUL_RULE)
        if _small_flat(raw, limit):
            return raw
        sized = sized_part(raw, id_lists)
        try:
            size = len(json.dumps(sized, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError, RecursionError):
            raise self.fail(name, "must be plain JSON (no NaN or infinity)") from None
        if size > limit:
            raise self.fail(name, f"{size} characters as JSON is over the limit of {limit}")
        return raw


def sized_part(raw: dict[str, Any], id_lists: tuple[str, ...]) -> dict[str, Any]:
    """`raw` without its keys of `id_lists` that hold a list of at most `MAX_LOG_IDS` ids
    (strings no longer than an id): what a size limit counts."""
    if not any(key in raw for key in id_lists):
        return raw
    return {key: value for key, value in raw.items() if key not in id_lists or not _id_list(value)}


def _id_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) <= MAX_LOG_IDS
        and all(isinstance(i, str) and len(i) <= validate.MAX_ID_CHARS for i in value)
    )
