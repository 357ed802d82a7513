"""The ``mcp_*`` prompt templates served as MCP prompts.

The SDK's own prompt wrapper refuses a missing argument with a plain ValueError, which reaches a
client as "MCP error 0" (or "Internal server error") and never checks a value. Here every
argument is checked by its file's declaration (`PromptFile.checked`) and a bad one, or an
unknown prompt name, answers invalid params (-32602) naming the argument and the rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import Message, Prompt, PromptArgument, UserMessage
from mcp.types import INVALID_PARAMS
from pydantic import Field

from cortex_mcp.prompts import PromptArgumentError, PromptFile, mcp_prompt_files


class CortexPrompt(Prompt):
    """One template file as an MCP prompt, its arguments checked by the file's declaration."""

    template: Any = Field(exclude=True)

    @classmethod
    def from_file(cls, template: PromptFile) -> CortexPrompt:
        return cls(
            name=template.name,
            description=template.description,
            arguments=[
                PromptArgument(
                    name=name,
                    description=template.descriptions.get(name),
                    required=name not in template.optional,
                )
                for name in template.arguments
            ],
            fn=template.render,
            template=template,
        )

    async def render(self, arguments: dict[str, Any] | None, context: Context[Any, Any]) -> Any:
        del context
        try:
            values = self.template.checked(arguments)
        except PromptArgumentError as exc:
            raise MCPError(INVALID_PARAMS, f"prompt {self.name}: {exc}") from None
        messages: list[Message] = [UserMessage(self.template.render(**values))]
        return messages


def prompt_templates(folder: Path | None = None) -> list[CortexPrompt]:
    return [CortexPrompt.from_file(template) for template in mcp_prompt_files(folder)]


def known_prompts_only(names: Iterable[str]) -> ServerMiddleware[Any]:
    """Middleware: `prompts/get` of a name that is not in `names` is invalid params, as the MCP
    specification asks (the SDK answers it with error code 0)."""
    known = sorted(names)

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        name = (ctx.params or {}).get("name") if ctx.method == "prompts/get" else None
        if isinstance(name, str) and name not in known:
            raise MCPError(INVALID_PARAMS, f"unknown prompt; use one of: {', '.join(known)}")
        return await call_next(ctx)

    return middleware
