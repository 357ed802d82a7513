"""The lifecycle engine: plan, then apply phase by phase under a database lease.

A run stores its plan in `lifecycle_runs` and applies one phase per transaction (promote,
merge, archive, compress), each advancing the run's progress marker in the same transaction;
then it refreshes indexes and reports. A process that dies between phases leaves a
consistent database and a `running` row: the next run resumes that plan where it stopped.
`preview` returns the same plan without applying it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from cortex_mcp.config import LifecycleSettings
from cortex_mcp.engine.lifecycle.plan import PHASES, Plan, extractive_summary, plan
from cortex_mcp.engine.lifecycle.texts import CascadeTextModel, PhaseTexts, TextModel
from cortex_mcp.errors import CortexError, InvalidInput
from cortex_mcp.models import Clock, Layer, LifecycleAction, LifecycleReport, Memory, to_iso
from cortex_mcp.store.interfaces import LifecycleStorage
from cortex_mcp.store.lease import Lease, LeaseStore
from cortex_mcp.store.lifecycle import PhaseResult

__all__ = ["CascadeTextModel", "LifecycleEngine", "PhaseCallback", "TextModel", "parse_moment"]

log = logging.getLogger(__name__)

LEASE_NAME = "lifecycle"
PhaseCallback = Callable[[str, int, int], Any]  # (phase, done, total); may be async


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
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._running = asyncio.Lock()  # the lease is this process's: one run in it at a time

    async def preview(
        self, now: datetime | None = None, agent_id: str | None = None
    ) -> LifecycleReport:
        started = time.perf_counter()
        scope = agent_id or "*"
        unfinished = await self.store.unfinished_run(scope)
        if unfinished is not None:
            actions = _remaining(unfinished.plan, unfinished.next_phase)
            report = LifecycleReport(
                status="preview", now=unfinished.run_at, agent_id=agent_id, resumed=True
            )
        else:
            made = await self._fresh_plan(agent_id, now)
            actions = made.actions
            report = LifecycleReport(status="preview", now=made.now, agent_id=agent_id)
        report.actions = actions
        report.counts = _counts(actions)
        report.took_ms = _ms_since(started)
        return report

    async def run(
        self,
        now: datetime | None = None,
        agent_id: str | None = None,
        on_phase: PhaseCallback | None = None,
    ) -> LifecycleReport:
        started = time.perf_counter()
        if self._running.locked():  # the scheduler's run, or another request's, in this process
            return LifecycleReport(
                status="busy",
                now=to_iso(now or self.clock.now()),
                agent_id=agent_id,
                holder=f"{self.holder} (this process)",
            )
        async with self._running:
            busy = await self.leases.acquire(
                LEASE_NAME, self.holder, self.settings.lease_seconds, is_stale=_holder_is_gone
            )
            if busy is not None:
                return LifecycleReport(
                    status="busy",
                    now=to_iso(now or self.clock.now()),
                    agent_id=agent_id,
                    holder=f"{busy.holder} (since {busy.acquired_at})",
                )
            try:
                report = await self._run_locked(now, agent_id, on_phase)
            finally:
                await self.leases.release(LEASE_NAME, self.holder)
        report.took_ms = _ms_since(started)
        log.info("lifecycle run %s: %s in %.0f ms", report.run_id, report.counts, report.took_ms)
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

    async def holder_of_lease(self) -> Lease | None:
        return await self.leases.holder(LEASE_NAME)

    # ---- the run ------------------------------------------------------------------------

    async def _run_locked(
        self, now: datetime | None, agent_id: str | None, on_phase: PhaseCallback | None
    ) -> LifecycleReport:
        scope = agent_id or "*"
        started_at = to_iso(self.clock.now())
        unfinished = await self.store.unfinished_run(scope)
        decay: dict[str, float] = {}
        if unfinished is not None:
            run_id, run_at, actions = unfinished.id, unfinished.run_at, unfinished.plan
            first = unfinished.next_phase
            log.warning("resuming lifecycle run %d at phase %d", run_id, first)
        else:
            made = await self._fresh_plan(agent_id, now)
            run_at, actions, decay, first = made.now, made.actions, made.decay_scores, 0
            run_id = await self.store.start_run(scope, run_at, actions, started_at)
        report = LifecycleReport(
            status="done", run_id=run_id, now=run_at, agent_id=agent_id, resumed=first > 0
        )
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
            await self.leases.renew(LEASE_NAME, self.holder, self.settings.lease_seconds)
            await _call(on_phase, phase, index + 1, len(PHASES) + 1)
        await self._refresh(report)
        await _call(on_phase, "refresh", len(PHASES) + 1, len(PHASES) + 1)
        report.counts = _counts(report.actions)
        await self.store.finish_run(
            run_id,
            report.model_dump(include={"counts", "created", "notes"}),
            to_iso(self.clock.now()),
        )
        return report

    async def _fresh_plan(self, agent_id: str | None, now: datetime | None) -> Plan:
        """What a run starting now would do (preview and run must plan alike)."""
        moment = now or self.clock.now()
        snapshot = await self.store.snapshot(
            agent_id, archive_before=to_iso(moment - self.archive_ttl)
        )
        made = plan(
            snapshot,
            moment,
            self.settings,
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

    async def _refresh(self, report: LifecycleReport) -> None:
        await self.store.optimize_text_index()
        await self._refresh_profiles(report)
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
    """An ISO-8601 moment; without an offset it is local time."""
    if value is None or isinstance(value, datetime):
        return value
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{field}: {value!r} is not an ISO-8601 date or time (e.g. 2026-03-01T03:00)",
            field=field,
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()


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


def _merge_result(report: LifecycleReport, result: PhaseResult) -> None:
    report.actions.extend(result.applied)
    report.skipped.extend(result.skipped)
    report.created.update(result.created)


def _counts(actions: list[LifecycleAction]) -> dict[str, int]:
    counts = {kind: 0 for kind in ("promote", "expire", "merge", "archive", "compress")}
    for action in actions:
        counts[action.kind] += 1
    counts["memories_touched"] = sum(len(a.ids) for a in actions)
    return counts


async def _call(callback: PhaseCallback | None, phase: str, done: int, total: int) -> None:
    if callback is None:
        return
    outcome = callback(phase, done, total)
    if inspect.isawaitable(outcome):
        await outcome


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
