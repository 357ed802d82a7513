"""Settings from env, a TOML or JSON file, and clear failures naming the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex_mcp.cli import main
from cortex_mcp.config import load_settings
from cortex_mcp.errors import ConfigError


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
