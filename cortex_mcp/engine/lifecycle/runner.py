"""The lifecycle engine: plan, then apply phase by phase under a database lease per agent.

A run is one agent's: it stores its plan in `lifecycle_runs` (scope: the agent) and applies
one phase per transaction (promote, merge, archive, compress), each advancing the run's
progress marker in the same transaction, all under that agent's lease (one holder at a time
across every process on the database, and one run per agent within a process). A process that
dies between phases leaves a consistent database and a `running` row: the next run of that
agent resumes the plan where it stopped. The operator's run over every agent takes each
agent's lease in turn, one agent at a time, so no agent waits for the others; an agent whose
lease another run holds is skipped, tried once more after the rest, and then reported busy.
Indexes are refreshed once at the end. `preview` returns the same plans without applying them.

After the four phases comes reflect (engine/beliefs/reflect.py), as one more step of the same
run: its plan is made and stored (`reflect_runs`) with the run's own, before the first phase
writes, and carried out after the last one, under the same lease; its step advances the run's
progress marker like a phase, so a run stopped in it resumes there, from the stored plan. The
preview lists the same plan (`LifecycleReport.reflect`, counted as `reflect_*`).

A busy answer names no host or process (the caller may be another agent): the holder is
logged here instead.
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime, timedelta
from typing import Any, Protocol

import numpy as np

from cortex_mcp.config import LifecycleSettings
from cortex_mcp.engine import validate
from cortex_mcp.engine.lifecycle.plan import PHASES, Plan, extractive_summary, plan
from cortex_mcp.engine.lifecycle.texts import CascadeTextModel, PhaseTexts, TextModel
from cortex_mcp.errors import CortexError, InvalidInput, ReadOnlyStorage
from cortex_mcp.models import (
    Clock,
    Layer,
    LifecycleAction,
    LifecycleReport,
    Memory,
    ReflectReport,
    to_iso,
)
from cortex_mcp.store.interfaces import LifecycleStorage
from cortex_mcp.store.lease import Lease, LeaseStore
from cortex_mcp.store.lifecycle import PhaseResult, RunRecord

__all__ = ["CascadeTextModel", "LifecycleEngine", "PhaseCallback", "TextModel", "parse_moment"]

log = logging.getLogger(__name__)

LEASE_PREFIX = "lifecycle:"
EVERY_AGENT = "*"  # the scope of a run over every agent at once (before per-agent leases)
PhaseCallback = Callable[[str, int, int], Any]  # (phase, done, total); may be async
REFLECT = "reflect"  # the step after the phases (its index in the run's marker: len(PHASES))


class ReflectPhase(Protocol):
    """Reflect as the lifecycle's last step (engine/beliefs/reflect.Reflector)."""

    async def plan_phase(
        self, agent_id: str, *, store: bool, decided: Collection[str] = ()
    ) -> ReflectReport: ...

    async def run_phase(self, agent_id: str) -> ReflectReport: ...


class LifecycleEngine:
    def __init__(
        self,
        store: LifecycleStorage,
        leases: LeaseStore,
        settings: LifecycleSettings,
        archive_ttl: timedelta,
        clock: Clock,
        *,
        llm: TextModel | None = None,
        after_run: Callable[[], Awaitable[None]] | None = None,
        rewrite: Callable[[str], Awaitable[str]] | None = None,
        refresh_profile: Callable[[str], Awaitable[bool]] | None = None,
        vector_model: Callable[[], str | None] | None = None,
        reflect: ReflectPhase | None = None,
    ) -> None:
        self.store = store
        self.leases = leases
        self.settings = settings
        self.archive_ttl = archive_ttl
        self.clock = clock
        self.llm = llm
        self.after_run = after_run
        self.rewrite = rewrite or _unchanged  # redaction of generated text
        self.refresh_profile = refresh_profile  # rebuilds a stale profile by rules
        self.vector_model = vector_model  # the current embedding model's key, if any
        self.reflect = reflect  # the step after the phases, if any
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._running: set[str] = set()  # agents a run of this process is running now

    async def preview(
        self, now: datetime | None = None, agent_id: str | None = None
    ) -> LifecycleReport:
        started = time.perf_counter()
        moment = now or self.clock.now()
        interrupted = None if agent_id else await self.store.unfinished_run(EVERY_AGENT)
        if interrupted is not None:
            report = _remaining_of(interrupted, agent_id)
        else:
            report = LifecycleReport(status="preview", now=to_iso(moment), agent_id=agent_id)
            budget = self.settings.llm_max_calls
            for agent in [agent_id] if agent_id else await self.store.agents():
                unfinished = await self.store.unfinished_run(agent)
                if unfinished is not None:
                    part = _remaining_of(unfinished, agent_id)
                else:
                    made = await self._fresh_plan(agent, moment, budget)
                    budget -= made.llm_calls
                    part = LifecycleReport(
                        status="preview", now=made.now, agent_id=agent_id, actions=made.actions
                    )
                if unfinished is None or unfinished.next_phase <= len(PHASES):
                    whole = unfinished.plan if unfinished is not None else part.actions
                    part.reflect = await self._reflect_plan(agent, whole, store=False)
                report.actions += part.actions
                report.reflect += part.reflect
                report.resumed = report.resumed or part.resumed
                if agent_id:
                    report.now = part.now
        report.counts = _counts(report.actions, report.reflect)
        report.took_ms = _ms_since(started)
        return report

    async def run(
        self,
        now: datetime | None = None,
        agent_id: str | None = None,
        on_phase: PhaseCallback | None = None,
    ) -> LifecycleReport:
        """One agent's run, or with no agent the operator's run over every agent in turn."""
        started = time.perf_counter()
        moment = now or self.clock.now()
        interrupted = None if agent_id else await self.store.unfinished_run(EVERY_AGENT)
        if interrupted is not None:
            report = await self._finish_every_agent_run(interrupted, moment, on_phase)
        else:
            agents = [agent_id] if agent_id else await self.store.agents()
            report = await self._run_in_turn(agents, moment, agent_id, on_phase)
        if report.run_ids:
            await self._refresh()
        await _call(on_phase, "refresh", 1, 1)
        report.took_ms = _ms_since(started)
        log.info(
            "lifecycle run(s) %s: %s in %.0f ms%s",
            report.run_ids,
            report.counts,
            report.took_ms,
            f"; busy: {', '.join(report.busy_agents)}" if report.busy_agents else "",
        )
        return report

    async def erase_from_summaries(self, memory_id: str, agent_id: str) -> int:
        """A purged memory of `agent_id` may be quoted in one of its history summaries:
        rebuild each such summary from the agent's memories it still covers (extractively),
        so no copy of the text remains."""
        rewritten = 0
        for summary in await self.store.summaries_citing(memory_id, agent_id):
            covers = [i for i in summary.metadata.get("covers", []) if i != memory_id]
            found = await self.store.memories.get_many(covers, agent_id=agent_id)
            remaining = [found[i] for i in covers if i in found]
            period = str(summary.metadata.get("period", "?"))
            content = (
                extractive_summary(period, remaining)
                if remaining
                else f"[{period}] {len(covers)} archived memories (their text was removed)"
            )
            metadata = {**summary.metadata, "covers": covers, "method": "extractive"}
            await self.store.rewrite_summary(
                summary.id, content, metadata, to_iso(self.clock.now())
            )
            rewritten += 1
        return rewritten

    async def last_success(self) -> str | None:
        return await self.store.last_success()

    async def holder_of_lease(self, agent_id: str) -> Lease | None:
        return await self.leases.holder(LEASE_PREFIX + agent_id)

    # ---- the run ------------------------------------------------------------------------

    async def _run_in_turn(
        self,
        agents: list[str],
        moment: datetime,
        agent_id: str | None,
        on_phase: PhaseCallback | None,
    ) -> LifecycleReport:
        """Each agent's run under its own lease, one after the other; the agents whose lease
        another run holds get a second turn after the rest, then are reported busy."""
        combined = LifecycleReport(status="done", now=to_iso(moment), agent_id=agent_id)
        progress = _Progress(on_phase, len(agents), self._steps)
        budget = self.settings.llm_max_calls
        waiting = list(agents)
        busy: list[LifecycleReport] = []
        own_moment = combined.now
        for _turn in range(2):
            busy = []
            for agent in waiting:
                report, llm_calls = await self._run_agent(agent, moment, progress, budget)
                if report.status == "busy":
                    busy.append(report)
                    continue
                budget -= llm_calls
                progress.agent_done()
                _add(combined, report)
                own_moment = report.now
            waiting = [r.agent_id for r in busy if r.agent_id is not None]
            if not waiting:
                break
        combined.busy_agents = sorted(waiting)
        if waiting and not combined.run_ids:
            combined.status = "busy"
            combined.holder = busy[0].holder
        if len(agents) == 1:
            combined.now = own_moment  # a resumed run keeps its own moment
        combined.notes += [
            f"agent {agent} skipped: another lifecycle run holds its lease; run it again later"
            for agent in combined.busy_agents
            if len(agents) > 1
        ]
        combined.counts = _counts(combined.actions, combined.reflect)
        return combined

    async def _run_agent(
        self, agent: str, moment: datetime, progress: _Progress, budget: int
    ) -> tuple[LifecycleReport, int]:
        """One agent's run under its lease (the report, and the LLM calls its plan made), or
        a busy report naming no host or process (which the log names instead)."""
        busy = LifecycleReport(status="busy", now=to_iso(moment), agent_id=agent)
        if agent in self._running:
            log.info("lifecycle run for agent %r is busy: another run in this process", agent)
            busy.holder = "another lifecycle run of this agent, in this process"
            return busy, 0
        self._running.add(agent)
        try:
            name = LEASE_PREFIX + agent
            held = await self.leases.acquire(
                name, self.holder, self.settings.lease_seconds, is_stale=_holder_is_gone
            )
            if held is not None:
                log.info(
                    "lifecycle run for agent %r is busy: lease held by %s since %s",
                    agent,
                    held.holder,
                    held.acquired_at,
                )
                busy.holder = f"another lifecycle run of this agent (since {held.acquired_at})"
                return busy, 0
            try:
                return await self._run_locked(moment, agent, progress.callback, budget, [name])
            finally:
                await self.leases.release(name, self.holder)
        finally:
            self._running.discard(agent)

    async def _finish_every_agent_run(
        self, interrupted: RunRecord, moment: datetime, on_phase: PhaseCallback | None
    ) -> LifecycleReport:
        """A run over every agent at once that a process left unfinished (stored before runs
        were per agent) is finished first, under the lease of every agent in its plan."""
        agents = sorted({a.agent_id for a in interrupted.plan} - self._running)
        blocked = sorted({a.agent_id for a in interrupted.plan} & self._running)
        names: list[str] = []
        try:
            for agent in agents:
                held = await self.leases.acquire(
                    LEASE_PREFIX + agent,
                    self.holder,
                    self.settings.lease_seconds,
                    is_stale=_holder_is_gone,
                )
                if held is not None:
                    blocked.append(agent)
                    continue
                names.append(LEASE_PREFIX + agent)
            if blocked:
                report = LifecycleReport(status="busy", now=to_iso(moment))
                report.busy_agents = sorted(blocked)
                report.holder = "another lifecycle run (of an agent in the interrupted run)"
                return report
            self._running.update(agents)
            try:
                report, _ = await self._run_locked(
                    moment, None, on_phase, self.settings.llm_max_calls, names
                )
                return report
            finally:
                self._running.difference_update(agents)
        finally:
            for name in names:
                await self.leases.release(name, self.holder)

    async def _run_locked(
        self,
        now: datetime,
        agent_id: str | None,
        on_phase: PhaseCallback | None,
        budget: int,
        leases: list[str],
    ) -> tuple[LifecycleReport, int]:
        scope = agent_id or EVERY_AGENT
        started_at = to_iso(self.clock.now())
        unfinished = await self.store.unfinished_run(scope)
        decay: dict[str, float] = {}
        llm_calls = 0
        if unfinished is not None:
            run_id, run_at, actions = unfinished.id, unfinished.run_at, unfinished.plan
            first = unfinished.next_phase
            log.warning("resuming lifecycle run %d at phase %d", run_id, first)
        else:
            made = await self._fresh_plan(agent_id, now, budget)
            run_at, actions, decay, first = made.now, made.actions, made.decay_scores, 0
            llm_calls = made.llm_calls
            run_id = await self.store.start_run(scope, run_at, actions, started_at)
        report = LifecycleReport(
            status="done", run_id=run_id, now=run_at, agent_id=agent_id, resumed=first > 0
        )
        reflects = agent_id is not None and first <= len(PHASES)
        if reflects and agent_id is not None:  # its plan stored before any phase writes
            await self._reflect_plan(agent_id, actions, store=True)
        writer = PhaseTexts(self.store, self.settings, self.llm, self.rewrite)
        for index in range(first, len(PHASES)):
            phase = PHASES[index]
            todo = [a for a in actions if a.phase == phase]
            texts = await writer.for_actions(todo, run_at, report.notes)
            result = await self.store.apply_phase(
                run_id,
                index,
                todo,
                run_at,
                new_memories=texts,
                decay_scores=decay if phase == "archive" else None,
                delete_compressed=self.settings.delete_compressed_archive,
            )
            _merge_result(report, result)
            for name in leases:
                await self.leases.renew(name, self.holder, self.settings.lease_seconds)
            await _call(on_phase, phase, index + 1, self._steps)
        if reflects and agent_id is not None:
            report.reflect = await self._reflect_step(run_id, agent_id, leases)
            await _call(on_phase, REFLECT, len(PHASES) + 1, self._steps)
        await self._refresh_profiles(report)
        report.counts = _counts(report.actions, report.reflect)
        report.run_ids = [run_id]
        await self.store.finish_run(
            run_id,
            report.model_dump(include={"counts", "created", "notes"}),
            to_iso(self.clock.now()),
        )
        return report, llm_calls

    @property
    def _steps(self) -> int:
        """The steps of one agent's run: the phases, and reflect when there is one."""
        return len(PHASES) + (1 if self.reflect is not None else 0)

    async def _reflect_plan(
        self, agent_id: str, actions: list[LifecycleAction], *, store: bool
    ) -> list[ReflectReport]:
        """What the reflect step will do (stored for a run), as the report lists it: nothing
        when nothing is new. The memories the run's `actions` touch get no proposal."""
        if self.reflect is None:
            return []
        decided = {memory_id for action in actions for memory_id in action.ids}
        try:
            planned = await self.reflect.plan_phase(agent_id, store=store, decided=decided)
        except ReadOnlyStorage:
            if store:
                raise
            # its plan reads new memories for slots and beliefs first, a write
            log.warning("lifecycle preview of %s without its reflect step: read-only", agent_id)
            return []
        return [planned] if _changes(planned) else []

    async def _reflect_step(
        self, run_id: int, agent_id: str, leases: list[str]
    ) -> list[ReflectReport]:
        """The reflect step of a run: its stored plan carried out, then the run's marker moved
        past it (a crash in between: the next run finds the plan done and nothing new)."""
        if self.reflect is None:
            return []
        done = await self.reflect.run_phase(agent_id)
        await self.store.mark_phase_done(run_id, len(PHASES))
        for name in leases:
            await self.leases.renew(name, self.holder, self.settings.lease_seconds)
        return [done] if _changes(done) else []

    async def _fresh_plan(self, agent_id: str | None, moment: datetime, budget: int) -> Plan:
        """What a run starting now would do (preview and run must plan alike), making at most
        `budget` LLM calls (what is left of the whole run's)."""
        settings = self.settings.model_copy(update={"llm_max_calls": max(0, budget)})
        snapshot = await self.store.snapshot(
            agent_id, archive_before=to_iso(moment - self.archive_ttl)
        )
        made = plan(
            snapshot,
            moment,
            settings,
            self.archive_ttl,
            llm_available=self.llm is not None,
            vectors=await self._vectors(snapshot),
        )
        await self.redact_reasons(made.actions)
        return made

    async def redact_reasons(self, actions: list[LifecycleAction]) -> None:
        """Reasons go into the stored plan and the audit log: redacted like any stored text
        (each distinct reason once; a night has a handful)."""
        cleaned: dict[str, str] = {}
        for action in actions:
            if action.reason not in cleaned:
                cleaned[action.reason] = await self.rewrite(action.reason)
            action.reason = cleaned[action.reason]

    async def _vectors(self, snapshot: list[Memory]) -> dict[str, np.ndarray]:
        """Stored vectors of the current embedding model for the memories merge may compare."""
        model = self.vector_model() if self.vector_model is not None else None
        if not model:
            return {}
        ids = [m.id for m in snapshot if m.layer is not Layer.archive]
        blobs = await self.store.vectors(ids, model)
        return {i: np.frombuffer(blob, dtype=np.float32) for i, blob in blobs.items()}

    async def _refresh(self) -> None:
        """Once after the runs of a call: the text index merged, mirrors and vectors."""
        await self.store.optimize_text_index()
        if self.after_run is not None:
            await self.after_run()

    async def _refresh_profiles(self, report: LifecycleReport) -> None:
        """Phase 5: the profile of each agent whose core identity/preference/skill memories
        changed is rebuilt by rules (no LLM call; the user's manual edits are kept)."""
        if self.refresh_profile is None:
            return
        for agent in sorted({a.agent_id for a in report.actions}):
            try:
                rebuilt = await self.refresh_profile(agent)
            except CortexError as exc:  # the profile is a cache: the run's work stands
                report.notes.append(f"profile of {agent} not refreshed: {exc.message}")
                continue
            if rebuilt:
                report.notes.append(f"profile of {agent} rebuilt from core memory")


async def _unchanged(text: str) -> str:
    return text


def parse_moment(value: str | datetime | None, field: str = "now") -> datetime | None:
    """An ISO-8601 moment within the range of valid moments; without an offset it is local
    time."""
    if value is None or isinstance(value, datetime):
        return value
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{field}: {value!r} is not an ISO-8601 date or time (e.g. 2026-03-01T03:00)",
            field=field,
        ) from None
    try:
        local = moment if moment.tzinfo is not None else moment.astimezone()
    except (ValueError, OverflowError):  # year 1 or 9999 pushed off the calendar
        local = None
    if local is None or not validate.in_range(local):
        rule = f"{validate.RANGE_RULE}, got {validate.preview(value)}"
        raise InvalidInput(f"{field}: {rule}", field=field)
    return local


def _holder_is_gone(lease: Lease) -> bool:
    """A holder on this host whose process no longer exists crashed: its lease is void."""
    host, _, rest = lease.holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _remaining(actions: list[LifecycleAction], next_phase: int) -> list[LifecycleAction]:
    return [a for a in actions if PHASES.index(a.phase) >= next_phase]


def _remaining_of(run: RunRecord, agent_id: str | None) -> LifecycleReport:
    """The preview of an interrupted run: what it has left to do."""
    actions = _remaining(run.plan, run.next_phase)
    return LifecycleReport(
        status="preview", now=run.run_at, agent_id=agent_id, resumed=True, actions=actions
    )


def _add(combined: LifecycleReport, report: LifecycleReport) -> None:
    combined.actions += report.actions
    combined.reflect += report.reflect
    combined.skipped += report.skipped
    combined.created.update(report.created)
    combined.notes += report.notes
    combined.run_ids += report.run_ids
    combined.resumed = combined.resumed or report.resumed
    combined.run_id = combined.run_ids[0] if len(combined.run_ids) == 1 else None


class _Progress:
    """The operator's callback over several agents' runs: the phases of the agents done so
    far count towards one total (every agent's phases and reflect step, then the refresh)."""

    def __init__(self, on_phase: PhaseCallback | None, agents: int, steps: int) -> None:
        self.on_phase = on_phase
        self.steps = steps  # of each agent's run: the phases, and reflect
        self.total = agents * steps + 1
        self.done = 0

    async def callback(self, phase: str, done: int, total: int) -> None:
        await _call(self.on_phase, phase, self.done * self.steps + done, self.total)

    def agent_done(self) -> None:
        self.done += 1


def _merge_result(report: LifecycleReport, result: PhaseResult) -> None:
    report.actions.extend(result.applied)
    report.skipped.extend(result.skipped)
    report.created.update(result.created)


def _counts(
    actions: list[LifecycleAction], reflect: list[ReflectReport] | None = None
) -> dict[str, int]:
    counts = {kind: 0 for kind in ("promote", "expire", "merge", "archive", "compress")}
    for action in actions:
        counts[action.kind] += 1
    counts["memories_touched"] = sum(len(a.ids) for a in actions)
    if reflect is not None:
        counts["reflect_memories"] = sum(r.memories for r in reflect)
        counts["reflect_summaries"] = sum(len(r.entities) for r in reflect)
        counts["reflect_proposals"] = sum(len(r.proposals) for r in reflect)
    return counts


def _changes(report: ReflectReport) -> bool:
    """Whether a reflect plan changes anything (new memories read, a page, a proposal)."""
    return bool(report.memories or report.entities or report.proposals)


async def _call(callback: PhaseCallback | None, phase: str, done: int, total: int) -> None:
    if callback is None:
        return
    outcome = callback(phase, done, total)
    if inspect.isawaitable(outcome):
        await outcome


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
