"""What users install: the wheel with its prompts, the console script, the example config."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from cortex_mcp.prompts import load_prompt, mcp_prompt_files, prompts_dir

ROOT = Path(__file__).resolve().parent.parent
PROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


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


@pytest.fixture
def wheel(built_dists: Path) -> Path:
    (built,) = built_dists.glob("cortex_mcp-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_carries_the_prompts_folder_and_the_license(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "prompts").glob("*.md"):
        assert f"cortex_mcp/prompt_files/{path.name}" in names, f"{path.name} missing from wheel"
    assert "cortex_mcp/cli.py" in names
    static = ROOT / "cortex_mcp" / "dashboard" / "static"
    for path in static.rglob("*"):
        if path.is_file():
            assert f"cortex_mcp/{path.relative_to(ROOT / 'cortex_mcp')}" in names, path
    assert "cortex_mcp/dashboard/static/vendor/d3-force.LICENSE" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)[-8:]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "cortex-mcp = cortex_mcp.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def _dependencies_without_this_project(into: Path) -> Path:
    """The test environment's installed dependencies, minus every trace of cortex_mcp (the
    editable install's finder and files), so the clean environment imports only the wheel."""
    site = Path(sysconfig.get_paths()["purelib"])
    into.mkdir()
    for entry in site.iterdir():
        if entry.name.startswith(("cortex_mcp", "_editable_impl_cortex", "__editable__")):
            continue
        if entry.suffix == ".pth" or entry.name == "__pycache__":
            continue
        (into / entry.name).symlink_to(entry)
    return into


@pytest.mark.slow
def test_the_wheels_console_script_runs_this_project_in_a_clean_environment(
    wheel: Path, tmp_path: Path
) -> None:
    """A fresh venv gets the wheel (and only the wheel: its dependencies come read-only from
    the test environment, because resolving them from an index would make this test slow and
    networked); the console script it installs must print this project's version."""
    venv = tmp_path / "clean"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    deps = _dependencies_without_this_project(tmp_path / "deps")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(deps)}
    script = venv / "bin" / "cortex-mcp"

    def run(*args: str) -> str:
        done = subprocess.run(
            [str(script), *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run("--version").strip() == f"cortex-mcp {PROJECT_VERSION}"
    where = subprocess.run(
        [str(python), "-c", "import cortex_mcp, sys; print(cortex_mcp.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(venv)), where
    config = json.loads(run("client-config"))
    assert config["mcpServers"]["cortex"]["command"] == str(script)


def test_the_example_desktop_config_runs_this_project_by_absolute_path() -> None:
    config = json.loads((ROOT / "claude_desktop_config.example.json").read_text())
    server = config["mcpServers"]["cortex"]
    command = Path(server["command"])
    assert command.is_absolute() and command.name == "cortex-mcp"
    assert server["args"] == []
    for name, value in server.get("env", {}).items():
        assert name.startswith("CORTEX_") and Path(value).is_absolute(), (name, value)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'cortex-mcp = "cortex_mcp.cli:main"' in pyproject


# `uvx cortex-mcp`, `pip install cortex-mcp`, `pip install "cortex-mcp[local]"`: PyPI's project
BARE_PYPI_NAME = re.compile(
    r"\b(uvx|pip install|uv tool install|uv pip install)\s+[\"']?cortex-mcp\b"
)


DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_no_readme_command_installs_the_unrelated_pypi_project(doc: Path) -> None:
    for paragraph in doc.read_text().split("\n\n"):
        if paragraph.startswith("**Not from PyPI.**"):  # the warning names them on purpose
            continue
        found = BARE_PYPI_NAME.search(" ".join(paragraph.split()).replace("`", ""))
        assert found is None, f"{doc.name} runs PyPI's cortex-mcp: {found.group(0)!r}"
    example = (ROOT / "claude_desktop_config.example.json").read_text()
    assert "uvx" not in example and BARE_PYPI_NAME.search(example) is None


@pytest.mark.parametrize("doc", ["README.md", "docs/install.md"])
def test_the_readme_says_the_pypi_name_is_someone_elses(doc: str) -> None:
    assert "belongs to an unrelated project" in (ROOT / doc).read_text()


def test_version_and_doctor_commands(tmp_path: Path) -> None:
    version = subprocess.run(
        [sys.executable, "-m", "cortex_mcp", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == f"cortex-mcp {PROJECT_VERSION}"
    doctor = subprocess.run(
        [sys.executable, "-m", "cortex_mcp", "--db", str(tmp_path / "d.db"), "doctor"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    parts = [line.split()[0] for line in doctor.stdout.splitlines()[1:-1]]
    assert parts == ["sqlite", "fts5", "sqlite-vec", "database", "embeddings", "llm"]
    assert "via pysqlite3" in doctor.stdout or "via sqlite3" in doctor.stdout
    assert str(tmp_path / "d.db") in doctor.stdout
