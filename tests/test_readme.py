"""README and the docs site tell the truth a newcomer acts on: the commands at the top, the sample
doctor output, the Claude Code line, the example config's placeholder, no documents they cannot
show; README stays short, and every page of `docs/` is in the site's nav."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from cortex_mcp.store.schema import SCHEMA_VERSION
from tests.helpers.stdio_helpers import server_command, server_env

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
DOCS = ROOT / "docs"
PAGES = {path.name: path.read_text("utf-8") for path in sorted(DOCS.glob("*.md"))}
CHANGELOG = (ROOT / "CHANGELOG.md").read_text("utf-8")


def test_the_top_of_the_readme_installs_and_runs_the_server_and_runs_the_tests() -> None:
    top = README.split("## Install and run", 1)[0]
    assert "pip install -q . && .venv/bin/cortex-mcp" in top
    assert "bash .ci/run" in top
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "python -m pytest -q" in ci and "ruff check ." in ci
    assert "mkdocs build --strict" in ci


def test_the_readme_development_section_lists_what_ci_runs() -> None:
    development = README.split("## Development", 1)[1]
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    for command in ("ruff format --check .", "ruff check .", "mkdocs build --strict"):
        assert command in development and command in ci, command
    assert "python -m pytest -q" in development


def test_the_readme_is_at_most_250_lines() -> None:
    assert len(README.splitlines()) <= 250, len(README.splitlines())


def _nav_pages(nav: list) -> list[str]:
    pages = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_docs_page_is_in_the_nav_once() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == sorted(PAGES), (sorted(nav), sorted(PAGES))
    assert config["strict"] is True
    assert "docs/hooks/settings_table.py" in config["hooks"]


def test_the_configuration_page_gets_every_setting_from_the_hook() -> None:
    spec = importlib.util.spec_from_file_location(
        "settings_table", DOCS / "hooks" / "settings_table.py"
    )
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = PAGES["configuration.md"]
    assert page.count(hook.MARKER) == 1
    built = hook.on_page_markdown(page, None, None, None)
    assert hook.MARKER not in built
    help_text = subprocess.run(
        [*server_command(), "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name in re.findall(r"^  (CORTEX_[A-Z0-9_]+)", help_text, re.M):
        if name != "CORTEX_CONFIG":
            assert f"| `{name}` |" in built, name


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md", *PAGES])
def test_the_docs_refer_to_nothing_outside_the_repository(name: str) -> None:
    text = {"README.md": README, "CHANGELOG.md": CHANGELOG, **PAGES}[name]
    assert "DESIGN §" not in text and "DESIGN.md" not in text
    assert not re.search(r"\bseed\b|\bseed's\b", text), re.findall(r".{30}seed.{30}", text)


def test_the_sample_doctor_output_shows_the_current_schema(tmp_path: Path) -> None:
    (sample,) = re.findall(r"^database +ok +.*schema (\d+)", PAGES["install.md"], re.M)
    assert int(sample) == SCHEMA_VERSION
    db = tmp_path / "brain.db"
    subprocess.run([*server_command(), "add", "x" * 20], env=server_env(db), check=True)
    doctor = subprocess.run(
        [*server_command(), "doctor"], capture_output=True, text=True, env=server_env(db)
    )
    assert f"schema {SCHEMA_VERSION}, 1 memories" in doctor.stdout


def test_the_claude_code_line_gets_the_server_object_of_client_config(tmp_path: Path) -> None:
    assert 'claude mcp add-json cortex "$(cortex-mcp client-config --entry)"' in README
    env = server_env(tmp_path / "brain.db")
    whole = subprocess.run(
        [*server_command(), "client-config"], capture_output=True, text=True, env=env, check=True
    )
    entry = subprocess.run(
        [*server_command(), "client-config", "--entry"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert len(entry.stdout.splitlines()) == 1
    assert json.loads(entry.stdout) == json.loads(whole.stdout)["mcpServers"]["cortex"]


def test_the_example_configs_token_value_is_a_placeholder_only() -> None:
    config = json.loads((ROOT / "claude_desktop_config.example.json").read_text("utf-8"))
    value = config["mcpServers"]["cortex-remote"]["env"]["CORTEX_AUTH"]
    assert re.fullmatch(r"Bearer <[^<>]+>", value), value
    assert '"CORTEX_AUTH": "Bearer <your CORTEX_API_TOKEN>"' in PAGES["http.md"]


@pytest.mark.parametrize("name", ["README.md", "install.md"])
def test_the_readme_warns_that_upgrading_by_the_bare_name_replaces_this_project(name: str) -> None:
    flat = " ".join((README if name == "README.md" else PAGES[name]).split())
    assert "Do not upgrade by the bare name" in flat
    assert "replaces it with the unrelated PyPI project" in flat
