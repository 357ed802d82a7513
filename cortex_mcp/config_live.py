"""Settings that change while the server runs: which ones may, where each value comes from,
and the settings in effect once the changes made through the API (or `cortex-mcp config`)
are laid over the ones the process started with.

Precedence, lowest first: the default, the CORTEX_CONFIG file, the changes (the API layer),
the environment. A change to a setting the environment sets is kept but not in effect.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidSetting

MASK = "********"

# what the parts read each time they use it (the search, recall, the lifecycle, the mirrors)
# or what the composition root rebuilds when it changes (providers, the schedule, log level)
LIVE: frozenset[str] = frozenset(
    {
        "max_content_chars",
        "timezone",
        "include_shared",
        "log_level",
        "llm_provider",
        "llm_model",
        "llm_base_url",
        "llm_api_key",
        "llm_timeout_s",
        "embedding_model",
        "embedding_base_url",
        "embedding_api_key",
        "embedding_dimensions",
        "embedding_timeout_s",
        "embedding_batch_size",
        "embedding_concurrency",
        *(
            f"search.{name}"
            for name in (
                "fusion",
                "vector_weight",
                "text_weight",
                "rrf_k",
                "pool_factor",
                "layer_weights",
                "recency_window_days",
                "recency_boost",
                "access_boost",
                "access_boost_cap",
                "temporal_decay",
                "half_life_days",
                "mmr",
                "mmr_lambda",
            )
        ),
        *(
            f"lifecycle.{name}"
            for name in (
                "schedule",
                "catch_up_hours",
                "catch_up_delay_s",
                "promote_threshold",
                "promote_min_age_hours",
                "merge_threshold",
                "archive_threshold",
                "decay_lambda",
                "min_core_age_days",
                "core_max_entries",
                "delete_compressed_archive",
                "llm_max_calls",
                "llm_batch_items",
                "lease_seconds",
            )
        ),
        "mirrors.memory_md_words",
    }
)


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, info in model.model_fields.items():
        nested = info.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            paths.extend(_leaf_paths(nested, (*prefix, name)))
        else:
            paths.append((*prefix, name))
    return paths


NAMES: tuple[str, ...] = tuple(".".join(path) for path in _leaf_paths(Settings))
GROUPS = frozenset(
    name
    for name, info in Settings.model_fields.items()
    if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
)


def field_info(name: str) -> FieldInfo:
    model: type[BaseModel] = Settings
    *groups, leaf = name.split(".")
    for group in groups:
        model = model.model_fields[group].annotation  # type: ignore[assignment]
    return model.model_fields[leaf]


def is_secret(name: str) -> bool:
    return "SecretStr" in str(field_info(name).annotation)


def kind(name: str) -> str:
    """What a setting's value is, for a form: boolean, integer, number, map or text."""
    annotation = str(field_info(name).annotation)
    for word, found in (("bool", "boolean"), ("int", "integer"), ("float", "number")):
        if annotation.startswith(f"<class '{word}'>") or f"{word} |" in annotation:
            return found
    return "map" if annotation.startswith("dict") else "text"


def variable(name: str) -> str:
    """The environment variable of a setting: search.fusion -> CORTEX_SEARCH__FUSION."""
    return "CORTEX_" + name.replace(".", "__").upper()


def set_by_environment(name: str, environ: Mapping[str, str]) -> str | None:
    """The variable that sets `name` (its own, or its group's JSON), if one is set."""
    group = name.split(".")[0] if "." in name else None
    for candidate in (variable(name), variable(group) if group else None):
        if candidate and environ.get(candidate, "").strip():
            return candidate
    return None


def _toml(text: str) -> dict[str, Any]:
    import tomllib  # its regular expressions cost every start ~5 ms; few configs are TOML

    return tomllib.loads(text)


def file_names(environ: Mapping[str, str]) -> set[str]:
    """The settings the CORTEX_CONFIG file names (a missing or broken file names none)."""
    path_text = environ.get("CORTEX_CONFIG")
    if not path_text:
        return set()
    path = Path(path_text).expanduser()
    try:
        text = path.read_text("utf-8")
        data = _toml(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (OSError, ValueError):
        return set()
    found: set[str] = set()
    for key, value in data.items() if isinstance(data, Mapping) else ():
        if key in GROUPS and isinstance(value, Mapping):
            found.update(f"{key}.{inner}" for inner in value)
        else:
            found.add(key)
    return found & set(NAMES)


def value_of(settings: Settings, name: str) -> Any:
    target: Any = settings
    for part in name.split("."):
        target = getattr(target, part)
    return target


def plain(value: Any) -> Any:
    """A setting's value as JSON holds it (a secret's own text)."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def shown(name: str, value: Any) -> Any:
    """A value as it may be shown and logged: a secret masked."""
    if is_secret(name):
        return None if value is None else MASK
    return plain(value)


def flatten(document: Mapping[str, Any]) -> dict[str, Any]:
    """A partial document ({"search": {"fusion": "rrf"}}) as {dotted name: value}; an
    unknown name or one that changes only at a restart is refused (InvalidSetting naming it).
    A null value means "back to the file's or the default value"."""
    flat: dict[str, Any] = {}
    for key, value in document.items():
        if key in GROUPS and isinstance(value, Mapping):
            for inner, inner_value in value.items():
                flat[f"{key}.{inner}"] = inner_value
        elif "." in key and key in NAMES:
            group, leaf = key.split(".", 1)
            raise InvalidSetting(
                f'{key}: name it inside its group, as {{"{group}": {{"{leaf}": ...}}}}', field=key
            )
        elif key not in GROUPS:
            flat[str(key)] = value
    for name in flat:
        check_name(name)
    return flat


def check_name(name: str) -> None:
    if name not in NAMES:
        import difflib  # only when a name is misspelled

        close = difflib.get_close_matches(name, NAMES, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise InvalidSetting(f"{name}: no such setting{hint}", field=name)
    if name not in LIVE:
        raise InvalidSetting(
            f"{name}: changes only at a restart (set {variable(name)} or the CORTEX_CONFIG"
            " file, then restart); settings that change while running: see GET /api/v1/config",
            field=name,
        )


def layered(
    base: Settings, values: Mapping[str, Any], environ: Mapping[str, str] | None
) -> Settings:
    """`base` with `values` laid over it, except where `environ` sets a name (None: lay every
    value, to check them all). A value that breaks a rule: InvalidSetting naming every one."""
    merged = base.model_dump()
    for name, value in values.items():
        if environ is not None and set_by_environment(name, environ):
            continue
        *groups, leaf = name.split(".")
        target = merged
        for group in groups:
            target = target[group]
        target[leaf] = value
    try:
        return Settings(**merged)
    except ValidationError as exc:
        problems = [
            (".".join(str(part) for part in error["loc"]) or "settings", error["msg"])
            for error in exc.errors(include_url=False)
        ]
        message = "; ".join(f"{name}: {rule}" for name, rule in problems[:5])
        raise InvalidSetting(message, field=problems[0][0]) from None


Listener = Callable[[list[str]], None]


class LiveSettings:
    """The one `Settings` every part holds, kept current: a change is copied onto it in place
    (so the search, recall and lifecycle read it at their next use) and each listener is told
    which names changed (the composition root rebuilds providers, the schedule, the log level)."""

    def __init__(self, settings: Settings, environ: Mapping[str, str] | None = None) -> None:
        self.current = settings
        self.environ = os.environ if environ is None else environ
        self._base = settings.model_copy(deep=True)  # as started: defaults, file, environment
        self.version = 0
        self.values: dict[str, Any] = {}
        self.listeners: list[Listener] = []

    def checked(self, values: Mapping[str, Any]) -> Settings:
        """Every value checked by the settings model, the environment ignored."""
        return layered(self._base, values, None)

    def apply(self, version: int, values: Mapping[str, Any]) -> list[str]:
        """Lay `values` (the changes' document, `version`) over the settings started with;
        the names whose value changed, after each listener has been told."""
        effective = layered(self._base, values, self.environ)
        changed = [
            name
            for name in NAMES
            if name in LIVE and value_of(effective, name) != value_of(self.current, name)
        ]
        for name in changed:
            *groups, leaf = name.split(".")
            target: Any = self.current
            for group in groups:
                target = getattr(target, group)
            setattr(target, leaf, value_of(effective, name))
        self.version, self.values = version, dict(values)
        for listener in self.listeners:
            listener(changed)
        return changed

    def describe(self) -> list[dict[str, Any]]:
        """Every setting: value (secrets masked), source, whether it changes live, the
        variable that sets it and its description (the model's, as in --help)."""
        found = file_names(self.environ)
        rows = []
        for name in NAMES:
            env = set_by_environment(name, self.environ)
            source = (
                "environment"
                if env
                else "api"
                if name in self.values
                else "file"
                if name in found
                else "default"
            )
            row: dict[str, Any] = {
                "name": name,
                "value": shown(name, value_of(self.current, name)),
                "source": source,
                "live": name in LIVE,
                "secret": is_secret(name),
                "kind": kind(name),
                "variable": variable(name),
                "description": field_info(name).description or "",
            }
            if env and name in self.values:
                row["api_value"] = shown(name, self.values[name])
            rows.append(row)
        return rows
