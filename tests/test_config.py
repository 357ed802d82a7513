"""Settings from env, a TOML or JSON file, and clear failures naming the setting."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cortex_mcp.cli import main
from cortex_mcp.config import load_settings
from cortex_mcp.config_help import setting_warnings
from cortex_mcp.errors import ConfigError
from tests.helpers.stdio_helpers import server_command, server_env


def test_zero_config_uses_the_home_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = load_settings()
    assert settings.db_path == tmp_path / ".cortex" / "brain.db"
    assert settings.models_dir == tmp_path / ".cortex" / "models"
    assert settings.port == 21100 and settings.host == "127.0.0.1"


def test_env_and_nested_env_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CORTEX_DB_PATH", str(tmp_path / "x.db"))
    monkeypatch.setenv("CORTEX_SEARCH__FUSION", "rrf")
    monkeypatch.setenv("CORTEX_EMBEDDING_PROVIDER", "openai, none")
    settings = load_settings()
    assert settings.db_path == tmp_path / "x.db"
    assert settings.search.fusion == "rrf"
    assert settings.embedding_provider == "openai,none"


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_config_file_is_read_and_env_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"cortex{suffix}"
    if suffix == ".toml":
        path.write_text('agent_id = "file-agent"\nport = 9000\n[search]\nmmr = true\n')
    else:
        path.write_text(
            json.dumps({"agent_id": "file-agent", "port": 9000, "search": {"mmr": True}})
        )
    monkeypatch.setenv("CORTEX_CONFIG", str(path))
    monkeypatch.setenv("CORTEX_PORT", "9100")
    settings = load_settings()
    assert settings.agent_id == "file-agent"
    assert settings.search.mmr is True
    assert settings.port == 9100


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"CORTEX_PORT": "abc"}, "CORTEX_PORT"),
        ({"CORTEX_LOG_LEVEL": "LOUD"}, "CORTEX_LOG_LEVEL"),
        ({"CORTEX_EMBEDDING_PROVIDER": "magic"}, "CORTEX_EMBEDDING_PROVIDER"),
        ({"CORTEX_SEARCH__MMR_LAMBDA": "3"}, "CORTEX_SEARCH__MMR_LAMBDA"),
        ({"CORTEX_CONFIG": "/nonexistent/cortex.toml"}, "CORTEX_CONFIG"),
    ],
)
def test_invalid_settings_fail_at_start_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    named: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError, match=named):
        load_settings()
    assert main(["doctor"]) == 2
    captured = capsys.readouterr()
    assert named in captured.err and captured.out == ""


def test_a_misspelled_environment_variable_is_warned_about_naming_the_setting(
    tmp_path: Path,
) -> None:
    env = server_env(tmp_path / "x.db", CORTEX_DB_PAHT="/tmp/y.db", CORTEX_SEARCH__FUSON="rrf")
    done = subprocess.run(
        [*server_command(), "doctor"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "CORTEX_DB_PAHT is ignored (did you mean CORTEX_DB_PATH?)" in done.stderr
    assert "CORTEX_SEARCH__FUSON is ignored (did you mean CORTEX_SEARCH__FUSION?)" in done.stderr
    assert "PAHT" not in done.stdout


def test_a_name_far_from_every_setting_gets_no_wild_guess() -> None:
    assert setting_warnings({"CORTEX_ZZZ": "1", "CORTEX_DB_PATH": "x", "HOME": "/"}) == [
        "unknown setting CORTEX_ZZZ is ignored"
    ]


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_unknown_keys_in_the_config_file_are_warned_about(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"cortex{suffix}"
    if suffix == ".toml":
        path.write_text('agent_idd = "x"\n[search]\nfuson = "rrf"\nmmr = true\n')
    else:
        path.write_text(json.dumps({"agent_idd": "x", "search": {"fuson": "rrf", "mmr": True}}))
    warnings = setting_warnings({"CORTEX_CONFIG": str(path)})
    assert warnings == [
        f"{path}: unknown key agent_idd is ignored (did you mean agent_id?)",
        f"{path}: unknown key search.fuson is ignored (did you mean search.fusion?)",
    ]


def test_valid_settings_give_no_warnings(tmp_path: Path) -> None:
    path = tmp_path / "cortex.toml"
    path.write_text('agent_id = "x"\n[search]\nmmr = true\n[layers]\nworking_ttl_hours = 3\n')
    env = {
        "CORTEX_CONFIG": str(path),
        "CORTEX_DB_PATH": "x",
        "CORTEX_SEARCH__MMR_LAMBDA": "0.5",
        "cortex_log_level": "debug",
    }
    assert setting_warnings(env) == []


def test_a_leading_home_variable_in_a_path_setting_is_the_home_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A Claude Desktop bundle's default folder (`${HOME}/.cortex`) can reach the server
    unexpanded: the host substitutes the user's settings after the system folders."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CORTEX_DB_PATH", "${HOME}/.cortex/brain.db")
    monkeypatch.setenv("CORTEX_MODELS_DIR", "$HOME/models")
    settings = load_settings()
    assert settings.db_path == tmp_path / ".cortex" / "brain.db"
    assert settings.models_dir == tmp_path / "models"
    monkeypatch.setenv("CORTEX_DB_PATH", "/srv/${HOME}/$HOMEWORK/b.db")
    assert str(load_settings().db_path) == "/srv/${HOME}/$HOMEWORK/b.db"


def test_a_setting_left_empty_by_a_settings_form_is_unset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("DB_PATH", "EMBEDDING_BASE_URL", "EMBEDDING_API_KEY", "LLM_API_KEY", "AGENT_ID"):
        monkeypatch.setenv(f"CORTEX_{name}", "")
    settings = load_settings()
    assert settings.db_path == tmp_path / ".cortex" / "brain.db"
    assert settings.embedding_base_url is None and settings.embedding_api_key is None
    assert settings.llm_api_key is None and settings.agent_id == "default"
