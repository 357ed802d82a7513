"""Reading a mirror's or an export's bank/ folder back (the write side is `markdown.render_bank`).

The memories themselves come from the folder's other files (MEMORY.md, memory/working/,
memory/archive/); the bank says what those files do not: each memory's id and kind
(bank/world.md, bank/experience.md), and per entity (bank/entities/<slug>.md) its kind,
summary, aliases, the memories linked to it and, for each fact, the time it held: `since` for a
current fact, `from to` for a superseded one. `BankIndex` collects the facts (read once, before
the import's passes) and gives each memory item read from the other files what the bank knows
of it, matched by its content (its day too, which a mirror's MEMORY.md does not write); each entity page becomes an entity item with its links.

bank/opinions.md gives its evidence memories their ids and days (each `for`/`against` line
carries the memory's day and words); the beliefs themselves are found again from that evidence
(engine/beliefs/keeper.py), with the same statements, counts and confidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from cortex_mcp.engine.exchange.common import BadLine, Item, check_day, memory_fields
from cortex_mcp.engine.exchange.sources import Source
from cortex_mcp.models import Category, Layer, memory_kind, to_iso

_KIND_CATEGORY = {
    "world": Category.fact,
    "experience": Category.context,
    "opinion": Category.preference,
    "observation": Category.insight,
}

_DAY = r"\d{4}-\d{2}-\d{2}"
_ID = r"memory:(?P<id>[^;)\s]+)(?:; (?P<role>speaker|subject|mentioned))?"
_LISTED = re.compile(rf"^- (?P<day>{_DAY}) (?P<text>.*) \(memory:(?P<id>[^;)\s]+)\)$")
_CURRENT = re.compile(rf"^- (?P<text>.*) \(since (?P<since>{_DAY}); {_ID}\)$")
_PAST = re.compile(rf"^- (?P<text>.*) \((?P<since>{_DAY}) to (?P<to>{_DAY})?; {_ID}\)$")
_EVIDENCE = re.compile(
    rf"^- (?:for|against): memory:(?P<id>[^\s:]+)(?: \(said (?P<day>{_DAY})\))?: (?P<text>.+)$"
)
_ALIAS = re.compile(r"^- (?P<alias>.+) \((?P<origin>[a-z]+)(?:, said by (?P<speaker>.+))?\)$")
_FRONT_KIND = re.compile(r"^kind: (?P<kind>\w+)$")


def content_key(text: str) -> str:
    """How a bank line and a memory's content are matched: the words, spaces collapsed (the
    bank writes each memory on one line)."""
    return " ".join(text.split())


def _moment(day: str, line: int) -> str:
    return check_day(day, line) + "T00:00:00.000000Z"


@dataclass
class BankFact:
    """What the bank knows of one memory."""

    id: str
    text: str  # as the bank wrote it (one line)
    where: str  # the bank file and line that listed it first
    used: bool = False  # a memory of the folder's other files took it (this pass)
    kind: str | None = None  # world | experience | opinion, when a list names it
    day: str | None = None  # the day it is about (`occurred_at`), when a list says it
    valid_from: str | None = None
    valid_to: str | None = None
    superseded: bool = False


class BankIndex:
    """The bank's facts by content: what a memory read from the folder's other files takes."""

    def __init__(self) -> None:
        self.facts: dict[str, BankFact] = {}

    @classmethod
    def read(cls, sources: list[Source]) -> BankIndex | None:
        """The index of the bank files among `sources`; None when there are none."""
        banks = [s for s in sources if s.kind.startswith("bank_")]
        if not banks:
            return None
        index = cls()
        for source in banks:
            try:
                index._read(source)
            except BadLine as exc:
                raise BadLine(exc.line, f"{source.name}: {exc.message}") from None
        return index

    def _read(self, source: Source) -> None:
        if source.kind == "bank_opinions":  # each belief's evidence, with its words
            for number, line in enumerate(source.lines(), start=1):
                piece = _EVIDENCE.match(line)
                if piece:
                    evidence = self._fact(piece["text"], piece["id"], source, number)
                    evidence.kind = evidence.kind or "opinion"
                    if piece["day"]:
                        evidence.day = _moment(piece["day"], number)
            return
        kind = PurePosixPath(source.name).stem if source.kind == "bank_facts" else None
        for number, line in enumerate(source.lines(), start=1):
            if kind is not None:
                listed = _LISTED.match(line)
                if listed:
                    fact = self._fact(listed["text"], listed["id"], source, number)
                    fact.kind, fact.day = kind, _moment(listed["day"], number)
                continue
            current, past = _CURRENT.match(line), _PAST.match(line)
            found = current or past
            if found is None:
                continue
            fact = self._fact(found["text"], found["id"], source, number)
            fact.valid_from = _moment(found["since"], number)
            if past is not None:
                fact.superseded = True
                fact.valid_to = _moment(past["to"], number) if past["to"] else None

    def _fact(self, text: str, memory_id: str, source: Source, line: int) -> BankFact:
        fact = BankFact(memory_id, text, f"{source.name}:{line}")
        return self.facts.setdefault(content_key(text), fact)

    def new_pass(self) -> None:
        """An import reads its sources twice: each pass matches the memories afresh."""
        for fact in self.facts.values():
            fact.used = False

    def leftovers(self, source: Source, now: datetime) -> Iterator[Item]:
        """The memories `source` (a bank file) lists first that no other file of the folder
        held (a mirror's MEMORY.md keeps only what fits its word budget): each a core memory
        from the bank's line, with its id, kind, day and validity."""
        for fact in self.facts.values():
            if fact.used or not fact.where.startswith(f"{source.name}:"):
                continue
            kind = fact.kind or "world"
            day = fact.day or fact.valid_from or to_iso(now)
            name = PurePosixPath(source.name).name
            meta = {"imported_from": f"bank/{name}", "retain": kind}
            data = memory_fields(
                fact.text, _KIND_CATEGORY[kind], Layer.core, day, f"import:bank/{name}",
                metadata=meta,
            )  # fmt: skip
            data["occurred_at"] = day
            self.fill(data)
            yield Item("memory", fact.where, data)

    def fill(self, data: dict[str, Any]) -> None:
        """A memory item as another file of the folder read it, completed with its id, kind
        and validity from the bank (a memory the bank does not list is left as it is)."""
        content = data.get("content")
        fact = self.facts.get(content_key(content)) if isinstance(content, str) else None
        if fact is None:
            return
        fact.used = True
        data.setdefault("id", fact.id)
        if fact.day is not None and fact.day[:10] != _day_of(data):  # an undated mirror line
            data["occurred_at"] = fact.day
        if fact.kind is not None and _kind_of(data) != fact.kind:
            data["metadata"] = {**(data.get("metadata") or {}), "retain": fact.kind}
        if fact.valid_from is not None and fact.valid_from[:10] != _day_of(data):
            data["valid_from"] = fact.valid_from
        if fact.superseded:
            data["status"] = "superseded"
            data["valid_to"] = fact.valid_to


def _kind_of(data: dict[str, Any]) -> str | None:
    try:
        category = Category(str(data.get("category")))
    except ValueError:
        return None  # admission names the bad category
    metadata = data.get("metadata")
    return memory_kind(category, metadata if isinstance(metadata, dict) else {}).value


def _day_of(data: dict[str, Any]) -> str:
    moment = data.get("occurred_at") or data.get("created_at")
    return moment[:10] if isinstance(moment, str) else ""


# ---- an entity's page ----------------------------------------------------------------------


def read_entity_page(source: Source, now: datetime) -> Iterator[Item]:
    """bank/entities/<slug>.md as one entity item: its name (the title), kind (frontmatter),
    summary (the paragraph under the title), aliases and the memories its facts name."""
    del now
    entity: dict[str, Any] = {"name": "", "kind": "thing", "summary": "", "aliases": []}
    links: list[dict[str, Any]] = []
    section, where = "", source.name
    for number, line in enumerate(source.lines(), start=1):
        front = _FRONT_KIND.match(line)
        if front and not entity["name"]:
            entity["kind"] = front["kind"]
        elif line.startswith("# ") and not entity["name"]:
            entity["name"], where = line[2:].strip(), f"{source.name}:{number}"
        elif line.startswith("## "):
            section = line[3:].strip().casefold()
        elif not entity["name"] or not line.strip():
            continue
        elif section == "aliases":
            entity["aliases"].append(_alias(line, number))
        elif section in ("current facts", "history"):
            fact = (_CURRENT if section == "current facts" else _PAST).match(line)
            if fact is None:
                raise BadLine(number, "a fact reads `- text (since YYYY-MM-DD; memory:<id>)`")
            links.append({"memory_id": fact["id"], "role": fact["role"] or "subject"})
        elif not section:
            entity["summary"] = line.strip()
    if not entity["name"]:
        raise BadLine(None, "an entity page starts with its name as a `# ` title")
    yield Item("entity", where, {**entity, "links": links})


def _alias(line: str, number: int) -> dict[str, Any]:
    alias = _ALIAS.match(line)
    if alias is None:
        raise BadLine(
            number, "an alias reads `- alias (origin)` or `- alias (origin, said by Name)`"
        )
    return {"alias": alias["alias"], "origin": alias["origin"], "speaker": alias["speaker"]}


def read_nothing(source: Source, now: datetime) -> Iterator[Item]:
    """bank/world.md, bank/experience.md and bank/opinions.md bring no items of their own
    (their memories are the folder's other files'; `BankIndex` reads what they add)."""
    del source, now
    return iter(())
