"""Reflect: from the memories new since its last run, keep what the agent believes current.

One run of one agent, under the agent's lifecycle lease (`lifecycle:<agent>`: a reflect and a
lifecycle run of one agent never overlap; the lifecycle's own reflect phase runs under the lease
its run holds, through `plan_phase` and `run_phase`):

1. the new memories are read for single-valued slots and beliefs (what every recall does
   first: `ValidityKeeper.settle`, `BeliefKeeper.settle`), so superseded facts are closed and
   beliefs gain their new evidence;
2. each entity a new memory is linked to gets its page summary refreshed: extractively, its
   `SUMMARY_FACTS` most important current facts (superseded ones left out), each with its source;
   with an LLM configured, one call per entity writes the summary from the same facts (a
   failure keeps the extractive one, noted);
3. edits to core are proposed, never applied: a belief the new evidence made sure (confidence
   at least `PROMOTE_AT`, `PROMOTE_FOR` pieces for and none against) whose memory is not in
   core is proposed for promotion; a core memory whose fact was superseded is proposed for the
   archive. Each proposal has its reason, and a person accepts or rejects it (never twice).

The plan is computed the same way for a preview and a run. A run stores it first (a
`reflect_runs` row not finished yet), asks the LLM for its summaries (each kept in the stored
plan as it comes), then applies it in one transaction that finishes the run and moves the
agent's mark. A run stopped on the way (a crash, a cancelled task) leaves its stored plan, and
the next run, or preview, resumes from it instead of planning again: what was written stays,
the LLM is not asked twice, memories said since wait for the run after. A run with nothing new
since the mark changes nothing. The lifecycle stores its reflect phase's plan with its own plan,
before its first phase writes (`plan_phase(store=True)`), and carries it out after its last one
(`run_phase`); its preview shows the same plan (`plan_phase(store=False)`).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from cortex_mcp.engine.beliefs.keeper import BeliefKeeper
from cortex_mcp.engine.beliefs.validity import ValidityKeeper
from cortex_mcp.models import (
    Clock,
    CoreProposal,
    EntitySummaryChange,
    Layer,
    ReflectReport,
    new_id,
    to_iso,
)
from cortex_mcp.store.beliefs import BeliefStore
from cortex_mcp.store.interfaces import MemoryStorage
from cortex_mcp.store.lease import Lease, LeaseStore
from cortex_mcp.store.reflect import EntityFact, Proposal, ReflectStore

LEASE_PREFIX = "lifecycle:"  # the agent's lifecycle lease (engine/lifecycle/runner.py)
LEASE_SECONDS = 300.0
SUMMARY_FACTS = 5
SUMMARY_CHARS = 160  # each fact, at most
PROMOTE_AT = 0.65
PROMOTE_FOR = 4


def holder_is_gone(lease: Lease) -> bool:
    """A holder on this host whose process no longer exists crashed: its lease is void."""
    host, _, rest = lease.holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


class TextModel(Protocol):
    async def complete(self, prompt: str) -> str: ...


def extractive_summary(name: str, facts: Sequence[EntityFact]) -> str:
    """`Peter: prefers green tea (source x.md#L3); moved to Milan (memory 01a2…)`: the entity's
    most important current facts, newest first among equals."""
    chosen = _chosen(facts)
    if not chosen:
        return ""
    parts = [f"{_cut(fact.content)} ({_source(fact)})" for fact in chosen]
    return f"{name}: " + "; ".join(parts)


def _chosen(facts: Sequence[EntityFact]) -> list[EntityFact]:
    ranked = sorted(facts, key=lambda f: (-f.importance, _negated_time(f.occurred_at), f.memory_id))
    return ranked[:SUMMARY_FACTS]


def _negated_time(moment: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in moment)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _source(fact: EntityFact) -> str:
    return f"source {fact.source}" if fact.source else f"memory {fact.memory_id}"


def llm_prompt(name: str, facts: Sequence[EntityFact]) -> str:
    lines = "\n".join(f"- {_cut(f.content)} [{_source(f)}]" for f in _chosen(facts))
    return (
        f"Write a short summary (at most three sentences) of what is known now about {name},"
        " from these facts only, keeping each fact's source in square brackets after it."
        f"\n{lines}"
    )


class Reflector:
    def __init__(
        self,
        store: ReflectStore,
        beliefs: BeliefStore,
        memories: MemoryStorage,
        validity: ValidityKeeper,
        keeper: BeliefKeeper,
        leases: LeaseStore,
        clock: Clock,
        *,
        llm: TextModel | None = None,
        rewrite: Callable[[str], Awaitable[str]] | None = None,
    ) -> None:
        self.store = store
        self.beliefs = beliefs
        self.memories = memories
        self.validity = validity
        self.keeper = keeper
        self.leases = leases
        self.clock = clock
        self.llm = llm
        self.rewrite = rewrite
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    async def reflect(
        self, agent_id: str, *, since: timedelta | None = None, preview: bool = False
    ) -> ReflectReport:
        started = time.perf_counter()
        name = LEASE_PREFIX + agent_id
        held = await self.leases.acquire(name, self.holder, LEASE_SECONDS, is_stale=holder_is_gone)
        if held is not None:
            return ReflectReport(
                status="busy",
                agent_id=agent_id,
                notes=[
                    "a lifecycle run or another reflect of this agent runs"
                    f" (since {held.acquired_at})"
                ],
            )
        try:
            report = await self._reflect(agent_id, since, preview)
        finally:
            await self.leases.release(name, self.holder)
        report.took_ms = round((time.perf_counter() - started) * 1000, 1)
        return report

    async def _reflect(
        self, agent_id: str, since: timedelta | None, preview: bool
    ) -> ReflectReport:
        report, run_id, plan = await self._planned(
            agent_id, since, "preview" if preview else "done"
        )
        if preview or plan is None:
            return report
        if run_id is None:
            run_id = new_id()
            await self.store.store_plan(agent_id, run_id, plan["through"], plan, plan["started_at"])
        await self._finish(run_id, plan, report)
        return report

    async def plan_phase(
        self, agent_id: str, *, store: bool, decided: Collection[str] = ()
    ) -> ReflectReport:
        """The lifecycle's reflect phase, planned under the lease its run holds: the plan a
        run stopped on the way stored, else a fresh one, stored when `store` (a run, before its
        first phase writes) and not for a preview. `decided`: the memories the run's own phases
        promote, merge, archive or compress, which get no proposal (the run decides them)."""
        report, run_id, plan = await self._planned(agent_id, None, "preview")
        if decided:
            report.proposals = [p for p in report.proposals if p.memory_id not in decided]
            if plan is not None:
                plan["proposals"] = [p for p in plan["proposals"] if p["memory_id"] not in decided]
        if store and plan is not None and run_id is None:
            await self.store.store_plan(
                agent_id, new_id(), plan["through"], plan, plan["started_at"]
            )
        return report

    async def run_phase(self, agent_id: str) -> ReflectReport:
        """The lifecycle's reflect phase carried out: its stored plan (none: nothing new)."""
        stored = await self.store.stored_plan(agent_id)
        if stored is None:
            return ReflectReport(status="nothing new", agent_id=agent_id)
        run_id, plan = stored
        report = _report_of(plan, agent_id, "done")
        await self._finish(run_id, plan, report)
        return report

    async def _planned(
        self, agent_id: str, since: timedelta | None, status: str
    ) -> tuple[ReflectReport, str | None, dict[str, Any] | None]:
        """The plan of a run stopped on the way (with its run id), else a fresh plan (None
        when nothing is new): the same for a preview and a run."""
        now = self.clock.now()
        stored = await self.store.stored_plan(agent_id)
        if stored is not None:  # a run stopped on the way: its plan, not a new one
            run_id, plan = stored
            report = _report_of(plan, agent_id, status)
            report.notes.append(
                f"resumed the stored plan of a run started {plan.get('started_at', '?')}"
            )
            return report, run_id, plan
        report = ReflectReport(status=status, agent_id=agent_id)
        report.validity_changes = await self.validity.settle(agent_id, batches=None)
        report.belief_changes = await self.keeper.settle(agent_id, batches=None)
        after = await self.store.mark(agent_id)
        through = await self.store.newest_seq(agent_id)
        window = to_iso(now - since) if since is not None else None
        report.since = window
        new_ids = await self.store.new_memory_ids(agent_id, after, window)
        report.memories = len(new_ids)
        if not new_ids:
            report.status = "nothing new" if status == "done" else "preview"
            return report, None, None
        report.entities = await self._entity_pages(agent_id, after, window)
        report.proposals = await self._proposals(agent_id, after, now)
        return report, None, _plan_of(report, after, through, to_iso(now))

    async def _finish(self, run_id: str, plan: dict[str, Any], report: ReflectReport) -> None:
        """Carry out a stored plan: the LLM's summaries (each kept in the plan as it comes, so
        a resumed run does not ask again), then every change in one transaction."""
        agent_id = report.agent_id or ""
        await self._write_summaries(report, run_id, plan)
        proposals = [
            Proposal(
                id=p.id,
                agent_id=agent_id,
                memory_id=p.memory_id,
                action=p.action,
                reason=p.reason,
                status="pending",
                created_at=plan["started_at"],
            )
            for p in report.proposals
        ]
        await self.store.apply(
            agent_id,
            run_id,
            plan["through"],
            plan,
            {e.id: (e.summary, e.memory_ids) for e in report.entities},
            proposals,
            plan["started_at"],
            to_iso(self.clock.now()),
        )

    async def _entity_pages(
        self, agent_id: str, after: int, window: str | None
    ) -> list[EntitySummaryChange]:
        touched = await self.store.touched_entities(agent_id, after, window)
        if not touched:
            return []
        by_entity: dict[str, list[EntityFact]] = defaultdict(list)
        for fact in await self.store.facts(agent_id, touched):
            by_entity[fact.entity_id].append(fact)
        changes = []
        for entity in await self.store.entities(agent_id, touched):
            facts = by_entity.get(entity.id, [])
            summary = extractive_summary(entity.name, facts)
            if not summary or summary == entity.summary:
                continue
            changes.append(
                EntitySummaryChange(
                    id=entity.id,
                    name=entity.name,
                    summary=summary,
                    memory_ids=[f.memory_id for f in _chosen(facts)],
                    method="extractive",
                )
            )
        return changes

    async def _write_summaries(
        self, report: ReflectReport, run_id: str, plan: dict[str, Any]
    ) -> None:
        """With an LLM, one call per entity rewrites its summary from the same facts; each
        summary written is saved in the stored plan at once."""
        if self.llm is None or not report.entities:
            return
        for change in report.entities:
            if change.method == "llm":  # written before the run was interrupted
                continue
            facts = await self.store.facts(report.agent_id or "", [change.id])
            try:
                text = (await self.llm.complete(llm_prompt(change.name, facts))).strip()
            except Exception as error:  # any provider fault: the extractive summary stays
                report.notes.append(
                    f"entity {change.name}: LLM summary failed ({error}); kept the extractive one"
                )
                continue
            report.llm_calls += 1
            if text:
                change.summary = await self.rewrite(text) if self.rewrite else text
                change.method = "llm"
                plan["entities"] = [e.model_dump() for e in report.entities]
                await self.store.save_plan(run_id, plan)

    async def _proposals(self, agent_id: str, after: int, now: datetime) -> list[CoreProposal]:
        made = await self.store.pending_keys(agent_id)
        out: list[CoreProposal] = []
        for belief in await self.beliefs.touched_since(agent_id, after):
            if (belief.memory_id, "promote") in made:
                continue
            sure = (
                belief.confidence >= PROMOTE_AT
                and belief.for_count >= PROMOTE_FOR
                and belief.against_count == 0
            )
            if not sure:
                continue
            memory = (await self.memories.get_many([belief.memory_id])).get(belief.memory_id)
            if memory is None or memory.layer is Layer.core:
                continue
            last = (belief.last_evidence_at or "")[:10]
            reason = (
                f"a belief held at {belief.confidence:.2f} ({belief.for_count} for, 0 against;"
                f" last {last}): {belief.statement}"
            )
            out.append(
                CoreProposal(
                    id=new_id(), memory_id=belief.memory_id, action="promote", reason=reason
                )
            )
        for memory_id, valid_to in await self.store.superseded_core(agent_id):
            if (memory_id, "archive") in made:
                continue
            reason = f"no longer true: superseded on {valid_to[:10]} by a newer fact"
            out.append(
                CoreProposal(id=new_id(), memory_id=memory_id, action="archive", reason=reason)
            )
        return out

    async def pages_of(self, agent_id: str, memory_id: str) -> list[str]:
        """The entities whose page a memory may be quoted on: read before it leaves."""
        return await self.store.entities_linked(agent_id, memory_id)

    async def rewrite_pages(self, agent_id: str, entity_ids: Sequence[str]) -> None:
        """After a memory left (a purge above all): these entities' summaries written again,
        extractively, from the facts that remain, so no copy of its words stays on a page."""
        if not entity_ids:
            return
        by_entity: dict[str, list[EntityFact]] = defaultdict(list)
        for fact in await self.store.facts(agent_id, entity_ids):
            by_entity[fact.entity_id].append(fact)
        summaries = {
            entity.id: extractive_summary(entity.name, by_entity.get(entity.id, []))
            for entity in await self.store.entities(agent_id, entity_ids)
            if entity.summary
        }
        if summaries:
            await self.store.set_summaries(agent_id, summaries, to_iso(self.clock.now()))


def _plan_of(report: ReflectReport, after: int, through: int, started_at: str) -> dict[str, Any]:
    """What a run will do, as it is stored (and read back by a resumed run)."""
    return {
        "after": after,
        "through": through,
        "since": report.since,
        "memories": report.memories,
        "started_at": started_at,
        "entities": [e.model_dump() for e in report.entities],
        "proposals": [
            p.model_dump(include={"id", "memory_id", "action", "reason"}) for p in report.proposals
        ],
    }


def _report_of(plan: dict[str, Any], agent_id: str, status: str) -> ReflectReport:
    return ReflectReport(
        status=status,
        agent_id=agent_id,
        since=plan.get("since"),
        memories=int(plan.get("memories", 0)),
        entities=[EntitySummaryChange(**e) for e in plan.get("entities", [])],
        proposals=[CoreProposal(**p) for p in plan.get("proposals", [])],
    )
