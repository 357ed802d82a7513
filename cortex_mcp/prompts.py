"""Prompt templates: Markdown files in the top-level ``prompts/`` folder (packaged into the
wheel as ``cortex_mcp/prompt_files``), read at call time so edits apply without a restart.

A file starts with a small header::

    ---
    description: what the prompt is for
    arguments: topic, depth?
    argument topic: what the client asks the user for
    argument depth: an optional argument (``?``) with its description
    default depth: the text used when the client leaves it out
    ---

and its body uses ``$name`` placeholders (`string.Template`), so literal braces stay safe.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from pydantic import Field

MCP_PREFIX = "mcp_"


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

    def body(self) -> str:
        return _split(self.path.read_text("utf-8"))[1]

    def render(self, **values: str) -> str:
        filled = {**self.defaults, **{k: v for k, v in values.items() if v}}
        return Template(self.body()).safe_substitute(filled)


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
    )


def mcp_prompt_files(folder: Path | None = None) -> list[PromptFile]:
    folder = folder or prompts_dir()
    return [load_prompt(p) for p in sorted(folder.glob(f"{MCP_PREFIX}*.md"))]


def _renderer(prompt: PromptFile) -> Any:
    def render(**values: str) -> str:
        return prompt.render(**values)

    # Prompt.from_function reads the signature: one string parameter per declared argument.
    # Optional arguments default to "" (the file's `default` text is used when rendering).
    annotations = {
        name: Annotated[str, Field(description=prompt.descriptions.get(name, name))]
        for name in prompt.arguments
    }
    render.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=annotations[name],
                default="" if name in prompt.optional else inspect.Parameter.empty,
            )
            for name in prompt.arguments
        ]
    )
    render.__annotations__ = {**annotations, "return": str}
    render.__name__ = prompt.name
    return render


def register_prompts(mcp: MCPServer, folder: Path | None = None) -> None:
    for prompt in mcp_prompt_files(folder):
        mcp.add_prompt(
            Prompt.from_function(
                _renderer(prompt), name=prompt.name, description=prompt.description
            )
        )
