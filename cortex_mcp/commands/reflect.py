"""`cortex-mcp reflect [--since 7d] [--preview] [--agent ID]` and
`cortex-mcp reflect proposals|accept ID|reject ID [--agent ID]`: reflect on the memories new
since the last run, and decide on the edits to core it proposed (never applied silently)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, run_with_service
from cortex_mcp.config import Settings
from cortex_mcp.service.requests import ProposalDecision, ProposalListRequest, ReflectRequest, build

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        default="run",
        choices=("run", "proposals", "accept", "reject"),
        help="reflect (default), list the pending proposals, or accept / reject one",
    )
    parser.add_argument("id", nargs="?", help="accept / reject: the proposal's id")
    parser.add_argument("--since", help="only memories said in this last period: 7d, 12h, 30m")
    parser.add_argument("--preview", action="store_true", help="plan only: change nothing")
    parser.add_argument("--agent", help="this agent (default: the configured one)")
    add_json_flag(parser)


def _human(d: dict[str, Any]) -> str:
    if d["status"] == "busy":
        return "a lifecycle run or another reflect of this agent is running; nothing done"
    verb = "would refresh" if d["status"] == "preview" else "refreshed"
    lines = [
        f"reflect {d['status']} for {d['agent_id']}: {d['memories']} new memories,"
        f" {d['validity_changes']} slot changes, {d['belief_changes']} belief changes",
    ]
    for entity in d["entities"]:
        lines.append(f"  {verb} {entity['name']}: {entity['summary']}")
    for proposal in d["proposals"]:
        lines.append(
            f"  proposes {proposal['action']} {proposal['memory_id']}: {proposal['reason']}"
        )
    lines += [f"  note: {note}" for note in d["notes"]]
    lines.append(f"  took {d['took_ms']:.0f} ms")
    return "\n".join(lines)


def _proposal_lines(d: dict[str, Any]) -> str:
    rows = [f"{p['id']}  {p['action']:<8} {p['memory_id']}  {p['reason']}" for p in d["proposals"]]
    return "\n".join(rows) if rows else "no pending proposals"


def run_reflect(args: argparse.Namespace, settings: Settings) -> int:
    if args.action in ("accept", "reject") and not args.id:
        raise SystemExit(f"cortex-mcp: reflect {args.action} needs the proposal's id")

    async def work(service: CortexService) -> int:
        lifecycle = service.lifecycle
        if args.action == "proposals":
            found = await lifecycle.proposals(build(ProposalListRequest, agent_id=args.agent))
            emit(args, {"proposals": [p.model_dump() for p in found]}, _proposal_lines)
            return 0
        if args.action in ("accept", "reject"):
            decision = build(ProposalDecision, agent_id=args.agent, accept=args.action == "accept")
            decided = await lifecycle.decide(args.id, decision)
            emit(
                args,
                decided.model_dump(),
                lambda p: f"{p['status']}: {p['action']} {p['memory_id']}",
            )
            return 0
        request = build(ReflectRequest, agent_id=args.agent, since=args.since, preview=args.preview)
        report = await lifecycle.reflect(request)
        emit(args, report.model_dump(), _human)
        return 0

    return run_with_service(settings, work)


COMMANDS = (
    Command(
        "reflect",
        "reflect on new memories: close superseded facts, update beliefs, refresh entity pages,"
        " propose edits to core (and accept or reject them)",
        run_reflect,
        _arguments,
    ),
)
