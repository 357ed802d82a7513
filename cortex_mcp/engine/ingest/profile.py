"""The self-evolving user profile (seed 000 §5.2.7): synthesised from core memory, cached,
fed back into the extraction prompt.

It goes stale when a core identity/preference/skill memory changes and is rebuilt lazily, by
rules (no LLM call, so an ingest never pays for it). An LLM synthesis with ``prompts/profile.md``
runs on request (`refresh`). The user's manual edits are stored apart and laid over whatever is
generated, so a re-synthesis never overwrites them.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any

from cortex_mcp.engine import validate
from cortex_mcp.engine.ingest.extraction import parse_object, render
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.errors import InvalidInput, ProviderError
from cortex_mcp.models import Clock, Layer, Memory, to_iso
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.profiles import ProfileRow, ProfileStore
from cortex_mcp.tokenize import CJK_CHAR

log = logging.getLogger(__name__)

TEXT_FIELDS = ("summary", "language_preferences")
LIST_FIELDS = ("domains", "high_value_signals", "low_value_signals", "active_projects")
FIELDS = (*TEXT_FIELDS, *LIST_FIELDS)
_HIRAGANA_KATAKANA = range(0x3040, 0x3100)
SUMMARY_CHARS = 600
_SENTENCE_ENDS = ".!?…。！？"
_WIDE_ENDS = "。！？"
_TRAILING = " ,;:，、；："  # a memory ending in a comma or colon still ends its sentence

_SIGNALS_BY_CATEGORY = {
    "decision": "Decisions they made and the reasons behind them",
    "project_state": "Progress and blockers of their ongoing projects",
    "fact": "Results and verified facts reached together (avoid redoing the work)",
    "preference": "How they react to suggestions: what they accept or reject",
    "todo": "Pending actions and follow-ups",
    "correction": "Corrections of earlier beliefs",
    "relationship": "People, organisations and assets they are connected to",
}


# The speaker's own words said of them: a first-person memory ("I'm a nurse in Leeds", "我是
# 护士", "私は看護師です") reads in the profile as about the user ("They're a nurse in Leeds").
# English turns to "they", which takes the verb as "I" does (but am, was and I'm).
_FIRST_PERSON: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\bI am\b", "they are"),
        (r"\bI'm\b", "they're"),
        (r"\bI was\b", "they were"),
        (r"\bI\b", "they"),
        (r"\b[Mm]yself\b", "themselves"),
        (r"\b[Mm]ine\b", "theirs"),
        (r"\b[Mm]y\b", "their"),
        (r"\b[Mm]e\b", "them"),
        (r"我(?!们)", "用户"),
        (r"(?:私|僕|俺)(?=[はがのもにをと])", "ユーザー"),
    )
)

# A project whose state says it is over: not an active project any more
_FINISHED = re.compile(
    r"\b(?:launched|shipped|released|finished|completed|wrapped up|went live|is live|"
    r"is done|are done|was done|delivered|cancell?ed|abandoned|closed down|shut down)\b|"
    r"(?:已经?|已)(?:上线|发布|完成|结束|取消)|(?:上线|发布|完成|结束|取消)了|"
    r"(?:リリース|完了|終了|公開|中止)(?:した|しました|済み|済)|終わった|終わりました",
    re.IGNORECASE,
)


def about_the_user(text: str) -> str:
    """A memory's words as said of the user, not by them (see _FIRST_PERSON)."""
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def _active(projects: list[str]) -> list[str]:
    return [p for p in projects if not _FINISHED.search(p)]


def _language(memories: list[Memory]) -> str:
    text = "".join(m.content for m in memories)
    cjk = CJK_CHAR.findall(text)
    if not cjk or len(cjk) < len(text) * 0.2:
        return "Writes mostly in English"
    kana = sum(1 for ch in cjk if ord(ch) in _HIRAGANA_KATAKANA)
    return "Writes mostly in Japanese" if kana > len(cjk) * 0.2 else "Writes mostly in Chinese"


def _sentence(text: str) -> str:
    """`text` on one line, ending as a sentence ends (a full stop added where none is)."""
    flat = " ".join(text.split()).rstrip(_TRAILING)
    if not flat or flat[-1] in _SENTENCE_ENDS:
        return flat
    return flat + ("。" if CJK_CHAR.match(flat[-1]) else ".")


def summary_of(parts: list[str], limit: int = SUMMARY_CHARS) -> str:
    """Memories as one readable paragraph: each its own sentence, whole sentences up to `limit`
    characters (the first one cut with an ellipsis if it alone is longer)."""
    out = ""
    for part in filter(None, map(_sentence, parts)):
        wide = not out or out[-1] in _WIDE_ENDS or CJK_CHAR.match(out[-1])  # no space after
        joined = out + part if wide else f"{out} {part}"
        if len(joined) > limit:
            return out or part[: limit - 1] + "…"
        out = joined
    return out


def rule_profile(core: list[Memory]) -> dict[str, Any]:
    """A profile built from core memories by rules alone (no LLM)."""
    by: dict[str, list[str]] = {}
    for memory in core:
        by.setdefault(memory.category.value, []).append(memory.content)
    parts = by.get("identity", [])[:3] + by.get("preference", [])[:3]
    present = Counter(m.category.value for m in core)
    return {
        "summary": summary_of([about_the_user(part) for part in parts]),
        "domains": by.get("skill", [])[:5],
        "high_value_signals": [s for c, s in _SIGNALS_BY_CATEGORY.items() if present[c]],
        "low_value_signals": ["Small talk, greetings and one-off chit-chat"],
        "language_preferences": _language(core),
        "active_projects": _active(by.get("project_state", []))[:5],
    }


def merge(generated: dict[str, Any], manual: dict[str, Any]) -> dict[str, Any]:
    """Manual edits over the generated profile: text fields replace, list items come first,
    and anything listed under ``exclude`` is removed from the generated lists."""
    excluded = {str(x).casefold() for x in manual.get("exclude", [])}
    out: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        out[name] = manual.get(name) or generated.get(name) or ""
    for name in LIST_FIELDS:
        items = [*manual.get(name, []), *generated.get(name, [])]
        kept = [i for i in items if str(i).casefold() not in excluded]
        out[name] = list(dict.fromkeys(kept))
    return out


def prompt_block(profile: dict[str, Any] | None) -> str:
    """The profile as the paragraph appended to the extraction prompt ("" when none)."""
    if not profile or not any(profile.get(f) for f in FIELDS):
        return ""
    lines = ["", "About this user (built from their memories; use it to judge what matters):"]
    if profile.get("summary"):
        lines.append(str(profile["summary"]))
    if profile.get("domains"):
        lines.append("Their domains: " + "; ".join(profile["domains"]))
    if profile.get("high_value_signals"):
        lines.append("Especially worth keeping (give higher importance):")
        lines += [f"- {s}" for s in profile["high_value_signals"]]
    if profile.get("low_value_signals"):
        lines.append("Usually not worth keeping (skip or give low importance):")
        lines += [f"- {s}" for s in profile["low_value_signals"]]
    if profile.get("language_preferences"):
        lines.append("Language: " + str(profile["language_preferences"]))
    if profile.get("active_projects"):
        lines.append("Active projects: " + "; ".join(profile["active_projects"]))
    return "\n".join(lines) + "\n"


def readable(profile: dict[str, Any]) -> str:
    block = prompt_block(profile).strip()
    return block or "No profile yet: it is built once core memory holds facts about the user."


def _clean_edit(changes: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in changes.items():
        if name in TEXT_FIELDS:
            if not isinstance(value, str):
                raise InvalidInput(f"{name}: must be text", field=name)
            out[name] = validate.no_nul(name, value).strip()
        elif name in (*LIST_FIELDS, "exclude"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InvalidInput(f"{name}: must be a list of strings", field=name)
            validate.no_nul_inside(name, value)
            out[name] = [v.strip() for v in value if v.strip()]
        else:
            allowed = ", ".join((*FIELDS, "exclude"))
            raise InvalidInput(f"{name}: not a profile field; use one of: {allowed}", field=name)
    return out


class ProfileKeeper:
    def __init__(
        self,
        *,
        store: ProfileStore,
        memories: MemoryStorage,
        llm: LLMCascade | None,
        redactor: Redactor,
        clock: Clock,
    ) -> None:
        self.store = store
        self.memories = memories
        self.llm = llm
        self.redactor = redactor
        self.clock = clock

    def _now(self) -> str:
        return to_iso(self.clock.now())

    async def _core(self, agent_id: str) -> list[Memory]:
        core = await self.memories.list_layer(agent_id, Layer.core, self._now(), limit=200)
        return [m for m in core if m.category.value != "profile"]

    async def current(self, agent_id: str) -> dict[str, Any] | None:
        """The cached profile, rebuilt by rules first if its source memories changed;
        None on a cold start (no core memory, no manual edit)."""
        fingerprint = await self.store.fingerprint(agent_id, self._now())
        row = await self.store.get(agent_id)
        if row is None or row.fingerprint != fingerprint:
            core = await self._core(agent_id)
            if not core and (row is None or not row.manual):
                return None
            await self.store.save_generated(
                agent_id, rule_profile(core), fingerprint, "rules", self._now()
            )
            row = await self.store.get(agent_id)
        assert row is not None
        return self._view(row)

    async def refresh_if_stale(self, agent_id: str) -> bool:
        """Rebuild the profile by rules now when its source memories changed (manual edits
        stay laid over it); True when it was rebuilt. The lifecycle calls this after a run."""
        fingerprint = await self.store.fingerprint(agent_id, self._now())
        row = await self.store.get(agent_id)
        if row is not None and row.fingerprint == fingerprint:
            return False
        if row is None and fingerprint.startswith("0:"):
            return False  # nothing to build from and no profile yet: stays a cold start
        return await self.current(agent_id) is not None

    async def synthesise(self, agent_id: str) -> dict[str, Any]:
        """Rebuild now: with the LLM when one is configured (falling back to rules)."""
        fingerprint = await self.store.fingerprint(agent_id, self._now())
        core = await self._core(agent_id)
        generated, built_by = rule_profile(core), "rules"
        if self.llm is not None and self.llm.providers and core:
            try:
                generated, built_by = await self._llm_profile(core), "llm"
            except ProviderError as exc:
                log.warning("profile synthesis by LLM failed, kept the rules: %s", exc.message)
        generated = await self.redactor.clean_json(generated)
        await self.store.save_generated(agent_id, generated, fingerprint, built_by, self._now())
        row = await self.store.get(agent_id)
        assert row is not None
        return self._view(row)

    async def _llm_profile(self, core: list[Memory]) -> dict[str, Any]:
        assert self.llm is not None
        listing = "\n".join(f"- [{m.category.value}] {m.content}" for m in core)
        prompt = render("profile.md", core_memories=listing)
        completion = await self.llm.complete("You write concise, grounded user profiles.", prompt)
        data = parse_object(completion.text, {"summary"})
        out: dict[str, Any] = {}
        for name in TEXT_FIELDS:
            out[name] = str(data.get(name) or "")
        for name in LIST_FIELDS:
            value = data.get(name) or []
            out[name] = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return out

    async def edit(self, agent_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Manual edits (source "manual"): merged over the stored ones; an empty value clears."""
        cleaned = _clean_edit(changes)
        for name, value in cleaned.items():
            if isinstance(value, str):
                cleaned[name] = await self.redactor.clean(value) if value else value
            else:
                cleaned[name] = await self.redactor.clean_many(value) if value else value
        row = await self.store.get(agent_id)
        manual = dict(row.manual) if row else {}
        for name, value in cleaned.items():
            if value:
                manual[name] = value
            else:
                manual.pop(name, None)
        await self.store.save_manual(agent_id, manual, self._now())
        return await self.current(agent_id) or self._view(await self._row(agent_id))

    async def _row(self, agent_id: str) -> ProfileRow:
        row = await self.store.get(agent_id)
        assert row is not None
        return row

    def _view(self, row: ProfileRow) -> dict[str, Any]:
        profile = merge(row.generated, row.manual)
        return {
            "agent_id": row.agent_id,
            **profile,
            "source": {
                "built_by": row.built_by,
                "built_at": row.built_at,
                "manual_fields": sorted(row.manual),
            },
            "manual": row.manual,
        }
