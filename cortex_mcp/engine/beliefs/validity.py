"""Facts that know when they stopped being true.

Each memory is read once for the single-valued slots it states (`slots.find_slot_facts`); the
facts of one holder's slot form a chain in time order (`valid_from`: the memory's own time),
and the chain decides each fact's standing:

- a fact is `superseded` from the moment a later fact of the same slot gives another value
  (its `valid_to` is that fact's `valid_from`); saying the same value again changes nothing;
- two facts that disagree, said the same day by different speakers, are both `contested`: no
  silent winner, both are shown and marked;
- the last value is `current`, its `valid_to` empty.

The chain is settled again whenever a fact joins or leaves it (a forget, a correction, a
restore), so the outcome never depends on the order memories arrived in: an import of old
history lands behind the current fact, and forgetting a wrong update reopens the fact it
closed. Every change is a `validity` row in the lifecycle log.

The other side, which slot and whose a question asks about, is search/slot_questions.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cortex_mcp.engine.beliefs.slots import find_slot_facts
from cortex_mcp.models import Clock, Memory, SlotClaim, ValidityStatus, to_iso
from cortex_mcp.store.validity import SlotFactRow, Validity, ValidityStore
from cortex_mcp.tokenize import SELF_HOLDER as SELF
from cortex_mcp.tokenize import slot_holder_key as holder_key
from cortex_mcp.tokenize import slot_value_key as value_key
from cortex_mcp.tokenize import speaker_of

BATCH = 500  # memories read per transaction
SELF_KEY = holder_key(SELF)


def claims_of(memory: Memory) -> list[SlotClaim]:
    """The slot facts `memory` states, each holder bound to whom it means: "I" to the
    speaker (when the memory names one), "my sister" to the speaker's sister."""
    speaker = speaker_of(memory.content, memory.metadata)
    claims = []
    for fact in find_slot_facts(memory.content, speaker=speaker):
        claims.append(
            SlotClaim(
                holder=bind_holder(fact.holder, speaker),
                slot=fact.slot,
                value=fact.value,
                speaker=speaker,
            )
        )
    return claims


def bind_holder(holder: str, speaker: str | None) -> str:
    key = holder_key(holder)
    if key == SELF_KEY:
        return speaker or SELF_KEY
    if speaker and _RELATIVE.match(key):
        return f"{speaker}/{key}"
    return key


_RELATIVE = re.compile(r"^(?:my |我的?|私の|うちの)|^(?:姉|妹|兄|弟|母|父|息子|娘|夫|妻|犬|猫)$")


def settle_chain(facts: Sequence[SlotFactRow]) -> list[Validity]:
    """Each fact's standing in its chain (see the module's docstring)."""
    ordered = sorted(facts, key=lambda f: (f.valid_from, f.seq))
    disputed: dict[str, str] = {}
    for i, fact in enumerate(ordered):
        for other in ordered[i + 1 :]:
            if _disagree(fact, other) and _same_day_other_speaker(fact, other):
                disputed.setdefault(fact.memory_id, other.memory_id)
                disputed.setdefault(other.memory_id, fact.memory_id)
    outcomes = []
    for i, fact in enumerate(ordered):
        if fact.memory_id in disputed:
            outcomes.append(
                Validity(fact.memory_id, None, ValidityStatus.contested, disputed[fact.memory_id])
            )
            continue
        closer = next((o for o in ordered[i + 1 :] if _disagree(fact, o)), None)
        if closer is None:
            outcomes.append(Validity(fact.memory_id, None, ValidityStatus.current))
        else:
            outcomes.append(
                Validity(
                    fact.memory_id,
                    closer.valid_from,
                    ValidityStatus.superseded,
                    closer.memory_id,
                )
            )
    return outcomes


def _disagree(a: SlotFactRow, b: SlotFactRow) -> bool:
    return value_key(a.value) != value_key(b.value)


def _same_day_other_speaker(a: SlotFactRow, b: SlotFactRow) -> bool:
    return a.valid_from[:10] == b.valid_from[:10] and a.speaker != b.speaker


class ValidityKeeper:
    """Reads new memories for their slots and settles the chains they join."""

    def __init__(self, store: ValidityStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    async def settle(self, agent_id: str, *, batches: int | None = 1) -> int:
        """Read up to `batches` batches of the agent's new memories (None: all); how many
        facts changed standing."""
        changed = 0
        done = 0
        while batches is None or done < batches:
            unread = await self.store.unread(agent_id, BATCH)
            if not unread:
                break
            claims = {memory.id: claims_of(memory) for _, memory in unread}
            outcome = await self.store.record(
                agent_id, claims, unread[-1][0], settle_chain, to_iso(self.clock.now())
            )
            changed += len(outcome)
            done += 1
        return changed

    async def settle_everyone(self) -> int:
        changed = 0
        for agent_id in await self.store.agents_behind():
            changed += await self.settle(agent_id, batches=None)
        return changed

    async def chains_of(self, agent_id: str, memory_id: str) -> list[tuple[str, str]]:
        """The chains a memory is in: read before it is purged, settled after."""
        await self.settle(agent_id)
        return await self.store.keys_of(agent_id, memory_id)

    async def resettle(self, agent_id: str, keys: Sequence[tuple[str, str]]) -> int:
        """Chains a memory left or rejoined (forget, purge, restore, correction)."""
        if not keys:
            return 0
        now = to_iso(self.clock.now())
        return len(await self.store.settle_keys(agent_id, keys, settle_chain, now))
