"""`cortex-mcp lifecycle preview|run [--now ISO-8601] [--agent ID]` and
`cortex-mcp lifecycle log [--agent ID] [--limit N]`."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import (
    add_json_flag,
    emit,
    progress_bar,
    run_with_service,
    short,
)
from cortex_mcp.config import Settings
from cortex_mcp.errors import NotFound
from cortex_mcp.service.requests import (
    AgentRequest,
    LifecycleLogRequest,
    LifecycleRequest,
    build,
)

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=("preview", "run", "log"),
        help="dry run, apply, or list the lifecycle log (newest first)",
    )
    parser.add_argument(
        "--now",
        help="the moment to run as (ISO-8601; default: now); run refuses a future one, preview"
        " takes any",
    )
    parser.add_argument("--agent", help="only this agent's memories (default: every agent)")
    limit = LifecycleLogRequest.default("limit")
    parser.add_argument(
        "--limit", type=int, default=limit, help=f"log: the newest N entries (default {limit})"
    )
    add_json_flag(parser)


SHOWN_ACTIONS = 50  # the rest are in --json
SHOWN_IDS = 3  # memories shown per action, each with the start of its content


def _human(d: dict[str, Any], starts: dict[str, str] | None = None) -> str:
    """The report for a person; `starts` (id -> the start of its content) puts each memory's
    first words under its action, so a preview says what it would touch, not only ids."""
    starts = starts or {}
    if d["status"] == "busy":
        return f"another lifecycle run holds the lease: {d['holder']}; nothing done"
    busy = d.get("busy_agents") or []
    counts = d.get("counts", {})
    verb = "would" if d["status"] == "preview" else "did"
    head = f"lifecycle {d['status']} at {d['now']}" + (
        " (resuming an interrupted run)" if d.get("resumed") else ""
    )
    lines = [
        head,
        "  " + ", ".join(f"{k} {v}" for k, v in counts.items() if k != "memories_touched"),
    ]
    for action in d.get("actions", [])[:SHOWN_ACTIONS]:
        ids = action["ids"]
        if ids and all(i in starts for i in ids[:SHOWN_IDS]):
            lines.append(f"  {verb} {action['kind']:<8} {action.get('reason', '')}".rstrip())
            lines += [f"      {i}  {starts[i]}" for i in ids[:SHOWN_IDS]]
            if len(ids) > SHOWN_IDS:
                lines.append(f"      … {len(ids) - SHOWN_IDS} more")
            continue
        shown = ", ".join(ids[:SHOWN_IDS]) + (
            f" (+{len(ids) - SHOWN_IDS})" if len(ids) > SHOWN_IDS else ""
        )
        lines.append(f"  {verb} {action['kind']:<8} {shown}  {action.get('reason', '')}")
    if len(d.get("actions", [])) > SHOWN_ACTIONS:
        lines.append(f"  … {len(d['actions']) - SHOWN_ACTIONS} more (--json lists all)")
    lines += _reflect_lines(d.get("reflect", []), preview=d["status"] == "preview")
    if d.get("skipped"):
        lines.append(f"  skipped {len(d['skipped'])} step(s) whose memories changed meanwhile")
    if busy:
        lines.append(f"  busy (another run holds their lease; run again later): {', '.join(busy)}")
    lines += [f"  note: {n}" for n in d.get("notes", []) if "skipped: another" not in n]
    if d["status"] != "preview":
        lines.append(f"  took {d.get('took_ms', 0):.0f} ms")
    return "\n".join(lines)


def _reflect_lines(reports: list[dict[str, Any]], *, preview: bool) -> list[str]:
    """What the reflect step would change (a preview) or changed, per agent: each entity page
    with the start of its summary, and each proposal to core with its reason."""
    page_verb, proposal_verb = (
        ("would refresh", "would propose") if preview else ("refreshed", "proposed")
    )
    lines = []
    for report in reports:
        lines.append(
            f"  {'would reflect' if preview else 'reflected'} on {report['memories']} new"
            f" memories of {report['agent_id']}"
        )
        for entity in report["entities"][:SHOWN_ACTIONS]:
            lines.append(f"      {page_verb} {entity['name']}: {short(entity['summary'], 70)}")
        for proposal in report["proposals"][:SHOWN_ACTIONS]:
            lines.append(
                f"      {proposal_verb} {proposal['action']} {proposal['memory_id']}:"
                f" {proposal['reason']}"
            )
        lines += [f"      note: {note}" for note in report["notes"]]
    return lines


def _log_lines(d: dict[str, Any]) -> str:
    """One line per entry; an entry an import wrote says so (it is the document's word, not
    something this server did)."""
    lines = []
    for entry in d["entries"]:
        ids = ", ".join(entry["memory_ids"][:3]) + (
            f" (+{len(entry['memory_ids']) - 3})" if len(entry["memory_ids"]) > 3 else ""
        )
        mark = "  (imported)" if entry["origin"] == "import" else ""
        lines.append(f"{entry['executed_at']}  {entry['action']:<9} {ids}{mark}")
    return "\n".join(lines) if lines else "the lifecycle log is empty"


async def _starts(service: CortexService, report: dict[str, Any]) -> dict[str, str]:
    """The start of each memory the shown actions name (read as the operator, who may name
    any agent); one gone meanwhile is left out and its action shows its id alone."""
    found: dict[str, str] = {}
    for action in report.get("actions", [])[:SHOWN_ACTIONS]:
        whose = build(AgentRequest, agent_id=action["agent_id"])
        for memory_id in action["ids"][:SHOWN_IDS]:
            try:
                detail = await service.reading.memory_detail(memory_id, whose)
            except NotFound:
                continue
            found[memory_id] = short(detail["memory"]["content"], 70)
    return found


FUTURE_SKEW = timedelta(minutes=5)  # clocks of two machines on one file may differ this much


def _future_refusal(now: str | None) -> str | None:
    """Why `run --now` is refused: a run writes its moment into every change it makes, so a
    future one would leave memories dated after today (preview writes nothing: any moment)."""
    if now is None:
        return None
    try:
        moment = datetime.fromisoformat(now.strip().replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.astimezone()  # no offset: local time, as the service reads it
    except (ValueError, OverflowError):
        return None  # the service names the bad value
    if moment <= datetime.now(UTC) + FUTURE_SKEW:
        return None
    return (
        f"--now {now} is in the future; a run would date its changes after today. "
        "`lifecycle preview --now` shows what a later date would do"
    )


def run_lifecycle(args: argparse.Namespace, settings: Settings) -> int:
    refusal = _future_refusal(args.now) if args.action == "run" else None
    if refusal is not None:
        sys.stderr.write(f"cortex-mcp: {refusal}\n")
        return 2

    async def work(service: CortexService) -> int:
        if args.action == "log":
            log = build(LifecycleLogRequest, agent_id=args.agent, limit=args.limit)
            emit(args, {"entries": await service.lifecycle.log(log)}, _log_lines)
            return 0
        request = build(LifecycleRequest, agent_id=args.agent)
        if args.action == "preview":
            report = await service.lifecycle.preview(request, now=args.now)
            if not args.json:
                starts = await _starts(service, report.model_dump())
                emit(args, report.model_dump(), lambda d: _human(d, starts))
                return 0
        else:
            preview = await service.lifecycle.preview(request, now=args.now)
            total = len(preview.actions)
            with progress_bar("lifecycle") as bar:
                report = await service.lifecycle.run(
                    request,
                    now=args.now,
                    on_phase=lambda phase, done, phases: bar(done * total // phases, total),
                )
        emit(args, report.model_dump(), _human)
        if report.status == "busy":
            sys.stderr.write("cortex-mcp: lifecycle already running elsewhere; try again later\n")
        elif report.busy_agents:
            sys.stderr.write(
                f"cortex-mcp: {len(report.busy_agents)} agent(s) skipped, their lifecycle runs"
                " elsewhere; run again later for them\n"
            )
        return 0

    return run_with_service(settings, work)


COMMANDS = (
    Command(
        "lifecycle",
        "preview or run the memory lifecycle (promote, merge, archive, compress), or list its log",
        run_lifecycle,
        _arguments,
    ),
)
