"""`cortex-mcp lifecycle preview|run [--now ISO-8601] [--agent ID]` and
`cortex-mcp lifecycle log [--agent ID] [--limit N]`."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, progress_bar, run_with_service
from cortex_mcp.config import Settings
from cortex_mcp.service.requests import LifecycleLogRequest, LifecycleRequest, build

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


def _human(d: dict[str, Any]) -> str:
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
    for action in d.get("actions", [])[:50]:
        ids = ", ".join(action["ids"][:3]) + (
            f" (+{len(action['ids']) - 3})" if len(action["ids"]) > 3 else ""
        )
        lines.append(f"  {verb} {action['kind']:<8} {ids}  {action.get('reason', '')}")
    if len(d.get("actions", [])) > 50:
        lines.append(f"  … {len(d['actions']) - 50} more (--json lists all)")
    if d.get("skipped"):
        lines.append(f"  skipped {len(d['skipped'])} step(s) whose memories changed meanwhile")
    if busy:
        lines.append(f"  busy (another run holds their lease; run again later): {', '.join(busy)}")
    lines += [f"  note: {n}" for n in d.get("notes", []) if "skipped: another" not in n]
    if d["status"] != "preview":
        lines.append(f"  took {d.get('took_ms', 0):.0f} ms")
    return "\n".join(lines)


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
