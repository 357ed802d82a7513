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
database read.)

A question that asks for several things about the entity ("what are X's hobbies", "names of X's
pets", "what activities has X done", "X有哪些爱好") spreads its first places over the days the
entity's memories come from: past `FREE_PER_DAY` picks from one day, each further one weighs
`SPREAD` times less, so ten near-copies of one afternoon do not hide what was said in other
months. (Measured on LoCoMo's multi-hop questions, a stronger spread costs recall: their
evidence is often several turns of one session.)"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cortex_mcp.models import EntityMatch, LinkRole
from cortex_mcp.search.fusion import Candidate, apply_signals, fuse
from cortex_mcp.search.stages.candidates import read_live
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.interfaces import EntityStorage, MemoryStorage
from cortex_mcp.tokenize import normalize_name

# What a link adds to a memory's fused relevance (0..1): as speaker or subject, and as a mere
# mention. With vectors the question's meaning already finds what is about someone, and a larger
# lift only crowds out the other speaker's answers (LoCoMo's tuning conversations with
# all-MiniLM-L6-v2: multi-hop R@10 0.456 without a lift, 0.437 at 0.3, 0.417 at 0.5); text only,
# the lift is what finds a fact that never repeats the name (0.340 without, 0.396-0.409 at 0.5).
BOOST = 0.5
MENTIONED = 0.2
BOOST_WITH_VECTORS = 0.1
MENTIONED_WITH_VECTORS = 0.05
PAGE_BOOST = 1.0  # the entity a page is about (`about`, "tell me about X"): its memories lead
FREE_PER_DAY = 4  # picks from one day before SPREAD weighs further ones down
SPREAD = 0.5  # the weight of each further pick from a day already chosen, for a "several" question
LINKED = 2000  # most links read per question: every link lifts, an old memory as much as a new one
UNMATCHED = 5  # linked memories added that match no word of the question

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

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
_GRAM = 5  # the longest run looked up as a name (Chinese names are 2-4, katakana ones longer)

NamesOf = Callable[[str], Sequence[str]]  # a query -> the names and alias phrases it names


@dataclass
class Understood:
    """What the stage made of the query's names, as the search debugger shows it."""

    names: list[str] = field(default_factory=list)
    entities: dict[str, str] = field(default_factory=dict)  # entity id -> name
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # phrase -> candidates' names
    several: bool = False
    found: list[str] = field(default_factory=list)  # the phrases of the query that named one

    def facts(self, linked: int, added: int) -> dict[str, object]:
        return {
            "names": self.names,
            "entities": [{"id": i, "name": n} for i, n in self.entities.items()],
            "ambiguous": self.ambiguous,
            "spread_over_days": self.several and bool(self.entities),
            "linked_memories": linked,
            "candidates_added": added,
        }


class EntityStage:
    name = "entity"

    def __init__(
        self,
        entities: EntityStorage,
        names_of: NamesOf,
        memories: MemoryStorage,
        index: VectorIndex,
    ) -> None:
        self.entities = entities
        self.names_of = names_of
        self.memories = memories
        self.index = index

    async def run(self, state: SearchState) -> None:
        names = list(dict.fromkeys(self.names_of(state.text)))
        agent = state.filters.agent_id
        if not (names or state.entities or _CJK.search(state.text)) or agent is None:
            return
        understood = Understood(names=names, several=bool(_SEVERAL.search(state.text)))
        understood.entities.update(state.entities)
        keys = {normalize_name(name): name for name in names}
        for gram in _cjk_grams(state.text):  # a known name the rules cannot see: 丽丽, 豆豆
            keys.setdefault(normalize_name(gram), gram)
        if keys:
            _resolve(await self.entities.find_entities(agent, list(keys)), keys, understood)
            understood.names = list(dict.fromkeys([*names, *understood.found]))
        if not understood.entities:
            state.facts["entity"] = understood.facts(0, 0)
            return
        linked = await self.entities.linked_memories(agent, list(understood.entities), LINKED)
        boosts: dict[str, float] = defaultdict(float)
        lifts = _lifts(state)
        for memory_id, entity_id, role in linked:
            lift = lifts[role] if entity_id not in state.entities else PAGE_BOOST
            boosts[memory_id] = max(boosts[memory_id], lift)
            state.entity_links.setdefault(entity_id, set()).add(memory_id)
        said = [*names, *understood.entities.values()]
        added = await self._add(state, boosts)
        self._score(state, boosts, said)
        if understood.several:
            state.candidates = _spread(state.candidates, state.limit)
        state.facts["entity"] = understood.facts(len(boosts), added)

    async def _add(self, state: SearchState, boosts: dict[str, float]) -> int:
        """The linked memories the channels did not bring, the `UNMATCHED` best of them (by
        cosine when there is a query vector, else speakers and subjects first, newest first):
        a fact about someone seldom repeats their name or the question's words. How many were
        added."""
        known = {c.memory_id for c in state.candidates}
        others = [m for m in boosts if m not in known]
        fresh = [Candidate(m) for m in await self._best_unmatched(state, others)]
        live = await read_live(state, self.memories, self.index, fresh)
        state.candidates.extend(live)
        return len(live)

    async def _best_unmatched(self, state: SearchState, ids: list[str]) -> list[str]:
        vector = state.query_vector
        if len(ids) <= UNMATCHED or vector is None:
            return ids[:UNMATCHED]
        vectors = await self.index.vectors_for(
            ids, state.model_key, int(vector.shape[0]), refresh=False
        )
        ranked = sorted(ids, key=lambda i: -float(vectors[i] @ vector) if i in vectors else 1.0)
        return ranked[:UNMATCHED]

    def _score(self, state: SearchState, boosts: dict[str, float], names: list[str]) -> None:
        """Fused again over every candidate, the boosts added; a memory no link ties to the
        entity that still says its name counts as a mention (linking may have missed it)."""
        fuse(state.candidates, state.settings, has_vector=state.query_vector is not None)
        apply_signals(state.candidates, state.settings, state.now)
        said = [name.casefold() for name in names]
        for c in state.candidates:
            if c.memory is None:
                continue
            c.entity_boost = boosts.get(c.memory_id, 0.0)
            if not c.entity_boost and any(n in c.memory.content.casefold() for n in said):
                c.entity_boost = _lifts(state)[LinkRole.mentioned]
            c.rescore()
        state.sort()


def _lifts(state: SearchState) -> dict[LinkRole, float]:
    """What a link of each role adds, text only or with a query vector."""
    vectors = state.query_vector is not None
    strong = BOOST_WITH_VECTORS if vectors else BOOST
    weak = MENTIONED_WITH_VECTORS if vectors else MENTIONED
    return {LinkRole.speaker: strong, LinkRole.subject: strong, LinkRole.mentioned: weak}


def _resolve(matches: list[EntityMatch], keys: dict[str, str], understood: Understood) -> None:
    """Per key: the entities it names by name, else the one entity it is an alias of; an alias
    of several is ambiguous."""
    by_key: dict[str, list[EntityMatch]] = defaultdict(list)
    for match in matches:
        by_key[match.key].append(match)
    for key, found in by_key.items():
        named = [m for m in found if m.by == "name"]
        chosen = named or found
        if not named and len({m.entity_id for m in found}) > 1:
            understood.ambiguous[keys.get(key, key)] = sorted({m.name for m in found})
            continue
        for match in chosen:
            understood.entities[match.entity_id] = match.name
        understood.found.append(keys.get(key, key))


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
    for every memory of its day already picked; the rest keep their order after them."""
    pool = list(ranked)
    picked: list[Candidate] = []
    per_day: dict[str, int] = defaultdict(int)
    while pool and len(picked) < limit:
        best = max(
            pool, key=lambda c: c.final * SPREAD ** max(per_day[_day(c)] - FREE_PER_DAY + 1, 0)
        )
        pool.remove(best)
        picked.append(best)
        per_day[_day(best)] += 1
    return picked + pool


def _day(candidate: Candidate) -> str:
    return candidate.memory.occurred_at[:10] if candidate.memory is not None else ""
