"""Entity: the memories linked to the person, pet or place a query names rank higher.

The names and alias phrases a question names ("What are Maya's hobbies?" -> Maya, "what does my
sister do?" -> my sister, "我表弟的老家在哪里" -> 我表弟) are looked up among the agent's
entities by their normalised key (`tokenize.normalize_name`): a canonical name, else an alias
that fits exactly one entity. An alias that fits several is ambiguous: it lifts nothing and the
debugger lists its candidates (never a guess).

The memories linked to the entities found, as speaker or subject (`BOOST`) or merely mentioned
(`MENTIONED`; less of both with a query vector), have that added to their fused relevance before the signals multiply it, as the
time stage adds its window: a boost, not a filter. A fact about someone rarely repeats their
name ("I took up climbing", said by the friend everyone calls Maya): every link lifts, an old
memory as much as a new one, and the best few linked memories the channels did not bring (by
cosine when there is a query vector) become candidates too. (Searching the question again
without its names found nothing more on LoCoMo's tuning conversations and cost a third
database read.) The names, links and memories read are kept until the store changes
(`entity_cache.py`): a question about someone already asked about reads nothing.

A question that asks for several things about the entity ("what are X's hobbies", "names of X's
pets", "what activities has X done", "X有哪些爱好") spreads its first places over the days the
entity's memories come from: past `FREE_PER_DAY` picks from one day, each further one weighs
`SPREAD` times less, so ten near-copies of one afternoon do not hide what was said in other
months. (Measured on LoCoMo's multi-hop questions, a stronger spread costs recall: their
evidence is often several turns of one session.)"""

from __future__ import annotations

import asyncio
import enum
import functools
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cortex_mcp.models import EntityKind, EntityMatch, LinkRole, Memory, from_iso
from cortex_mcp.search.fusion import Candidate, apply_signals, fill_cosines, fuse, fuse_added
from cortex_mcp.search.stages.entity_cache import AgentView, EntityCache, Links, MemoryTexts
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import EntityStorage, MemoryStorage
from cortex_mcp.tokenize import normalize_name, one_question

# What a link adds to a memory's fused relevance (0..1): as speaker or subject, and as a mere
# mention. Text only, the lift is what finds a fact that never repeats the name (LoCoMo's tuning
# conversations: multi-hop R@10 0.340 without, 0.396-0.409 at 0.5). With vectors every memory has
# a relevance of its own and a link adds that share of it (`SHARE_WITH_VECTORS`): the entity
# makes a relevant memory more relevant, not every memory it said relevant. A fixed lift there
# crowded out the other speaker's answers (0.456 without a lift, 0.437 at 0.3, 0.417 at 0.5); the
# share took the tuning conversations' multi-hop R@10 from 0.444 (a fixed 0.1) to 0.469.
BOOST = 0.5
MENTIONED = 0.2
SHARE_WITH_VECTORS = True
PAGE_BOOST = 1.0  # the entity a page is about (`about`, "tell me about X"): its memories lead
# On a page, a memory that only mentions the entity, or that is one question ("旺财最近还好吗？",
# asked by the page's person about someone else), tells less about it than what it said or
# did: they get these shares of the page's lift (alias sets' pages: a display name's page showed
# its own questions about the other speaker's dog before what it said it does).
PAGE_MENTION_SHARE = MENTIONED / BOOST
PAGE_QUESTION_SHARE = 0.5
FREE_PER_DAY = 4  # picks from one day before SPREAD weighs further ones down
SPREAD = 0.5  # the weight of each further pick from a day already chosen, for a "several" question
LINKED = 2000  # most links read per question: every link lifts, an old memory as much as a new one
UNMATCHED = 5  # linked memories added that match no word of the question
# and for a question after several things ("what are Maya's hobbies?"), whose answers are the
# entity's own memories that match no word of it (alias sets' tuning chats: multi R@10 en 0.82
# -> 0.85, zh 0.87 -> 1.00, ja 0.88 -> 1.00; LoCoMo tuning multi-hop unchanged, 0.460)
UNMATCHED_SEVERAL = 10
ANCHORS = 5  # the best matches whose neighbourhood is searched for the entity's own words
KIND_LIFT = 0.2  # more for a memory that also names the kind of thing asked for (as a mention)
NEAR = 0.5  # the share of a match's relevance lent to the entity's turn right before or after it
AROUND_S = 600.0  # how far from a match that turn may be (the same part of one conversation)
TURNS = 2  # and how many memories away from it, either side
# A question after one fact ("张伟在哪里工作?"): a memory that matches its words at least this
# share of the best match keeps its place above every memory that matches less, whatever the
# entity lifts those by (`_keep_strong`).
STRONG = 0.8
# With a query vector, the share of a memory's relevance the entity's own link adds for a question
# after several things ("what are Maya's hobbies?"): their answers are what the entity said
# itself, spread over months, each matching the question less than its one best answer does
# (LoCoMo tuning conversations, all-MiniLM-L6-v2: multi-hop R@10 0.529 at 0.5, 0.562 at 0.8,
# 0.564 at 1.0; all evidence in the top 10 0.270 -> 0.297; single-hop 0.887 -> 0.882).
SEVERAL_SHARE = 0.8

# A question after several things: a plural list ("hobbies", "pets", "names", "activities",
# "books"), "what ... has X done/made", "both", "how many"; 哪些/有什么 in Chinese; 趣味/どんな
# ...たち in Japanese. A single fact ("where does Anna live?") is not spread.
_SEVERAL = re.compile(
    r"\b(?:what|which)\s+(?:[\w+/-]+\s+){0,3}?[a-z]+(?<!s)s\b(?!\s+(?:is|was)\b)"
    r"|\b(?:what|which)\s+(?:are|were)\b|\bnames?\b|\bboth\b|\bhow\s+many\b|\bwhat\s+(?:has|have)\b"
    r"|\b(?:activities|hobbies|interests|things|events|places|pets|kids|children)\b"
    r"|哪些|有什么|什么爱好|爱好|趣味|たち|何をして",
    re.IGNORECASE,
)

# What a question asks for, by the kind of entity a memory that answers it names beside the
# entity the question is about.
_ASKED = {
    EntityKind.place: re.compile(
        r"\b(?:where|countr(?:y|ies)|states?|cit(?:y|ies)|towns?|places?|areas?)\b"
        r"|哪里|哪儿|什么地方|哪些地方|城市|国家|どこ|都市|国",
        re.IGNORECASE,
    ),
    EntityKind.person: re.compile(
        r"\b(?:who|whom|people|persons?|children|kids|sons?|daughters?|siblings|friends?)\b"
        r"|谁|哪些人|什么人|孩子|朋友|誰|どんな人|子供|友達",
        re.IGNORECASE,
    ),
    EntityKind.pet: re.compile(
        r"\b(?:pets?|dogs?|cats?|pupp(?:y|ies)|kittens?)\b|宠物|狗|猫|ペット|犬",
        re.IGNORECASE,
    ),
}

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
NAMES_KEPT = 1024  # questions whose names are kept (the linking rules' answer for each)
_GRAM = 5  # the longest run looked up as a name (Chinese names are 2-4, katakana ones longer)

NamesOf = Callable[[str], Sequence[str]]  # a query -> the names and alias phrases it names
FormsOf = Callable[[str], Sequence[str]]  # a name -> the keys of its other forms ("bea" -> ...)


def no_forms(name: str) -> Sequence[str]:
    return ()


class _NotKept(enum.Enum):
    """What the cache keeps does not answer: the store must be read."""

    NOT_KEPT = enum.auto()


_NOT_KEPT = _NotKept.NOT_KEPT


@dataclass
class Understood:
    """What the stage made of the query's names, as the search debugger shows it."""

    names: list[str] = field(default_factory=list)
    entities: dict[str, str] = field(default_factory=dict)  # entity id -> name
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # phrase -> candidates' names
    several: bool = False
    found: list[str] = field(default_factory=list)  # the phrases of the query that named one
    topic: str | None = None  # the question without its names, when the ranking used it

    def facts(self, linked: int, added: int) -> dict[str, object]:
        return {
            "names": self.names,
            "entities": [{"id": i, "name": n} for i, n in self.entities.items()],
            "ambiguous": self.ambiguous,
            "spread_over_days": self.several and bool(self.entities),
            "linked_memories": linked,
            "candidates_added": added,
            "ranked_by": self.topic,
        }


@dataclass(frozen=True)
class _Reading:
    """What the query alone says (kept per query text: a question asked again is not read
    again): the names the rules find, every key looked up (normalised name -> the phrase of
    the query; not to be changed), whether it has Chinese or Japanese, whether it asks for
    several things, and the kinds of entity it asks for."""

    names: tuple[str, ...]
    keys: dict[str, str]
    cjk: bool
    several: bool
    kinds: frozenset[EntityKind]
    # other forms of the English given names it says ("beatrice" -> "Bea"), asked with the keys:
    # a name that no entity has, nor alias, is the one person known by one of them
    forms: dict[str, str]

    def asked(self) -> list[str]:
        return [*self.keys, *(key for key in self.forms if key not in self.keys)]


@dataclass
class _Named:
    """What the query names: its names, the entities they resolve to and their links."""

    names: list[str]
    understood: Understood
    view: AgentView
    links: dict[str, Links]


class EntityStage:
    name = "entity"

    def __init__(
        self,
        entities: EntityStorage,
        names_of: NamesOf,
        memories: MemoryStorage,
        index: VectorIndex,
        forms_of: FormsOf = no_forms,
    ) -> None:
        self.entities = entities
        self.forms_of = forms_of
        self.cache = EntityCache(entities)
        # the rules read the query alone (no store): a question asked again is not read again
        self.names_of = functools.lru_cache(maxsize=NAMES_KEPT)(names_of)
        self.read = functools.lru_cache(maxsize=NAMES_KEPT)(self._read)
        self.memories = memories
        self.index = index

    def _read(self, text: str) -> _Reading:
        names = tuple(dict.fromkeys(self.names_of(text)))
        keys = {normalize_name(name): name for name in names}
        for gram in _cjk_grams(text):  # a known name the rules cannot see: 丽丽, 豆豆
            keys.setdefault(normalize_name(gram), gram)
        forms = {form: name for name in names for form in self.forms_of(name)}
        return _Reading(
            names,
            keys,
            bool(_CJK.search(text)),
            bool(_SEVERAL.search(text)),
            _asked_kinds(text),
            forms,
        )

    def begin(self, state: SearchState) -> None:
        """Look up what the query names while the channels search: it needs only the query,
        and its reads (names, links) then overlap theirs instead of following them. When all
        it needs is kept (`entity_cache`), it is worked out at once, with no task."""
        kept = self._kept(state)
        if kept is not _NOT_KEPT:
            state.ready[self.name] = kept
            return
        state.started[self.name] = asyncio.create_task(
            self._named(state), name="cortex-entity-names"
        )

    def _asked(self, state: SearchState) -> tuple[_Reading, str, Understood] | None:
        """The query's reading, the agent asking, and what the query is understood to ask so
        far (its names, the entities the caller named); None when nothing in it can name one."""
        reading = self.read(state.text)
        agent = state.filters.agent_id
        if not (reading.names or state.entities or reading.cjk) or agent is None:
            return None
        understood = Understood(names=list(reading.names), several=reading.several)
        understood.entities.update(state.entities)
        return reading, agent, understood

    def _kept(self, state: SearchState) -> _Named | _NotKept | None:
        """`_named` from what the cache keeps, or `_NOT_KEPT` when that needs the store."""
        started = time.perf_counter()
        asked = self._asked(state)
        if asked is None:
            return None
        reading, agent, understood = asked
        names = understood.names
        view = self.cache.kept_view(agent)
        if view is None:
            return _NOT_KEPT
        keys = reading.keys
        if keys:
            matches = view.kept_matches(reading.asked())
            if matches is None:
                return _NOT_KEPT
            _resolve(matches, reading, understood)
            understood.names = list(dict.fromkeys([*names, *understood.found]))
        links = view.kept_links(list(understood.entities)) if understood.entities else {}
        if links is None:
            return _NOT_KEPT
        state.timings_ms["entity_names"] = round((time.perf_counter() - started) * 1000, 3)
        return _Named(names, understood, view, links)

    async def _named(self, state: SearchState) -> _Named | None:
        """The names the query says, the entities they resolve to and those entities' links
        (None: nothing in the query can name one)."""
        started = time.perf_counter()
        asked = self._asked(state)
        if asked is None:
            return None
        reading, agent, understood = asked
        names = understood.names
        keys = reading.keys
        view = await self.cache.view(agent)
        if keys:
            _resolve(await view.matches(reading.asked()), reading, understood)
            understood.names = list(dict.fromkeys([*names, *understood.found]))
        links = await view.links(list(understood.entities), LINKED) if understood.entities else {}
        state.timings_ms["entity_names"] = round((time.perf_counter() - started) * 1000, 3)
        return _Named(names, understood, view, links)

    async def run(self, state: SearchState) -> None:
        early = state.started.pop(self.name, None)
        named: _Named | None
        if self.name in state.ready:
            named = state.ready.pop(self.name)
        else:
            named = await early if early is not None else await self._named(state)
        if named is None:
            return
        names, understood, view, links = named.names, named.understood, named.view, named.links
        if not understood.entities:
            state.facts["entity"] = understood.facts(0, 0)
            return
        if (
            state.topic_vector is not None
            and not state.entities
            and set(names) <= set(understood.found)
        ):
            understood.topic = state.topic_text
            await self._ask_topic(state, state.topic_vector)
        for entity_id, found in links.items():
            state.entity_links[entity_id] = found.roles.keys()
        kinds = self.read(state.text).kinds
        lifts = _lifts(state, understood.several)
        lift = _Lift(links, *view.ordered(links, kinds), lifts, state.entities, view.texts)
        if not _shares(state):  # each memory's lift then is the same for the next question
            lift.kept = view.lifted((tuple(links), kinds, *lifts.items(), *state.entities))
        said = [*names, *understood.entities.values()]
        count = UNMATCHED_SEVERAL if understood.several else UNMATCHED
        known = {c.memory_id for c in state.candidates}
        picked = await self._picks(state, view, lift, known, count)
        near = await self._around(state, links, view, known, picked)
        added = await self._add(state, view, known, picked, near, count)
        self._score(state, lift, said, near, added=added)
        if not (understood.several or state.entities):
            _keep_strong(state)
        if understood.several:
            state.candidates = _spread(state.candidates, state.limit)
        state.facts["entity"] = understood.facts(lift.linked(), added)

    async def _ask_topic(self, state: SearchState, topic: np.ndarray) -> None:
        """Rank by what the question asks about the entities it names: the cosine of every
        candidate, and of the linked memories brought in later, to the question without the
        names (`SearchState.topic_vector`), the candidates fused again. Every memory the person
        said carries their name, so the full question's vector holds the name more than what
        is asked (LoCoMo tuning conversations, all-MiniLM-L6-v2: multi-hop R@10 0.48 -> 0.54).
        Only when every name the question gives was found: a name that is no entity ("Python")
        is what is asked about."""
        state.query_vector = topic
        ids = [c.memory_id for c in state.candidates]
        vectors = await self.index.vectors_for(
            ids, state.model_key, int(topic.shape[0]), refresh=False
        )
        vectors.update((p.memory_id, v) for p, v in state.fresh)
        for c in state.candidates:
            vector = vectors.get(c.memory_id)
            if vector is not None:
                c.cosine = float(vector @ topic)
        fuse(state.candidates, state.settings, has_vector=True)
        for c in state.candidates:
            c.rescore()

    async def _around(
        self,
        state: SearchState,
        links: dict[str, Links],
        view: AgentView,
        known: set[str],
        picked: dict[str, float | None],
    ) -> dict[str, float]:
        """What the entity said (or was the subject of) right before and after the best
        matches to the question, each with `NEAR` of that match's relevance: in a conversation
        the answer to "what are your pets' names?" is the next turn, which shares no word with
        the question and may not say whose pets. Matches: the `ANCHORS` candidates of most
        relevance (the channels' fused score, before any lift); around: the nearest such memory
        each side within `AROUND_S` that is also among the `TURNS` memories next to the match
        (imported turns are milliseconds apart: time alone would reach across a conversation).
        A read of the turns also reads, in the same trip, the memories `_add` will want: the
        `picked` and those around the matches that are not candidates yet (`known`)."""
        best = sorted(state.candidates, key=lambda c: -c.fused)[:ANCHORS]
        # each anchor with the entity's memories within `AROUND_S` of it: only those anchors
        # need their neighbours read (none: no read at all)
        nearby: list[tuple[Memory, list[str]]] = []
        fused: dict[str, float] = {}
        for anchor in best:
            if anchor.memory is None or anchor.fused <= 0:
                continue
            at = from_iso(anchor.memory.occurred_at).timestamp()
            found = [
                memory_id
                for links_of in links.values()
                for memory_id in links_of.around(at, AROUND_S)
                if memory_id != anchor.memory_id
            ]
            if found:
                nearby.append((anchor.memory, found))
                fused[anchor.memory_id] = anchor.fused
        if not nearby:
            return {}
        wanted = [*picked, *(m for _, found in nearby for m in found if m not in known)]
        beside = await view.next_to(nearby, TURNS, self.memories, wanted)
        near: dict[str, float] = {}
        for anchor_memory, found in nearby:
            next_to = beside[anchor_memory.id]
            for memory_id in found:
                if memory_id in next_to:
                    near[memory_id] = max(near.get(memory_id, 0.0), NEAR * fused[anchor_memory.id])
        return near

    async def _picks(
        self, state: SearchState, view: AgentView, lift: _Lift, known: set[str], count: int
    ) -> dict[str, float | None]:
        """The linked memories the channels did not bring (not `known`), twice `count` of the
        best of them (by cosine when there is a query vector, else speakers and subjects
        first, newest first), each with its cosine."""
        vector = state.query_vector
        if vector is not None:
            return await self._nearest(state, view, lift, vector, known, count)
        picked: dict[str, float | None] = {}
        for memory_id in lift.ordered:
            if len(picked) >= count * 2:
                break
            if memory_id not in known:
                picked[memory_id] = None
        return picked

    async def _add(
        self,
        state: SearchState,
        view: AgentView,
        known: set[str],
        picked: dict[str, float | None],
        near: dict[str, float],
        count: int = UNMATCHED,
    ) -> int:
        """The `count` first of the linked memories `picked` that are live (a fact about
        someone seldom repeats their name or the question's words), and what the entity said
        around the best matches (`near`). How many were added (at most one read)."""
        vector = state.query_vector
        around = [m for m in near if m not in known]
        wanted = list(dict.fromkeys([*list(picked)[: count * 2], *around]))
        read = await view.read(wanted, self.memories)
        fresh = [
            Candidate(m, cosine=picked[m], memory=read[m])
            for m in [m for m in picked if m in read][:count]
        ]
        # a turn around a match is brought even when it was a pick past the first `count`
        taken = {c.memory_id for c in fresh}
        brought = [Candidate(m, memory=read[m]) for m in around if m in read and m not in taken]
        if brought and vector is not None:
            vectors = await self.index.vectors_for(
                [c.memory_id for c in brought], state.model_key, int(vector.shape[0]), refresh=False
            )
            fill_cosines(brought, vectors, vector)
        state.candidates += fresh + brought
        return len(fresh) + len(brought)

    async def _nearest(
        self,
        state: SearchState,
        view: AgentView,
        lift: _Lift,
        vector: np.ndarray,
        known: set[str],
        count: int = UNMATCHED,
    ) -> dict[str, float | None]:
        """The linked memories not among `known`, the nearest to the query first (those
        without a vector last), each with its cosine."""
        ids = lift.ordered
        vectors = await view.vectors_of(ids, state.model_key, int(vector.shape[0]), self.index)
        cosines = vectors.matrix @ vector if vectors.ids else np.zeros(0, np.float32)
        nearest: dict[str, float | None] = {}
        rows = np.argsort(-cosines, kind="stable")
        for row in sorted(rows, key=lambda r: vectors.ids[r] not in lift.fitting):
            memory_id = vectors.ids[row]
            if memory_id not in known:
                nearest[memory_id] = float(cosines[row])
            if len(nearest) >= count * 2:
                return nearest
        for memory_id in ids:
            if memory_id not in known and len(nearest) < count * 2:
                nearest.setdefault(memory_id, None)
        return nearest

    def _score(
        self,
        state: SearchState,
        lift: _Lift,
        names: list[str],
        near: dict[str, float],
        *,
        added: int,
    ) -> None:
        """The boosts added; a memory no link ties to the entity that still says its name
        counts as a mention (linking may have missed it). The memories `added` are fused in
        (all fused again only when one of them moves a channel's best score: `fuse_added`)
        and get their signals; then only a candidate lifted is scored again (every other
        one's score stands, unless all were fused again)."""
        again = False
        if added:
            has_vector = state.query_vector is not None
            again = fuse_added(state.candidates, added, state.settings, has_vector)
            apply_signals(state.candidates[-added:], state.settings, state.now)
        said = list(dict.fromkeys(name.casefold() for name in names))
        mentioned = _lifts(state)[LinkRole.mentioned]
        share = _shares(state)
        linked, folded = lift.linked_ids, lift.texts.folded
        kept = None if share else lift.kept
        for c in state.candidates:
            memory = c.memory
            if memory is None:
                continue
            memory_id = c.memory_id
            relevance = c.fused if share else 1.0
            if memory_id not in linked:
                boost = 0.0
            elif kept is None:
                boost = lift.of(memory_id, relevance, memory.content)
            else:
                boost = kept.get(memory_id, -1.0)
                if boost < 0:
                    boost = kept[memory_id] = lift.of(memory_id, 1.0, memory.content)
            if not boost:
                text = folded(memory_id, memory.content)
                if any(n in text for n in said):
                    boost = mentioned * relevance
            if near:
                boost += near.get(memory_id, 0.0)
            if boost or again:
                c.entity_boost = boost
                c.rescore()
        state.sort()


class _Lift:
    """What the entities' links add to a memory: the strongest of its links' lifts (`PAGE_BOOST`
    for the entity a page is about)."""

    def __init__(
        self,
        links: dict[str, Links],
        ordered: list[str],
        fitting: set[str],
        linked_ids: frozenset[str],
        lifts: dict[LinkRole, float],
        pages: dict[str, str],
        texts: MemoryTexts,
    ) -> None:
        self.ordered = ordered  # every linked memory once, those of the kind asked for first
        self.fitting = fitting  # the entity's own memories that name the kind asked for
        self.linked_ids = linked_ids  # every linked memory (a memory not among them: no lift)
        # each entity's links' roles, and whether it is the entity a page is about
        self.roles = [(found.roles, entity_id in pages) for entity_id, found in links.items()]
        self.lifts = lifts
        self.texts = texts
        # memory id -> `of` it, kept from question to question when the lift is no share of a
        # memory's relevance (`AgentView.lifted`)
        self.kept: dict[str, float] | None = None

    def of(self, memory_id: str, relevance: float = 1.0, content: str = "") -> float:
        """`relevance`: what a link's lift is a share of (1 text only: the lift itself). A
        memory of the entity's own that also names the kind of thing the question asks for
        (a place for "which cities", a person for "who") gets `KIND_LIFT` more. A line the
        entity said that asks the listener something and says nothing of the entity
        (`about_the_listener`: "Wow, that agency looks great! What made you pick it?") is about
        the listener: its speaker's link lifts it as a mention. `content`: the memory's, read
        only for a link that needs it (a speaker's; on a page, whether it is one question)."""
        best = 0.0
        asks: bool | None = None
        to_listener: bool | None = None
        for roles, page in self.roles:
            role = roles.get(memory_id)
            if role is None:
                continue
            if role is LinkRole.speaker:
                if to_listener is None:
                    to_listener = self.texts.to_listener(memory_id, content)
                if to_listener:
                    role = LinkRole.mentioned
            if page:
                if asks is None:
                    asks = one_question(content)
                lift = PAGE_BOOST * (PAGE_MENTION_SHARE if role is LinkRole.mentioned else 1.0)
                lift *= PAGE_QUESTION_SHARE if asks else 1.0
            else:
                lift = self.lifts[role] * relevance
            if memory_id in self.fitting and role is not LinkRole.mentioned:
                lift += KIND_LIFT * relevance
            best = max(best, lift)
        return best

    def linked(self) -> int:
        return len(self.ordered)


def _keep_strong(state: SearchState) -> None:
    """The lift reorders, it does not bury: for a question after one fact, each memory whose
    relevance to the question's words (the channels' fused score, before any lift) is within
    `STRONG` of the best gets at least the lift of any memory that matches less. The linked
    memories still rise above what matches weakly, but "他下班以后喜欢打篮球" stays first for
    "我表弟下班以后做什么？" even when no link ties it to 我表弟 and a turn of his beside it is lifted."""
    best = max((c.fused for c in state.candidates), default=0.0)
    if best <= 0:
        return
    by_relevance = sorted(state.candidates, key=lambda c: c.fused)
    seen_lift = 0.0  # the most any memory before this one in `by_relevance` was lifted
    weaker_lift = 0.0  # the most any memory of less relevance was lifted
    for n, c in enumerate(by_relevance):
        if n and by_relevance[n - 1].fused < c.fused:
            weaker_lift = seen_lift
        seen_lift = max(seen_lift, c.entity_boost)
        if c.fused >= STRONG * best and c.entity_boost < weaker_lift:
            c.entity_boost = weaker_lift
            c.rescore()
    state.sort()


def _asked_kinds(text: str) -> frozenset[EntityKind]:
    """The kinds of entity a question asks for: places ("which cities", "where", 哪里, どこ),
    people ("who", "children", 谁, 誰), pets ("dogs", 宠物, 猫)."""
    return frozenset(kind for kind, pattern in _ASKED.items() if pattern.search(text))


def _shares(state: SearchState) -> bool:
    """Whether a link's lift is a share of the memory's relevance (with a query vector)."""
    return state.query_vector is not None and SHARE_WITH_VECTORS


def _lifts(state: SearchState, several: bool = False) -> dict[LinkRole, float]:
    """What a link of each role adds (with a query vector: the share of the memory's relevance)."""
    own = SEVERAL_SHARE if several and state.query_vector is not None else BOOST
    return {LinkRole.speaker: own, LinkRole.subject: own, LinkRole.mentioned: MENTIONED}


def _resolve(matches: list[EntityMatch], reading: _Reading, understood: Understood) -> None:
    """Per key: the entities it names by name, else the one entity it is an alias of; an alias
    of several is ambiguous. Then a name none of them is: the one person known by another form
    of it ("Bea" for Beatrice), several such people ambiguous."""
    keys = reading.keys
    by_key: dict[str, list[EntityMatch]] = defaultdict(list)
    for match in matches:
        by_key[match.key].append(match)
    for key, found in by_key.items():
        if key not in keys:
            continue
        named = [m for m in found if m.by == "name"]
        chosen = named or found
        if not named and len({m.entity_id for m in found}) > 1:
            understood.ambiguous[keys.get(key, key)] = sorted({m.name for m in found})
            continue
        for match in chosen:
            understood.entities[match.entity_id] = match.name
        understood.found.append(keys.get(key, key))
    _resolve_other_forms(by_key, reading, understood)


def _resolve_other_forms(
    by_key: dict[str, list[EntityMatch]], reading: _Reading, understood: Understood
) -> None:
    unread = {name for name in reading.names if name not in understood.found}
    unread -= understood.ambiguous.keys()
    people: dict[str, dict[str, EntityMatch]] = defaultdict(dict)
    for form, name in reading.forms.items():
        for match in by_key.get(form, ()):
            if name in unread and match.kind == EntityKind.person:
                people[name].setdefault(match.entity_id, match)
    for name, found in people.items():
        if len(found) > 1:
            understood.ambiguous[name] = sorted({m.name for m in found.values()})
            continue
        (match,) = found.values()
        understood.entities[match.entity_id] = match.name
        understood.found.append(name)


def _cjk_grams(text: str) -> list[str]:
    """Every run of 2 to `_GRAM` Chinese or Japanese characters in the query: a name there has
    no space or capital to find it by, so each is looked up as a possible known name or alias."""
    grams = []
    for run in _CJK.findall(text):
        for size in range(2, min(_GRAM, len(run)) + 1):
            grams += [run[i : i + size] for i in range(len(run) - size + 1)]
    return list(dict.fromkeys(grams))


def _spread(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """The first `limit` places picked greedily, each candidate's score weighed down by `SPREAD`
    for every memory of its day already picked; the rest keep their order after them. (The
    pool is in score order and a weight is at most 1: a pick's scan stops at the first score
    below the best weighed one.)"""
    pool = sorted(ranked, key=lambda c: -c.final)
    picked: list[Candidate] = []
    per_day: dict[str, int] = defaultdict(int)
    while pool and len(picked) < limit:
        best, best_score = 0, float("-inf")
        for n, c in enumerate(pool):
            if c.final <= best_score:
                break
            score = c.final * SPREAD ** max(per_day[_day(c)] - FREE_PER_DAY + 1, 0)
            if score > best_score:
                best, best_score = n, score
        chosen = pool.pop(best)
        picked.append(chosen)
        per_day[_day(chosen)] += 1
    return picked + pool


def _day(candidate: Candidate) -> str:
    return candidate.memory.occurred_at[:10] if candidate.memory is not None else ""
