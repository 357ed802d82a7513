"""README tells the truth a newcomer acts on: the commands at the top, the sample doctor
output, the Claude Code line, the example config's placeholder, no documents it cannot show."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from cortex_mcp.store.schema import SCHEMA_VERSION
from tests.stdio_helpers import server_command, server_env

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")


def test_the_top_of_the_readme_installs_and_runs_the_server_and_runs_the_tests() -> None:
    top = README.split("## Install and run", 1)[0]
    assert "pip install -q . && .venv/bin/cortex-mcp" in top
    assert "bash .ci/run" in top
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "python -m pytest -q" in ci and "ruff check ." in ci


def test_the_readme_refers_to_nothing_outside_the_repository() -> None:
    assert "DESIGN §" not in README and "DESIGN.md" not in README
    assert not re.search(r"\bseed\b|\bseed's\b", README), re.findall(r".{30}seed.{30}", README)


def test_the_sample_doctor_output_shows_the_current_schema(tmp_path: Path) -> None:
    (sample,) = re.findall(r"^database +ok +.*schema (\d+)", README, re.M)
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
    assert '"CORTEX_AUTH": "Bearer <your CORTEX_API_TOKEN>"' in README


def test_the_readme_warns_that_upgrading_by_the_bare_name_replaces_this_project() -> None:
    flat = " ".join(README.split())
    assert "Do not upgrade by the bare name" in flat
    assert "replaces it with the unrelated PyPI project" in flat
