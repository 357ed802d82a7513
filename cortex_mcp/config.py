"""Settings: one pydantic-settings class, env prefix ``CORTEX_``, optional TOML/JSON file.

Built once in the entry point and passed down; never read at import time.
"""

from __future__ import annotations

import difflib
import json
import os
import textwrap
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
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

    fusion: Literal["maxnorm", "minmax", "weighted", "rrf"] = Field(
        "maxnorm", description="how the text and vector rankings combine"
    )
    # equal on purpose: see search/fusion.py and tests/bench/locomo_recall.py
    vector_weight: float = Field(0.5, ge=0, le=1, description="weight of the vector ranking")
    text_weight: float = Field(0.5, ge=0, le=1, description="weight of the text (BM25) ranking")
    rrf_k: int = Field(60, ge=1, description="k of reciprocal-rank fusion (fusion=rrf)")
    pool_factor: int = Field(
        4, ge=1, le=20, description="candidates per channel, as a multiple of max_results"
    )
    layer_weights: dict[str, float] = Field(
        {"core": 1.0, "working": 0.8, "archive": 0.5},
        description="score multiplier per layer (a JSON object)",
    )
    recency_window_days: float = Field(
        7.0, ge=0, description="memories younger than this get the recency boost"
    )
    recency_boost: float = Field(0.1, ge=0, description="the most recency adds to a score")
    # the most a memory's recall history can add (a tie-breaker: see fusion.access_factor)
    access_boost: float = Field(
        0.05, ge=0, le=1, description="the most a memory's recall history adds (tie-breaker)"
    )
    access_boost_cap: int = Field(
        10, ge=0, description="accesses at which that boost is reached (log scale)"
    )
    temporal_decay: bool = Field(False, description="true: older memories score less")
    half_life_days: float = Field(30.0, gt=0, description="half-life of that decay")
    mmr: bool = Field(False, description="true: diversify results (maximal marginal relevance)")
    mmr_lambda: float = Field(
        0.7, ge=0, le=1, description="relevance against diversity in MMR (1: relevance only)"
    )
    vector_backend: Literal["auto", "numpy", "ivf", "vec0"] = Field(
        "auto",
        description="per agent: exact in memory (numpy), an approximate int8 index (ivf),"
        " or sqlite-vec (vec0); auto: numpy within numpy_max_mb, ivf past it",
    )
    numpy_max_mb: int = Field(
        256, ge=0, description="an agent's vectors past this many MB: auto switches to ivf"
    )


class LayerSettings(BaseModel):
    working_ttl_hours: float = Field(
        48.0, gt=0, description="a memory stored in the working layer leaves recall after this"
    )
    archive_ttl_days: float = Field(
        90.0,
        gt=0,
        description="one stored in the archive layer after this (forgotten ones never expire)",
    )


class LifecycleSettings(BaseModel):
    """The nightly lifecycle (env: ``CORTEX_LIFECYCLE__SCHEDULE="0 4 * * *"`` and so on)."""

    schedule: str = Field(
        "0 3 * * *", description='cron (local time) of the nightly lifecycle, or "off"'
    )
    catch_up_hours: float = Field(
        48.0, gt=0, description="a server started this long after the last run runs one soon"
    )
    catch_up_delay_s: float = Field(60.0, ge=0, description="how soon: seconds after the start")
    promote_threshold: float = Field(
        0.6, ge=0, le=1, description="score a working memory needs to be promoted to core"
    )
    promote_min_age_hours: float = Field(
        24.0, ge=0, description="working memories younger than this are not promoted"
    )
    merge_threshold: float = Field(
        0.85, gt=0, le=1, description="similarity at which two memories merge (cosine)"
    )
    archive_threshold: float = Field(
        0.2, ge=0, le=1, description="decay score under which a core memory is archived"
    )
    decay_lambda: float = Field(0.03, ge=0, description="daily rate of that decay")
    core_max_entries: int = Field(
        2000, ge=10, description="most core memories; the lowest scored are archived past it"
    )
    delete_compressed_archive: bool = Field(
        False, description="true: delete archive memories once a monthly summary covers them"
    )
    llm_max_calls: int = Field(
        20, ge=0, description="LLM calls one run may make (merge and compress)"
    )
    llm_batch_items: int = Field(60, ge=2, description="memories per LLM summary call")
    lease_seconds: float = Field(
        600.0, ge=5, description="a run's lease across processes (renewed while it runs)"
    )

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

    memory_md_words: int = Field(
        3000, ge=100, description="MEMORY.md is cut to about this many words"
    )
    debounce_s: float = Field(
        2.0, ge=0, description="mirrors are rewritten this long after the last change"
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CORTEX_",
        env_nested_delimiter="__",
        extra="ignore",
        validate_default=True,
    )

    db_path: Path = Field(
        default_factory=lambda: default_home() / "brain.db", description="the memory file"
    )
    # ---- PostgreSQL (issue 17): the shared store of several servers; unset = the SQLite file
    database_url: SecretStr | None = Field(
        None,
        description="postgresql://... to keep memories in PostgreSQL (the `postgres` extra)"
        " instead of the db_path file",
    )
    pool_max: int = Field(
        10, ge=1, le=200, description="PostgreSQL connections one process opens at most"
    )
    # ----
    agent_id: str = Field(
        "default",
        min_length=1,
        max_length=128,
        description="whose memories this process reads and writes",
    )
    max_content_chars: int = Field(
        8000, ge=100, le=100_000, description="longest memory accepted, in characters"
    )

    llm_provider: str = Field(
        "auto", description="extraction LLM: auto, openai, anthropic, none, or a comma list"
    )
    llm_model: str | None = Field(
        None,
        description="model (gpt-4o-mini, claude-3-5-haiku-latest); a comma list: one per provider",
    )
    llm_base_url: str | None = Field(
        None, description="any OpenAI-compatible /v1 endpoint for extraction (Ollama, vLLM)"
    )
    llm_timeout_s: float = Field(
        20.0, gt=0, le=600, description="per provider and turn; then the next, then the raw turn"
    )
    llm_max_in_flight: int = Field(
        4, ge=1, le=64, description="LLM calls running at once in one process"
    )

    embedding_provider: str = Field(
        "auto", description="auto, openai, local, none, or a comma list (cascade)"
    )
    embedding_model: str | None = Field(
        None, description="embedding model (text-embedding-3-small for openai)"
    )
    embedding_base_url: str | None = Field(
        None, description="any OpenAI-compatible /v1 endpoint (Ollama, LM Studio, vLLM)"
    )
    embedding_dimensions: int | None = Field(
        None, ge=8, le=8192, description="ask the model for fewer dimensions"
    )
    embedding_timeout_s: float = Field(
        5.0, gt=0, le=600, description="per call; past it recall answers from text"
    )
    embedding_batch_size: int | None = Field(
        None, ge=1, le=2048, description="texts per embedding request (128 openai, 64 local)"
    )
    embedding_concurrency: int | None = Field(
        None,
        ge=1,
        le=64,
        description="embedding requests in flight while indexing (4 openai, 1 local)",
    )
    embedding_api_key: SecretStr | None = Field(
        None, description="key for that endpoint (else OPENAI_API_KEY)"
    )
    models_dir: Path = Field(
        default_factory=lambda: default_home() / "models",
        description="where the local embedding model is downloaded",
    )

    export_dir: Path | None = Field(
        None, description="keep Markdown mirrors (MEMORY.md, memory/...) in this folder"
    )
    api_token: SecretStr | None = Field(
        None, description="bearer token the HTTP server requires (needed off loopback)"
    )
    host: str = Field("127.0.0.1", description="where `serve --transport sse|http|all` listens")
    port: int = Field(21100, ge=1, le=65535, description="the port it listens on")
    # extra Host header values the HTTP server accepts (DNS-rebinding protection), comma list
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        [], description="extra Host names the HTTP server accepts (comma list)"
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        [], description="browser origins allowed to call the HTTP server (comma list)"
    )
    max_body_bytes: int = Field(
        1_048_576,
        ge=1024,
        le=64 * 1_048_576,
        description="larger HTTP request bodies get 413",
    )
    include_shared: bool = Field(
        False, description="recall also returns memories other agents marked shared"
    )
    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING or ERROR")
    log_file: Path | None = Field(None, description="also write logs to this file")
    log_content: bool = Field(
        False, description="true: let memory contents and queries into the logs (debugging)"
    )

    search: SearchSettings = SearchSettings()
    layers: LayerSettings = LayerSettings()
    lifecycle: LifecycleSettings = LifecycleSettings()
    mirrors: MirrorSettings = MirrorSettings()

    @field_validator("db_path", "models_dir", "export_dir", "log_file", mode="after")
    @classmethod
    def _expand_user(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("database_url", mode="after")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        scheme = value.get_secret_value().split("://", 1)[0].lower()
        if "://" not in value.get_secret_value() or scheme not in ("postgresql", "postgres"):
            raise ValueError("must be a postgresql://user:password@host/database URL")
        return value

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


# ---- help: every setting once, from the model (`cortex-mcp --help`) ------------------------

OTHER_ENVIRONMENT = (
    ("CORTEX_CONFIG", "path of a .toml or .json settings file (the same keys, lower case)"),
    ("OPENAI_API_KEY", "enables OpenAI embeddings and extraction when their provider is auto"),
    ("ANTHROPIC_API_KEY", "enables Anthropic extraction when CORTEX_LLM_PROVIDER is auto"),
)
_NAME_COLUMN = 34
_HELP_WIDTH = 98


def setting_entries() -> list[tuple[str, str]]:
    """(environment name, description and default) of every setting, nested ones included,
    in the model's order; a field without a description is a bug the help test catches."""
    entries = []
    for path in _setting_paths(Settings):
        info = _field_info(path)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            continue  # a group: its fields are listed one by one
        entries.append((_env_name(path), _describe(info)))
    return entries


def _field_info(path: tuple[str, ...]) -> FieldInfo:
    model: type[BaseModel] = Settings
    for name in path[:-1]:
        model = model.model_fields[name].annotation  # type: ignore[assignment]
    return model.model_fields[path[-1]]


def _describe(info: FieldInfo) -> str:
    text = info.description or ""
    choices = get_args(info.annotation) if get_origin(info.annotation) is Literal else ()
    if choices:
        text += f": {', '.join(map(str, choices))}"
    default = _shown_default(info)
    return f"{text} (default: {default})" if default else text


def _shown_default(info: FieldInfo) -> str:
    value = info.get_default(call_default_factory=True)
    if value is None or value == [] or isinstance(value, SecretStr):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, Path):
        return str(value).replace(str(Path.home()), "~", 1)
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def settings_help() -> str:
    """The settings block of `cortex-mcp --help`: one line (or two) per setting."""
    lines = []
    indent = " " * _NAME_COLUMN
    for name, text in [*OTHER_ENVIRONMENT[:1], *setting_entries(), *OTHER_ENVIRONMENT[1:]]:
        wrapped = textwrap.wrap(text, _HELP_WIDTH - _NAME_COLUMN) or [""]
        if len(name) + 3 <= _NAME_COLUMN:
            lines.append(f"  {name:<{_NAME_COLUMN - 2}}{wrapped[0]}")
            wrapped = wrapped[1:]
        else:
            lines.append(f"  {name}")
        lines += [indent + line for line in wrapped]
    return "\n".join(lines)
