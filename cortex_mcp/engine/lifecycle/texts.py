"""The texts a run writes: history summaries (extractive, or by the LLM when there is one)
and LLM-merged memories, each redacted before it is stored."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from cortex_mcp.config import LifecycleSettings
from cortex_mcp.engine.lifecycle.plan import SUMMARY_ITEMS, extractive_summary, summary_items
from cortex_mcp.errors import CortexError
from cortex_mcp.models import Category, Layer, LifecycleAction, Memory, NewMemory
from cortex_mcp.store.interfaces import LifecycleStorage
from cortex_mcp.store.lifecycle import action_key


class TextModel(Protocol):
    """What the lifecycle needs from an LLM: one prompt in, one text out."""

    async def complete(self, prompt: str) -> str: ...


class CascadeTextModel:
    """The lifecycle's `TextModel` over the LLM cascade of the ingest path (anything with
    `complete(system, user, *, max_tokens)` answering an object with `.text`)."""

    SYSTEM = (
        "You maintain a person's long-term memory. Follow the instructions exactly and answer"
        " with the requested text only."
    )

    def __init__(self, cascade: Any, max_tokens: int = 600) -> None:
        self.cascade = cascade
        self.max_tokens = max_tokens

    async def complete(self, prompt: str) -> str:
        answer = await self.cascade.complete(self.SYSTEM, prompt, max_tokens=self.max_tokens)
        return str(getattr(answer, "text", answer))


class PhaseTexts:
    """New memories for one phase's compress and LLM-merge actions, by action key."""

    def __init__(
        self,
        store: LifecycleStorage,
        settings: LifecycleSettings,
        llm: TextModel | None,
        rewrite: Callable[[str], Awaitable[str]],
    ) -> None:
        self.store = store
        self.settings = settings
        self.llm = llm
        self.rewrite = rewrite

    async def for_actions(
        self, actions: list[LifecycleAction], run_at: str, notes: list[str]
    ) -> dict[str, NewMemory]:
        texts: dict[str, NewMemory] = {}
        for action in actions:
            if action.kind == "compress":
                texts[action_key(action)] = await self._summary(action, notes)
            elif action.kind == "merge" and action.llm:
                merged = await self._merged(action, run_at, notes)
                if merged is not None:
                    texts[action_key(action)] = merged
        return texts

    async def _summary(self, action: LifecycleAction, notes: list[str]) -> NewMemory:
        covers = list(action.ids)
        agent = action.agent_id
        if action.into is not None:  # fold into the month's summary: cover its memories too
            found = await self.store.memories.get_many([action.into], agent_id=agent)
            previous = found.get(action.into)
            if previous is not None:
                new = set(covers)
                earlier = [i for i in previous.metadata.get("covers", []) if i not in new]
                covers = [*earlier, *covers]
        # a month may hold thousands: only the few a summary quotes are read
        limit = max(SUMMARY_ITEMS, self.settings.llm_batch_items)
        total, members = await self.store.ranked_members(agent, covers, limit)
        period = action.period or "?"
        content, method = extractive_summary(period, members, total), "extractive"
        if action.llm and self.llm is not None:
            chosen = summary_items(members, self.settings.llm_batch_items)
            prompt = _prompt("compress.md").render(
                period=period, count=str(total), memories=_bullets(chosen)
            )
            answer = await self._complete(prompt, notes)
            if answer:
                content, method = f"[{period}] {answer}", "llm"
        return NewMemory(
            agent_id=action.agent_id,
            content=await self.rewrite(content),
            category=Category.summary,
            layer=Layer.core,
            importance=0.6,
            source="lifecycle",
            metadata={
                "section": "history",
                "period": period,
                "covers": covers,
                "method": method,
            },
        )

    async def _merged(
        self, action: LifecycleAction, run_at: str, notes: list[str]
    ) -> NewMemory | None:
        members = await self._members(action)
        prompt = _prompt("merge.md").render(
            today=run_at[:10], memories=_bullets(members, dated=True)
        )
        answer = await self._complete(prompt, notes)
        if not answer:
            action.into, action.llm = action.ids[-1], False  # keep the latest instead
            return None
        latest = members[-1]
        return NewMemory(
            agent_id=action.agent_id,
            content=await self.rewrite(answer),
            category=latest.category,
            layer=Layer.core,
            importance=max(m.importance for m in members),
            confidence=max(m.confidence for m in members),
            source="lifecycle",
            metadata={"merged_from": action.ids, "method": "llm"},
        )

    async def _complete(self, prompt: str, notes: list[str]) -> str | None:
        assert self.llm is not None
        try:
            answer = (await self.llm.complete(prompt)).strip()
        except CortexError as exc:
            note = f"LLM unavailable for the lifecycle ({exc.message}): used the rule-based path"
            if note not in notes:
                notes.append(note)
            return None
        return answer or None

    async def _members(self, action: LifecycleAction) -> list[Memory]:
        found = await self.store.memories.get_many(action.ids, agent_id=action.agent_id)
        return [found[i] for i in action.ids if i in found]


def _prompt(name: str) -> Any:
    from cortex_mcp.prompts import load_prompt, prompts_dir  # imports the MCP SDK: only when used

    return load_prompt(prompts_dir() / name)


def _bullets(memories: list[Memory], *, dated: bool = False) -> str:
    return "\n".join(
        f"- [{m.occurred_at[:10]}] {m.content}" if dated else f"- {m.content}" for m in memories
    )
