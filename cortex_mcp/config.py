"""Settings: one pydantic-settings class, env prefix ``CORTEX_``, optional TOML/JSON file.

Built once in the entry point and passed down; never read at import time. The nested groups
are in config_groups.py (re-exported here); the help text and the warnings about settings
nothing reads are in config_help.py.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    JsonConfigSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from cortex_mcp.config_groups import (
    LayerSettings,
    LifecycleSettings,
    MirrorSettings,
    SearchSettings,
)
from cortex_mcp.errors import ConfigError
from cortex_mcp.models import agent_id_problem
from cortex_mcp.zones import local_zone_name, zone

LLM_PROVIDERS = {"auto", "openai", "anthropic", "none"}
EMBEDDING_PROVIDERS = {"auto", "openai", "local", "none"}
LOCAL_RERANK_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"
LOG_LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}
# what an access token may be signed with: public-key algorithms only (a shared-secret HS*
# check given an issuer's public key would accept tokens anyone could sign)
PUBLIC_KEY_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip


def default_home() -> Path:
    return Path.home() / ".cortex"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CORTEX_",
        env_nested_delimiter="__",
        # an empty variable is an unset one: GUI hosts (a Claude Desktop bundle's settings form)
        # pass a field left blank as ""
        env_ignore_empty=True,
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
    timezone: str = Field(
        default_factory=local_zone_name,
        description="IANA time zone (Asia/Tokyo, America/Los_Angeles) that 'today', 'yesterday'"
        " and dates without an offset are read in and times are shown in; default: this"
        " machine's zone",
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
    llm_api_key: SecretStr | None = Field(
        None,
        description="key of the LLM provider (openai: OpenAI or the llm_base_url endpoint;"
        " anthropic), else OPENAI_API_KEY / ANTHROPIC_API_KEY",
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
    embedding_model_path: Path | None = Field(
        None,
        description="local provider: a model folder copied by hand (no download, no network)",
    )

    rerank_provider: Literal["none", "http", "local"] = Field(
        "none",
        description="a cross-encoder that reorders the top candidates: none, a /rerank endpoint"
        " (http: Cohere, Jina, Voyage, TEI, Infinity) or a model run here (local: the `local`"
        " extra)",
    )
    rerank_base_url: str | None = Field(
        None, description="provider http: the endpoint's base URL ({base_url}/rerank is posted)"
    )
    rerank_model: str | None = Field(
        None, description=f"the reranking model (provider local: default {LOCAL_RERANK_MODEL})"
    )
    rerank_api_key: SecretStr | None = Field(
        None, description="provider http: sent as Authorization: Bearer <key>"
    )
    rerank_top_n: int = Field(20, ge=2, le=200, description="how many top candidates are reranked")
    rerank_timeout_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description="a reranker slower than this is skipped for that recall (order kept)",
    )

    export_dir: Path | None = Field(
        None, description="keep Markdown mirrors (MEMORY.md, memory/...) in this folder"
    )
    api_token: SecretStr | None = Field(
        None,
        description="the admin token (any agent) the HTTP server requires, needed off loopback;"
        " with it set, agent tokens (`cortex-mcp token`) are checked too",
    )
    oauth_issuer: str | None = Field(
        None,
        description="the identity provider's issuer URL: its JWT access tokens are accepted"
        " (keys from its JWKS) and clients discover it (with the public URL)",
    )
    public_url: str | None = Field(
        None,
        description="the URL clients reach this server at (https://memory.example.com, path"
        " included): the OAuth resource its tokens must be issued for",
    )
    oauth_audience: str | None = Field(
        None,
        description="the audience (aud) access tokens must carry; unset: the public URL or"
        " its /mcp",
    )
    oauth_agent_claim: str = Field(
        "sub",
        min_length=1,
        max_length=200,
        description="the claim naming a token's agent, or a template of claims ({email},"
        " team-{groups}: a list claim gives one agent per value)",
    )
    oauth_client_id: str | None = Field(
        None,
        max_length=500,
        description="the dashboard's client id at the identity provider (a public client with"
        " PKCE, redirect URI <public URL>/ui/oauth/callback): the dashboard signs in with it",
    )
    oauth_algorithms: Annotated[list[str], NoDecode] = Field(
        ["RS256", "PS256", "ES256", "EdDSA"],
        description="signature algorithms accepted on access tokens (comma list; never none"
        " or HS*)",
    )
    auth_failures_per_minute: int = Field(
        10,
        ge=1,
        le=10_000,
        description="times one credential may be refused from one client address within a"
        " minute before it gets 429 there (other credentials are served); an address with ten"
        " times as many refusals gets 429 for credentials not accepted lately (guessing)",
    )
    mcp_sessions_per_caller: int = Field(
        32,
        ge=1,
        le=10_000,
        description="MCP sessions (Streamable HTTP) one caller may hold open (a token, the admin"
        " token, or everyone on a server without CORTEX_API_TOKEN); one more closes that"
        " caller's least recently used idle session",
    )
    mcp_sessions_total: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="MCP sessions the server holds at most; at the bound a new one closes the"
        " least recently used idle session of the caller holding the most, so a caller under"
        " its own cap is never refused",
    )
    mcp_session_idle_s: float = Field(
        600.0,
        gt=0,
        le=86_400,
        description="an MCP session with no request in flight for this long is closed (its"
        " client opens a new one); protocol 2026-07-28 requests hold no session",
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
    trusted_proxies: Annotated[list[str], NoDecode] = Field(
        [],
        description="reverse proxies (addresses or networks, comma list) whose"
        " X-Forwarded-Proto: https and X-Forwarded-For are believed (the client's address for"
        " throttling and logs; the dashboard's cookie is then Secure)",
    )
    proxy_user_header: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9-]{1,64}$",
        description="a header naming the signed-in user (X-Forwarded-User from oauth2-proxy):"
        " from a trusted proxy it names the agent acting; from anywhere else it is ignored",
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
    link_entities: bool = Field(
        True,
        description="link every memory written to the people, pets, places and things it names"
        " (offline rules; false: no new links, the entities already kept stay)",
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

    @field_validator(
        "db_path", "models_dir", "embedding_model_path", "export_dir", "log_file", mode="after"
    )
    @classmethod
    def _expand_user(cls, value: Path | None) -> Path | None:
        return _expand_home(value) if value is not None else None

    @field_validator("database_url", mode="after")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        scheme = value.get_secret_value().split("://", 1)[0].lower()
        if "://" not in value.get_secret_value() or scheme not in ("postgresql", "postgres"):
            raise ValueError("must be a postgresql://user:password@host/database URL")
        return value

    @field_validator("rerank_base_url", mode="after")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        url = value.strip().rstrip("/")
        if not url.lower().startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return url

    @model_validator(mode="after")
    def _http_reranker_needs_url(self) -> Settings:
        if self.rerank_provider == "http" and self.rerank_base_url is None:
            raise ValueError(
                "CORTEX_RERANK_PROVIDER=http needs CORTEX_RERANK_BASE_URL (the endpoint's base URL)"
            )
        return self

    @field_validator(
        "allowed_hosts", "cors_origins", "trusted_proxies", "oauth_algorithms", mode="before"
    )
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("oauth_issuer", "public_url", mode="after")
    @classmethod
    def _oauth_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or not value.strip():
            return None
        url = value.strip()
        if not url.lower().startswith(("http://", "https://")) or "?" in url or "#" in url:
            raise ValueError("must be an http:// or https:// URL without query or fragment")
        # an issuer is compared exactly (a trailing slash is part of it); ours is a base URL
        return url if info.field_name == "oauth_issuer" else url.rstrip("/")

    @field_validator("oauth_algorithms", mode="after")
    @classmethod
    def _public_key_algorithms(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in PUBLIC_KEY_ALGORITHMS:
                raise ValueError(
                    f"{name!r} is not a public-key signature algorithm (one of"
                    f" {', '.join(PUBLIC_KEY_ALGORITHMS)}; none and HS* are never accepted)"
                )
        if not value:
            raise ValueError("name at least one algorithm")
        return value

    @model_validator(mode="after")
    def _oauth_needs_public_url(self) -> Settings:
        if (self.oauth_issuer is None) != (self.public_url is None):
            raise ValueError(
                "CORTEX_OAUTH_ISSUER and CORTEX_PUBLIC_URL go together: set both (the identity"
                " provider and the URL clients reach this server at) or neither"
            )
        return self

    @field_validator("trusted_proxies", mode="after")
    @classmethod
    def _proxy_addresses(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(
                    f"{item!r} is not an IP address or network (10.0.0.5, 10.0.0.0/8, ::1)"
                ) from None
        return value

    @field_validator("agent_id", mode="after")
    @classmethod
    def _agent_id_rule(cls, value: str) -> str:
        problem = agent_id_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("timezone", mode="after")
    @classmethod
    def _iana_zone(cls, value: str) -> str:
        return zone(value).key

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


def _expand_home(path: Path) -> Path:
    """`~`, and a leading `${HOME}` or `$HOME`: an MCPB bundle's default folder reaches the server
    unexpanded when the host substitutes the user's settings after the system folders."""
    text = str(path)
    for variable in ("${HOME}", "$HOME"):
        if text == variable or text.startswith((variable + "/", variable + "\\")):
            return Path.home() / text[len(variable) :].lstrip("/\\")
    return path.expanduser()


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
