"""The one way in: every importer's items pass the same rules and the same writer.

An import reads its sources twice. The first pass checks every item (the rules of
`admit.py`, ids other agents use, `superseded_by` targets, the agents the document names
against what the caller asked: `agents.py`) and writes nothing; one bad item refuses the whole
import with a message naming the item and the field. The second pass reads
again and writes in batches of a few thousand items per transaction, secrets redacted first.
Memory stays bounded by a batch (plus 8 bytes per memory id for the reference check), and an
import stopped half way is resumed by running it again: known ids and content are skipped.
"""

from __future__ import annotations

import array
import asyncio
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from cortex_mcp.engine.entities.linker import EntityLinker, Written, speaker_named
from cortex_mcp.engine.exchange.admit import Admission, BadItem, Renames, id_key, is_uuid
from cortex_mcp.engine.exchange.agents import Destination
from cortex_mcp.engine.exchange.bank import BankIndex
from cortex_mcp.engine.exchange.common import BadLine, Item
from cortex_mcp.engine.exchange.importers import read_items
from cortex_mcp.engine.exchange.sources import NOTHING, Source
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import new_id, to_iso
from cortex_mcp.store.imports import ImportCounts
from cortex_mcp.store.interfaces import ExportStorage

BATCH = 5000  # items per write transaction
YIELD_EVERY = 64  # items prepared between two chances for the batch in flight to proceed
LOOKUP_CHUNK = 500  # ids per ownership query
MAX_PROBLEMS_SHOWN = 1


class Progress(Protocol):
    def __call__(self, phase: str, done: int, total: int | None) -> Any: ...


@dataclass
class ImportReport:
    files: list[str] = field(default_factory=list)
    memories: int = 0
    relations: int = 0
    logs: int = 0
    existing: int = 0
    dropped_ids: int = 0  # ids of other agents' memories taken out of covers, before...
    from_agents: list[str] = field(default_factory=list)  # the agents the document names
    agents: dict[str, int] = field(default_factory=dict)  # agent written -> its new memories
    merged_into: str | None = None  # the agent several were merged into, when asked
    entities: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def add(self, counts: ImportCounts, agent: str | None = None) -> None:
        if agent is not None:
            self.agents[agent] = self.agents.get(agent, 0) + counts.memories
        self.memories += counts.memories
        self.relations += counts.relations
        self.logs += counts.logs
        self.existing += counts.existing
        self.dropped_ids += counts.dropped_ids


@dataclass
class ImportJob:
    """One import to the agents of `destination`: its sources and what it needs to check and
    write."""

    sources: list[Source]
    destination: Destination
    now: datetime
    max_content_chars: int
    store: ExportStorage
    redactor: Redactor
    progress: Progress | None = None
    linker: EntityLinker | None = None  # links each batch's memories to whom they name


class _Problem(Exception):
    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message, self.field = message, field


async def run_import(job: ImportJob) -> ImportReport:
    renames = Renames()
    try:
        bank = BankIndex.read(job.sources)
    except BadLine as exc:
        raise InvalidInput(exc.message, field="content") from None
    total, named, entities = await _check(job, renames, bank)
    if bank is not None:
        bank.new_pass()
    async with job.store.roomy_cache():
        report = await _write(job, renames, total, named, bank, link=not entities)
    report.from_agents = named
    if job.destination.mode == "merge":
        report.merged_into = job.destination.into
    return report


def _items(source: Source, now: datetime, bank: BankIndex | None) -> Iterator[Item]:
    """The source's items; a memory the bank/ folder lists takes what the bank says of it, and
    a bank file first brings the memories it lists that no other file held."""
    try:
        if bank is not None and source.kind.startswith("bank_"):
            yield from bank.leftovers(source, now)  # before the entity its page links them to
        for item in read_items(source, now):
            if bank is not None and item.kind == "memory":
                bank.fill(item.data)
            yield item
    except BadLine as exc:
        where = f"{source.name}:{exc.line}" if exc.line else source.name
        raise _Problem(f"{where}: {exc.message}", "content") from None


def _admit(admission: Admission, item: Item) -> Any:
    try:
        if item.kind == "memory":
            return admission.memory(item.data, item.where)
        if item.kind == "relation":
            return admission.relation(item.data, item.where)
        if item.kind == "entity":
            return admission.entity(item.data, item.where)
        return admission.log(item.data, item.where)
    except BadItem as exc:
        name = f"{item.label}.{exc.field}" if item.label else exc.field
        shown = name if item.label not in item.where else exc.field
        raise _Problem(f"{item.where}: {shown}: {exc.message}", name) from None


# ---- pass 1: check everything, write nothing ----------------------------------------------


async def _check(
    job: ImportJob, renames: Renames, bank: BankIndex | None
) -> tuple[int, list[str], bool]:
    """How many items there are, the agents they name (sorted), and whether they carry an
    export's entities with their links (then the rules do not link the import again)."""
    admission = Admission(job.destination, job.now, job.max_content_chars, renames, checking=True)
    seen = array.array("q")  # hashes of the document's (agent, memory id)
    targets: dict[tuple[str, str], Item] = {}  # (agent, superseded_by) -> the first naming it
    unchecked: list[tuple[str, str]] = []  # (document id, its agent): owner not known yet
    count, entities = 0, False
    try:
        for source in job.sources:
            for item in _items(source, job.now, bank):
                admitted = _admit(admission, item)
                count += 1
                entities = entities or (item.kind == "entity" and bool(item.data.get("links")))
                if item.kind == "memory":
                    agent = admitted["agent_id"]
                    key = _raw_key(item.data.get("id"))
                    if key is not None:
                        seen.append(hash((agent, key)))
                        if is_uuid(key):
                            unchecked.append((key, agent))
                    target = _raw_key(item.data.get("superseded_by"))
                    if target is not None:
                        first = Item(item.kind, item.where, {}, item.label)
                        targets.setdefault((agent, target), first)
                if len(unchecked) >= LOOKUP_CHUNK:
                    await _rename_foreign(job, unchecked, renames)
                if job.progress is not None:
                    job.progress("checking", count, None)
        await _rename_foreign(job, unchecked, renames)
        if not job.sources:
            raise _Problem(NOTHING, "path")
        named = sorted(admission.named)
        refusal = job.destination.refusal(named)
        if refusal is not None:
            raise refusal
        await _check_targets(job, targets, seen)
    except _Problem as problem:
        raise InvalidInput(problem.message, field=problem.field) from None
    return count, named, entities


def _raw_key(raw: Any) -> str | None:
    return id_key(raw) if isinstance(raw, str) and raw.strip() else None


async def _rename_foreign(job: ImportJob, keys: list[tuple[str, str]], renames: Renames) -> None:
    """Document ids a memory of another agent than theirs already uses get new ids (so do
    references to them)."""
    if keys:
        owners = await job.store.owners([key for key, _ in keys])
        for key, agent in keys:
            owner = owners.get(key)
            if owner is not None and owner != agent and key not in renames.memories:
                renames.memories[key] = new_id()
        keys.clear()


async def _check_targets(
    job: ImportJob, targets: dict[tuple[str, str], Item], seen: array.array[int]
) -> None:
    """Each `superseded_by` names a memory of this import or one its agent already has (the
    agent the memory naming it is written to)."""
    if not targets:
        return
    known = np.sort(np.frombuffer(seen, dtype=np.int64)) if len(seen) else np.zeros(0, np.int64)
    outside = []
    for pair in targets:
        position = np.searchsorted(known, hash(pair))
        if position >= len(known) or known[position] != hash(pair):
            outside.append(pair)
    mine: set[tuple[str, str]] = set()
    for start in range(0, len(outside), LOOKUP_CHUNK):
        chunk = [(a, t) for a, t in outside[start : start + LOOKUP_CHUNK] if is_uuid(t)]
        owners = await job.store.owners([t for _, t in chunk])
        mine |= {(a, t) for a, t in chunk if owners.get(t) == a}
    for pair in outside:
        if pair not in mine:
            target = pair[1]
            item = targets[pair]
            name = f"{item.label}.superseded_by" if item.label else "superseded_by"
            shown = name if item.label not in item.where else "superseded_by"
            raise _Problem(
                f"{item.where}: {shown}: {target[:40]!r} is neither a memory of this import"
                " nor one of this agent's",
                name,
            )


# ---- pass 2: write in batches -------------------------------------------------------------


class _Batch:
    def __init__(self) -> None:
        self.memories: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.entities: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self.memories) + len(self.relations) + len(self.logs) + len(self.entities)


async def _write(
    job: ImportJob,
    renames: Renames,
    total: int,
    named: list[str],
    bank: BankIndex | None,
    *,
    link: bool,
) -> ImportReport:
    """Read, check, redact and write again; a batch is written on the database's thread while
    the next one is prepared (SQLite does not hold the GIL while it works)."""
    admission = Admission(job.destination, job.now, job.max_content_chars, renames)
    cleaner = _Cleaner(job.redactor)
    # a log entry goes to whichever of these agents owns the memories it names
    agents = {job.destination.of(agent) for agent in named} | {job.destination.of(None)}
    writer = _Writer(job, total, frozenset(agents), link)
    batch = _Batch()
    try:
        for source in job.sources:
            writer.report.files.append(source.name)
            for count, item in enumerate(_items(source, job.now, bank), start=1):
                await _add(batch, _admit(admission, item), item, cleaner)
                if len(batch) >= BATCH:
                    await writer.send(batch)
                    batch = _Batch()
                elif count % YIELD_EVERY == 0:
                    await asyncio.sleep(0)  # the batch in flight takes its next step
        await writer.send(batch)
        await writer.drain()
    except _Problem as problem:  # the sources changed between the passes
        raise InvalidInput(problem.message, field=problem.field) from None
    finally:
        await writer.settle()
    return writer.report


class _Writer:
    """Writes batches in order, one at a time, each while the caller prepares the next."""

    def __init__(self, job: ImportJob, total: int, agents: frozenset[str], link: bool) -> None:
        self.job = job
        self.total = total
        self.agents = agents
        self.link = link  # a document that carries its entities' links is not linked again
        self.report = ImportReport()
        self.done = 0
        self._pending: asyncio.Task[None] | None = None

    async def send(self, batch: _Batch) -> None:
        await self.drain()
        self._pending = asyncio.create_task(self._store(batch))

    async def drain(self) -> None:
        """Wait for the batch in flight; its failure is raised here."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            await pending

    async def settle(self) -> None:
        """After a failure elsewhere: let the batch in flight finish (or fail) quietly."""
        if self._pending is not None:
            await asyncio.gather(self._pending, return_exceptions=True)
            self._pending = None

    async def _store(self, batch: _Batch) -> None:
        """One transaction per agent of the batch; its log entries with the last, when every
        memory they may name is written."""
        job = self.job
        groups: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        for row in batch.memories:
            groups.setdefault(row["agent_id"], ([], []))[0].append(row)
        for row in batch.relations:
            groups.setdefault(row["agent_id"], ([], []))[1].append(row)
        agents = list(groups) or [job.destination.of(None)]
        for n, agent in enumerate(agents):
            memories, relations = groups.get(agent, ([], []))
            logs = batch.logs if n == len(agents) - 1 else []
            counts = await job.store.import_batch(
                agent, memories, relations, logs, log_agents=self.agents
            )
            self.report.add(counts, agent if agent in groups else None)
        await self._entities(batch)
        self.done += len(batch)
        if job.progress is not None:
            job.progress("importing", self.done, self.total)

    async def _entities(self, batch: _Batch) -> None:
        """The batch's entities (an export's) and then the links the rules find in its memories,
        per agent."""
        job, now = self.job, to_iso(self.job.now)
        entities: dict[str, list[dict[str, Any]]] = {}
        for row in batch.entities:
            entities.setdefault(row["agent_id"], []).append(row)
        for agent, rows in entities.items():
            self.report.entities += await job.store.import_entities(agent, rows, now)
        if not self.link or job.linker is None:
            return
        items: dict[str, list[Written]] = {}
        for m in batch.memories:
            written = Written(
                m["id"],
                m["content"],
                speaker_named(m.get("metadata") or {}),
                at=m.get("occurred_at") or m.get("created_at"),
            )
            items.setdefault(m["agent_id"], []).append(written)
        for agent, memories in items.items():
            await job.linker.link(agent, memories, now)


async def _add(batch: _Batch, admitted: Any, item: Item, cleaner: _Cleaner) -> None:
    """Into the batch, secrets redacted in every text it stores: a memory's content, source and
    metadata, a relation's texts (read together), an audit entry's details."""
    redactor = cleaner.redactor
    if item.kind == "memory":
        batch.memories.append(await cleaner.memory(admitted))
    elif item.kind == "entity":
        batch.entities.append(await cleaner.entity(admitted))
    elif item.kind == "relation":
        triple = await redactor.clean_relation(
            admitted["subject"], admitted["predicate"], admitted["object"]
        )
        admitted.update(zip(("subject", "predicate", "object"), triple, strict=True))
        batch.relations.append(admitted)
    else:
        if admitted.get("details") is not None:
            admitted["details"] = await redactor.clean_json(admitted["details"])
        batch.logs.append(admitted)


class _Cleaner:
    """Redacts the memories of one import. A memory's source and metadata values repeat across
    thousands of items (`import:MEMORY.md`, `{"imported_from": "MEMORY.md"}`): one found clean
    once is clean every time (redaction depends on the text alone, and a metadata value on its
    key too), so only its first occurrence is read. Texts with a secret are redacted (and
    counted) every time; content is always read."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._clean: set[str | tuple[str, str]] = set()

    async def entity(self, row: dict[str, Any]) -> dict[str, Any]:
        """An entity's name, summary and aliases redacted (a name is stored as a memory is)."""
        clean = self.redactor.clean
        aliases = [{**a, "alias": await clean(a["alias"])} for a in row["aliases"]]
        summary = await clean(row["summary"]) if row["summary"] else ""
        return {**row, "name": await clean(row["name"]), "summary": summary, "aliases": aliases}

    async def memory(self, row: dict[str, Any]) -> dict[str, Any]:
        source, metadata = row.get("source"), row.get("metadata")
        entries = _text_entries(metadata)
        fields: dict[str, Any] = {"content": row["content"]}
        if source is not None and source not in self._clean:
            fields["source"] = source
        if entries is None or not self._clean.issuperset(entries):
            fields["metadata"] = metadata
        cleaned = await self.redactor.clean_memory(fields)
        if len(self._clean) < _MAX_REMEMBERED:
            if "source" in fields and cleaned["source"] == source and len(source) < 500:
                self._clean.add(source)
            if "metadata" in fields and entries is not None and cleaned["metadata"] == metadata:
                self._clean.update(entry for entry in entries if len(entry[1]) < 500)
        return row if cleaned is fields else {**row, **cleaned}


_MAX_REMEMBERED = 10_000  # distinct clean texts kept per import


def _text_entries(metadata: Any) -> list[tuple[str, str]] | None:
    """A flat metadata object's (key, text value) pairs; None when it holds anything nested
    (read whole every time)."""
    if not metadata:
        return []
    entries = []
    for key, value in metadata.items():
        if not isinstance(key, str):
            return None
        if isinstance(value, str):
            entries.append((key, value))
        elif not isinstance(value, int | float | None):
            return None
    return entries
