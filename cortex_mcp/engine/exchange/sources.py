"""Where an import reads from: the files of a path on disk, or what a request carried inline
(a text, a parsed JSON document, or a folder's files by relative path).

A source is read line by line and can be read again (an import checks everything before it
writes anything, then reads once more to write), so memory stays bounded by a line, not a file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cortex_mcp.engine.exchange.common import BadLine
from cortex_mcp.errors import InvalidInput

DAILY_NOTE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
MONTH_NOTE = re.compile(r"^(\d{4})-(\d{2})\.md$")

# the order files import in: core first, so that what a later file repeats is "known"
_RANK = {
    "entities_md": -1,  # first: what the rules link the memories to
    "memory_md": 0,
    "user_md": 1,
    "daily": 2,
    "working": 3,
    "archive": 4,
    "relations_md": 5,
    "jsonl": 6,
    "json": 7,
    "bank_facts": 8,  # bank/: read by BankIndex before the passes; no items of their own
    "bank_opinions": 8,
    "bank_entity": 9,  # last: its links name memories the files above wrote
}
NOTHING = (
    "nothing to import: expected MEMORY.md, USER.md, memory/YYYY-MM-DD.md notes, an exported"
    " memory/ folder (working/, archive/, relations.md), a .jsonl from the MCP memory server,"
    " or a cortex-mcp .json export"
)

UNKNOWN_FILE = (
    "not a file an import reads; it reads Markdown (.md: a MEMORY.md, USER.md or YYYY-MM-DD.md"
    " daily note), the MCP memory server's .jsonl, a cortex-mcp .json export, or a folder of"
    " them. To import plain text, name it .md: each bullet and paragraph becomes a core memory"
)


@dataclass(frozen=True)
class Source:
    name: str  # how messages name it: a path, or "content"/"document"/a relative path
    kind: str
    lines: Callable[[], Iterator[str]]  # each line without its line break
    size: int = 0  # bytes, when known
    document: Any = None  # an already-parsed JSON document (a request body)


def kind_of(relative: PurePosixPath) -> str | None:
    """What a file is, from its name and folder (an export's memory/working/2026-02-19.md is
    not an OpenClaw daily note although the names look alike)."""
    name, parent = relative.name, relative.parent.name
    suffix = relative.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix != ".md":
        return None
    if parent == "bank":
        return "bank_opinions" if name == "opinions.md" else "bank_facts"
    if parent == "entities" and relative.parent.parent.name == "bank":
        return "bank_entity"
    if parent == "working" and DAILY_NOTE.match(name):
        return "working"
    if parent == "archive" and MONTH_NOTE.match(name):
        return "archive"
    if name == "relations.md":
        return "relations_md"
    if name == "entities.md":
        return "entities_md"
    if DAILY_NOTE.match(name):
        return "daily"
    if name in ("USER.md", "user.md"):
        return "user_md"
    return "memory_md"


def find_sources(path: Path) -> list[Source]:
    """Every importable file at `path`: one file, an OpenClaw workspace (MEMORY.md, USER.md,
    memory/), an exported folder, or a memory/ folder on its own."""
    if path.is_file():
        kind = kind_of(PurePosixPath(path.name))
        if kind is None:
            raise InvalidInput(f"path: {path.name}: {UNKNOWN_FILE}", field="path")
        if path.parent.name in ("working", "archive"):
            kind = kind_of(PurePosixPath(path.parent.name, path.name)) or kind
        return [_file_source(path, kind)]
    found: list[tuple[str, Path]] = []
    for name in ("MEMORY.md", "memory.md"):
        if (path / name).is_file():
            found.append(("memory_md", path / name))
            break
    for name in ("USER.md", "user.md"):
        if (path / name).is_file():
            found.append(("user_md", path / name))
            break
    notes = path / "memory" if (path / "memory").is_dir() else path
    for file in sorted(notes.glob("*.md")):
        if DAILY_NOTE.match(file.name):
            found.append(("daily", file))
    for folder, pattern in (("working", DAILY_NOTE), ("archive", MONTH_NOTE)):
        found += [
            (folder, f) for f in sorted(notes.glob(f"{folder}/*.md")) if pattern.match(f.name)
        ]
    if (notes / "relations.md").is_file():
        found.append(("relations_md", notes / "relations.md"))
    if (notes / "entities.md").is_file():
        found.append(("entities_md", notes / "entities.md"))
    found += [("jsonl", f) for f in sorted(path.glob("*.jsonl"))]
    bank = path / "bank"
    for name in ("world.md", "experience.md", "opinions.md"):
        if (bank / name).is_file():
            found.append((kind_of(PurePosixPath("bank", name)) or "bank_facts", bank / name))
    found += [("bank_entity", f) for f in sorted(bank.glob("entities/*.md"))]
    found.sort(key=lambda pair: _RANK[pair[0]])
    return [_file_source(file, kind) for kind, file in found]


def inline_sources(
    format: str,
    content: str | None = None,
    document: Any = None,
    files: dict[str, str] | None = None,
    default_day: str = "",
) -> list[Source]:
    """What a request carried: `document` (a parsed export), `files` (a folder as the
    Markdown export returns it: relative path -> text), or `content` in `format`."""
    if document is not None:
        return [Source("document", "document", lambda: iter(()), document=document)]
    if files is not None:
        found = []
        for relative, text in files.items():
            kind = kind_of(PurePosixPath(relative))
            if kind is None:
                raise InvalidInput(
                    f"files: {relative!r} is not a file an import reads (.md, .jsonl, .json)",
                    field="files",
                )
            found.append((kind, _text_source(relative, kind, text)))
        found.sort(key=lambda pair: (_RANK[pair[0]], pair[1].name))
        return [source for _, source in found]
    text = content or ""
    if format == "openclaw":
        heading = re.match(r"\s*#\s+(\d{4}-\d{2}-\d{2})\b", text)
        return [_text_source(f"{heading.group(1) if heading else default_day}.md", "daily", text)]
    kind = {"json": "json", "jsonl": "jsonl", "markdown": "memory_md"}.get(format, "memory_md")
    name = {"json": "content.json", "jsonl": "memory.jsonl"}.get(format, "MEMORY.md")
    return [_text_source(name, kind, text)]


def _text_source(name: str, kind: str, text: str) -> Source:
    def lines() -> Iterator[str]:
        for line in text.split("\n"):
            yield line.removesuffix("\r")

    return Source(name, kind, lines, size=len(text))


def _file_source(path: Path, kind: str) -> Source:
    def lines() -> Iterator[str]:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise BadLine(number, "not UTF-8 text") from None
                if number == 1:
                    text = text.removeprefix("\ufeff")
                yield text.rstrip("\r\n")

    return Source(str(path), kind, lines, size=path.stat().st_size)
