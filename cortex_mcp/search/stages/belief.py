"""Beliefs: "what does Peter prefer?" is answered from Peter's beliefs first.

A question about what someone prefers, likes, wants or thinks ("what does Peter prefer?",
"what do I like?", "张伟喜欢什么", "田中さんの好きなものは?") brings the beliefs of the holder it
names in as candidates (engine/beliefs/keeper.py keeps them), whether or not they share a word
with the question, and lifts each by `BELIEF_BOOST` times its confidence: the surest first.
Any other question is untouched. Its lift joins the other stages' in `Candidate.rescore`.
"""

from __future__ import annotations

import re

from cortex_mcp.search.fusion import apply_signals, fuse
from cortex_mcp.search.stages.candidates import add_by_id
from cortex_mcp.search.stages.state import SearchState
from cortex_mcp.search.vector import VectorIndex
from cortex_mcp.store.beliefs import BeliefStore
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.tokenize import BELIEF_USER as USER
from cortex_mcp.tokenize import normalize_name

BELIEF_BOOST = 2.0  # like a slot's fact: above anything words alone give (fused <= 1)

# a question about preferences, not any sentence with "like" or "think" in it ("what did I
# want to eat?", "do you think it rains?" are not): what/which/how + a verb of liking, or a
# word that only asks for a preference
_ASKS = re.compile(
    r"\b(?:what|which|how)\b.{0,30}\b(?:prefers?|likes?|dislikes?|loves?|hates?|enjoys?)\b"
    r"|\b(?:preferences?|favou?rites?|opinions?)\b|\bthinks? (?:of|about)\b"
    r"|\bfeels? about\b|\bdoes \w+ (?:prefer|like|love|enjoy)\b"
    r"|喜欢什么|喜欢哪|偏好|爱好|讨厌什么|看法|最爱|口味|好きな|嫌いな|好み|お気に入り|どう思",
    re.IGNORECASE,
)
_EN_HOLDER = re.compile(
    r"\b(?:does|did|is|was|do)\s+(?P<name>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)\b"
    r"|\b(?P<poss>[A-Z][\w-]+)'s\b"
)
_ZH_HOLDER = re.compile(
    r"^(?![我你他她它咱])(?P<name>[\u4e00-\u9fff]{2,3}?)(?:最|更|还|不)?(?:喜欢|偏好|讨厌|想要|觉得|爱)"
)
_JA_HOLDER = re.compile(
    r"^(?P<name>[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{1,8}?)(?:さん|くん|ちゃん)?(?:は|の|が)"
)
_SELF = re.compile(r"\b(?:I|me|my|the user)\b|我|私|僕|俺", re.IGNORECASE)
_NOT_NAMES = {"I", "It", "The", "This", "That", "There", "You", "We", "They", "He", "She"}


def holder_asked(query: str) -> str | None:
    """The holder whose beliefs a question asks about (a name's key, or `USER`), or None
    when it asks about no one's preferences."""
    if not _ASKS.search(query):
        return None
    for pattern in (_ZH_HOLDER, _JA_HOLDER):
        found = pattern.search(query)
        if found is not None and found.group("name") not in {"我", "私", "僕", "俺"}:
            return normalize_name(found.group("name"))
    match = _EN_HOLDER.search(query)
    if match is not None:
        name = match.group("name") or match.group("poss")
        if name and name not in _NOT_NAMES:
            return normalize_name(name)
    if _SELF.search(query):
        return USER
    return None


class BeliefStage:
    name = "belief"

    def __init__(self, memories: MemoryStorage, index: VectorIndex, beliefs: BeliefStore) -> None:
        self.memories = memories
        self.index = index
        self.beliefs = beliefs

    async def run(self, state: SearchState) -> None:
        holder = holder_asked(state.text)
        if holder is None:
            return
        held = await self.beliefs.beliefs(state.filters.agent_id, [holder])
        if not held:
            return
        lift = {b.memory_id: BELIEF_BOOST * b.confidence for b in held}
        added = await add_by_id(state, self.memories, self.index, set(lift))
        if added:
            fuse(state.candidates, state.settings, has_vector=state.query_vector is not None)
            apply_signals(state.candidates, state.settings, state.now)
        for c in state.candidates:
            c.belief_boost = lift.get(c.memory_id, 0.0)
            c.rescore()
        state.sort()
        state.facts["belief"] = {"holder": holder, "beliefs": len(held), "added": added}
