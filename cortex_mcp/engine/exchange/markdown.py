"""Markdown mirrors of one agent's memory, the seed's §4.4 exporter.

`render_mirrors()` is pure: rows in, {relative path: text} out, so a test can compare the text.
`MirrorWriter` regenerates the files in the background (debounced, never on a request's path)
and writes each one atomically (temp file + rename). Every file it writes carries
`source: cortex-mcp` in its frontmatter; only such files are ever replaced or removed, so the
folder can be an OpenClaw workspace with the user's own notes in it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortex_mcp.models import Category, Layer, Memory
from cortex_mcp.tokenize import CJK_CHAR

log = logging.getLogger(__name__)

MARKER = "source: cortex-mcp"
SECTIONS: list[tuple[str, set[Category]]] = [
    ("Profile", {Category.identity, Category.profile}),
    ("Preferences", {Category.preference, Category.skill}),
    ("Decisions", {Category.decision}),
    (
        "Facts",
        {
            Category.fact,
            Category.insight,
            Category.project_state,
            Category.todo,
            Category.context,
        },
    ),
    ("Entities and relations", {Category.relationship}),
    ("Corrections", {Category.correction}),
    ("History summaries", {Category.summary}),
]
DATED = {Category.decision, Category.correction}
# In an export (lossless), the categories a section holds besides its first get a subsection,
# so that an import gives each memory its category back.
SUBSECTIONS: dict[Category, str] = {
    Category.profile: "Profile summary",
    Category.skill: "Skills",
    Category.insight: "Insights",
    Category.project_state: "Project state",
    Category.todo: "To do",
    Category.context: "Context",
}
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)


@dataclass(frozen=True)
class Relation:
    subject: str
    predicate: str
    object: str


def count_words(text: str) -> int:
    """Words for the budget: a CJK character counts as one word, as in a word processor."""
    cjk = len(CJK_CHAR.findall(text))
    return cjk + len(_WORD.findall(CJK_CHAR.sub(" ", text)))


def _line(text: str) -> str:
    return " ".join(text.split())


def _frontmatter(fields: dict[str, object]) -> list[str]:
    return ["---", *(f"{k}: {v}" for k, v in fields.items()), MARKER, "---", ""]


def _day(memory: Memory) -> str:
    """The day a note is dated by: the memory's own time (`occurred_at`)."""
    return memory.occurred_at[:10]


def _bullet(memory: Memory) -> str:
    if memory.category in DATED:
        return f"- [{_day(memory)}] {_line(memory.content)}"
    return f"- {_line(memory.content)}"


def _verbatim(content: str) -> str:
    """Content as given: further lines indented by two spaces continue the bullet."""
    return content.replace("\r\n", "\n").replace("\n", "\n  ")


def _exact_bullet(memory: Memory) -> str:
    return f"- [{_day(memory)}] {_verbatim(memory.content)}"


def _exact_section(members: list[Memory], categories: set[Category]) -> list[str]:
    """A section of an export: the section's own category, then a subsection per other."""
    lines = [_exact_bullet(m) for m in members if m.category not in SUBSECTIONS]
    for category, title in SUBSECTIONS.items():
        if category in categories:
            chosen = [_exact_bullet(m) for m in members if m.category is category]
            lines += [f"### {title}", "", *chosen, ""] if chosen else []
    return lines


def _rank(memory: Memory) -> tuple[float, int, str]:
    return (-memory.importance, -memory.access_count, memory.created_at)


def render_memory_md(
    core: list[Memory],
    relations: list[Relation],
    exported_at: str,
    word_budget: int,
    *,
    exact: bool = False,
) -> str:
    """Core grouped into the seed's sections, the most important first, within the budget.
    `exact` (an export): every memory, each dated, its content as given and its category
    kept by a subsection, so that importing the file gives them back."""
    chosen: list[Memory] = []
    words = 0
    for memory in sorted(core, key=_rank):
        cost = count_words(_bullet(memory))
        if words + cost > word_budget and not exact:
            continue
        chosen.append(memory)
        words += cost
    relation_lines = []
    for rel in relations:
        line = f"- {_line(rel.subject)} ──{_line(rel.predicate)}──▶ {_line(rel.object)}"
        cost = count_words(line)
        if words + cost <= word_budget or exact:
            relation_lines.append(line)
            words += cost
    body: list[str] = []
    for title, categories in SECTIONS:
        members = sorted((m for m in chosen if m.category in categories), key=_rank)
        lines = _exact_section(members, categories) if exact else [_bullet(m) for m in members]
        if title == "Entities and relations":
            lines += relation_lines
        if lines:
            body += [f"## {title}", "", *lines, ""]
    head = _frontmatter(
        {
            "exported_at": exported_at,
            "total_entries": len(core),
            "shown_entries": len(chosen),
            "words": words,
            "word_budget": word_budget,
        }
    )
    return "\n".join(head + body).rstrip("\n") + "\n"


def render_working_day(
    day: str, memories: list[Memory], exported_at: str, *, exact: bool = False
) -> str:
    head = _frontmatter({"exported_at": exported_at, "date": day, "entries": len(memories)})
    lines = [f"## {day}", ""]
    show = _verbatim if exact else _line
    for memory in sorted(memories, key=lambda m: (m.occurred_at, m.id)):
        lines.append(
            f"- {memory.occurred_at[11:16]} [{memory.category.value}] {show(memory.content)}"
        )
    return "\n".join(head + lines) + "\n"


def render_archive_month(
    period: str,
    memories: list[Memory],
    summaries: list[Memory],
    exported_at: str,
    *,
    exact: bool = False,
) -> str:
    head = _frontmatter(
        {"type": "archive", "period": period, "entries": len(memories), "exported_at": exported_at}
    )
    body: list[str] = []
    if summaries:
        body += ["## Summary", "", *(f"- {_line(s.content)}" for s in summaries), ""]
    ordered = sorted(memories, key=lambda m: (-m.access_count, -m.importance, m.occurred_at))
    if exact:
        entries = [f"- [{_day(m)}] [{m.category.value}] {_verbatim(m.content)}" for m in ordered]
    else:
        entries = [f"- {_line(m.content)}" for m in ordered]
    body += ["## Entries (most recalled first)", "", *entries]
    return "\n".join(head + body) + "\n"


def render_relations(relations: list[Relation], exported_at: str) -> str:
    head = _frontmatter({"exported_at": exported_at, "relations": len(relations)})
    lines = ["## Relations", ""]
    lines += [
        f"- {_line(r.subject)} ──{_line(r.predicate)}──▶ {_line(r.object)}" for r in relations
    ]
    return "\n".join(head + lines) + "\n"


def render_entities(entities: list[dict[str, Any]], exported_at: str) -> str:
    """memory/entities.md: each entity a heading, its kind (and summary), its aliases as
    bullets with where each came from and whose words it is (`my sister (rule, said by Tom)`)."""
    head = _frontmatter({"exported_at": exported_at, "entities": len(entities)})
    lines = ["# Entities", ""]
    for entity in entities:
        lines += [f"## {_line(entity['name'])}", "", f"kind: {entity['kind']}"]
        if entity.get("summary"):
            lines.append(f"summary: {_line(entity['summary'])}")
        lines.append("")
        for alias in entity["aliases"]:
            said = f", said by {_line(alias['speaker'])}" if alias.get("speaker") else ""
            lines.append(f"- {_line(alias['alias'])} ({alias['origin']}{said})")
        if entity["aliases"]:
            lines.append("")
    return "\n".join(head + lines).rstrip("\n") + "\n"


def render_opinions(
    beliefs: list[dict[str, Any]],
    exported_at: str,
    contents: dict[str, tuple[str, str]] | None = None,
) -> str:
    """bank/opinions.md: each belief with its holder, confidence, evidence counts, the memories
    for and against it (`memory:<id>` links, each with its words when it is live, so that an
    import gives the evidence its id back) and when it was last updated."""
    said = contents or {}

    def piece(role: str, memory_id: str) -> str:
        found = said.get(memory_id)
        if found is None:
            return f"- {role}: memory:{memory_id}"
        day, text = found
        return f"- {role}: memory:{memory_id} (said {day}): {_line(text)}"

    head = _frontmatter({"exported_at": exported_at, "beliefs": len(beliefs)})
    lines = ["# Opinions", ""]
    for belief in beliefs:
        last = (belief.get("last_evidence_at") or "never")[:10]
        lines += [
            f"## {_line(belief['statement'])}",
            "",
            f"holder: {_line(belief['holder'])}",
            f"confidence: {belief['confidence']:.2f} ({belief['for']} for,"
            f" {belief['against']} against; last evidence {last}; trend {belief['trend']})",
            f"updated: {belief['updated_at']}",
            "",
        ]
        lines += [piece("for", memory_id) for memory_id in belief["for_ids"]]
        lines += [piece("against", memory_id) for memory_id in belief["against_ids"]]
        lines += [f"- before: {_line(old['statement'])}" for old in belief.get("history", [])]
        lines.append("")
    return "\n".join(head + lines).rstrip("\n") + "\n"


_SLUG_DROP = re.compile(r"[^\w]+", re.UNICODE)


def slug(name: str) -> str:
    """`Anna Lee` -> `anna-lee`, `张伟` -> `张伟`: a file name for an entity's page."""
    return _SLUG_DROP.sub("-", name.casefold()).strip("-_") or "entity"


def _said(alias: dict[str, Any]) -> str:
    """`(rule, said by Tom)`: where an alias came from and whose words it is."""
    said = f", said by {_line(alias['speaker'])}" if alias.get("speaker") else ""
    return f"({alias['origin']}{said})"


def _source(memory: Memory, roles: dict[str, str]) -> str:
    """`memory:<id>`, and the link's role when the memory is not about the entity itself."""
    role = roles.get(memory.id, "subject")
    return f"memory:{memory.id}" if role == "subject" else f"memory:{memory.id}; {role}"


def _by_day(memory: Memory) -> tuple[str, str]:
    """The order a bank file lists memories in: by the day it shows, then the id (the same
    order again after an import, which keeps days and ids but not the hour)."""
    return (_day(memory), memory.id)


def render_bank(
    memories: list[Memory], entities: list[dict[str, Any]], exported_at: str
) -> dict[str, str]:
    """bank/world.md and bank/experience.md (live memories of those kinds, newest first) and
    bank/entities/<slug>.md: each entity's page, aliases, current facts and history (its
    superseded facts, with the time each held), every fact with its memory id. An import reads
    the folder back (`engine/exchange/bank.py`)."""
    files: dict[str, str] = {}
    for kind in ("world", "experience"):
        members = [m for m in memories if m.kind is not None and m.kind.value == kind]
        members.sort(key=_by_day, reverse=True)
        head = _frontmatter({"exported_at": exported_at, "memories": len(members)})
        lines = [f"# {kind.capitalize()}", ""]
        lines += [f"- {_day(m)} {_line(m.content)} (memory:{m.id})" for m in members]
        files[f"bank/{kind}.md"] = "\n".join(head + lines).rstrip("\n") + "\n"
    by_id = {m.id: m for m in memories}
    taken: set[str] = set()
    for entity in entities:
        name = slug(entity["name"])
        if name in taken:
            name = f"{name}-{len(taken)}"
        taken.add(name)
        roles = {link["memory_id"]: link["role"] for link in entity["links"]}
        linked = [by_id[memory_id] for memory_id in roles if memory_id in by_id]
        current = [m for m in linked if m.status.value != "superseded"]
        history = [m for m in linked if m.status.value == "superseded"]
        head = _frontmatter({"exported_at": exported_at, "kind": entity["kind"]})
        lines = [f"# {_line(entity['name'])}", ""]
        if entity.get("summary"):
            lines += [_line(entity["summary"]), ""]
        if entity["aliases"]:
            lines += ["## Aliases", ""]
            aliases = sorted(entity["aliases"], key=lambda a: (a["alias"], a.get("speaker") or ""))
            lines += [f"- {_line(a['alias'])} {_said(a)}" for a in aliases]
            lines.append("")
        lines += ["## Current facts", ""]
        lines += [
            f"- {_line(m.content)} (since {m.valid_from[:10]}; {_source(m, roles)})"
            for m in sorted(current, key=lambda m: (m.valid_from[:10], m.id))
        ]
        if history:
            lines += ["", "## History", ""]
            lines += [
                f"- {_line(m.content)} ({m.valid_from[:10]} to {(m.valid_to or '')[:10]};"
                f" {_source(m, roles)})"
                for m in sorted(history, key=lambda m: (m.valid_from[:10], m.id))
            ]
        files[f"bank/entities/{name}.md"] = "\n".join(head + lines).rstrip("\n") + "\n"
    return files


def render_mirrors(
    memories: list[Memory],
    relations: list[Relation],
    exported_at: str,
    word_budget: int,
    *,
    exact: bool = False,
    entities: list[dict[str, Any]] | None = None,
    beliefs: list[dict[str, Any]] | None = None,
    bank: bool = False,
) -> dict[str, str]:
    """Every mirror file for one agent's live memories: relative path -> text. `exact` for
    an export, which an import reads back losslessly (see `render_memory_md`)."""
    files: dict[str, str] = {}
    core = [m for m in memories if m.layer is Layer.core]
    files["MEMORY.md"] = render_memory_md(core, relations, exported_at, word_budget, exact=exact)
    days: dict[str, list[Memory]] = defaultdict(list)
    months: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories:
        if memory.layer is Layer.working:  # each on the day and in the month it is about
            days[_day(memory)].append(memory)
        elif memory.layer is Layer.archive:
            months[memory.occurred_at[:7]].append(memory)
    for day, members in days.items():
        files[f"memory/working/{day}.md"] = render_working_day(
            day, members, exported_at, exact=exact
        )
    summaries: dict[str, list[Memory]] = defaultdict(list)
    for memory in core:
        period = memory.metadata.get("period") if memory.category is Category.summary else None
        if isinstance(period, str):
            summaries[period].append(memory)
    for period, members in months.items():
        files[f"memory/archive/{period}.md"] = render_archive_month(
            period, members, summaries.get(period, []), exported_at, exact=exact
        )
    files["memory/relations.md"] = render_relations(relations, exported_at)
    if entities:
        files["memory/entities.md"] = render_entities(entities, exported_at)
    if beliefs:
        contents = {m.id: (_day(m), m.content) for m in memories}
        files["bank/opinions.md"] = render_opinions(beliefs, exported_at, contents)
    if bank:
        files.update(render_bank(memories, entities or [], exported_at))
    return files


# ---- writing -------------------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _without_time(text: str) -> str:
    return re.sub(r"^exported_at: .*$", "", text, count=1, flags=re.MULTILINE)


def _ours(path: Path) -> bool:
    try:
        head = path.read_text("utf-8")[:600]
    except (OSError, UnicodeDecodeError):
        return False
    return head.startswith("---") and MARKER in head.split("\n---", 1)[0] + "\n---"


def sync_folder(root: Path, files: dict[str, str]) -> tuple[int, int]:
    """Write changed files, remove our own files that no longer have content (a purge, a day
    that left the working layer). Returns (written, removed)."""
    written = removed = 0
    for relative, text in files.items():
        path = root / relative
        if path.exists():
            if not _ours(path):
                log.warning("mirror: %s was not written by cortex-mcp; left as is", path)
                continue
            if _without_time(path.read_text("utf-8")) == _without_time(text):
                continue
        write_atomic(path, text)
        written += 1
    for folder in ("memory/working", "memory/archive"):
        for path in sorted((root / folder).glob("*.md")) if (root / folder).is_dir() else []:
            if str(path.relative_to(root)) not in files and _ours(path):
                path.unlink()
                removed += 1
    return written, removed


class MirrorWriter:
    """Regenerates the mirrors in the background, at most once per `debounce_s`."""

    def __init__(
        self,
        root: Path,
        render: Callable[[], Awaitable[dict[str, str]]],
        debounce_s: float,
    ) -> None:
        self.root = root
        self._render = render
        self.debounce_s = debounce_s
        self._task: asyncio.Task[None] | None = None
        self._dirty = False
        self.last_error: str | None = None
        self.writes = 0

    def notify(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._flush_later(), name="markdown-mirrors")

    async def flush(self) -> None:
        """Write now (tests, the CLI, shutdown)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._dirty = False
        await self._write()

    async def close(self) -> None:
        if self._dirty:
            await self.flush()

    async def _flush_later(self) -> None:
        while self._dirty:
            await asyncio.sleep(self.debounce_s)
            self._dirty = False
            await self._write()

    async def _write(self) -> None:
        try:
            files = await self._render()
            written, removed = await asyncio.to_thread(sync_folder, self.root, files)
        except OSError as exc:  # a full disk or a read-only folder: memory itself is fine
            self.last_error = f"Markdown mirrors in {self.root} not written: {exc.strerror or exc}"
            log.warning("%s", self.last_error)
            return
        self.last_error = None
        self.writes += 1
        log.debug("mirrors: %d files written, %d removed", written, removed)
