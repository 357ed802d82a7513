"""Prompt templates: Markdown files in the top-level ``prompts/`` folder (packaged into the
wheel as ``cortex_mcp/prompt_files``), read at call time so edits apply without a restart.

A file starts with a small header::

    ---
    description: what the prompt is for
    arguments: topic, depth?
    argument topic: what the client asks the user for
    argument depth: an optional argument (``?``) with its description
    default depth: the text used when the client leaves it out
    integer depth: 1-5
    ---

and its body uses ``$name`` placeholders (`string.Template`), so literal braces stay safe.
An ``integer`` line makes the argument a whole number within that range: a value outside it
is refused (prompt arguments travel as strings, so the check is here, not in a schema).

This module only reads files (no MCP SDK import: the CLI's start must stay cheap);
``cortex_mcp.transports.mcp_prompts`` serves the ``mcp_*`` templates as MCP prompts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

MCP_PREFIX = "mcp_"
_RANGE = re.compile(r"^\s*(-?\d+)\s*-\s*(-?\d+)\s*$")


class PromptArgumentError(ValueError):
    """A prompt argument that is missing, unknown or out of its range; the message names it."""


def prompts_dir() -> Path:
    """The packaged folder when installed, else the checkout's top-level ``prompts/``."""
    packaged = Path(__file__).parent / "prompt_files"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parent.parent / "prompts"


@dataclass(frozen=True)
class PromptFile:
    path: Path
    name: str
    description: str
    arguments: list[str]
    optional: frozenset[str] = frozenset()
    descriptions: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)
    integer_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)

    def body(self) -> str:
        return _split(self.path.read_text("utf-8"))[1]

    def render(self, **values: str) -> str:
        filled = {**self.defaults, **{k: v for k, v in values.items() if v}}
        return Template(self.body()).safe_substitute(filled)

    def checked(self, values: Mapping[str, object] | None) -> dict[str, str]:
        """The arguments as strings, or PromptArgumentError naming the first bad one."""
        given = {k: v for k, v in (values or {}).items() if v is not None and v != ""}
        unknown = sorted(set(given) - set(self.arguments))
        if unknown:
            valid = ", ".join(self.arguments) or "none"
            raise PromptArgumentError(f"unknown argument {unknown[0]!r}; valid arguments: {valid}")
        missing = [a for a in self.arguments if a not in self.optional and a not in given]
        if missing:
            raise PromptArgumentError(f"{missing[0]}: is required")
        checked = {}
        for name, value in given.items():
            if not isinstance(value, str):
                raise PromptArgumentError(f"{name}: must be a string")
            if name in self.integer_ranges:
                value = _whole_number_within(name, value, *self.integer_ranges[name])
            checked[name] = value
        return checked


def _whole_number_within(name: str, text: str, low: int, high: int) -> str:
    try:
        number = int(text.strip())
    except ValueError:
        raise PromptArgumentError(f"{name}: must be a whole number, got {text[:40]!r}") from None
    if not low <= number <= high:
        raise PromptArgumentError(f"{name}: must be between {low} and {high}, got {number}")
    return str(number)


def _split(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    header, _, body = text[4:].partition("\n---\n")
    fields = {}
    for line in header.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields, body.lstrip("\n")


def load_prompt(path: Path) -> PromptFile:
    fields, body = _split(path.read_text("utf-8"))
    declared = [a.strip() for a in fields.get("arguments", "").split(",") if a.strip()]
    arguments = [a.rstrip("?") for a in declared]
    optional = frozenset(a.rstrip("?") for a in declared if a.endswith("?"))
    missing = [a for a in arguments if f"${a}" not in body and f"${{{a}}}" not in body]
    if missing or not fields.get("description"):
        raise ValueError(f"{path.name}: needs a description and uses every argument ({missing})")
    name = path.stem.removeprefix(MCP_PREFIX)
    return PromptFile(
        path,
        name,
        fields["description"],
        arguments,
        optional,
        {a: fields[f"argument {a}"] for a in arguments if f"argument {a}" in fields},
        {a: fields[f"default {a}"] for a in arguments if f"default {a}" in fields},
        {a: _range(path, fields[f"integer {a}"]) for a in arguments if f"integer {a}" in fields},
    )


def _range(path: Path, text: str) -> tuple[int, int]:
    found = _RANGE.match(text)
    if found is None:
        raise ValueError(f"{path.name}: an integer range reads like 1-50, got {text!r}")
    return int(found.group(1)), int(found.group(2))


def mcp_prompt_files(folder: Path | None = None) -> list[PromptFile]:
    folder = folder or prompts_dir()
    return [load_prompt(p) for p in sorted(folder.glob(f"{MCP_PREFIX}*.md"))]
