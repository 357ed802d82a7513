"""Time zones: the IANA zone a person's dates are read and shown in (CORTEX_TIMEZONE, a
request's `timezone`), and the machine's own zone, its default.

"Yesterday" asked at 05:58 in Shanghai is the day before in Shanghai, not in UTC; a date or
date-time written without an offset ("2026-05-06", "2026-05-06T14:30") is read in the zone,
and dates are shown in it. A zone is a name from the IANA database (`Asia/Tokyo`,
`America/Los_Angeles`, `UTC`), never a fixed offset, so daylight saving time follows the
calendar."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_ZONE_CHARS = 64
# what an IANA name is spelt with: "Area/Location[/More]", "UTC", "Etc/GMT+9"
ZONE_PATTERN = r"^[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+){0,2}$"
ZONE_RULE = "must be an IANA time zone name (Asia/Tokyo, America/Los_Angeles, Europe/Berlin, UTC)"
_ZONE_NAME = re.compile(ZONE_PATTERN)
_LOCALTIME = Path("/etc/localtime")
_TIMEZONE_FILE = Path("/etc/timezone")


def zone(name: str) -> ZoneInfo:
    """The zone `name` names; ValueError saying the rule when it names none."""
    text = name.strip()
    if not _ZONE_NAME.fullmatch(text) or len(text) > MAX_ZONE_CHARS:
        raise ValueError(f"{ZONE_RULE}, got {name[:MAX_ZONE_CHARS]!r}")
    return _loaded(text, name)


@lru_cache(maxsize=64)
def _loaded(text: str, written: str) -> ZoneInfo:
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{ZONE_RULE}, got {written[:MAX_ZONE_CHARS]!r}") from None


def is_zone(name: str) -> bool:
    try:
        zone(name)
    except ValueError:
        return False
    return True


def local_zone_name() -> str:
    """The machine's IANA zone: `TZ` when it names one, else where /etc/localtime points
    (or /etc/timezone), else UTC (a machine whose zone has no IANA name)."""
    candidates = [os.environ.get("TZ", "").lstrip(":"), _linked_zone(), _zone_file()]
    for name in candidates:
        if name and is_zone(name):
            return zone(name).key
    return "UTC"


def _linked_zone() -> str:
    try:
        target = str(_LOCALTIME.resolve(strict=True))
    except OSError:
        return ""
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else ""


def _zone_file() -> str:
    try:
        return _TIMEZONE_FILE.read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def in_zone(moment: datetime, where: tzinfo | None) -> datetime:
    """`moment` (aware) as its wall clock in `where` (UTC when None)."""
    return moment.astimezone(where or UTC)


def label(where: tzinfo) -> str:
    """`where` as a request or a reply names it: its IANA name, else its offset ("+08:00")."""
    if isinstance(where, ZoneInfo):
        return where.key
    offset = datetime.now(where).utcoffset()
    if not offset:
        return "UTC"
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


_OFFSET_LABEL = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def labelled(text: str | None) -> tzinfo:
    """The zone `label` wrote (UTC for None or a label it did not write)."""
    if not text:
        return UTC
    found = _OFFSET_LABEL.match(text)
    if found:
        sign = 1 if found.group(1) == "+" else -1
        minutes = int(found.group(2)) * 60 + int(found.group(3))
        return timezone(sign * timedelta(minutes=minutes))
    try:
        return zone(text)
    except ValueError:
        return UTC
