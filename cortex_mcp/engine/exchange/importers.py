"""Reading a user's existing memory into raw items: a MEMORY.md (and an OpenClaw USER.md), an
OpenClaw workspace's daily notes (with seed 002's `## Retain` bullets), the folder our Markdown
export writes (MEMORY.md, memory/working/, memory/archive/, memory/relations.md), the official
MCP memory server's `memory.jsonl`, and our JSON export (in `jsonexport.py`).

Readers are generators over a source's lines: pure, streaming, and they raise `BadLine` for
a line they cannot read. The rules every field must pass are `admit.py`'s; writing is the
pipeline's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from cortex_mcp.engine.exchange.bank import read_entity_page, read_nothing
from cortex_mcp.engine.exchange.common import (
    BadLine,
    Item,
    check_day,
    memory_fields,
    relation_fields,
)
from cortex_mcp.engine.exchange.jsonexport import read_export
from cortex_mcp.engine.exchange.jsonl import read_memory_jsonl
from cortex_mcp.engine.exchange.markdown import MARKER, SUBSECTIONS
from cortex_mcp.engine.exchange.sources import Source
from cortex_mcp.models import Category, Layer, to_iso

__all__ = ["read_items"]

_BULLET = re.compile(r"^(?P<indent>\s*)[-*+]\s+(?:\[[ xX]\]\s+)?(?P<text>.+?)\s*$")
_OUR_BULLET = re.compile(r"^- (?P<text>.*)$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
_DATE_HEADING = re.compile(
    r"^(?P<y>\d{4})(?:(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?![\d/.-])"
    r"|年(?P<m2>\d{1,2})月(?P<d2>\d{1,2})日)"
)
_DATE_PREFIX = re.compile(r"^\[(?P<date>\d{4}-\d{2}-\d{2})\]\s+(?P<rest>.+)$", re.DOTALL)
_CATEGORY_PREFIX = re.compile(r"^\[(?P<category>[a-z_]+)\]\s+(?P<rest>.+)$", re.DOTALL)
_WORKING = re.compile(
    r"^(?P<h>\d{2}):(?P<m>\d{2}) \[(?P<category>[a-z_]+)\] (?P<rest>.+)$", re.DOTALL
)
_RETAIN = re.compile(
    r"^(?P<kind>[WBOS])(?:\((?P<args>[^)]*)\))?(?P<entities>(?:\s+@[\w.\-/]+)*)\s*:\s*(?P<text>.+)$"
)
_ENTITY = re.compile(r"@([\w.\-/]+)")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})\b")
_RELATION_LINE = re.compile(r"^(?P<s>.+?)\s*─+(?P<p>.+?)─+▶\s*(?P<o>.+)$")
_SKIPPED = ("<!--", "|", "```", ">")
_RULE = re.compile(r"^(?:-{3,}|\*{3,}|_{3,})$")  # a horizontal rule
_FRONTMATTER_MAX_LINES = 100

# MEMORY.md section titles (ours and the seed's Chinese ones) -> category
_SECTION_CATEGORIES: list[tuple[tuple[str, ...], Category]] = [
    (("profile", "identity", "about", "用户画像", "画像", "身份"), Category.identity),
    (("preference", "habit", "偏好", "习惯"), Category.preference),
    (("decision", "决策", "决定"), Category.decision),
    (("entit", "relation", "实体", "关系", "people"), Category.relationship),
    (("correction", "修正", "更正"), Category.correction),
    (("history", "summar", "摘要", "历史"), Category.summary),
]
_EXACT_TITLES = {title.casefold(): category for category, title in SUBSECTIONS.items()}
RETAIN_KINDS = {
    "W": Category.fact,
    "B": Category.fact,
    "O": Category.preference,
    "S": Category.insight,
}
RETAIN_NAMES = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}


def read_items(source: Source, now: datetime) -> Iterator[Item]:
    """The raw items of one source, in order."""
    if source.kind in ("json", "document"):
        yield from read_export(source)
        return
    yield from _READERS[source.kind](source, now)


def _section_category(title: str, default: Category = Category.fact) -> Category:
    folded = title.casefold()
    if folded in _EXACT_TITLES:
        return _EXACT_TITLES[folded]
    for needles, category in _SECTION_CATEGORIES:
        if any(n in folded for n in needles):
            return category
    return default


# ---- Markdown: frontmatter, headings, bullets with continuation lines ----------------------


class _Entry:
    __slots__ = ("kind", "level", "line", "text")

    def __init__(self, kind: str, line: int, text: str, level: int = 0) -> None:
        self.kind, self.line, self.text, self.level = kind, line, text, level


def _markdown(source: Source) -> tuple[bool, Iterator[_Entry]]:
    """(written by cortex-mcp?, the entries): headings, bullets (with their continuation
    lines joined by newlines) and other text lines. In our own files every line indented by
    two spaces continues the bullet above it, so content with line breaks comes back intact."""
    numbered = enumerate(source.lines(), start=1)
    first = next(numbered, None)
    replay: list[tuple[int, str]] = [] if first is None else [first]
    ours = False
    if first is not None and first[1].strip() == "---":
        for number, line in numbered:
            replay.append((number, line))
            if line.strip() == "---":  # a closed frontmatter block: not content
                ours = any(text.strip() == MARKER for _, text in replay)
                replay = []
                break
            if len(replay) > _FRONTMATTER_MAX_LINES:  # not frontmatter: read it as text
                break
    return ours, _entries(_chain(iter(replay), numbered), ours)


def _entries(lines: Iterator[tuple[int, str]], ours: bool) -> Iterator[_Entry]:
    pending: _Entry | None = None
    for number, raw in lines:
        if pending is not None and _continues(raw, ours):
            pending.text += "\n" + (raw[2:] if ours else raw.strip())
            continue
        if pending is not None:
            yield pending
            pending = None
        line = raw.strip()
        heading = _HEADING.match(line)
        if heading:
            yield _Entry("heading", number, heading.group("title"), len(heading.group("hashes")))
            continue
        bullet = _OUR_BULLET.match(raw) if ours else _BULLET.match(raw)
        if bullet:
            pending = _Entry("bullet", number, bullet.group("text"))
            continue
        if line and not line.startswith(_SKIPPED) and not _RULE.match(line):
            yield _Entry("text", number, line)
    if pending is not None:
        yield pending


def _continues(raw: str, ours: bool) -> bool:
    if not raw.startswith("  "):
        return False
    return ours or (bool(raw.strip()) and not _BULLET.match(raw))


def _chain(*parts: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    for part in parts:
        yield from part


def _dated(text: str, default: str, line: int) -> tuple[str, str]:
    found = _DATE_PREFIX.match(text)
    if not found:
        return default, text
    return check_day(found.group("date"), line) + "T00:00:00.000000Z", found.group("rest")


def _heading_day(title: str, line: int) -> str | None:
    """The day a heading that is a date names (`2023-05-06`, `2023/5/6 Saturday`,
    `2023年5月6日`), as YYYY-MM-DD; None for any other heading."""
    found = _DATE_HEADING.match(title)
    if not found:
        return None
    month = found.group("m") or found.group("m2")
    day = found.group("d") or found.group("d2")
    year = found.group("y")
    return check_day(f"{year}-{int(month):02d}-{int(day):02d}", line)


class _Headings:
    """What the headings above a line say: the section (category) and the day of the nearest
    heading that is a date. A heading ends those of its level and deeper."""

    def __init__(self, default: Category) -> None:
        self.default = default
        self._open: list[tuple[int, Category | None, str | None]] = []
        self.category: Category = default
        self.day: str | None = None

    def enter(self, entry: _Entry) -> None:
        self._open = [h for h in self._open if h[0] < entry.level]
        day = _heading_day(entry.text, entry.line)
        if day is not None:
            self._open.append((entry.level, None, day))
        else:
            self._open.append((entry.level, _section_category(entry.text, self.default), None))
        # read once per heading, not once per line under it
        self.category = next((c for _, c, _ in reversed(self._open) if c is not None), self.default)
        self.day = next((d for _, _, d in reversed(self._open) if d is not None), None)


# ---- MEMORY.md and USER.md -----------------------------------------------------------------


def _read_memory_md(
    source: Source, now: datetime, default: Category = Category.fact
) -> Iterator[Item]:
    ours, entries = _markdown(source)
    headings = _Headings(default)
    name = PurePosixPath(source.name).name
    origin = f"import:{name}"
    today = to_iso(now)
    for entry in entries:
        if entry.kind == "heading":
            headings.enter(entry)
            continue
        category = headings.category
        where = f"{source.name}:{entry.line}"
        day = headings.day
        undated = today if day is None else f"{day}T00:00:00.000000Z"
        created, content = _dated(entry.text, undated, entry.line)
        if category is Category.relationship:
            relation = _RELATION_LINE.match(content)
            if relation:
                yield Item(
                    "relation",
                    where,
                    relation_fields(relation["s"], relation["p"], relation["o"], created),
                )
                if ours:  # our relation lines mirror the relations table, not memories
                    continue
                content = f"{relation['s'].strip()} {relation['p'].strip()} {relation['o'].strip()}"
        meta = {"imported_from": name, "line": entry.line}
        yield Item(
            "memory",
            where,
            memory_fields(content, category, Layer.core, created, origin, metadata=meta),
        )


def _read_user_md(source: Source, now: datetime) -> Iterator[Item]:
    return _read_memory_md(source, now, Category.identity)


# ---- our export's memory/working, memory/archive and relations.md ----------------------------


def _read_working(source: Source, now: datetime) -> Iterator[Item]:
    """`- HH:MM [category] content` bullets of one day's working notes."""
    del now
    name = PurePosixPath(source.name).name
    day = check_day(name[:10], 1)
    origin = f"import:memory/working/{name}"
    for entry in _markdown(source)[1]:
        if entry.kind == "heading":
            continue
        found = _WORKING.match(entry.text)
        clock, category, content = "00:00", Category.context.value, entry.text
        if found:
            clock = f"{found['h']}:{found['m']}"
            category, content = found["category"], found["rest"]
        fields = memory_fields(
            content, Category.context, Layer.working, f"{day}T{clock}:00.000000Z", origin
        )
        fields["category"] = category
        yield Item("memory", f"{source.name}:{entry.line}", fields)


def _read_archive(source: Source, now: datetime) -> Iterator[Item]:
    """Archived entries of one month (`[date] [category] content` when we wrote them);
    the month's summary is a core memory that MEMORY.md holds, so it is not read twice."""
    del now
    name = PurePosixPath(source.name).name
    month = check_day(name[:7] + "-01", 1)
    origin = f"import:memory/archive/{name}"
    in_summary = False
    for entry in _markdown(source)[1]:
        if entry.kind == "heading":
            in_summary = entry.text.casefold().startswith("summary")
            continue
        if in_summary:
            continue
        created, content = _dated(entry.text, f"{month}T00:00:00.000000Z", entry.line)
        category = Category.context.value
        tagged = _CATEGORY_PREFIX.match(content)
        if tagged:
            category, content = tagged["category"], tagged["rest"]
        fields = memory_fields(
            content, Category.context, Layer.archive, created, origin, importance=0.4
        )
        fields["category"] = category
        yield Item("memory", f"{source.name}:{entry.line}", fields)


def _read_relations_md(source: Source, now: datetime) -> Iterator[Item]:
    today = to_iso(now)
    for entry in _markdown(source)[1]:
        relation = _RELATION_LINE.match(entry.text) if entry.kind != "heading" else None
        if relation:
            yield Item(
                "relation",
                f"{source.name}:{entry.line}",
                relation_fields(relation["s"], relation["p"], relation["o"], today),
            )


_ENTITY_ALIAS = re.compile(r"^(?P<alias>.+) \((?P<origin>[a-z]+)(?:, said by (?P<speaker>.+))?\)$")
_ENTITY_FIELD = re.compile(r"^(?P<key>kind|summary): (?P<value>.*)$")


def _read_entities_md(source: Source, now: datetime) -> Iterator[Item]:
    """memory/entities.md as an export writes it: each entity with its kind and aliases (its
    links are found again by the rules as the memories are imported, with these aliases)."""
    del now
    entity: dict[str, Any] | None = None
    where = ""
    for entry in _markdown(source)[1]:
        if entry.kind == "heading" and entry.level == 2:
            if entity is not None:
                yield Item("entity", where, entity)
            entity = {"name": entry.text, "kind": "thing", "aliases": [], "links": []}
            where = f"{source.name}:{entry.line}"
        elif entity is not None and entry.kind == "text":
            field = _ENTITY_FIELD.match(entry.text)
            if field:
                entity[field["key"]] = field["value"]
        elif entity is not None and entry.kind == "bullet":
            alias = _ENTITY_ALIAS.match(entry.text)
            if alias is None:
                raise BadLine(
                    entry.line,
                    "an alias reads `- alias (origin)` or `- alias (origin, said by Name)`",
                )
            entity["aliases"].append(
                {"alias": alias["alias"], "origin": alias["origin"], "speaker": alias["speaker"]}
            )
    if entity is not None:
        yield Item("entity", where, entity)


# ---- OpenClaw daily notes with ## Retain --------------------------------------------------


def _read_daily_note(source: Source, now: datetime) -> Iterator[Item]:
    """Retain bullets become core memories typed by their prefix; the rest of the note is
    kept in the archive, dated by the file name (and a `## HH:MM` heading when there is one)."""
    del now
    name = PurePosixPath(source.name).name
    day = check_day(name[:10], 1)
    in_retain, clock = False, "00:00"
    origin = f"import:memory/{name}"
    for entry in _markdown(source)[1]:
        if entry.kind == "heading":
            in_retain = entry.text.casefold().startswith("retain")
            found = _TIME.match(entry.text)
            clock = f"{int(found.group(1)):02d}:{found.group(2)}" if found else clock
            continue
        created = f"{day}T{clock}:00.000000Z"
        meta: dict[str, Any] = {"imported_from": f"memory/{name}", "line": entry.line}
        where = f"{source.name}:{entry.line}"
        if in_retain and entry.kind == "bullet":
            yield Item("memory", where, _retained(entry.text, created, origin, meta, entry.line))
        else:
            fields = memory_fields(
                entry.text,
                Category.context,
                Layer.archive,
                created,
                origin,
                importance=0.4,
                metadata=meta,
            )
            yield Item("memory", where, fields)


def _retained(
    content: str, created: str, origin: str, meta: dict[str, Any], line: int
) -> dict[str, Any]:
    match = _RETAIN.match(content)
    if not match:
        return memory_fields(content, Category.fact, Layer.core, created, origin, metadata=meta)
    kind = match.group("kind")
    confidence = 0.8
    args = (match.group("args") or "").strip()
    if args:
        key, _, value = args.partition("=")
        if key.strip() != "c":
            raise BadLine(line, f"unknown Retain option {args!r} (only c=0.0..1.0)")
        try:
            confidence = float(value)
        except ValueError:
            raise BadLine(line, f"confidence {value.strip()!r} is not a number") from None
        if not 0.0 <= confidence <= 1.0:
            raise BadLine(line, f"confidence {confidence} is outside 0.0..1.0")
    entities = _ENTITY.findall(match.group("entities") or "")
    text = match.group("text").strip()
    meta = {**meta, "retain": RETAIN_NAMES[kind], "entities": entities}
    subject = f"{', '.join(entities)}: " if entities else ""
    return memory_fields(
        subject + text,
        RETAIN_KINDS[kind],
        Layer.core,
        created,
        origin,
        confidence=confidence,
        metadata=meta,
    )


_READERS: dict[str, Callable[[Source, datetime], Iterator[Item]]] = {
    "memory_md": _read_memory_md,
    "user_md": _read_user_md,
    "daily": _read_daily_note,
    "working": _read_working,
    "archive": _read_archive,
    "relations_md": _read_relations_md,
    "entities_md": _read_entities_md,
    "jsonl": read_memory_jsonl,
    "bank_facts": read_nothing,
    "bank_opinions": read_nothing,
    "bank_entity": read_entity_page,
}
