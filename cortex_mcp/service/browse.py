"""What the dashboard reads beyond the tools: the memory table (keyset pages), agents, a memory's
provenance, search under two settings, lifecycle runs, the extraction log and the system report.
Every method acts for one agent. (Its edits, restore and correct, are memory operations:
`service/memories.py`.)"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass
from datetime import timedelta, tzinfo
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.recall.latency import LatencyWindow
from cortex_mcp.engine.recall.report import debug_report
from cortex_mcp.engine.recall.timeline import timeline as fitted_timeline
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import LOCAL, Caller, Category, Clock, Layer, Memory, to_iso
from cortex_mcp.providers.cascade import EmbeddingCascade
from cortex_mcp.providers.llm import LLMCascade
from cortex_mcp.search.hybrid import HybridSearch
from cortex_mcp.search.text import build_query, quote
from cortex_mcp.service.memories import MemoryService, unique
from cortex_mcp.service.reading import MemoryReading
from cortex_mcp.service.requests import AgentRequest, build
from cortex_mcp.service.status import StatusService
from cortex_mcp.store.backend import Stores
from cortex_mcp.store.browse import SORTS, STATUSES, BrowseStore, TableQuery
from cortex_mcp.zones import zone

SEARCH_MODES = ("hybrid", "text", "vector")
_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@dataclass(kw_only=True)
class BrowseService:
    """The dashboard's reads (the REST routes in transports/dashboard_api.py)."""

    settings: Settings
    stores: Stores
    reading: MemoryReading
    memories: MemoryService
    status: StatusService
    searcher: HybridSearch
    embeddings: EmbeddingCascade
    llm: LLMCascade
    provider_notes: list[str]
    llm_notes: list[str]
    latency: LatencyWindow
    clock: Clock
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    @property
    def browser(self) -> BrowseStore:
        return self.stores.browse

    def _agent(self, agent_id: str | None) -> str:
        return validate.agent_for(self.caller, agent_id, self.settings.agent_id)

    # ---- the memory table ---------------------------------------------------------------

    async def browse_memories(
        self,
        agent_id: str | None = None,
        *,
        sort: str = "created_at",
        order: str = "desc",
        limit: int = 50,
        cursor: str | None = None,
        layer: str | None = None,
        category: str | None = None,
        status: str = "live",
        since: str | None = None,
        until: str | None = None,
        occurred_since: str | None = None,
        occurred_until: str | None = None,
        q: str | None = None,
    ) -> dict[str, Any]:
        """One page of the agent's memories: {memories, next_cursor, total and total_capped
        (first page only; a text or date filter counts up to 10,000)}. `since`/`until` bound
        when they were stored, `occurred_since`/`occurred_until` when they happened; a date
        without an offset is the user's (CORTEX_TIMEZONE)."""
        where = zone(self.settings.timezone)
        if sort not in SORTS:
            raise InvalidInput(f"sort: must be one of {', '.join(SORTS)}", field="sort")
        if status not in STATUSES:
            raise InvalidInput(f"status: must be one of {', '.join(STATUSES)}", field="status")
        query = TableQuery(
            agent_id=self._agent(agent_id),
            sort=sort,
            descending=order != "asc",
            limit=validate.int_range("limit", limit, 1, 500),
            after=_decode_cursor(cursor, sort) if cursor else None,
            layer=validate.member("layer", layer, Layer).value if layer else None,
            category=validate.member("category", category, Category).value if category else None,
            status=status,
            since=_moment("since", since, where),
            until=_moment("until", until, where),
            occurred_since=_moment("occurred_since", occurred_since, where),
            occurred_until=_moment("occurred_until", occurred_until, where),
            match=_match_all(q) if q and q.strip() else None,
        )
        if q and q.strip() and query.match is None:
            return {"memories": [], "next_cursor": None, "total": 0, "total_capped": False}
        page = await self.browser.page(query, count=cursor is None)
        return {
            "memories": [m.model_dump(mode="json") for m in page.memories],
            "next_cursor": _encode_cursor(page.next_after) if page.next_after else None,
            "total": page.total,
            "total_capped": page.total_capped,
        }

    async def agents(self, agent_id: str | None = None) -> dict[str, Any]:
        """Agents with memories (and this server's default, even before it has any); an
        agent token's caller sees its own agent only (and may name no other). `timezone`: the
        zone the dashboard shows times in (CORTEX_TIMEZONE)."""
        self._agent(agent_id)  # an agent token naming another agent is refused here
        zone = self.settings.timezone
        if self.caller.is_agent:  # an agent token sees its own agent, no other
            own = self._agent(None)
            counts = await self.stores.memories.counts(own)
            mine = [{"agent_id": own, "memories": counts["total"]}]
            return {"agents": mine, "default": own, "timezone": zone}
        found = await self.browser.agents()
        names = {a["agent_id"] for a in found}
        if self.settings.agent_id not in names:
            found.append({"agent_id": self.settings.agent_id, "memories": 0})
        found.sort(key=lambda a: a["agent_id"])
        return {"agents": found, "default": self.settings.agent_id, "timezone": zone}

    async def timeline(
        self, agent_id: str | None = None, days: int | None = None, fit: str = "auto"
    ) -> dict[str, Any]:
        """Live memories by when they happened (`occurred_at`), bucketed for a chart whose
        axis fits them (engine/recall/timeline.py says how); `days`: only the last `days` days;
        `fit`: "auto" leaves far outliers off the chart (counted), "all" shows every one."""
        if fit not in ("auto", "all"):
            raise InvalidInput("fit: must be auto or all", field="fit")
        since = None
        if days is not None:
            span = validate.int_range("days", days, 1, 3660)
            since = to_iso(self.clock.now() - timedelta(days=span))[:10]
        rows = await self.browser.per_day(self._agent(agent_id), since)
        return {
            "since": since,
            "fit": fit,
            **fitted_timeline(rows, [layer.value for layer in Layer], fit=fit == "auto"),
        }

    # ---- one memory ---------------------------------------------------------------------

    async def memory_page(self, memory_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """memory_detail plus where it came from, the summary covering it and its audit log."""
        detail = await self.reading.memory_detail(memory_id, build(AgentRequest, agent_id=agent_id))
        memory = Memory.model_validate(detail["memory"])
        covering = await self.browser.summaries_covering(memory)
        return {
            **detail,
            "provenance": await self._provenance(memory),
            "covered_by": [m.model_dump(mode="json") for m in covering],
            "history": await self.browser.history(memory.id),
        }

    async def _provenance(self, memory: Memory) -> dict[str, Any]:
        meta = memory.metadata
        turn_id = meta.get("turn_id")
        turn = await self.browser.turn_of(memory.agent_id, turn_id) if turn_id else None
        if turn_id:
            kind = "turn"
        elif meta.get("imported_from") or (memory.source or "").startswith("import"):
            kind = "import"
        elif memory.source == "lifecycle":
            kind = "lifecycle"
        elif memory.source == "correction":
            kind = "correction"
        else:
            kind = "remember"
        return {"kind": kind, "source": memory.source, "metadata": meta, "turn": turn}

    # ---- search under two settings ------------------------------------------------------

    async def search_compare(
        self,
        query: str,
        variants: list[dict[str, Any]],
        limit: int = 10,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """The search debugger's report for each variant ({mode, fusion?, mmr?,
        temporal_decay?}) of the same query: what each setting changes, side by side."""
        text = validate.query(query)
        size = validate.int_range("limit", limit, 1, 50)
        filters = self.memories.filters(agent_id, None, None)
        reports = []
        for variant in variants:
            mode = variant.get("mode", "hybrid")
            if mode not in SEARCH_MODES:
                raise InvalidInput(f"mode: must be one of {', '.join(SEARCH_MODES)}", field="mode")
            overrides = {
                k: variant[k]
                for k in ("fusion", "mmr", "temporal_decay")
                if variant.get(k) is not None
            }
            settings = self.settings.search.model_copy(update=overrides)
            outcome = await self.searcher.search(
                text, filters, size, self.clock.now(), mode=mode, settings=settings, debug=True
            )
            report = debug_report(outcome, settings)
            report["mode"] = mode
            report["degraded"] = unique(outcome.degraded)
            reports.append(report)
        return {"query": text, "variants": reports}

    # ---- lifecycle and extraction -------------------------------------------------------

    async def lifecycle_runs(self, agent_id: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Past runs that covered this agent (its own or every agent's): when, status, the
        run's counts, and the steps of its plan that acted on this agent (with their counts)."""
        agent = self._agent(agent_id)
        runs = await self.browser.runs(agent, validate.int_range("limit", limit, 1, 200))
        for run in runs:
            run["agent_counts"] = _count_kinds(run["actions"])
        return {"runs": runs}

    async def extraction_log(
        self, agent_id: str | None = None, limit: int = 20, before: int | None = None
    ) -> dict[str, Any]:
        """Ingested turns, newest first, each with the memories the sieve (high signals) and
        the LLM (extracted) made of it, as they are now."""
        agent = self._agent(agent_id)
        size = validate.int_range("limit", limit, 1, 200)
        turns, next_seq = await self.browser.turns(agent, size, before)
        ids = [i for t in turns for part in t["result"].values() for i in part]
        found = await self.browser.memories_of(agent, ids)
        for turn in turns:
            result = turn.pop("result")
            for part in ("high_signals", "extracted"):
                turn[part] = [
                    found[i].model_dump(mode="json") if i in found else {"id": i, "purged": True}
                    for i in result.get(part, [])
                ]
        return {"turns": turns, "next_before": next_seq}

    # ---- system -------------------------------------------------------------------------

    async def system_report(
        self, agent_id: str | None = None, with_health: bool = True
    ) -> dict[str, Any]:
        agent = self._agent(agent_id)
        agents = (await self.agents())["agents"]
        report = {
            "agent_id": agent,
            "memories": await self.stores.memories.counts(agent),
            "agents": agents,
            "recall_latency_ms": self.latency.summary(),
            "llm": {
                "providers": self.llm.names,
                "counts": await self.stores.counters.read("llm"),
                "failures": dict(self.llm.failures),
                "notes": list(self.llm_notes),
            },
            "embeddings": {
                "providers": [p.name for p in self.embeddings.providers],
                "calls": self.embeddings.calls,
                "vectors": await self.stores.vectors.counts(),
                "cache_rows": await self.stores.vectors.cache_size(),
                "notes": list(self.provider_notes),
            },
            "ingest": {
                "turns": await self.stores.turns.counts(agent if self.caller.is_agent else None),
                "counts": await self.stores.counters.read("ingest"),
            },
            "storage": await self.browser.storage(),
            "health": await self.status.health_check() if with_health else None,
            "settings": self.settings_in_force(),
        }
        return _own_system_view(report) if self.caller.is_agent else report

    def settings_in_force(self) -> dict[str, Any]:
        """The settings, secrets masked (pydantic shows a SecretStr as asterisks); provider
        keys read from the environment only as set / not set."""
        shown = self.settings.model_dump(mode="json")
        shown["provider_keys"] = {
            name: "set" if os.environ.get(name) else "not set" for name in _PROVIDER_KEYS
        }
        return shown


def _count_kinds(actions: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for action in actions:
        counts[action.get("kind", "?")] = counts.get(action.get("kind", "?"), 0) + 1
    return counts


def _match_all(text: str) -> str | None:
    """An FTS5 expression requiring every term of `text` (None when it has no term)."""
    parsed = build_query(validate.query(text))
    return " AND ".join(quote(term) for term in parsed.terms) or None


def _encode_cursor(after: tuple[Any, int]) -> str:
    raw = json.dumps([after[0], after[1]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    problem = InvalidInput(
        "cursor: not a cursor this listing returned (pass next_cursor back as is, with the"
        " same sort)",
        field="cursor",
    )
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, seq = json.loads(raw)
    except (ValueError, TypeError, binascii.Error):
        raise problem from None
    numeric = sort in ("importance", "access_count")
    kind_ok = isinstance(value, int | float) if numeric else isinstance(value, str)
    if not kind_ok or not isinstance(seq, int) or isinstance(seq, bool):
        raise problem
    return value, seq


def _own_system_view(report: dict[str, Any]) -> dict[str, Any]:
    """The system report as an agent token's caller sees it: no counts over the whole
    database (vectors, cache, storage, every agent's LLM and ingest counters), no settings."""
    shown = {k: v for k, v in report.items() if k not in ("storage", "settings")}
    shown["memories"] = {k: v for k, v in report["memories"].items() if not k.endswith("_rows")}
    shown["llm"] = {k: v for k, v in report["llm"].items() if k != "counts"}
    shown["embeddings"] = {
        k: v for k, v in report["embeddings"].items() if k not in ("vectors", "cache_rows", "calls")
    }
    shown["ingest"] = {"turns": report["ingest"]["turns"]}
    return shown


def _moment(name: str, value: str | None, where: tzinfo) -> str | None:
    return to_iso(validate.moment_of(name, value, where)) if value else None
