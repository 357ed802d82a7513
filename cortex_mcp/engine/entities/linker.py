"""Linking on every way in: the names in memories just written found by the rules
(`mentions.find_mentions`), resolved against what the store knows (`resolve.plan_links`) and
written as links, in one read and one transaction per batch of memories."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cortex_mcp.engine.entities.mentions import (
    Mentions,
    find_mentions,
    handle_labels,
    lower_case_called,
    lower_case_calls,
    pronouns,
    zero_subject,
)
from cortex_mcp.engine.entities.resolve import (
    Known,
    Named,
    follow_pronouns,
    follow_zero_subjects,
    known_cjk_words,
    known_words,
    lookup_keys,
    plan_links,
)
from cortex_mcp.errors import CortexError
from cortex_mcp.models import EntityKind, LinkReport, LinkRole, Memory, from_iso
from cortex_mcp.store.interfaces import EntityStorage
from cortex_mcp.tokenize import normalize_name

log = logging.getLogger(__name__)

_BATCH = 200  # memories linked in one transaction
_DELAY_S = 0.005  # how long memories wait to be linked together
_USER_ROLES = {"", "user", "human", "assistant", "system"}
_KEYS_PER_READ = 2000  # names looked up in one read (a long Chinese text has many candidates)
# the turns either side of a call that tell a two-person exchange from a group: among more
# people, who speaks right beside a call is not who was called ("@Aya how did it go?" between
# two lines of Taku); only the calls of that name together tell (`_called_by_name`)
_GROUP_TURNS = 3
_NEAR_CALL = 2  # the turns either side of a call in a group where the one called may speak
_CALLED_SHARE = 0.8  # of a name's calls the one called is near
_OTHERS_SHARE = 0.5  # and anyone else at most


@dataclass(frozen=True)
class Written:
    """A memory to link: its id, its text and who said it (None: the agent's own user)."""

    memory_id: str
    content: str
    speaker: str | None = None
    named: tuple[Named, ...] = ()  # entities an LLM's extraction gave for it
    at: str | None = None  # when it was said (occurred_at): a pronoun looks back only that far

    @property
    def moment(self) -> float | None:
        try:
            return from_iso(self.at).timestamp() if self.at else None
        except ValueError:
            return None


def written(memory: Memory, named: Sequence[Named] = ()) -> Written:
    return Written(
        memory.id,
        memory.content,
        speaker_named(memory.metadata),
        tuple(named),
        memory.occurred_at or memory.created_at,
    )


def speaker_named(metadata: Mapping[str, object]) -> str | None:
    """A speaker's name a writer kept (a turn's speaker), not a role such as "user"."""
    speaker = metadata.get("speaker") if metadata else None
    if isinstance(speaker, str) and speaker.strip().casefold() not in _USER_ROLES:
        return speaker.strip()
    return None


class EntityLinker:
    """Links memories to the entities they name. Linking is an addition to a write, never its
    condition: a store fault while linking is logged and the memory stays as written.

    `submit` links after the call that wrote the memories has answered (remember, ingest):
    a few milliseconds later, the memories waiting are linked together, one lookup and one
    transaction per agent, by one task; `drain` waits until they are. A memory forgotten
    meanwhile is not linked."""

    def __init__(self, store: EntityStorage, *, enabled: bool = True) -> None:
        self.store = store
        self.enabled = enabled
        self._waiting: list[tuple[str, Written, str]] = []
        self._worker: asyncio.Task[None] | None = None

    def submit(self, agent_id: str, items: Sequence[Written], now: str) -> None:
        if not self.enabled or not items:
            return
        self._waiting += [(agent_id, item, now) for item in items]
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work())

    def submit_memories(self, agent_id: str, memories: Sequence[Memory], now: str) -> None:
        self.submit(agent_id, [written(m) for m in memories], now)

    async def _work(self) -> None:
        # after the call that submitted has answered, and with whatever else comes meanwhile
        await asyncio.sleep(_DELAY_S)
        while self._waiting:
            batch, self._waiting = self._waiting[:_BATCH], self._waiting[_BATCH:]
            by_agent: dict[str, list[Written]] = {}
            for agent_id, item, _ in batch:
                by_agent.setdefault(agent_id, []).append(item)
            now = batch[-1][2]
            for agent_id, items in by_agent.items():
                await self.link(agent_id, items, now)

    async def drain(self) -> None:
        """Wait until every memory submitted so far is linked."""
        while self._worker is not None and not self._worker.done():
            await asyncio.shield(self._worker)

    async def link(self, agent_id: str, items: Sequence[Written], now: str) -> list[LinkReport]:
        if not self.enabled or not items:
            return []
        handles = _repeated_handles(items)
        found = [
            find_mentions(item.content, speaker=item.speaker, handles=handles) for item in items
        ]
        called = [lower_case_called(item.content) for item in items]
        words = [
            known_words(item.content, f) + known_cjk_words(item.content, f)
            for f, item in zip(found, items, strict=True)
        ]
        keys = list(
            dict.fromkeys(
                [
                    *(
                        key
                        for f, w, item in zip(found, words, items, strict=True)
                        for key in lookup_keys(f, item.named, w)
                    ),
                    *(normalize_name(word) for said in called for word in said),
                ]
            )
        )
        try:
            matches = []
            for start in range(0, len(keys), _KEYS_PER_READ):
                chunk = keys[start : start + _KEYS_PER_READ]
                matches += await self.store.find_entities(agent_id, chunk)
            known = Known(matches)
            found = _with_lower_case_calls(found, items, called, known)
            addressees = _addressees(found)
            plans = [
                plan_links(item.memory_id, f, known, named=item.named, words=w, addressee=to)
                for f, w, item, to in zip(found, words, items, addressees, strict=True)
            ]
            said = [pronouns(item.content) for item in items]
            moments = [item.moment for item in items]
            plans = follow_pronouns(plans, said, [s for s in map(_speaker_of, found) if s], moments)
            zero = [zero_subject(item.content) for item in items]
            plans = follow_zero_subjects(plans, zero, said, moments)
            return await self.store.link(agent_id, plans, now)
        except CortexError as exc:
            log.warning("entities: %d memories left unlinked: %s", len(items), exc)
            return []

    async def link_memories(
        self, agent_id: str, memories: Sequence[Memory], now: str
    ) -> list[LinkReport]:
        return await self.link(agent_id, [written(m) for m in memories], now)


def _with_lower_case_calls(
    found: Sequence[Mentions],
    items: Sequence[Written],
    called: Sequence[list[str]],
    known: Known,
) -> list[Mentions]:
    """Each memory's mentions with the names it calls in lower case ("thanks javi") that are
    people: called or introduced with a capital in the memories written with it, or one
    person's alias the store knows (an entity's name may be any capitalised word)."""
    people = _people_named(found)
    for word in {word for said in called for word in said if word not in people}:
        key = normalize_name(word)
        matches = [m for m in known.aliases(key) if m.kind == EntityKind.person]
        if len({m.entity_id for m in matches}) == 1:
            people[word] = word[:1].upper() + word[1:]
    if not people:
        return list(found)
    return [
        lower_case_calls(f, item.content, people) if said else f
        for f, item, said in zip(found, items, called, strict=True)
    ]


def _people_named(found: Sequence[Mentions]) -> dict[str, str]:
    """The one-word Latin names the memories call someone by or introduce someone with, with a
    capital ("Javi!!", "Hey Maya", "my sister Anna"), by their lower case: those a lower-case
    call may say (`lower_case_calls`); a capital alone may start any word ("Dance", "Got")."""
    return {
        m.name.casefold(): m.name
        for f in found
        for m in f.mentions
        if m.kind == EntityKind.person
        and m.rule in ("address", "kinship")  # called or introduced so, not any capital
        and m.name[:1].isupper()
        and m.name.isalpha()
        and m.name.isascii()
    }


def _repeated_handles(items: Sequence[Written]) -> frozenset[str]:
    """Lower-case handle labels ("mkrause:") that label two or more of the memories written
    together: a display name, where a label said once may be any word ("note:", "todo:")."""
    counts = Counter(name for item in items for name in set(handle_labels(item.content)))
    return frozenset(name for name, count in counts.items() if count >= 2)


def _addressees(found: Sequence[Mentions]) -> list[str | None]:
    """Per memory, the person it speaks to: the other speaker of a two-person exchange (the
    speaker of the turn before or after it when that is someone else and no third person
    speaks within `_GROUP_TURNS` of it); a name called more than once is judged by all its
    calls together (`_called_by_name`). A name the memory says to its listener ("Maya, how
    was your weekend?") is that person's, and "your grandmother" their "my grandmother"."""
    speakers = [_speaker_of(f) for f in found]
    addressees: list[str | None] = []
    for index, own in enumerate(speakers):
        if own is None or not _speaks_to_listener(found[index]):
            addressees.append(None)
            continue
        others = _others_near(speakers, index, before=1, after=1)
        group = len(_others_near(speakers, index, before=_GROUP_TURNS, after=_GROUP_TURNS)) > 1
        addressees.append(next(iter(others.values())) if len(others) == 1 and not group else None)
    for index, person in _called_by_name(found, speakers).items():
        addressees[index] = person
    return addressees


def _others_near(
    speakers: Sequence[str | None], index: int, *, before: int, after: int
) -> dict[str, str]:
    """The speakers other than the turn's own among the `before` turns before it and the
    `after` turns after it, by normalised name."""
    own = normalize_name(speakers[index] or "")
    near = [*speakers[max(0, index - before) : index], *speakers[index + 1 : index + 1 + after]]
    return {normalize_name(s): s for s in near if s and normalize_name(s) != own}


def _called_by_name(
    found: Sequence[Mentions], speakers: Sequence[str | None]
) -> dict[int, str | None]:
    """The turns that call a name called more than once ("Kasia, how was Lisbon?" in a group
    chat), each with the person called: the speaker (never one who calls that name) who is
    within `_NEAR_CALL` turns of at least `_CALLED_SHARE` of those calls while no one else is
    near more than `_OTHERS_SHARE` of them (the one called answers, or was just heard; who else
    speaks around a call changes from call to call). No such speaker: None for each of those
    turns, though one call alone had a single speaker beside it (a name is one person's in a
    chat, and which one is not known)."""
    calls: dict[str, list[int]] = {}
    for index, mentions in enumerate(found):
        names = {normalize_name(m.name) for m in mentions.mentions if m.rule == "address"}
        if speakers[index] is not None and len(names) == 1:
            calls.setdefault(names.pop(), []).append(index)
    called: dict[int, str | None] = {}
    for turns in calls.values():
        near = [_others_near(speakers, i, before=_NEAR_CALL, after=_NEAR_CALL) for i in turns]
        seen = [n for n in near if n]  # a call with no one else about says nothing
        if len(seen) < 2:
            continue
        callers = {normalize_name(speakers[i] or "") for i in turns}
        support = Counter(key for n in seen for key in n if key not in callers)
        ranked = [*support.most_common(2), ("", 0), ("", 0)]
        (best, most), (_, next_most) = ranked[0], ranked[1]
        person = None
        if most >= _CALLED_SHARE * len(seen) and next_most <= _OTHERS_SHARE * len(seen):
            person = next(n[best] for n in seen if best in n)
        called.update((i, person) for i in turns)
    return called


def _speaks_to_listener(found: Mentions) -> bool:
    """A name said to the listener, or their kin ("your grandmother")."""
    return any(m.rule == "address" for m in found.mentions) or any(
        r.phrase[:5].casefold() == "your " for r in found.references
    )


def _speaker_of(found: Mentions) -> str | None:
    return next((m.name for m in found.mentions if m.role == LinkRole.speaker), None)
