"""`cortex-mcp config get|set|unset`: the settings changed while running, for people.

The same rules and the same place as `PATCH /api/v1/config`: a value is checked by the
settings model, kept in the database, and every server on it applies it within about a
second; only settings that change while running can be set here (the rest: the environment
or the CORTEX_CONFIG file, then a restart)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from cortex_mcp.commands import Command
from cortex_mcp.commands.output import add_json_flag, emit, run_with_config
from cortex_mcp.config import Settings

if TYPE_CHECKING:
    from cortex_mcp.service.config import ConfigService

USAGE = """\
Settings that change while servers run (search weights and fusion, recall limits, the
lifecycle's parameters and schedule, provider endpoints, models, timeouts and keys, log
level, mirrors). Precedence: default < CORTEX_CONFIG file < these changes < environment.

  cortex-mcp config get [NAME] [--json]     every setting (or one): value, source, live
  cortex-mcp config set NAME VALUE [--json] e.g. config set search.fusion rrf
  cortex-mcp config unset NAME [--json]     back to the file's or the default value"""


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    get = actions.add_parser("get", help="every setting, or one: value, source, whether live")
    get.add_argument("name", nargs="?", metavar="NAME", help="a dotted name: search.fusion")
    add_json_flag(get)
    put = actions.add_parser("set", help="change a setting on every server of this store")
    put.add_argument("name", metavar="NAME", help="a dotted name: search.vector_weight")
    put.add_argument("value", metavar="VALUE", help='the value ({"core": 1.0, ...} for a map)')
    add_json_flag(put)
    unset = actions.add_parser("unset", help="back to the config file's or the default value")
    unset.add_argument("name", metavar="NAME")
    add_json_flag(unset)


def _document(name: str, value: Any) -> dict[str, Any]:
    """search.fusion=rrf -> {"search": {"fusion": "rrf"}}, the change document's shape."""
    group, _, leaf = name.rpartition(".")
    return {group: {leaf: value}} if group else {name: value}


def _value(raw: str) -> Any:
    """A map (layer_weights) is written as JSON; every other value as the environment's text."""
    if raw.lstrip().startswith("{"):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _row(row: dict[str, Any]) -> str:
    value = json.dumps(row["value"], ensure_ascii=False)
    live = "live" if row["live"] else "restart"
    line = f"{row['name']} = {value}  ({row['source']}, {live})"
    if "api_value" in row:
        kept = json.dumps(row["api_value"], ensure_ascii=False)
        line += f"\n  changed to {kept}, but {row['variable']} is set and wins"
    return line


def _rows(rows: list[dict[str, Any]]) -> str:
    return "\n".join(_row(row) for row in rows)


def _changed(answer: dict[str, Any]) -> str:
    lines = [f"changed: {', '.join(answer['changed']) or 'nothing in effect'}"]
    for item in answer["overridden"]:
        lines.append(f"kept, but {item['variable']} is set and wins over {item['name']}")
    return "\n".join(lines)


def run_config(args: argparse.Namespace, settings: Settings) -> int:
    from cortex_mcp.config_live import check_name
    from cortex_mcp.errors import InvalidSetting
    from cortex_mcp.service.requests import SettingsChangeRequest, build

    async def work(config: ConfigService) -> int:
        if args.action == "get":
            rows = (await config.get())["settings"]
            if args.name is not None:
                rows = [row for row in rows if row["name"] == args.name]
                if not rows:
                    raise InvalidSetting(f"{args.name}: no such setting", field=args.name)
            emit(args, rows if args.name is None else rows[0], _rows if args.name is None else _row)
            return 0
        check_name(args.name)
        value = None if args.action == "unset" else _value(args.value)
        request = build(SettingsChangeRequest, **_document(args.name, value))
        answer = await config.change(request)
        emit(args, {k: v for k, v in answer.items() if k != "settings"}, _changed)
        return 0

    return run_with_config(settings, work)


COMMANDS = (
    Command(
        "config",
        "settings that change while servers run: get, set, unset",
        run_config,
        _arguments,
        description=USAGE,
    ),
)
