"""What `cortex-mcp --help` says about settings, and the warnings about settings given but read
by nothing (a misspelled CORTEX_* variable or config-file key), both walked from the model.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from cortex_mcp.config import Settings


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
    import difflib  # only when a setting is misspelled

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
            import difflib  # only when a key is misspelled

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
            import tomllib  # its regular expressions cost every start ~5 ms

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
