"""`cortex-mcp ingest` (one conversation turn into memory) and `cortex-mcp profile`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, run_with_service, short
from cortex_mcp.service.requests import IngestRequest, build

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService


def _ingest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, help="what the user said")
    parser.add_argument(
        "--assistant",
        default=IngestRequest.default("assistant_message"),
        help="what the assistant answered",
    )
    parser.add_argument("--session", help="session id (a retried turn in a session adds nothing)")
    parser.add_argument(
        "--said-at", help="when it was said (2026-05-06 or 2026-05-06T14:30Z; default: now)"
    )
    add_json_flag(parser)


def _human_ingest(data: dict[str, Any]) -> str:
    lines = [f"turn {data['turn_id']}: {data['outcome'] or data['status']}"]
    if data.get("duplicate"):
        lines[0] += " (already ingested: nothing added)"
    # the deep channel may store what the fast channel did (the same memory, deduplicated):
    # each memory is listed once, in the layer it is in
    memories = {m["id"]: m for m in [*data["high_signals"], *data["extracted"]]}
    for m in memories.values():
        lines.append(
            f"  {m['layer']:<7} {m['category']:<13} {m['importance']:.2f}  {short(m['content'])}"
        )
    lines += [f"  note: {d}" for d in data.get("degraded", [])]
    return "\n".join(lines)


def run_ingest(args: argparse.Namespace, settings: Any) -> int:
    async def work(service: CortexService) -> int:
        request = build(
            IngestRequest,
            user_message=args.user,
            assistant_message=args.assistant,
            session_id=args.session,
            said_at=args.said_at,
        )
        result = await service.conversation.ingest(request)
        emit(args, result.model_dump(mode="json"), _human_ingest)
        return 0

    return run_with_service(settings, work, reports_degradation=True)


def _profile_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="rebuild now: by the LLM when one is set, else by rules (the output says which)",
    )
    add_json_flag(parser)


def run_profile(args: argparse.Namespace, settings: Any) -> int:
    async def work(service: CortexService) -> int:
        profile = await service.conversation.profile(refresh=args.refresh)
        emit(args, profile, _human_profile)
        return 0

    return run_with_service(settings, work, reports_degradation=True)


def _human_profile(data: dict[str, Any]) -> str:
    """The profile's text, and how a refresh was built when it was not the LLM."""
    return data["text"] + (f"\n\nnote: {data['note']}" if data.get("note") else "")


COMMANDS = (
    Command(
        "ingest",
        "turn one conversation turn into memories (rules, then the LLM if configured)",
        run_ingest,
        _ingest_arguments,
    ),
    Command("profile", "the user profile built from core memory", run_profile, _profile_arguments),
)
