"""Settings: one pydantic-settings class, env prefix ``CORTEX_``, optional TOML/JSON file.

Built once in the entry point and passed down; never read at import time.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    JsonConfigSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from cortex_mcp.errors import ConfigError

LLM_PROVIDERS = {"auto", "openai", "anthropic", "none"}
EMBEDDING_PROVIDERS = {"auto", "openai", "local", "none"}
LOG_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}


def default_home() -> Path:
    return Path.home() / ".cortex"


class SearchSettings(BaseModel):
    """Ranking knobs (env: ``CORTEX_SEARCH__FUSION=rrf`` and so on)."""

    fusion: Literal["maxnorm", "minmax", "weighted", "rrf"] = "maxnorm"
    # equal on purpose: see search/fusion.py and tests/bench/locomo_recall.py
    vector_weight: float = Field(0.5, ge=0, le=1)
    text_weight: float = Field(0.5, ge=0, le=1)
    rrf_k: int = Field(60, ge=1)
    pool_factor: int = Field(4, ge=1, le=20)
    layer_weights: dict[str, float] = {"core": 1.0, "working": 0.8, "archive": 0.5}
    recency_window_days: float = Field(7.0, ge=0)
    recency_boost: float = Field(0.1, ge=0)
    # the most a memory's recall history can add (a tie-breaker: see fusion.access_factor)
    access_boost: float = Field(0.05, ge=0, le=1)
    access_boost_cap: int = Field(10, ge=0)  # accesses at which that boost is reached (log)
    temporal_decay: bool = False
    half_life_days: float = Field(30.0, gt=0)
    mmr: bool = False
    mmr_lambda: float = Field(0.7, ge=0, le=1)
    vector_backend: Literal["auto", "numpy", "vec0"] = "auto"
    numpy_max_mb: int = Field(512, ge=0)


class LayerSettings(BaseModel):
    working_ttl_hours: float = Field(48.0, gt=0)
    archive_ttl_days: float = Field(90.0, gt=0)


class LifecycleSettings(BaseModel):
    """The nightly lifecycle (env: ``CORTEX_LIFECYCLE__SCHEDULE="0 4 * * *"`` and so on)."""

    schedule: str = "0 3 * * *"  # cron, local time; "off" disables the schedule
    catch_up_hours: float = Field(48.0, gt=0)
    catch_up_delay_s: float = Field(60.0, ge=0)
    promote_threshold: float = Field(0.6, ge=0, le=1)
    promote_min_age_hours: float = Field(24.0, ge=0)
    merge_threshold: float = Field(0.85, gt=0, le=1)
    archive_threshold: float = Field(0.2, ge=0, le=1)
    decay_lambda: float = Field(0.03, ge=0)
    core_max_entries: int = Field(2000, ge=10)
    delete_compressed_archive: bool = False
    llm_max_calls: int = Field(20, ge=0)
    llm_batch_items: int = Field(60, ge=2)
    lease_seconds: float = Field(600.0, ge=5)

    @field_validator("schedule", mode="after")
    @classmethod
    def _cron_or_off(cls, value: str) -> str:
        text = " ".join(value.split())
        if text.lower() not in ("", "off") and len(text.split()) != 5:
            raise ValueError(
                "must be a 5-field cron expression (minute hour day month weekday) or off"
            )
        return text


class MirrorSettings(BaseModel):
    """Markdown mirrors written under ``CORTEX_EXPORT_DIR``."""

    memory_md_words: int = Field(3000, ge=100)
    debounce_s: float = Field(2.0, ge=0)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CORTEX_",
        env_nested_delimiter="__",
        extra="ignore",
        validate_default=True,
    )

    db_path: Path = Field(default_factory=lambda: default_home() / "brain.db")
    agent_id: str = Field("default", min_length=1, max_length=128)
    max_content_chars: int = Field(8000, ge=100, le=100_000)

    llm_provider: str = "auto"
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_timeout_s: float = Field(20.0, gt=0, le=600)
    llm_max_in_flight: int = Field(4, ge=1, le=64)

    embedding_provider: str = "auto"
    embedding_model: str | None = None
    embedding_base_url: str | None = None
    embedding_dimensions: int | None = Field(None, ge=8, le=8192)
    embedding_timeout_s: float = Field(5.0, gt=0, le=600)
    embedding_batch_size: int = Field(64, ge=1, le=2048)
    embedding_api_key: SecretStr | None = None
    models_dir: Path = Field(default_factory=lambda: default_home() / "models")

    export_dir: Path | None = None
    api_token: SecretStr | None = None
    host: str = "127.0.0.1"
    port: int = Field(21100, ge=1, le=65535)
    # extra Host header values the HTTP server accepts (DNS-rebinding protection), comma list
    allowed_hosts: Annotated[list[str], NoDecode] = []
    cors_origins: Annotated[list[str], NoDecode] = []
    max_body_bytes: int = Field(1_048_576, ge=1024, le=64 * 1_048_576)
    # recall/search also return memories other agents marked shared
    include_shared: bool = False
    log_level: str = "INFO"
    log_file: Path | None = None
    # memory contents and queries reach the logs only when this asks for it (debugging)
    log_content: bool = False

    search: SearchSettings = SearchSettings()
    layers: LayerSettings = LayerSettings()
    lifecycle: LifecycleSettings = LifecycleSettings()
    mirrors: MirrorSettings = MirrorSettings()

    @field_validator("db_path", "models_dir", "export_dir", "log_file", mode="after")
    @classmethod
    def _expand_user(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("allowed_hosts", "cors_origins", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("log_level", mode="after")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        upper = value.upper()
        if upper not in LOG_LEVELS:
            raise ValueError(f"must be one of {sorted(LOG_LEVELS)}")
        return upper

    @field_validator("llm_provider", mode="after")
    @classmethod
    def _known_llm_providers(cls, value: str) -> str:
        return _check_provider_list(value, LLM_PROVIDERS)

    @field_validator("embedding_provider", mode="after")
    @classmethod
    def _known_embedding_providers(cls, value: str) -> str:
        return _check_provider_list(value, EMBEDDING_PROVIDERS)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = os.environ.get("CORTEX_CONFIG")
        if config_file:
            sources.append(_file_source(settings_cls, Path(config_file).expanduser()))
        return tuple(sources)


def _check_provider_list(value: str, allowed: set[str]) -> str:
    names = [part.strip().lower() for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in allowed]
    if not names or unknown:
        raise ValueError(f"must be a comma list of {sorted(allowed)}, got {value!r}")
    return ",".join(names)


def _file_source(settings_cls: type[BaseSettings], path: Path) -> PydanticBaseSettingsSource:
    if not path.is_file():
        raise ConfigError(f"CORTEX_CONFIG: no such file {path}", field="CORTEX_CONFIG")
    if path.suffix.lower() == ".toml":
        return TomlConfigSettingsSource(settings_cls, toml_file=path)
    if path.suffix.lower() == ".json":
        return JsonConfigSettingsSource(settings_cls, json_file=path)
    raise ConfigError(f"CORTEX_CONFIG: {path} must end in .toml or .json", field="CORTEX_CONFIG")


def load_settings(**overrides: Any) -> Settings:
    """Build settings from overrides, env and the config file; name the bad setting on failure."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = "CORTEX_" + "__".join(str(part) for part in error["loc"]).upper()
            problems.append(f"{name}: {error['msg']}")
        raise ConfigError("invalid settings: " + "; ".join(problems)) from None
    except ValueError as exc:  # malformed TOML/JSON in the config file
        raise ConfigError(f"CORTEX_CONFIG: {exc}", field="CORTEX_CONFIG") from None


def _setting_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every settable key path of `model`: ("db_path",), ("search",), ("search", "mmr") ..."""
    paths = []
    for name, info in model.model_fields.items():
        paths.append((*prefix, name))
        nested = info.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            paths.extend(_setting_paths(nested, (*prefix, name)))
    return paths


def _env_name(path: tuple[str, ...]) -> str:
    return "CORTEX_" + "__".join(path).upper()


def _suggest(unknown: str, valid: list[str]) -> str:
    """The closest valid CORTEX_ name, compared without the prefix every name shares."""
    bare = {name.removeprefix("CORTEX_"): name for name in valid}
    close = difflib.get_close_matches(unknown.removeprefix("CORTEX_"), list(bare), n=1, cutoff=0.6)
    return f" (did you mean {bare[close[0]]}?)" if close else ""


def unknown_env_settings(environ: Mapping[str, str]) -> list[str]:
    """A warning for every CORTEX_* variable no setting reads, naming the closest valid one."""
    valid = [_env_name(path) for path in _setting_paths(Settings)] + ["CORTEX_CONFIG"]
    known = set(valid)
    return [
        f"unknown setting {name} is ignored{_suggest(name.upper(), valid)}"
        for name in sorted(environ)
        if name.upper().startswith("CORTEX_") and name.upper() not in known
    ]


def _unknown_keys(
    data: Mapping[str, Any], model: type[BaseModel], prefix: tuple[str, ...]
) -> list[str]:
    problems = []
    valid = list(model.model_fields)
    for key, value in data.items():
        dotted = ".".join((*prefix, key))
        if key not in model.model_fields:
            close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
            hint = f" (did you mean {'.'.join((*prefix, close[0]))}?)" if close else ""
            problems.append(f"unknown key {dotted} is ignored{hint}")
            continue
        nested = model.model_fields[key].annotation
        if (
            isinstance(value, Mapping)
            and isinstance(nested, type)
            and issubclass(nested, BaseModel)
        ):
            problems.extend(_unknown_keys(value, nested, (*prefix, key)))
    return problems


def unknown_file_settings(environ: Mapping[str, str]) -> list[str]:
    """A warning for every key of the CORTEX_CONFIG file no setting reads (call after
    `load_settings` succeeded: it has already refused a missing or malformed file)."""
    config_file = environ.get("CORTEX_CONFIG")
    if not config_file:
        return []
    path = Path(config_file).expanduser()
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(path.read_text("utf-8"))
        else:
            data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, Mapping):
        return []
    return [f"{path}: {problem}" for problem in _unknown_keys(data, Settings, ())]


def setting_warnings(environ: Mapping[str, str] | None = None) -> list[str]:
    """Settings given but read by nothing (misspelled, most likely), each with a suggestion."""
    env = os.environ if environ is None else environ
    return unknown_env_settings(env) + unknown_file_settings(env)
