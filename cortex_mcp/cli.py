"""Entry point: argv -> Settings -> logging (stderr) -> a command. Nothing here writes to stdout
before the stdio server owns it, except the explicit commands (--version, --help, doctor).

Adding a command: write a module in `cortex_mcp/commands/` that exposes
``COMMANDS: tuple[Command, ...]`` and list it with its command names in `COMMAND_MODULES`. Only
the modules of the command names on the command line are imported (all of them for `--help`, no
command or a name we do not know), so `list` does not pay for the others' imports. Adding an option every command
accepts (before or after the command name): one `GlobalOption` row in `GLOBAL_OPTIONS`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from cortex_mcp import __version__
from cortex_mcp.errors import ConfigError, StorageError

if TYPE_CHECKING:  # with the settings model and pydantic, imported in `main` (see there)
    from cortex_mcp.commands import Command

# module of cortex_mcp.commands -> the names of its commands (tests/test_cli.py checks them)
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "serve": ("serve",),
    "doctor": ("doctor",),
    "memory": ("list", "search", "show", "add", "forget", "restore", "stats"),
    "entities": ("entities", "entity"),
    "lifecycle": ("lifecycle",),
    "reflect": ("reflect",),
    "exchange": ("import", "export"),
    "ingest": ("ingest", "profile"),
    "migrate": ("migrate",),
    "tokens": ("token",),
    "config": ("config",),
    "client_config": ("client-config",),
}
DEFAULT_COMMAND = "serve"


@dataclass(frozen=True)
class GlobalOption:
    """A command-line flag that overrides one setting; accepted before or after the command."""

    flag: str
    setting: str
    help: str
    type: Callable[[str], Any] = str
    metavar: str | None = None


GLOBAL_OPTIONS = (
    GlobalOption("--db", "db_path", "SQLite file (CORTEX_DB_PATH)", Path, "PATH"),
    GlobalOption("--agent-id", "agent_id", "default agent id (CORTEX_AGENT_ID)", metavar="ID"),
    GlobalOption(
        "--log-level",
        "log_level",
        "DEBUG, INFO, WARNING, ERROR (CORTEX_LOG_LEVEL)",
        metavar="LEVEL",
    ),
)

SETTINGS_HEADER = """\
settings (environment variables; the same keys, lower case, in the TOML or JSON file named
by CORTEX_CONFIG, nested ones as tables; the environment wins over the file, flags win over
both):"""
NO_COMMAND = (
    "With no command, cortex-mcp runs the MCP server on stdin/stdout, as MCP clients start it."
)
SUBCOMMAND_EPILOG = "Settings (CORTEX_* environment variables) are listed by `cortex-mcp --help`."


class _MainParser(argparse.ArgumentParser):
    """The top-level parser: its help lists every setting, built from the settings model
    when help is asked for (not on every start)."""

    partial = False  # built with only the modules of the command line's command names

    def error(self, message: str) -> NoReturn:
        if self.partial:  # say it as the whole parser would (its list of commands)
            raise _NeedsAllCommands
        super().error(message)

    def format_help(self) -> str:
        from cortex_mcp.config_help import settings_help

        self.epilog = f"{SETTINGS_HEADER}\n{settings_help()}\n\n{NO_COMMAND}\n"
        return super().format_help()


def _global_options() -> argparse.ArgumentParser:
    """The global flags as a parent parser. SUPPRESS keeps a flag given before the command
    from being reset by the subcommand's own copy of it."""
    parent = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    group = parent.add_argument_group("global options (before or after the command)")
    for option in GLOBAL_OPTIONS:
        group.add_argument(
            option.flag,
            dest=option.setting,
            type=option.type,
            metavar=option.metavar,
            help=option.help,
        )
    return parent


class _NeedsAllCommands(Exception):
    """A partial parser met an error: parse again with every command to report it."""


def _modules_named_in(argv: Sequence[str]) -> list[str] | None:
    """The command modules owning a word of `argv`; None (all of them) when no word is a
    command name. A word that is an option's value and a command name costs one import more."""
    words = set(argv)
    named = [module for module, names in COMMAND_MODULES.items() if words.intersection(names)]
    return named or None


def commands(modules: Sequence[str] | None = None) -> list[Command]:
    """The commands of `modules` (default: all), in `COMMAND_MODULES` order."""
    wanted = COMMAND_MODULES if modules is None else modules
    return [
        command
        for name in COMMAND_MODULES
        if name in wanted
        for command in importlib.import_module(f"cortex_mcp.commands.{name}").COMMANDS
    ]


def build_parser(modules: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the commands of `modules` only."""
    options = _global_options()
    parser = _MainParser(
        prog="cortex-mcp",
        description="Long-term memory for AI agents: an MCP server over one SQLite file.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[options],
    )
    parser.partial = modules is not None
    parser.add_argument("--version", action="version", version=f"cortex-mcp {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=argparse.ArgumentParser
    )
    for command in commands(modules):
        child = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description or command.help,
            epilog=SUBCOMMAND_EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[options],
        )
        command.add_arguments(child)
        child.set_defaults(run=command.run)
    return parser


def _setting_overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {o.setting: getattr(args, o.setting) for o in GLOBAL_OPTIONS if hasattr(args, o.setting)}


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    try:
        return _parse_with(argv, _modules_named_in(argv))
    except _NeedsAllCommands:
        return _parse_with(argv, None)


def _parse_with(argv: Sequence[str], modules: list[str] | None) -> argparse.Namespace:
    args = build_parser(modules).parse_args(argv)
    if getattr(args, "command", None) is None:  # no command: the stdio server
        serving = None if modules is None else [DEFAULT_COMMAND]
        args = build_parser(serving).parse_args([*argv, DEFAULT_COMMAND])
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: the program's own) and return its exit code.

    Run as the program, the garbage collector is off while the start imports and builds what
    lives until the end (pydantic, the settings, the parser and the command's module: ~40,000
    objects it walked some eighty times), which are then frozen out of its walks
    (`gc.freeze`) before it is on again for the command; as the program returns, everything
    is frozen, so the process ends without a last walk over all of it (a fifth of a `list`'s
    CPU). The memory is freed by the operating system at once; exit handlers, flushing and
    module teardown run as before. A caller passing `argv` (a test) keeps its collector
    as it was."""
    program = argv is None
    if program:
        gc.disable()
    try:
        return _run(list(argv if argv is not None else sys.argv[1:]), program=program)
    finally:
        if program:
            gc.freeze()
            gc.enable()


def _run(argv: list[str], *, program: bool) -> int:
    from cortex_mcp.config import load_settings
    from cortex_mcp.config_help import setting_warnings
    from cortex_mcp.logs import configure_logging

    args = _parse(argv)
    try:
        settings = load_settings(**_setting_overrides(args))
    except ConfigError as exc:
        sys.stderr.write(f"cortex-mcp: {exc.message}\n")
        return 2
    for warning in setting_warnings():
        sys.stderr.write(f"cortex-mcp: warning: {warning}\n")
    configure_logging(settings)
    if program:  # what the start built lives until the end: no collector walks over it
        gc.freeze()
        gc.enable()
    try:
        exit_code: int = args.run(args, settings)
    except KeyboardInterrupt:  # Ctrl-C in a command: stop quietly, as shells expect
        sys.stderr.write("cortex-mcp: interrupted\n")
        return 130
    except StorageError as exc:  # any command on an unusable database: its one line
        sys.stderr.write(f"cortex-mcp: {exc.message}\n")
        return 2
    return exit_code
