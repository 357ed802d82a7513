"""Input rules shared by every transport: each failure names the field and the rule."""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, TypeVar

from cortex_mcp.errors import Forbidden, InvalidInput
from cortex_mcp.models import EARLIEST_MOMENT, END_OF_MOMENTS, Caller, agent_id_problem
from cortex_mcp.tokenize import normalise

E = TypeVar("E", bound=enum.Enum)

MAX_QUERY_CHARS = 2000
MAX_ENTITY_NAME_CHARS = 200  # an entity's name or alias as a caller gives it (recall's `about`)
MAX_SOURCE_CHARS = 500
MAX_REASON_CHARS = 1000
MAX_ID_CHARS = 64  # a canonical id is 36; room for surrounding whitespace or braces
MAX_AGENT_ID_CHARS = 128
MAX_RELATION_PART_CHARS = 500  # a relation's subject or object
MAX_PREDICATE_CHARS = 200
MAX_SESSION_ID_CHARS = 128
MAX_CONTENT_CEILING = 100_000  # the highest CORTEX_MAX_CONTENT_CHARS may be set to
PREVIEW_CHARS = 60
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# a plain decimal: no hex, no underscores, no inf/nan, nothing a reader could take two ways
DECIMAL_TEXT = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?"
_DECIMAL = re.compile(DECIMAL_TEXT)
MAX_DECIMAL_CHARS = 40


def decimal_string(value: Any) -> Any:
    """The number a plain decimal string spells ("0.9" -> 0.9, " 5 " -> 5), else `value`."""
    if not isinstance(value, str) or len(value) > MAX_DECIMAL_CHARS:
        return value
    text = value.strip()
    if not _DECIMAL.fullmatch(text):
        return value
    return int(text) if text.lstrip("+-").isdigit() else float(text)


# Text is stored exactly as given, and PostgreSQL cannot store NUL in text (SQLite can): a NUL
# is refused on every store alike rather than dropped, which would change what was written;
# a query too, as the OpenAPI document says of every text.
NUL_RULE = (
    "must not contain the NUL character (U+0000): text is stored exactly as given (and"
    " searched so) and a database text column cannot hold NUL, so it is refused rather than"
    " removed"
)


def shown_name(name: str) -> str:
    """A name a caller chose (a parameter's, a key's) as an error message may echo it: its
    control characters, NUL first, written as \\uXXXX (an error never carries NUL)."""
    return CONTROL_CHARS.sub(lambda found: f"\\u{ord(found.group()):04x}", name)


def no_nul(name: str, value: str) -> str:
    if "\x00" in value:
        raise InvalidInput(f"{name}: {NUL_RULE}", field=name)
    return value


def nul_path(value: Any, path: str) -> str | None:
    """Where the first NUL is in a JSON-like value (texts, keys, lists, objects), as
    `path.key.0`, or None."""
    if isinstance(value, dict) and _flat_without_nul(value):
        return None  # most metadata: no path to write out for each key
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                return where
        elif isinstance(node, Mapping):
            for key, item in reversed(list(node.items())):
                inner = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and "\x00" in key:
                    return where or shown_name(key)
                stack.append((item, inner))
        elif isinstance(node, list | tuple):
            stack.extend((item, f"{where}.{i}") for i, item in reversed(list(enumerate(node))))
    return None


def _flat_without_nul(value: dict[Any, Any]) -> bool:
    """An object of text keys and scalar values, none holding a NUL (False: walk it)."""
    for key, item in value.items():
        if type(key) is not str or "\x00" in key:
            return False
        if type(item) is str:
            if "\x00" in item:
                return False
        elif item is not None and type(item) not in (int, float, bool):
            return False
    return True


def no_nul_inside(name: str, value: Any) -> Any:
    """`value` (text, or JSON-like) when no text in it holds a NUL; else InvalidInput naming
    where the NUL is."""
    where = nul_path(value, name)
    if where is not None:
        raise InvalidInput(f"{where}: {NUL_RULE}", field=where)
    return value


def preview(value: str, limit: int = PREVIEW_CHARS) -> str:
    """`value` quoted for an error message, cut to a short prefix: errors never echo bulk input."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value)} characters)"


def text(name: str, value: str, limit: int, hint: str = "", *, verbatim: bool = False) -> str:
    """Text that is neither blank nor longer than `limit` characters: normalised (for queries),
    or with `verbatim` exactly as given but for surrounding whitespace (for what is stored)."""
    if verbatim:  # stored text; a query is only searched for, never stored
        no_nul(name, value or "")
    cleaned = (value or "").strip() if verbatim else normalise(value or "")
    if not cleaned:
        raise InvalidInput(
            f"{name}: must contain text (it is empty or only whitespace)", field=name
        )
    if len(cleaned) > limit:
        raise InvalidInput(
            f"{name}: {len(cleaned)} characters is over the limit of {limit}{hint}", field=name
        )
    return cleaned


def content(value: str, limit: int) -> str:
    """Memory content is the user's: kept as given (only surrounding whitespace trimmed)."""
    hint = " (CORTEX_MAX_CONTENT_CHARS); split it into separate facts"
    return text("content", value, limit, hint, verbatim=True)


def query(value: str) -> str:
    return text("query", value, MAX_QUERY_CHARS)


def unit_interval(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name}: must be between 0 and 1, got {value}", field=name)
    return float(value)


def int_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InvalidInput(f"{name}: must be between {low} and {high}, got {value}", field=name)
    return int(value)


def member(name: str, value: str | E, kind: type[E]) -> E:
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(str(m.value) for m in kind)
        raise InvalidInput(
            f"{name}: unknown value {value!r}; use one of: {allowed}", field=name
        ) from None


def choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidInput(f"{name}: must be one of {', '.join(allowed)}", field=name)
    return value


def members(name: str, values: list[str] | list[E] | None, kind: type[E]) -> list[E] | None:
    if not values:
        return None
    return [member(name, v, kind) for v in values]


def memory_id(value: str, name: str = "memory_id") -> str:
    return _uuid(value, name, "memory")


MIN_ID_PREFIX_CHARS = 4
_ID_CHARACTERS = frozenset("0123456789abcdef-")


def id_prefix(value: str, name: str = "id") -> str:
    """The start of a memory id, as people type it (git-style): 4 to 36 hex digits and
    dashes, any case."""
    text = (value or "").strip().lower()
    if not MIN_ID_PREFIX_CHARS <= len(text) <= 36 or not set(text) <= _ID_CHARACTERS:
        raise InvalidInput(
            f"{name}: {text[:40]!r} is not a memory id; give the id, or at least its first"
            f" {MIN_ID_PREFIX_CHARS} characters (hex digits), or its last {MIN_ID_PREFIX_CHARS}",
            field=name,
        )
    return text


def relation_id(value: str, name: str = "id") -> str:
    return _uuid(value, name, "relation")


def _uuid(value: str, name: str, kind: str) -> str:
    text = (value or "").strip()
    if len(text) > MAX_ID_CHARS:
        raise InvalidInput(
            f"{name}: {len(text)} characters is too long for a {kind} id (36)", field=name
        )
    try:
        parsed = uuid.UUID(text)
    except ValueError:
        raise InvalidInput(
            f"{name}: {preview(value or '')} is not a {kind} id (ids look like 01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51)",
            field=name,
        ) from None
    return str(parsed)


def agent_id(value: str | None, default: str) -> str:
    """An agent id as given (surrounding whitespace trimmed): 1-128 characters, none of them a
    control or format character (models.agent_id_problem)."""
    if value is None:
        return default
    text = value.strip()
    if not text or len(text) > MAX_AGENT_ID_CHARS:
        raise InvalidInput(
            f"agent_id: must be 1 to {MAX_AGENT_ID_CHARS} characters", field="agent_id"
        )
    problem = agent_id_problem(text)
    if problem is not None:
        raise InvalidInput(f"agent_id: {problem}", field="agent_id")
    return text


def agent_for(caller: Caller, value: str | None, default: str) -> str:
    """The agent a call acts for: the one it names (validated), else the caller's own (an
    agent token's), else `default`. An agent token naming another agent is refused before
    anything is read or written; the refusal is the same whether that agent exists or not."""
    if not caller.is_agent:
        return agent_id(value, default)
    own = caller.agent_id
    assert own is not None
    named = agent_id(value, own)
    if named != own and named not in caller.also:
        allowed = " or ".join(repr(a) for a in (own, *caller.also))
        raise Forbidden(
            f"agent_id: this token acts only for agent {allowed}; it may not name another agent"
            " (leave agent_id out, or use a token of that agent)",
            field="agent_id",
        )
    return named


def agent_scope(caller: Caller, value: str | None, default: str) -> str | None:
    """For operations that cover every agent when none is named (lifecycle runs and their
    log, exports): every agent (None) for the local operator only; a remote caller acts for
    the agent it names, else for its own (an agent token's) or `default` (the server's)."""
    if caller.kind == "local":
        return agent_id(value, "*") if value else None
    return agent_for(caller, value, default)


def optional_text(name: str, value: str | None, limit: int) -> str | None:
    """A short free-text field (source, reason): None when absent or blank, else bounded."""
    if value is None or not no_nul(name, value).strip():
        return None
    if len(value) > limit:
        raise InvalidInput(
            f"{name}: {len(value)} characters is over the limit of {limit}", field=name
        )
    return value


# An ISO-8601 date or date-time in its extended form (a basic 20260506 reads as a number)
_MOMENT = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,6})?)?(?:Z|z|[+-]\d{2}:?\d{2})?)?"
)
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
MOMENT_RULE = (
    "must be an ISO-8601 date or date-time (2026-05-06, 2026-05-06T14:30:00Z; UTC unless it"
    " names an offset)"
)
# the one range of valid moments (models.EARLIEST_MOMENT .. END_OF_MOMENTS), as a rule
RANGE_RULE = (
    f"must lie from {EARLIEST_MOMENT:%Y-%m-%dT%H:%M:%SZ} up to, not including,"
    f" {END_OF_MOMENTS:%Y-%m-%dT%H:%M:%SZ} (in UTC, once its offset is applied)"
)


def in_range(moment: datetime) -> bool:
    """Whether an aware moment lies in the range every date a caller gives must lie in."""
    return EARLIEST_MOMENT <= moment < END_OF_MOMENTS


def moment(value: str, where: tzinfo = UTC) -> datetime:
    """A date or date-time as an aware UTC moment (a date is its midnight in `where`; a time
    with no offset is read in `where`, UTC unless a time zone is given) within the range of
    valid moments (`RANGE_RULE`). ValueError naming the rule otherwise (a request model's
    validator turns it into the field's message; `moment_of` names the field itself)."""
    parsed = _written_moment(value, where)
    if parsed is None:
        raise ValueError(f"{MOMENT_RULE}, got {preview(value)}")
    return within_range(parsed, value)


def _written_moment(value: str, where: tzinfo = UTC) -> datetime | None:
    """The aware moment an ISO date or date-time spells (in `where` without an offset), else
    None."""
    text = value.strip()
    if not _MOMENT.fullmatch(text):
        return None
    try:
        parsed = datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=where)


def offset_of(value: str) -> tzinfo | None:
    """The offset an ISO date-time names (Z, +09:00), None when it names none."""
    text = value.strip()
    if not _MOMENT.fullmatch(text):
        return None
    try:
        return datetime.fromisoformat(text.replace(",", ".")).tzinfo
    except ValueError:
        return None


EPOCH_MS_FROM = 10**11  # epoch numbers from here on are milliseconds (10**11 s is the year 5138)


def timestamp_moment(value: object, where: tzinfo = UTC) -> datetime | None:
    """A chat message's `timestamp` (epoch seconds or milliseconds, as OpenClaw and most chat
    clients write it, or an ISO date-time) as an aware UTC moment; None when it reads as no
    time (text that is not a date, a moment before the range: a sequence number). A time past
    the range is a ValueError saying the range: it would be stored as the memory's time. A
    date-time without an offset is read in `where`."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, str):
        written = _written_moment(value, where) if len(value) <= 40 else None
        if written is None:
            return None
    else:
        seconds = value / 1000 if abs(value) >= EPOCH_MS_FROM else value
        if seconds != seconds or seconds < EARLIEST_MOMENT.timestamp():  # NaN, or too early
            return None
        if seconds >= END_OF_MOMENTS.timestamp():
            raise ValueError(f"{RANGE_RULE}, got {value!r}")
        written = datetime.fromtimestamp(seconds, UTC)
    try:
        return within_range(written, value)
    except ValueError:
        if written < EARLIEST_MOMENT + timedelta(days=1):  # before it (an offset at most a day)
            return None
        raise


def within_range(parsed: datetime, written: object) -> datetime:
    """`parsed` (aware) in UTC when it lies in the range of valid moments, else ValueError
    saying the range and what was `written`."""
    try:
        utc = parsed.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 pushed past the calendar by its offset
        utc = None
    if utc is None or not in_range(utc):
        shown = preview(written) if isinstance(written, str) else repr(written)
        raise ValueError(f"{RANGE_RULE}, got {shown}")
    return utc


def moment_of(name: str, value: str, where: tzinfo = UTC) -> datetime:
    """`moment`, InvalidInput naming `name` when `value` is not one."""
    try:
        return moment(value, where)
    except ValueError as exc:
        raise InvalidInput(f"{name}: {exc}", field=name) from None


def is_date_only(value: str) -> bool:
    return _DATE_ONLY.fullmatch(value.strip()) is not None


def period_end(value: str, where: tzinfo = UTC) -> datetime:
    """The exclusive end a period's `until` gives: a date covers its whole day in `where`
    (the next day's midnight there, whatever daylight saving does between)."""
    start = moment(value, where)  # the day itself lies in the range
    if not is_date_only(value):
        return start
    day = date.fromisoformat(value.strip())
    try:  # its end may be the range's own (exclusive) end: 8999-12-31 ends at 9000-01-01
        return datetime.combine(day + timedelta(days=1), time(), where).astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{RANGE_RULE}, got {preview(value)}") from None


def period_end_of(name: str, value: str, where: tzinfo = UTC) -> datetime:
    """`period_end`, InvalidInput naming `name` when `value` is not a date or date-time."""
    try:
        return period_end(value, where)
    except ValueError as exc:
        raise InvalidInput(f"{name}: {exc}", field=name) from None
