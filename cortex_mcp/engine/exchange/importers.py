"""Reading a user's existing memory into ours: a MEMORY.md, an OpenClaw workspace or its
`memory/` folder of daily notes (with seed 002's `## Retain` bullets), our own JSON export, and
the official MCP memory server's `memory.jsonl`.

Parsing is pure and whole-file: a file with a bad line yields an `ImportProblem` naming the
line and contributes nothing, while the other files of a folder still import. Writing (with
redaction and deduplication) is the service's and the store's job.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cortex_mcp.engine.exchange.common import (
    BadLine,
    ImportProblem,
    Parsed,
    ParsedFile,
    check_day,
    make_memory,
    make_relation,
)
from cortex_mcp.models import Category, Layer, Memory, to_iso

__all__ = ["EXPORT_FORMAT", "ImportProblem", "Parsed", "parse_path", "parse_text"]

DAILY_NOTE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_BULLET = re.compile(r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?(?P<text>.+?)\s*$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
_DATE_PREFIX = re.compile(r"^\[(?P<date>\d{4}-\d{2}-\d{2})\]\s+(?P<rest>.+)$")
_RETAIN = re.compile(
    r"^(?P<kind>[WBOS])(?:\((?P<args>[^)]*)\))?(?P<entities>(?:\s+@[\w.\-/]+)*)\s*:\s*(?P<text>.+)$"
)
_ENTITY = re.compile(r"@([\w.\-/]+)")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})\b")
_RELATION_LINE = re.compile(r"^(?P<s>.+?)\s*─+(?P<p>.+?)─+▶\s*(?P<o>.+)$")

# MEMORY.md section titles (ours and the seed's Chinese ones) -> category
_SECTION_CATEGORIES: list[tuple[tuple[str, ...], Category]] = [
    (("profile", "identity", "about", "用户画像", "画像", "身份"), Category.identity),
    (("preference", "habit", "偏好", "习惯"), Category.preference),
    (("decision", "决策", "决定"), Category.decision),
    (("entit", "relation", "实体", "关系", "people"), Category.relationship),
    (("correction", "修正", "更正"), Category.correction),
    (("history", "summar", "摘要", "历史"), Category.summary),
]
RETAIN_KINDS = {
    "W": Category.fact,
    "B": Category.fact,
    "O": Category.preference,
    "S": Category.insight,
}
RETAIN_NAMES = {"W": "world", "B": "experience", "O": "opinion", "S": "observation"}


def parse_path(path: Path, agent_id: str, now: datetime) -> Parsed:
    """Every importable file at `path` (a file, a workspace, or a memory/ folder)."""
    result = Parsed()
    for file, kind in _files(path):
        try:
            text = _read(file)
            parsed = _PARSERS[kind](text, str(file), agent_id, now)
        except BadLine as exc:
            result.problems.append(ImportProblem(str(file), exc.line, exc.message))
            continue
        result.files.append(parsed)
    if not result.files and not result.problems:
        result.problems.append(
            ImportProblem(
                str(path),
                None,
                "nothing to import: expected MEMORY.md, memory/YYYY-MM-DD.md notes,"
                " a .jsonl from the MCP memory server, or a cortex-mcp .json export",
            )
        )
    return result


def parse_text(content: str, format: str, agent_id: str, now: datetime) -> Parsed:
    """Inline text (an HTTP body): `json`, `markdown` (a MEMORY.md) or `openclaw` (one
    daily note, dated by a leading `# YYYY-MM-DD` heading, else today)."""
    result = Parsed()
    if format == "openclaw":
        heading = re.match(r"\s*#\s+(\d{4}-\d{2}-\d{2})\b", content)
        name = f"{heading.group(1) if heading else now.date().isoformat()}.md"
        kind = "daily"
    else:
        name, kind = ("request.json", "json") if format == "json" else ("MEMORY.md", "memory_md")
    try:
        result.files.append(_PARSERS[kind](content, name, agent_id, now))
    except BadLine as exc:
        result.problems.append(ImportProblem("content", exc.line, exc.message))
    return result


def _files(path: Path) -> list[tuple[Path, str]]:
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return [(path, "jsonl")]
        if suffix == ".json":
            return [(path, "json")]
        return [(path, "daily" if DAILY_NOTE.match(path.name) else "memory_md")]
    if not path.is_dir():
        raise FileNotFoundError(path)
    found: list[tuple[Path, str]] = []
    for name in ("MEMORY.md", "memory.md"):
        if (path / name).is_file():
            found.append((path / name, "memory_md"))
            break
    notes = path / "memory" if (path / "memory").is_dir() else path
    found += [(p, "daily") for p in sorted(notes.glob("*.md")) if DAILY_NOTE.match(p.name)]
    found += [(p, "jsonl") for p in sorted(path.glob("*.jsonl"))]
    return found


def _read(file: Path) -> str:
    data = file.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadLine(line, "not UTF-8 text") from None


def _strip_frontmatter(lines: list[str]) -> int:
    """Index of the first body line (after a leading `---` block, if any)."""
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                return index + 1
    return 0


def _section_category(title: str) -> Category:
    folded = title.casefold()
    for needles, category in _SECTION_CATEGORIES:
        if any(n in folded for n in needles):
            return category
    return Category.fact


# ---- MEMORY.md ---------------------------------------------------------------------------


def parse_memory_md(text: str, path: str, agent_id: str, now: datetime) -> ParsedFile:
    out = ParsedFile(path)
    lines = text.splitlines()
    category = Category.fact
    source = f"import:{Path(path).name}"
    for number in range(_strip_frontmatter(lines), len(lines)):
        line = lines[number].strip()
        heading = _HEADING.match(line)
        if heading:
            category = _section_category(heading.group("title"))
            continue
        bullet = _BULLET.match(line)
        if not bullet and (not line or line.startswith(("<!--", "|", "```", ">"))):
            continue
        content = bullet.group("text") if bullet else line
        created = to_iso(now)
        dated = _DATE_PREFIX.match(content)
        if dated:
            created = check_day(dated.group("date"), number + 1) + "T00:00:00.000000Z"
            content = dated.group("rest")
        if category is Category.relationship:
            relation = _RELATION_LINE.match(content)
            if relation:
                out.relations.append(
                    make_relation(agent_id, relation["s"], relation["p"], relation["o"], created)
                )
                content = f"{relation['s'].strip()} {relation['p'].strip()} {relation['o'].strip()}"
        out.memories.append(
            make_memory(
                agent_id,
                content,
                category,
                Layer.core,
                created,
                source,
                metadata={"imported_from": Path(path).name, "line": number + 1},
            )
        )
    return out


# ---- OpenClaw daily notes with ## Retain --------------------------------------------------


def parse_daily_note(text: str, path: str, agent_id: str, now: datetime) -> ParsedFile:
    """Retain bullets become core memories typed by their prefix; the rest of the note is
    kept in the archive, dated by the file name (and a `## HH:MM` heading when there is one)."""
    del now
    out = ParsedFile(path)
    day = Path(path).name[:10]
    check_day(day, 1)
    lines = text.splitlines()
    in_retain, clock = False, "00:00"
    source = f"import:memory/{Path(path).name}"
    for number in range(_strip_frontmatter(lines), len(lines)):
        line = lines[number].strip()
        heading = _HEADING.match(line)
        if heading:
            title = heading.group("title")
            in_retain = title.casefold().startswith("retain")
            found = _TIME.match(title)
            clock = f"{int(found.group(1)):02d}:{found.group(2)}" if found else clock
            continue
        bullet = _BULLET.match(line)
        if not line or (not bullet and line.startswith(("<!--", "|", "```"))):
            continue
        content = bullet.group("text") if bullet else line
        created = f"{day}T{clock}:00.000000Z"
        meta: dict[str, Any] = {"imported_from": f"memory/{Path(path).name}", "line": number + 1}
        if in_retain and bullet:
            out.memories.append(_retained(agent_id, content, created, source, meta, number + 1))
        else:
            out.memories.append(
                make_memory(
                    agent_id,
                    content,
                    Category.context,
                    Layer.archive,
                    created,
                    source,
                    importance=0.4,
                    metadata=meta,
                )
            )
    return out


def _retained(
    agent_id: str, content: str, created: str, source: str, meta: dict[str, Any], line: int
) -> Memory:
    match = _RETAIN.match(content)
    if not match:
        return make_memory(
            agent_id, content, Category.fact, Layer.core, created, source, metadata=meta
        )
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
    return make_memory(
        agent_id,
        subject + text,
        RETAIN_KINDS[kind],
        Layer.core,
        created,
        source,
        confidence=confidence,
        metadata=meta,
    )


# ---- the MCP memory server's memory.jsonl -------------------------------------------------


def parse_memory_jsonl(text: str, path: str, agent_id: str, now: datetime) -> ParsedFile:
    out = ParsedFile(path)
    created = to_iso(now)
    source = f"import:{Path(path).name}"
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise BadLine(number, f"not JSON ({exc.msg})") from None
        if not isinstance(item, dict):
            raise BadLine(number, "expected a JSON object per line")
        kind = item.get("type")
        if kind == "entity":
            name, etype, observations = (
                item.get("name"),
                item.get("entityType"),
                item.get("observations", []),
            )
            if not isinstance(name, str) or not name.strip():
                raise BadLine(number, "an entity needs a non-empty string 'name'")
            if not isinstance(observations, list) or not all(
                isinstance(o, str) for o in observations
            ):
                raise BadLine(number, "'observations' must be a list of strings")
            label = f"{name} ({etype})" if isinstance(etype, str) and etype else name
            meta = {"entity": name, "entity_type": etype, "imported_from": Path(path).name}
            out.memories += [
                make_memory(
                    agent_id,
                    f"{label}: {o}",
                    Category.fact,
                    Layer.core,
                    created,
                    source,
                    metadata=meta,
                )
                for o in observations
                if o.strip()
            ]
        elif kind == "relation":
            parts = [item.get("from"), item.get("relationType"), item.get("to")]
            if not all(isinstance(p, str) and p.strip() for p in parts):
                raise BadLine(number, "a relation needs string 'from', 'relationType' and 'to'")
            subject, predicate, obj = (str(p) for p in parts)
            out.relations.append(make_relation(agent_id, subject, predicate, obj, created))
            out.memories.append(
                make_memory(
                    agent_id,
                    f"{subject} {predicate.replace('_', ' ')} {obj}",
                    Category.relationship,
                    Layer.core,
                    created,
                    source,
                    metadata={"imported_from": Path(path).name},
                )
            )
        else:
            raise BadLine(number, f"'type' must be 'entity' or 'relation', got {kind!r}")
    return out


# ---- our own JSON export ------------------------------------------------------------------

EXPORT_FORMAT = "cortex-mcp-export"


def parse_export_json(text: str, path: str, agent_id: str, now: datetime) -> ParsedFile:
    """Our export as written: ids, times, layers and logs kept exactly (a round trip)."""
    del agent_id, now
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadLine(exc.lineno, f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise BadLine(1, f'not a cortex-mcp export (expected "format": "{EXPORT_FORMAT}")')
    out = ParsedFile(path)
    for index, item in enumerate(data.get("memories", [])):
        try:
            out.memories.append(Memory.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise BadLine(
                _line_of(text, item, index), f"memories[{index}].{where}: {first['msg']}"
            ) from None
    for index, item in enumerate(data.get("relations", [])):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) for k in ("agent_id", "subject", "predicate", "object")
        ):
            raise BadLine(
                _line_of(text, item, index),
                f"relations[{index}]: needs agent_id, subject, predicate, object",
            )
        out.relations.append(item)
    for index, item in enumerate(data.get("lifecycle_log", [])):
        if not isinstance(item, dict) or not isinstance(item.get("memory_ids"), list):
            raise BadLine(
                _line_of(text, item, index),
                f"lifecycle_log[{index}]: needs action, memory_ids, executed_at",
            )
        out.logs.append(item)
    return out


def _line_of(text: str, item: Any, index: int) -> int | None:
    """The line an exported item sits on (exports write one item per line)."""
    marker = item.get("id") if isinstance(item, dict) else None
    if isinstance(marker, str) and marker:
        position = text.find(json.dumps(marker))
        if position >= 0:
            return text.count("\n", 0, position) + 1
    del index
    return None


_PARSERS = {
    "memory_md": parse_memory_md,
    "daily": parse_daily_note,
    "jsonl": parse_memory_jsonl,
    "json": parse_export_json,
}
