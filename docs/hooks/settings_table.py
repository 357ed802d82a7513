"""MkDocs hook: the settings table of configuration.md, generated from the settings model.

The page holds the marker below; at build time it becomes one row per setting, in the order
and with the names `cortex-mcp --help` lists (`config_help.setting_entries`), each with its real
default and the field's description. Nothing is written by hand, so the table cannot go stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from cortex_mcp.config import Settings
from cortex_mcp.config_help import OTHER_ENVIRONMENT, setting_entries
from cortex_mcp.config_live import LIVE

MARKER = "<!-- settings-table -->"


def _field(env_name: str) -> FieldInfo:
    """The field behind CORTEX_SEARCH__MMR and the like, walked down the nested groups."""
    model: type[BaseModel] = Settings
    path = env_name.removeprefix("CORTEX_").lower().split("__")
    for name in path[:-1]:
        model = model.model_fields[name].annotation  # type: ignore[assignment]
    return model.model_fields[path[-1]]


def _default(info: FieldInfo) -> str:
    value: Any = info.get_default(call_default_factory=True)
    if value is None or value == [] or isinstance(value, SecretStr):
        return "unset"
    if isinstance(value, bool):
        shown = str(value).lower()
    elif isinstance(value, dict):
        shown = json.dumps(value, separators=(",", ":"))
    elif isinstance(value, Path):
        shown = str(value).replace(str(Path.home()), "~", 1)
    else:
        shown = str(value)
    return f"`{shown}`"


def _meaning(info: FieldInfo) -> str:
    text = info.description or ""
    if get_origin(info.annotation) is Literal:
        text += ": " + ", ".join(f"`{choice}`" for choice in get_args(info.annotation))
    return text.replace("|", "\\|")


def settings_table() -> str:
    """The Markdown table of every setting: name, default, meaning."""
    rows = ["| setting | default | meaning | changes |", "| --- | --- | --- | --- |"]
    for name, _ in setting_entries():
        info = _field(name)
        dotted = name.removeprefix("CORTEX_").lower().replace("__", ".")
        changes = "live" if dotted in LIVE else "at a restart"
        rows.append(f"| `{name}` | {_default(info)} | {_meaning(info)} | {changes} |")
    rows.append("")
    rows.append("Read as well, outside the model:")
    rows.append("")
    rows += [f"- `{name}`: {text}" for name, text in OTHER_ENVIRONMENT]
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, settings_table())
