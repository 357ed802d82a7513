"""`cortex-mcp token create|list|revoke`: agent tokens, each acting for one agent only.

A token is printed once, by `create`; the database keeps a salted hash of it. Servers on the
same database honour a revoke within about a second."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, aligned, emit, run_with_tokens
from cortex_mcp.config import Settings
from cortex_mcp.service.requests import RevokeRequest, TokenRequest, build

if TYPE_CHECKING:
    from cortex_mcp.service.tokens import TokenService


USAGE = """\
Tokens that each act for one agent only, over every HTTP transport (REST, MCP, the
dashboard). CORTEX_API_TOKEN stays the admin token (any agent).

  cortex-mcp token create --agent ID [--name NAME] [--read-only] [--expires 30d] [--json]
  cortex-mcp token list [--all] [--json]                      never the token
  cortex-mcp token revoke ID_OR_NAME [--json]                 refused within 2 s"""


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="a new token for one agent, printed once",
        description="Create a token that acts only for agent ID, and print it once (it is"
        " stored only as a salted hash: keep it, or create another).",
    )
    create.add_argument("--agent", required=True, metavar="ID", help="the agent it acts for")
    create.add_argument(
        "--name", help="a name to revoke it by (default: the agent id, numbered if taken)"
    )
    create.add_argument(
        "--read-only",
        action="store_true",
        help="it may read its agent's memories (recall, search, list, export), never change them",
    )
    create.add_argument(
        "--expires",
        metavar="AGE",
        help="it stops working after AGE: a number and h, d or w (12h, 30d, 2w)",
    )
    add_json_flag(create)
    listing = actions.add_parser(
        "list", help="the live tokens: id, name, agent, created, last used (never the token)"
    )
    listing.add_argument("--all", action="store_true", help="the revoked ones too")
    add_json_flag(listing)
    revoke = actions.add_parser(
        "revoke",
        help="revoke a token by id or name",
    )
    revoke.add_argument("token", metavar="ID_OR_NAME", help="the token's id or name")
    add_json_flag(revoke)


def _created(d: dict[str, Any]) -> str:
    return (
        f"{d['token']}\n\n"
        f"token {d['id']} ({d['name']}) acts only for agent {d['agent']!r}"
        f"{', read-only' if d['read_only'] else ''}"
        f"{', until ' + d['expires_at'][:19] if d['expires_at'] else ''}. It is shown"
        " once: give it to that agent now (Authorization: Bearer <token>)."
    )


def _listed(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no tokens (cortex-mcp token create --agent ID)"
    cells = [["id", "name", "agent", "created", "last used", "notes"]]
    for r in rows:
        notes = [f"revoked {r['revoked_at'][:19]}"] if r["revoked_at"] else []
        notes += ["read-only"] if r["read_only"] else []
        notes += [f"expires {r['expires_at'][:19]}"] if r["expires_at"] else []
        cells.append(
            [
                r["id"],
                r["name"],
                r["agent"],
                r["created_at"][:19],
                (r["last_used_at"] or "never")[:19],
                "  ".join(notes),
            ]
        )
    return "\n".join(line.rstrip() for line in aligned(cells))


def run_token(args: argparse.Namespace, settings: Settings) -> int:
    async def work(tokens: TokenService) -> int:
        if args.action == "create":
            request = build(
                TokenRequest,
                agent=args.agent,
                name=args.name,
                read_only=args.read_only,
                expires=args.expires,
            )
            created = await tokens.create(request)
            emit(args, created, _created)
            if settings.api_token is None:
                sys.stderr.write(
                    "cortex-mcp: note: servers check tokens only when CORTEX_API_TOKEN (the"
                    " admin token) is set; without it an HTTP server is open to every agent\n"
                )
        elif args.action == "list":
            emit(args, await tokens.list(include_revoked=args.all), _listed)
        else:
            revoked = await tokens.revoke(build(RevokeRequest, token=args.token))
            emit(args, revoked, lambda d: f"revoked token {d['id']} ({d['name']})")
        return 0

    return run_with_tokens(settings, work)


COMMANDS = (
    Command(
        "token",
        "agent tokens: create (printed once), list, revoke",
        run_token,
        _arguments,
        description=USAGE,
    ),
)
