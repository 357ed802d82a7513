"""The agent's entity names, links and linked memories as the store last gave them, kept until
the store changes.

A question that names someone needs the entities its names are keys of, the memories linked to
them and the few of those the channels missed: three reads of the store per question, one of
hundreds of rows for a person who speaks in every session (on LoCoMo's conversations they took
half of a search's time). Questions keep naming the same few people, so all three are kept
here, per agent, and read again only after the store's change counter moved: this process's
commits (counted in memory), or another process's (`data_version`, a trip to the store at most
every `RECHECK_S`). Any commit empties the cache (a link, an alias, a forget, a merge, an
import): never a stale link, at the price of reading again after writes; but a commit that
said it changed no entity's name or alias (`DatabaseHandle.names_changes`: a remembered
memory, its links to entities known already, the slots and beliefs a recall settles) keeps
the agent's names and aliases, so a conversation that remembers every turn does not read
them again for each question. The access counts recalls leave (once a second, so before
every question a person asks) empty only the memories read, whose counts weigh in their
rank: the names and links stay."""

from __future__ import annotations

import bisect
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cortex_mcp.models import (
    ROLE_STRENGTH,
    EntityKind,
    EntityMatch,
    LinkRole,
    Memory,
    from_iso,
)
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import EntityStorage, MemoryStorage
from cortex_mcp.tokenize import about_the_listener

# How often another process's commits are looked for (`data_version`, a trip to the store); this
# process's own are seen at once. A link another process makes is found at most this late.
RECHECK_S = 0.25
MAX_AGENTS = 64  # agents kept; the least recently asked goes first
MAX_KEYS = 4096  # names looked up per agent (misses included) before its table starts over
# An agent with at most this many names and aliases has them all read in one go, so that a
# question naming someone new (or nobody: every Chinese or Japanese run is looked up) reads
# nothing; past it (a trip costs as much as ~1,000 rows) each question's keys are looked up.
MAX_NAME_ROWS = 1000
MAX_ENTITIES = 256  # entities whose links are kept per agent before they start over
MAX_MEMORIES = 4096  # linked memories kept per agent before they start over


@dataclass
class Links:
    """One entity's live linked memories, speakers and subjects first, then the newest; and
    those it said or is the subject of in time order (`occurred_at` as seconds), to find
    what it said around a moment."""

    ordered: list[tuple[str, LinkRole]]
    roles: dict[str, LinkRole]
    moments: list[tuple[float, str]]
    beside: dict[str, set[EntityKind]] = field(default_factory=dict)  # kinds named beside it

    @classmethod
    def of(cls, rows: list[tuple[str, str, LinkRole, str]]) -> Links:
        ordered = [(memory_id, role) for memory_id, _, role, _ in rows]
        own = (LinkRole.speaker, LinkRole.subject)
        moments = sorted(
            (from_iso(at).timestamp(), memory_id)
            for memory_id, _, role, at in rows
            if role in own and at
        )
        return cls(ordered, dict(ordered), moments)

    def around(self, at: float, window_s: float) -> list[str]:
        """The nearest memory before the moment `at` and the nearest after it (not at it),
        each within `window_s`."""
        i = bisect.bisect_left(self.moments, (at, ""))
        j = bisect.bisect_right(self.moments, (at, "\uffff"))
        found = []
        if i > 0 and at - self.moments[i - 1][0] <= window_s:
            found.append(self.moments[i - 1][1])
        if j < len(self.moments) and self.moments[j][0] - at <= window_s:
            found.append(self.moments[j][1])
        return found


# the linked memories in order, those of the kind asked for, and all of them (`AgentView.ordered`)
Order = tuple[list[str], set[str], frozenset[str]]


@dataclass
class Vectors:
    """The vectors of a list of memories (rows of `matrix`), for one model."""

    ids: list[str]
    matrix: np.ndarray


@dataclass
class MemoryTexts:
    """What the stage reads in the text of a memory, kept by memory id (a memory's text is the
    same until the store changes): whether it is a line about the listener, and its casefolded
    text (for the names a question says)."""

    listener: dict[str, bool] = field(default_factory=dict)
    casefolded: dict[str, str] = field(default_factory=dict)

    def to_listener(self, memory_id: str, content: str) -> bool:
        known = self.listener.get(memory_id)
        if known is None:
            if len(self.listener) >= MAX_MEMORIES:
                self.listener.clear()
            known = self.listener[memory_id] = about_the_listener(content)
        return known

    def folded(self, memory_id: str, content: str) -> str:
        known = self.casefolded.get(memory_id)
        if known is None:
            if len(self.casefolded) >= MAX_MEMORIES:
                self.casefolded.clear()
            known = self.casefolded[memory_id] = content.casefold()
        return known


@dataclass
class AgentView:
    """One agent's cached reads, valid until the store's next change."""

    agent_id: str
    entities: EntityStorage
    keys: dict[str, list[EntityMatch]] = field(default_factory=dict)
    # every key of the agent's names and aliases (None: not read yet, or too many to keep)
    names: dict[str, list[EntityMatch]] | None = None
    names_read: bool = False
    links_of: dict[str, Links] = field(default_factory=dict)
    memories: dict[str, Memory | None] = field(default_factory=dict)  # None: not live
    # memory id -> the memories within `span` places of it in the agent's live timeline, for
    # each memory a read around a match showed all of those of (`next_to`)
    turns: dict[str, frozenset[str]] = field(default_factory=dict)
    texts: MemoryTexts = field(default_factory=MemoryTexts)
    vectors: dict[tuple[tuple[str, ...], str], Vectors] = field(default_factory=dict)
    orders: dict[tuple[tuple[str, ...], frozenset[EntityKind]], Order] = field(default_factory=dict)
    strengths: dict[tuple[str, ...], tuple[list[str], frozenset[str]]] = field(default_factory=dict)
    # what the links lift each memory by, when that is no share of its relevance (text only),
    # per (entities, kinds asked for, lifts, the entities of a page): `lifted`
    lifts: dict[tuple[object, ...], dict[str, float]] = field(default_factory=dict)

    def ordered(self, links: dict[str, Links], kinds: frozenset[EntityKind] = frozenset()) -> Order:
        """Every memory linked to these entities once: those of their own (speaker or subject)
        that name an entity of one of `kinds` beside them first, then speakers and subjects,
        then in each entity's order (the newest first); the set of those first ones; and the
        set of them all."""
        key = (tuple(links), kinds)
        known = self.orders.get(key)
        if known is None:
            order, linked = self._by_strength(links)
            fitting: set[str] = set()
            for found in links.values() if kinds else ():
                for memory_id, there in found.beside.items():
                    role = found.roles.get(memory_id)
                    if role is not None and role is not LinkRole.mentioned and there & kinds:
                        fitting.add(memory_id)
            if fitting:  # those first, each part in the order by strength
                order = [m for m in order if m in fitting] + [m for m in order if m not in fitting]
            known = self.orders[key] = (order, fitting, linked)
            if len(self.orders) > MAX_ENTITIES:
                self.orders.pop(next(iter(self.orders)))
        return known

    def _by_strength(self, links: dict[str, Links]) -> tuple[list[str], frozenset[str]]:
        """Every memory linked to these entities once, speakers and subjects first, then in
        each entity's order; and the set of them (kept per entities: the kinds a question
        asks for only move some of them first)."""
        key = tuple(links)
        known = self.strengths.get(key)
        if known is None:
            strength: dict[str, int] = {}
            for found in links.values():
                for memory_id, role in found.ordered:
                    strength[memory_id] = max(strength.get(memory_id, 0), ROLE_STRENGTH[role])
            order = sorted(strength, key=strength.__getitem__, reverse=True)  # stable
            known = self.strengths[key] = (order, frozenset(strength))
            if len(self.strengths) > MAX_ENTITIES:
                self.strengths.pop(next(iter(self.strengths)))
        return known

    def names_only(self) -> AgentView:
        """A view that keeps only these names and aliases (after a write that changed none)."""
        return AgentView(
            self.agent_id, self.entities, self.keys, names=self.names, names_read=self.names_read
        )

    def lifted(self, key: tuple[object, ...]) -> dict[str, float]:
        """Memory id -> its links' lift, for one way of lifting (`key`), as worked out so far:
        a memory's lift is the same until the store changes (its links, and its text)."""
        known = self.lifts.get(key)
        if known is None:
            known = self.lifts[key] = {}
            if len(self.lifts) > MAX_ENTITIES:
                self.lifts.pop(next(iter(self.lifts)))
        return known

    def kept_matches(self, keys: Sequence[str]) -> list[EntityMatch] | None:
        """`matches` when it needs no read (None: it does)."""
        if self.names_read and self.names is not None:
            return [m for key in dict.fromkeys(keys) if key for m in self.names.get(key, ())]
        if not self.names_read or any(key not in self.keys for key in keys):
            return None
        return [match for key in dict.fromkeys(keys) for match in self.keys[key]]

    async def matches(self, keys: Sequence[str]) -> list[EntityMatch]:
        """`EntityStorage.find_entities`: from all of the agent's names and aliases, read once
        when there are at most `MAX_NAME_ROWS`, else reading only the keys not known yet."""
        if not self.names_read:
            self.names = _by_key(await self.entities.entity_keys(self.agent_id, MAX_NAME_ROWS))
            self.names_read = True
        if self.names is not None:
            return [m for key in dict.fromkeys(keys) if key for m in self.names.get(key, ())]
        wanted = list(dict.fromkeys(keys))
        known = {key: self.keys[key] for key in wanted if key in self.keys}
        missing = [key for key in wanted if key not in known]
        if missing:
            found: dict[str, list[EntityMatch]] = {key: [] for key in missing}
            for match in await self.entities.find_entities(self.agent_id, missing):
                found.setdefault(match.key, []).append(match)
            if len(self.keys) + len(found) > MAX_KEYS:
                self.keys.clear()
            self.keys.update(found)
            known.update(found)
        return [match for key in wanted for match in known.get(key, [])]

    def kept_links(self, entity_ids: Sequence[str]) -> dict[str, Links] | None:
        """`links` when it needs no read (None: it does)."""
        kept = self.links_of
        if any(e not in kept for e in entity_ids):
            return None
        return {e: kept[e] for e in dict.fromkeys(entity_ids)}

    async def links(self, entity_ids: Sequence[str], limit: int) -> dict[str, Links]:
        """Each entity's links (at most `limit` each), reading only those not known yet."""
        wanted = list(dict.fromkeys(entity_ids))
        known = {e: self.links_of[e] for e in wanted if e in self.links_of}
        missing = [e for e in wanted if e not in known]
        read = await self.entities.links_and_kinds(self.agent_id, missing, limit) if missing else {}
        for entity_id in missing:
            found = Links.of(read[entity_id].moments)
            found.beside = read[entity_id].beside
            known[entity_id] = found
            if len(self.links_of) >= MAX_ENTITIES:
                self.links_of.clear()
            self.links_of[entity_id] = found
        return known

    async def next_to(
        self,
        anchors: Sequence[tuple[Memory, list[str]]],
        span: int,
        memories: MemoryStorage | None = None,
        wanted: Sequence[str] = (),
    ) -> dict[str, set[str]]:
        """For each (memory, ids of the agent's live memories): those ids among the `span`
        live memories of the agent right before or after the memory (`turns_around`). What a
        read showed is kept: each read reaches `2 * span` places each side, so it shows the
        whole neighbourhood of the memories within `span` of the anchor too, and a memory is
        next to another exactly when that one is next to it (most questions then read none).
        A read of the turns also reads the memories of `wanted` not kept yet, in the same trip
        to the store (`read` then finds them)."""
        near: dict[str, set[str]] = {}
        unknown: list[tuple[Memory, list[str]]] = []
        for anchor, found in anchors:
            known = self._known_next_to(anchor, found)
            if known is None:
                unknown.append((anchor, found))
            else:
                near[anchor.id] = known
        if not unknown:
            return near
        moments = [(a.id, a.occurred_at) for a, _ in unknown]
        missing = [i for i in dict.fromkeys(wanted) if i not in self.memories]
        if memories is not None and missing and span > 0:
            timeline = self.entities.timeline_read(self.agent_id, moments, 2 * span)
            around, rows = await self.entities.db.read_both(timeline, memories.reused_read(missing))
            self._keep({i: rows.get(i) for i in missing})
        else:
            around = await self.entities.timeline_around(self.agent_id, moments, 2 * span)
        for anchor, found in unknown:
            before, after = around.get(anchor.id, ([], []))
            beside = {*before[:span], *after[:span]}
            near[anchor.id] = {memory_id for memory_id in found if memory_id in beside}
            self._learn(anchor, before, after, span)
        return near

    def _own(self, memory: Memory) -> bool:
        """Whether the memory has a place in the agent's live timeline."""
        return (
            memory.agent_id == self.agent_id
            and memory.forgotten_at is None
            and memory.superseded_by is None
        )

    def _known_next_to(self, anchor: Memory, found: list[str]) -> set[str] | None:
        """`next_to` for one anchor from what reads showed (None: not known)."""
        if not self._own(anchor):
            return None
        mine = self.turns.get(anchor.id)
        if mine is not None:
            return {memory_id for memory_id in found if memory_id in mine}
        near = set()
        for memory_id in found:
            theirs = self.turns.get(memory_id)
            if theirs is None:
                return None
            if anchor.id in theirs:
                near.add(memory_id)
        return near

    def _learn(self, anchor: Memory, before: list[str], after: list[str], span: int) -> None:
        """Keep the neighbourhood of every memory of the run of the timeline a read showed
        whose `span` places each side it showed (or the timeline ends there)."""
        run = [*reversed(before), *([anchor.id] if self._own(anchor) else []), *after]
        starts = len(before) < 2 * span  # nothing before the first memory read
        ends = len(after) < 2 * span
        if len(self.turns) + len(run) > MAX_MEMORIES:
            self.turns.clear()
        for n, memory_id in enumerate(run):
            if (n >= span or starts) and (n + span < len(run) or ends):
                self.turns[memory_id] = frozenset(
                    run[max(n - span, 0) : n] + run[n + 1 : n + span + 1]
                )

    async def read(self, ids: Sequence[str], memories: MemoryStorage) -> dict[str, Memory]:
        """The live memories among `ids`, reading only those not read yet."""
        wanted = list(dict.fromkeys(ids))
        known = {i: self.memories[i] for i in wanted if i in self.memories}
        missing = [i for i in wanted if i not in known]
        if missing:
            rows = await memories.get_many(missing, reuse=True)
            read = {i: rows.get(i) for i in missing}
            self._keep(read)
            known.update(read)
        return {i: m for i, m in known.items() if m is not None}

    def _keep(self, read: dict[str, Memory | None]) -> None:
        """Keep memories read (None: not live)."""
        if len(self.memories) + len(read) > MAX_MEMORIES:
            self.memories.clear()
        self.memories.update(read)

    async def vectors_of(
        self, ids: list[str], model_key: str, dim: int, index: VectorIndex
    ) -> Vectors:
        """The vectors the index holds for `ids` (those it lacks left out)."""
        key = (tuple(ids), model_key)
        known = self.vectors.get(key)
        if known is None:
            found = await index.vectors_for(ids, model_key, dim, refresh=False)
            rows = [i for i in ids if i in found]
            matrix = np.stack([found[i] for i in rows]) if rows else np.zeros((0, dim), np.float32)
            known = self.vectors[key] = Vectors(rows, matrix)
            if len(self.vectors) > MAX_ENTITIES:
                self.vectors.pop(next(iter(self.vectors)))
        return known


def _by_key(matches: list[EntityMatch] | None) -> dict[str, list[EntityMatch]] | None:
    """Matches per key, by name before by alias (as `find_entities` gives them)."""
    if matches is None:
        return None
    found: dict[str, list[EntityMatch]] = {}
    for match in sorted(matches, key=lambda m: m.by != "name"):
        found.setdefault(match.key, []).append(match)
    return found


class EntityCache:
    def __init__(self, entities: EntityStorage) -> None:
        self.entities = entities
        self._version: tuple[int, int] | None = None  # (changes, data_version) last seen
        self._commits = -1  # this process's commits last seen (access counts included)
        self._names = -1  # this process's commits that changed a name or alias, last seen
        self._checked = float("-inf")  # when `data_version` was last read (monotonic seconds)
        self._agents: OrderedDict[str, AgentView] = OrderedDict()

    async def view(self, agent_id: str) -> AgentView:
        """The agent's cached reads, emptied first when the store changed since the last call
        (the counter is read before anything the view reads: a change meanwhile empties it on
        the next call)."""
        db = self.entities.db
        other = self._version[1] if self._version is not None else -1
        if time.monotonic() - self._checked >= RECHECK_S:
            other = await db.data_version()
            self._checked = time.monotonic()
        return self._settled(agent_id, other)

    def kept_view(self, agent_id: str) -> AgentView | None:
        """`view` when it needs no trip to the store (None: another process's commits are due
        to be looked for)."""
        if self._version is None or time.monotonic() - self._checked >= RECHECK_S:
            return None
        return self._settled(agent_id, self._version[1])

    def _settled(self, agent_id: str, other: int) -> AgentView:
        """The agent's view, after what changed since the last call (`other`: the store's
        `data_version`, as last read) emptied what it had to."""
        db = self.entities.db
        version = (db.changes, other)
        if version != self._version:
            names_stand = (
                self._version is not None
                and other == self._version[1]
                and db.names_changes == self._names
            )
            self._version = version
            if names_stand:  # what changed names no one new: the names and aliases stay
                for agent, kept in self._agents.items():
                    self._agents[agent] = kept.names_only()
            else:
                self._agents.clear()
        elif db.commits != self._commits:  # only access counts were written since
            for kept in self._agents.values():
                kept.memories.clear()
        self._commits = db.commits
        self._names = db.names_changes
        view = self._agents.get(agent_id)
        if view is None:
            view = self._agents[agent_id] = AgentView(agent_id, self.entities)
            if len(self._agents) > MAX_AGENTS:
                self._agents.popitem(last=False)
        else:
            self._agents.move_to_end(agent_id)
        return view
