"""`cortex-mcp entities [PREFIX]` and `cortex-mcp entity NAME` (with its verbs: alias,
unalias, rename, merge, log, undo, unresolved): who memories are about, and how to mend it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, run_with_service, short
from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.service.requests import (
    AgentRequest,
    AliasRequest,
    EntityListRequest,
    EntityLogRequest,
    EntityRequest,
    MergeRequest,
    RenameRequest,
    UndoRequest,
    build,
)

if TYPE_CHECKING:
    from cortex_mcp.service import CortexService

ENTITY_USAGE = """\
  cortex-mcp entity NAME [--json]                 the entity's page (name, id or an alias)
  cortex-mcp entity NAME alias ALIAS              add an alias (logged)
  cortex-mcp entity NAME unalias ALIAS            remove an alias (logged)
  cortex-mcp entity NAME rename NEW_NAME          rename; the old name stays an alias
  cortex-mcp entity NAME merge-into OTHER [--dry-run]
                                                  its memories and aliases move to OTHER
  cortex-mcp entities --log | --unresolved        the verbs done, the ambiguous references
  cortex-mcp entities --undo LOG_ID               undo one verb"""


def _entity_row(e: dict[str, Any]) -> str:
    aliases = f"  aka {', '.join(e['aliases'])}" if e["aliases"] else ""
    seen = (e.get("last_seen") or "")[:10]
    return f"{e['id']}  {e['kind']:<12} {e['mention_count']:>5}  {seen:<10}  {e['name']}{aliases}"


# ---- entities ------------------------------------------------------------------------------


def _entities_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prefix", nargs="?", default="", help="names (or aliases) starting so")
    limit = EntityListRequest.default("limit")
    parser.add_argument("--limit", type=int, default=limit, help=f"at most (default {limit})")
    parser.add_argument("--offset", type=int, default=0, help="skip this many")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--log", action="store_true", help="the entity verbs done, newest first")
    shown.add_argument(
        "--unresolved", action="store_true", help="references an ambiguous alias left unlinked"
    )
    shown.add_argument("--undo", type=int, metavar="LOG_ID", help="undo one logged verb")
    add_json_flag(parser)


def _listed(d: dict[str, Any]) -> str:
    if not d["entities"]:
        return "no entities"
    rows = [_entity_row(e) for e in d["entities"]]
    shown = d["offset"] + len(rows)
    if shown < d["total"]:
        rows.append(f"({shown} of {d['total']}; --offset {shown} for more)")
    return "\n".join(rows)


def _log(d: dict[str, Any]) -> str:
    lines = []
    for e in d["entries"]:
        undone = f"  (undone {e['undone_at'][:19]})" if e["undone_at"] else ""
        lines.append(f"{e['id']:>5}  {e['executed_at'][:19]}  {e['action']:<12} {_what(e)}{undone}")
    return "\n".join(lines) or "no entity verbs yet"


def _what(entry: dict[str, Any]) -> str:
    details = entry["details"]
    if entry["action"] == "rename":
        return f"{details['from']} -> {details['to']}"
    if entry["action"] == "merge":
        return f"{details['source']['name']} -> {details['into']['name']}"
    return f"{details.get('alias', '')!r} on {entry['entity_ids'][0]}"


def _unresolved(d: dict[str, Any]) -> str:
    lines = []
    for u in d["unresolved"]:
        names = ", ".join(f"{c['name']} ({c['id']})" for c in u["candidates"])
        lines.append(f"{u['memory_id']}  {u['phrase']!r}: {names or 'no candidate left'}")
    return "\n".join(lines) or "no unresolved references"


def run_entities(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        entities = service.entities
        if args.log:
            emit(args, await entities.log(build(EntityLogRequest, limit=args.limit)), _log)
        elif args.unresolved:
            found = await entities.unresolved(build(EntityLogRequest, limit=args.limit))
            emit(args, found, _unresolved)
        elif args.undo is not None:
            done = await entities.undo(build(UndoRequest, log_id=args.undo))
            emit(args, done, lambda d: f"undone: {d['action']} (log {d['undone']})")
        else:
            request = build(
                EntityListRequest, prefix=args.prefix, limit=args.limit, offset=args.offset
            )
            emit(args, await entities.list(request), _listed)
        return 0

    return run_with_service(settings, work)


# ---- entity ---------------------------------------------------------------------------------

_VERBS = ("alias", "unalias", "rename", "merge-into")


def _entity_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the entity's name, an alias or its id")
    parser.add_argument("verb", nargs="?", choices=_VERBS, help="what to change (none: show)")
    parser.add_argument("value", nargs="?", help="the alias, the new name or the other entity")
    parser.add_argument("--dry-run", action="store_true", help="merge-into: list what would move")
    limit = EntityRequest.default("limit")
    parser.add_argument(
        "--limit", type=int, default=limit, help=f"memories on the page (default {limit})"
    )
    add_json_flag(parser)


def _page(d: dict[str, Any]) -> str:
    e = d["entity"]
    aliases = ", ".join(f"{a['alias']} ({a['origin']})" for a in e["alias_details"])
    lines = [
        f"{e['name']}  ({e['kind']}, {e['id']})",
        f"aliases: {aliases or 'none'}",
        f"mentioned in {e['mention_count']} memories,"
        f" first {(e['first_seen'] or '-')[:10]}, last {(e['last_seen'] or '-')[:10]}",
    ]
    if e["summary"]:
        lines.append(e["summary"])
    lines += [
        f"  {m['id']}  {(m.get('occurred_at') or '')[:10]}  {short(m['content'])}"
        for m in d.get("memories", [])
    ]
    return "\n".join(lines)


def _changed(d: dict[str, Any]) -> str:
    if not d.get("changed", True):
        return "nothing changed"
    linked = f"; {len(d['linked'])} unresolved references linked" if d.get("linked") else ""
    entity = d.get("entity") or {}
    return f"done (log {d['log_id']}): {_entity_row(entity) if entity else ''}{linked}"


def _merged(d: dict[str, Any]) -> str:
    head = "would merge" if d["dry_run"] else f"merged (log {d['log_id']})"
    return (
        f"{head} {d['source']['name']} into {d['into']['name']}:"
        f" {len(d['memories_moved'])} memories, aliases {d['aliases_moved'] or 'none'}"
        f"{', its name becomes an alias' if d['name_becomes_alias'] else ''}"
    )


def run_entity(args: argparse.Namespace, settings: Settings) -> int:
    async def work(service: CortexService) -> int:
        entities = service.entities
        if args.verb is not None and not args.value:
            raise InvalidInput(f"value: {args.verb} needs a value", field="value")
        if args.verb is None:
            page = await entities.page(
                args.name, build(EntityRequest, limit=args.limit), memories=True
            )
            emit(args, page, _page)
        elif args.verb == "alias":
            done = await entities.add_alias(args.name, build(AliasRequest, alias=args.value))
            emit(args, done, _changed)
        elif args.verb == "unalias":
            done = await entities.remove_alias(args.name, args.value, build(AgentRequest))
            emit(args, done, _changed)
        elif args.verb == "rename":
            done = await entities.rename(args.name, build(RenameRequest, name=args.value))
            emit(args, done, _changed)
        else:
            request = build(MergeRequest, source=args.name, into=args.value, dry_run=args.dry_run)
            emit(args, await entities.merge(request), _merged)
        return 0

    return run_with_service(settings, work)


COMMANDS = (
    Command(
        "entities",
        "the people, pets, places and things memories are about (by name prefix)",
        run_entities,
        _entities_arguments,
        description="List the entities memories are linked to, the most mentioned first; or"
        " the verbs done on them (--log), the references an ambiguous alias left unlinked"
        " (--unresolved), or undo one verb (--undo).\n\n" + ENTITY_USAGE,
    ),
    Command(
        "entity",
        "one entity's page, or mend it: alias, unalias, rename, merge-into",
        run_entity,
        _entity_arguments,
        description="Show one entity (by name, alias or id) with its memories, or change it;"
        " every change is logged and undone with `cortex-mcp entities --undo LOG_ID`.\n\n"
        + ENTITY_USAGE,
    ),
)
