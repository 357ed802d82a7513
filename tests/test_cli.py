"""The command line as users type it: the installed `cortex-mcp` console script."""

from __future__ import annotations

import gc
import importlib
import json
import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from cortex_mcp.cli import COMMAND_MODULES, GLOBAL_OPTIONS, build_parser, main
from cortex_mcp.config import Settings
from tests.helpers.stdio_helpers import HANG_S, LEGACY_PROTOCOL, server_command, server_env


def _run(*args: str, db: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(db),
    )


@pytest.mark.parametrize("before", [True, False])
def test_global_options_work_before_and_after_the_command(before: bool) -> None:
    flags = ["--db", "/tmp/x.db", "--agent-id", "bob", "--log-level", "debug"]
    argv = [*flags, "doctor"] if before else ["doctor", *flags]
    args = build_parser().parse_args(argv)
    assert (args.command, args.db_path, args.agent_id, args.log_level) == (
        "doctor",
        Path("/tmp/x.db"),
        "bob",
        "debug",
    )


def test_an_option_given_before_the_command_is_not_reset_by_the_command() -> None:
    args = build_parser().parse_args(["--agent-id", "ann", "serve"])
    assert args.agent_id == "ann"
    assert not hasattr(build_parser().parse_args(["serve"]), "agent_id")


def test_every_global_option_names_a_real_setting() -> None:
    for option in GLOBAL_OPTIONS:
        assert option.setting in Settings.model_fields, option.flag


@pytest.mark.parametrize("where", ["before", "after"])
def test_doctor_takes_db_before_or_after_the_command(tmp_path: Path, where: str) -> None:
    db = tmp_path / "chosen.db"
    args = ("--db", str(db), "doctor") if where == "before" else ("doctor", "--db", str(db))
    done = _run(*args, db=tmp_path / "env.db")
    assert done.returncode == 0, done.stderr
    assert str(db) in done.stdout
    assert str(tmp_path / "env.db") not in done.stdout


def _model_setting_names(model: type[BaseModel] = Settings, prefix: str = "CORTEX_") -> list[str]:
    """Every environment name the settings model reads, walked here on its own (not by the
    code that writes the help)."""
    names = []
    for name, info in model.model_fields.items():
        nested = info.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            names += _model_setting_names(nested, f"{prefix}{name.upper()}__")
        else:
            names.append(f"{prefix}{name.upper()}")
    return names


def test_help_lists_every_setting_of_the_model_once_with_its_meaning(tmp_path: Path) -> None:
    done = _run("--help", db=tmp_path / "x.db")
    assert done.returncode == 0
    listed = re.findall(r"^  ((?:CORTEX|OPENAI|ANTHROPIC)_[A-Z0-9_]+)\b", done.stdout, re.M)
    duplicated = {name for name in listed if listed.count(name) > 1}
    assert not duplicated, f"listed more than once: {duplicated}"
    expected = _model_setting_names()
    assert set(listed) == {*expected, "CORTEX_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
    for name in (
        "CORTEX_LLM_MODEL",
        "CORTEX_LLM_TIMEOUT_S",
        "CORTEX_MAX_BODY_BYTES",
        "CORTEX_LAYERS__WORKING_TTL_HOURS",
        "CORTEX_MIRRORS__DEBOUNCE_S",
        "CORTEX_LIFECYCLE__LEASE_SECONDS",
        "CORTEX_SEARCH__FUSION",
    ):
        assert name in expected
    # each with words after it, and the model's default where it has one
    help_text = done.stdout
    for name in expected:
        entry = help_text.split(f"  {name}", 1)[1].split("\n  CORTEX_", 1)[0]
        assert len(entry.split()) >= 3, name
    flat = " ".join(help_text.split())
    assert "CORTEX_PORT the port it listens on (default: 21100)" in flat
    assert 'combine: maxnorm, minmax, weighted, rrf (default: "maxnorm")' in flat


@pytest.mark.parametrize("command", ["list", "doctor", "lifecycle", "serve"])
def test_subcommand_help_shows_its_own_options_not_the_settings_block(
    tmp_path: Path, command: str
) -> None:
    done = _run(command, "--help", db=tmp_path / "x.db")
    assert done.returncode == 0
    assert "--db" in done.stdout and "--agent-id" in done.stdout
    assert "CORTEX_SEARCH__" not in done.stdout and "CORTEX_LIFECYCLE__" not in done.stdout
    assert "cortex-mcp --help" in done.stdout  # says where the settings are
    assert len(done.stdout.splitlines()) < 40
    own = {"list": "--forgotten", "doctor": "check SQLite", "lifecycle": "--now", "serve": "--port"}
    assert own[command] in done.stdout


def test_each_command_module_is_listed_with_exactly_the_commands_it_defines() -> None:
    for module, names in COMMAND_MODULES.items():
        defined = importlib.import_module(f"cortex_mcp.commands.{module}").COMMANDS
        assert tuple(command.name for command in defined) == names, module


def _modules_after(*args: str, db: Path) -> set[str]:
    """The modules imported by one run of `cortex-mcp ARGS` (its output must not matter: it
    is checked by the other tests)."""
    script = (
        "import sys\n"
        "from cortex_mcp.cli import main\n"
        "sys.stdout = open(__import__('os').devnull, 'w')\n"
        "main(sys.argv[1:])\n"
        "sys.stderr.write(' '.join(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**server_env(db), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return set(done.stderr.split())


@pytest.mark.parametrize("command", [["list"], ["show", "1"]])
def test_list_and_show_import_neither_the_other_commands_nor_the_engines(
    tmp_path: Path, command: list[str]
) -> None:
    db = tmp_path / "x.db"
    assert _run("add", "Ann likes tea", db=db).returncode == 0
    imported = _modules_after(*command, db=db)
    assert "cortex_mcp.commands.memory" in imported
    for elsewhere in ("entities", "lifecycle", "serve", "exchange", "reflect", "tokens"):
        assert f"cortex_mcp.commands.{elsewhere}" not in imported
    assert not {m for m in imported if m.startswith("cortex_mcp.engine.") and m != VALIDATE}
    assert "cortex_mcp.runtime" not in imported and "numpy" not in imported


VALIDATE = "cortex_mcp.engine.validate"  # the request models' checks, which list needs


def test_the_program_ends_without_collecting_what_its_imports_made(tmp_path: Path) -> None:
    """The console script's `main()` freezes the collector as it returns (the last walk over
    every object cost a fifth of a `list`); its output and exit code are those of the run."""
    db = tmp_path / "x.db"
    assert _run("add", "Ann likes tea", db=db).returncode == 0
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'frozen {gc.get_freeze_count()}'))\n"
        "from cortex_mcp.cli import main\n"
        "sys.argv = ['cortex-mcp', 'list']\n"
        "sys.exit(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**server_env(db), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0 and "Ann likes tea" in done.stdout
    frozen = int(done.stderr.split("frozen ")[-1])
    assert frozen > 10_000  # every object of the imports


def test_the_program_never_collects_before_what_its_start_built_is_frozen(
    tmp_path: Path,
) -> None:
    """Run as the program, the collector is off while pydantic, the settings and the parser
    are imported and built (it walked them some eighty times), then frozen out and on again
    for the command: its first collection comes after the freeze."""
    db = tmp_path / "x.db"
    assert _run("add", "Ann likes tea", db=db).returncode == 0
    script = (
        "import gc, sys\n"
        "seen = []\n"
        "gc.callbacks.append(lambda phase, info: seen.append(gc.get_freeze_count()))\n"
        "from cortex_mcp.cli import main\n"
        "sys.argv = ['cortex-mcp', 'list']\n"
        "seen.clear()  # from here on: the start\n"
        "code = main()\n"
        "sys.stderr.write(f'\\nfrozen at collections {seen} enabled {gc.isenabled()}')\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**server_env(db), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0 and "Ann likes tea" in done.stdout
    report = done.stderr.split("\nfrozen at collections ")[-1]
    frozen = json.loads(report.split(" enabled ")[0])
    assert frozen and min(frozen) > 10_000  # none before the freeze (there were ~100)
    assert report.endswith("enabled True")


def test_importing_the_command_line_imports_neither_pydantic_nor_the_settings() -> None:
    """What `main` imports with the collector off must not come with `cortex_mcp.cli`."""
    script = "import sys, cortex_mcp.cli; print(sorted(m for m in sys.modules if 'pydantic' in m))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_a_caller_passing_its_own_command_line_keeps_its_collector(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    assert main(["--db", str(tmp_path / "x.db"), "list"]) == 0
    assert gc.get_freeze_count() == before


# what the full service's stores import beyond the reading ones (store/backend.py ReadStores)
UNREAD_STORES = ("beliefs", "counters", "lease", "lifecycle", "profiles", "reflect", "turns")
UNREAD_STORES += ("validity", "vectors", "postgres")


@pytest.mark.parametrize("command", [["list"], ["show", "1"]])
def test_list_and_show_import_only_the_stores_they_read(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "x.db"
    assert _run("add", "Ann likes tea", db=db).returncode == 0
    imported = _modules_after(*command, db=db)
    assert "cortex_mcp.store.memories" in imported
    assert not {m for m in imported for s in UNREAD_STORES if m.startswith(f"cortex_mcp.store.{s}")}


@pytest.mark.parametrize("command", [["list"], ["show", "1"]])
def test_list_and_show_compile_no_pattern_over_the_cjk_characters(
    tmp_path: Path, command: list[str]
) -> None:
    """Each such character class costs `re` a few ms to compile (cortex_mcp/tokenize.py
    compiles them when first used); `list` and `show` use none."""
    db = tmp_path / "x.db"
    assert _run("add", "Ann likes tea", db=db).returncode == 0
    script = (
        "import re, sys\n"
        "compiled = []\n"
        "compile = re.compile\n"
        "re.compile = lambda p, *a, **k: compiled.append(p) or compile(p, *a, **k)\n"
        "from cortex_mcp.cli import main\n"
        "sys.stdout = open(__import__('os').devnull, 'w')\n"
        "main(sys.argv[1:])\n"
        "patterns = [p for p in compiled if isinstance(p, str)]\n"
        "sys.stderr.write('\\ncompiled ' + __import__('json').dumps(patterns))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *command],
        capture_output=True,
        text=True,
        timeout=60,
        env={**server_env(db), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    patterns = json.loads(done.stderr.split("\ncompiled ")[-1])
    assert patterns  # the spy saw the compiles
    assert not [p for p in patterns if "\u4e00-\u9fff" in p]


@pytest.mark.parametrize("command", [["list"], ["show", "1"]])
def test_list_and_show_import_no_toml_reader_nor_spelling_suggester(
    tmp_path: Path, command: list[str]
) -> None:
    """tomllib (~5 ms of regular expressions) and difflib are imported when a TOML settings
    file is read or a setting is misspelled, not on every start."""
    db = tmp_path / "x.db"
    assert _run("add", "Ann likes tea", db=db).returncode == 0
    imported = _modules_after(*command, db=db)
    assert "cortex_mcp.config_help" in imported and "cortex_mcp.config_live" in imported
    assert "tomllib" not in imported and "difflib" not in imported


@pytest.mark.parametrize(
    "argv",
    [["lst"], ["--agent-id", "list", "lst"], ["--bogus"], ["list", "--bogus"], ["--agent-id"]],
)
def test_a_mistyped_command_line_is_refused_naming_every_command_as_before(
    tmp_path: Path, argv: list[str]
) -> None:
    done = _run(*argv, db=tmp_path / "x.db")
    assert done.returncode == 2
    whole = subprocess.run(  # the parser of every command, as the CLI built it before
        [
            sys.executable,
            "-c",
            "import sys; from cortex_mcp.cli import build_parser;"
            " build_parser().parse_args(sys.argv[1:])",
            *argv,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**server_env(tmp_path / "x.db"), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stderr.splitlines()[-1] == whole.stderr.splitlines()[-1]
    if argv[-1] == "lst":
        assert "'client-config'" in done.stderr and "'entity'" in done.stderr


def test_an_abbreviated_option_of_the_command_still_works(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    for content in ("Ann likes tea", "Bob likes coffee"):
        assert _run("add", content, db=db).returncode == 0
    done = _run("list", "--lim", "1", "--js", db=db)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 1


def _handshake() -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "cli-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def _remember_call(request_id: int, content: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "cortex_remember", "arguments": {"content": content}},
    }


@pytest.mark.slow
@pytest.mark.parametrize("command", [[], ["serve"]])
def test_no_command_and_serve_both_run_the_stdio_server(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "flag.db"
    stdin = "".join(json.dumps(m) + "\n" for m in _handshake())
    done = _run(*command, "--db", str(db), db=tmp_path / "env.db", stdin=stdin)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "cortex"
    assert db.exists() and not (tmp_path / "env.db").exists()


def _wait_for_line(stream: Any, needle: str, timeout: float = HANG_S) -> str:
    """Read stderr lines until one contains `needle` (bounded: the test fails, never hangs)."""
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            line = stream.readline()
            if not line:
                break
            seen += line
            if needle in line:
                return seen
    raise AssertionError(f"no {needle!r} on stderr within {timeout}s; got:\n{seen}")


@pytest.mark.slow
def test_one_ctrl_c_on_a_terminal_ends_the_server_cleanly(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        server_command(),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(tmp_path / "tty.db"),
    )
    os.close(terminal)
    try:
        seen = _wait_for_line(proc.stderr, "serving stdio")
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=HANG_S)
    finally:
        os.close(controller)
        if proc.poll() is None:
            proc.kill()
    stderr = seen + rest
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    notices = [line for line in stderr.splitlines() if "MCP server speaking JSON-RPC" in line]
    assert len(notices) == 1 and "stdin/stdout" in notices[0]


@pytest.mark.slow
def test_sigint_mid_session_exits_cleanly_and_keeps_what_was_written(tmp_path: Path) -> None:
    db = tmp_path / "pipe.db"
    proc = subprocess.Popen(
        server_command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(db),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in [*_handshake(), _remember_call(2, "Ctrl-C must not lose this")]:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert replies[1]["id"] == 2 and not replies[1]["result"]["isError"]
        proc.send_signal(signal.SIGINT)  # the client keeps stdin open: only the signal ends it
        _, stderr = proc.communicate(timeout=HANG_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "MCP server speaking" not in stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT content FROM memories").fetchall()
    assert rows == [("Ctrl-C must not lose this",)]
