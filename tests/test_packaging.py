"""What users install: the wheel with its prompts, the console script, the example config."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cortex_mcp.prompts import load_prompt, mcp_prompt_files, prompts_dir

ROOT = Path(__file__).resolve().parent.parent


def test_every_prompt_file_loads_and_uses_its_arguments() -> None:
    files = sorted((ROOT / "prompts").glob("*.md"))
    assert files, "the prompts/ folder is empty"
    for path in files:
        if path.name.startswith("mcp_"):
            prompt = load_prompt(path)
            assert prompt.description and prompt.arguments
            assert "$" not in prompt.render(**dict.fromkeys(prompt.arguments, "X"))
    assert {p.name for p in mcp_prompt_files()} >= {"recall_topic", "remember_conversation"}
    assert prompts_dir().is_dir()


@pytest.mark.slow
def test_the_wheel_carries_the_prompts_folder(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("cortex_mcp-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "prompts").glob("*.md"):
        assert f"cortex_mcp/prompt_files/{path.name}" in names, f"{path.name} missing from wheel"
    assert "cortex_mcp/cli.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "cortex-mcp = cortex_mcp.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_example_desktop_config_parses_and_names_the_console_script() -> None:
    config = json.loads((ROOT / "claude_desktop_config.example.json").read_text())
    server = config["mcpServers"]["cortex"]
    assert server["command"] == "uvx" and server["args"] == ["cortex-mcp"]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'cortex-mcp = "cortex_mcp.cli:main"' in pyproject


def test_version_and_doctor_commands(tmp_path: Path) -> None:
    version = subprocess.run(
        [sys.executable, "-m", "cortex_mcp", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.startswith("cortex-mcp 0.")
    doctor = subprocess.run(
        [sys.executable, "-m", "cortex_mcp", "--db", str(tmp_path / "d.db"), "doctor"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    for label in (
        "SQLite:",
        "sqlite-vec:",
        "FTS5:",
        "DB path:",
        "Schema:",
        "Memories:",
        "Embeddings:",
    ):
        assert label in doctor.stdout
    assert "via pysqlite3" in doctor.stdout or "via sqlite3" in doctor.stdout
    assert str(tmp_path / "d.db") in doctor.stdout
