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
from cortex_mcp.models import LinkReport, LinkRole, Memory, from_iso
from cortex_mcp.store.interfaces import EntityStorage
from cortex_mcp.tokenize import normalize_name

log = logging.getLogger(__name__)

_BATCH = 200  # memories linked in one transaction
_DELAY_S = 0.005  # how long memories wait to be linked together
_USER_ROLES = {"", "user", "human", "assistant", "system"}
_KEYS_PER_READ = 2000  # names looked up in one read (a long Chinese text has many candidates)


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
        addressees = _addressees(found)
        words = [
            known_words(item.content, f) + known_cjk_words(item.content, f)
            for f, item in zip(found, items, strict=True)
        ]
        keys = list(
            dict.fromkeys(
                key
                for f, w, item in zip(found, words, items, strict=True)
                for key in lookup_keys(f, item.named, w)
            )
        )
        try:
            matches = []
            for start in range(0, len(keys), _KEYS_PER_READ):
                chunk = keys[start : start + _KEYS_PER_READ]
                matches += await self.store.find_entities(agent_id, chunk)
            known = Known(matches)
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


def _repeated_handles(items: Sequence[Written]) -> frozenset[str]:
    """Lower-case handle labels ("mkrause:") that label two or more of the memories written
    together: a display name, where a label said once may be any word ("note:", "todo:")."""
    counts = Counter(name for item in items for name in set(handle_labels(item.content)))
    return frozenset(name for name, count in counts.items() if count >= 2)


def _addressees(found: Sequence[Mentions]) -> list[str | None]:
    """Per memory, the other speaker of a two-person exchange: the speaker of the turn before or
    after it when that is someone else (None when both are someone else and not the same one).
    A name the memory says to its listener ("Maya, how was your weekend?") is that person's, and
    "your grandmother" their "my grandmother"."""
    speakers = [_speaker_of(f) for f in found]
    addressees: list[str | None] = []
    for index, own in enumerate(speakers):
        if own is None or not _speaks_to_listener(found[index]):
            addressees.append(None)
            continue
        near = [speakers[i] for i in (index + 1, index - 1) if 0 <= i < len(speakers)]
        others = {
            normalize_name(s): s for s in near if s and normalize_name(s) != normalize_name(own)
        }
        addressees.append(next(iter(others.values())) if len(others) == 1 else None)
    return addressees


def _speaks_to_listener(found: Mentions) -> bool:
    """A name said to the listener, or their kin ("your grandmother")."""
    return any(m.rule == "address" for m in found.mentions) or any(
        r.phrase[:5].casefold() == "your " for r in found.references
    )


def _speaker_of(found: Mentions) -> str | None:
    return next((m.name for m in found.mentions if m.role == LinkRole.speaker), None)
