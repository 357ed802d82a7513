"""README and the docs pages (with the configuration page's generated settings table) name
exactly the settings the code reads, with their real defaults; every `cortex-mcp COMMAND --flag`
they show is a command and a flag the CLI has; every bench script they show exists and takes the
flags shown."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from cortex_mcp.config import Settings
from cortex_mcp.config_help import _field_info, _setting_paths
from tests.helpers.stdio_helpers import server_command, server_env

ROOT = Path(__file__).resolve().parent.parent


def _docs_text() -> str:
    """README, then every page of docs/ as the site shows it (the settings table generated)."""
    spec = importlib.util.spec_from_file_location(
        "settings_table", ROOT / "docs" / "hooks" / "settings_table.py"
    )
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    pages = [(ROOT / "README.md").read_text("utf-8")]
    for page in sorted((ROOT / "docs").glob("*.md")):
        pages.append(hook.on_page_markdown(page.read_text("utf-8"), None, None, None))
    return "\n\n".join(pages)


DOCS = _docs_text()

# CORTEX_ names the docs show that are not fields of Settings, and the file that reads each.
NOT_FIELDS = {
    "CORTEX_CONFIG": "cortex_mcp/config.py",  # the settings file itself
    "CORTEX_AUTH": "claude_desktop_config.example.json",  # mcp-remote's header, set by the user
    "CORTEX_LOCOMO": "bench/locomo_data.py",  # where the LoCoMo bench finds its data
}
# a table whose first header cell is "setting (`CORTEX_LIFECYCLE__…`)" lists the bare keys
_TABLE_PREFIX = re.compile(r"`(CORTEX_[A-Z]+__)…`")
_CORTEX_NAME = re.compile(r"\bCORTEX_[A-Z0-9_]*[A-Z0-9]\b")
# where README and the docs say the benchmarks are (a stale tests/bench/ path is read too, and fails)
_BENCH = re.compile(r"(?<![\w/])((?:tests/)?bench)/([a-z_]+\.py)([^`#|]*)")


def _fields() -> dict[str, FieldInfo]:
    """Environment name -> field of every leaf setting (a group's fields, not the group)."""
    fields = {}
    for path in _setting_paths(Settings):
        info = _field_info(path)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            continue
        fields["CORTEX_" + "__".join(path).upper()] = info
    return fields


def _table_rows() -> list[tuple[list[str], str]]:
    """(environment names, default cell) of every settings-table row in the docs."""
    rows = []
    prefix = ""
    for line in DOCS.splitlines():
        if not line.startswith("|"):
            prefix = ""
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if found := _TABLE_PREFIX.search(cells[0]):
            prefix = found.group(1)
            continue
        names = [prefix + name for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0])]
        names = [name for name in names if name.startswith("CORTEX_")]
        if names and len(cells) >= 3:
            rows.append((names, cells[1]))
    return rows


def _documented() -> set[str]:
    names = set(_CORTEX_NAME.findall(DOCS))
    names -= {name for name in names if name.endswith("_")}
    return names | {name for row, _ in _table_rows() for name in row}


def test_every_setting_the_code_reads_is_in_the_readme() -> None:
    missing = sorted(set(_fields()) - _documented())
    assert missing == [], f"settings the docs do not mention: {missing}"


def test_every_setting_the_readme_names_is_read_by_the_code() -> None:
    unknown = sorted(_documented() - set(_fields()) - set(NOT_FIELDS))
    assert unknown == [], f"the docs name settings nothing reads: {unknown}"
    for name, reader in NOT_FIELDS.items():
        assert name in (ROOT / reader).read_text("utf-8"), (name, reader)


def _same_default(shown: str, info: FieldInfo) -> bool:
    default = info.get_default(call_default_factory=True)
    if shown == "unset":
        return default is None or default == [] or isinstance(default, SecretStr)
    if isinstance(default, bool):
        return shown == str(default).lower()
    if isinstance(default, int | float):
        return float(shown) == default
    if isinstance(default, Path):
        return shown == str(default).replace(str(Path.home()), "~", 1)
    if isinstance(default, dict):
        return shown.replace(" ", "") == str(default).replace("'", '"').replace(" ", "")
    return shown == str(default)


def test_the_readme_tables_show_each_settings_real_default() -> None:
    fields = _fields()
    checked = 0
    for names, cell in _table_rows():
        if "(" in cell:  # a default per provider, e.g. `128` (openai), `64` (local)
            continue
        shown = [code or word for code, word in re.findall(r"`([^`]*)`|\b(unset)\b", cell)]
        if len(shown) != len(names):
            continue  # prose, not one default per name
        for name, value in zip(names, shown, strict=True):
            assert _same_default(value, fields[name]), (name, value)
            checked += 1
    assert checked >= 40, checked  # the parse found the tables


def _shown_commands() -> list[tuple[str, list[str]]]:
    """(subcommand, --flags) of every `cortex-mcp SUBCOMMAND ...` in the docs' code."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", DOCS, re.S)
    prose = re.sub(r"```[a-z]*\n.*?```", "", DOCS, flags=re.S)
    code = blocks + re.findall(r"`([^`\n]+)`", prose)
    shown = []
    for chunk in code:
        for line in chunk.splitlines():
            line = line.split(" #", 1)[0]
            for found in re.finditer(r"(?:^|(?<=[\s(]))cortex-mcp ([a-z][a-z-]*)(.*)", line):
                shown.append((found.group(1), re.findall(r"--[a-z][a-z-]*", found.group(2))))
    return shown


def test_the_readme_shows_the_cli_commands() -> None:
    shown = {command for command, _ in _shown_commands()}
    assert {"serve", "doctor", "list", "migrate", "client-config"} <= shown, shown


@pytest.mark.parametrize("command", sorted({command for command, _ in _shown_commands()}))
def test_each_command_readme_shows_has_the_flags_it_shows(command: str, tmp_path: Path) -> None:
    helped = subprocess.run(
        [*server_command(), command, "--help"],
        capture_output=True,
        text=True,
        env=server_env(tmp_path / "brain.db"),
        timeout=120,
    )
    assert helped.returncode == 0, helped.stderr
    flags = {flag for name, shown in _shown_commands() if name == command for flag in shown}
    missing = sorted(flag for flag in flags if not re.search(rf"{flag}\b", helped.stdout))
    assert missing == [], f"the docs show `cortex-mcp {command}` with {missing}"


def _shown_benches() -> dict[str, set[str]]:
    """folder/script -> the --flags the docs show it with (quoted arguments are its values)."""
    shown: dict[str, set[str]] = {}
    for line in DOCS.splitlines():
        for found in _BENCH.finditer(line):
            arguments = re.sub(r'"[^"]*"?', "", found.group(3))
            flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", arguments))
            shown.setdefault(f"{found.group(1)}/{found.group(2)}", set()).update(flags)
    return shown


def test_the_docs_show_the_benches() -> None:
    assert len(_shown_benches()) >= 10, sorted(_shown_benches())


@pytest.mark.parametrize("script", sorted(_shown_benches()))
def test_each_bench_readme_shows_exists_and_has_the_flags_it_shows(script: str) -> None:
    path = ROOT / script
    assert path.is_file(), f"the docs name {script}, which does not exist"
    helped = subprocess.run(
        [sys.executable, str(path), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert helped.returncode == 0, helped.stderr[-2000:]
    missing = sorted(f for f in _shown_benches()[script] if not re.search(rf"{f}\b", helped.stdout))
    assert missing == [], f"the docs show {script} with {missing}"
