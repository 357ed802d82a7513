"""MCP tools, resources and prompts over the service facade. Errors are translated here, once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from cortex_mcp import __version__
from cortex_mcp.errors import CortexError
from cortex_mcp.models import Category, ForgetResult, Layer, RecallResult, RememberResult
from cortex_mcp.prompts import register_prompts
from cortex_mcp.service import CortexService

T = TypeVar("T")
ServiceFactory = Callable[[], AbstractAsyncContextManager[CortexService]]

INSTRUCTIONS = """Long-term memory. Call cortex_recall before answering anything that may depend on
what you were told earlier (preferences, decisions, people, projects). Call cortex_remember for
durable facts worth keeping (one fact per call). Use cortex_forget to retract or correct a memory."""

RECALL_DOC = """Find memories relevant to a query and get them as a ready-to-paste context block.

Use before answering when earlier conversations may matter. Works in any language (English,
Chinese, Japanese, mixed) and for exact identifiers (IPs, error codes, paths). Small talk such
as "thanks" returns nothing, and meta.skipped_reason says why. `context` stays within
max_tokens; each line is tagged with its layer and date. meta.degraded lists what was not
available (for example no embedding provider: text search only).

Example: {"query": "which cloud provider did we pick for the VPS?", "max_results": 5}
"""

REMEMBER_DOC = """Store one durable memory (a fact, preference, decision...) in long-term memory.

Write one self-contained fact per call, in the user's language, with names and numbers
("User's Oracle Cloud VPS firewall blocks port 8080"). Sending the same content again is safe:
it returns the existing id with deduplicated=true. To replace an outdated memory, pass its id
as `supersedes`. Content is limited to 8000 characters by default.

Example: {"content": "User prefers TypeScript over JavaScript", "category": "preference",
"importance": 0.8}
"""

FORGET_DOC = """Retract a memory by id (ids come from cortex_recall or cortex_remember).

Default is soft: the memory leaves recall but is kept in the archive and the audit log.
With `correction`, the corrected fact is stored and linked (status "corrected", new_id).
With purge=true the content is erased everywhere, leaving only a content-free audit entry.

Example: {"memory_id": "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51", "correction":
"User moved from Tokyo to Osaka in 2025"}
"""

DEBUG_DOC = """Explain a search: every ranking stage for each hit, with timings.

Shows the parsed query and FTS expression, BM25 raw and normalised, vector distance and score,
fused score, layer weight, recency, access and decay boosts, MMR step, final score and rank,
the providers used and milliseconds per stage. For diagnosing why a memory ranked where it did.

Example: {"query": "firewall port", "max_results": 10}
"""


class _Runtime(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    service: CortexService


async def _call(action: Awaitable[T]) -> T:
    """Run a service call; a CortexError becomes a tool error the agent can read."""
    try:
        return await action
    except CortexError as exc:
        raise ToolError(exc.message) from None


def _result(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


def build_server(open_service: ServiceFactory) -> MCPServer:
    """An MCPServer whose lifespan opens the service through `open_service`."""

    opened: list[CortexService] = []  # static resources get no Context: they read it here

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[_Runtime]:
        async with open_service() as service:
            opened.append(service)
            try:
                yield _Runtime(service=service)
            finally:
                opened.remove(service)

    mcp = MCPServer("cortex", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan)

    def service_of(ctx: Context) -> CortexService:
        runtime: _Runtime = ctx.request_context.lifespan_context
        return runtime.service

    @mcp.tool(description=RECALL_DOC, annotations=ToolAnnotations(read_only_hint=True))
    async def cortex_recall(
        query: Annotated[str, Field(description="What to look for, in any language", min_length=1)],
        ctx: Context,
        max_results: Annotated[int, Field(ge=1, le=50, description="Most memories to return")] = 5,
        layers: Annotated[list[Layer] | None, Field(description="Only these layers")] = None,
        categories: Annotated[list[Category] | None, Field(description="Only these")] = None,
        max_tokens: Annotated[
            int, Field(ge=50, le=100_000, description="Token budget of `context`")
        ] = 2000,
        agent_id: Annotated[
            str | None, Field(description="Memory owner; default: server's")
        ] = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        result = await _call(
            service_of(ctx).recall(query, max_results, layers, categories, max_tokens, agent_id)
        )
        text = result.context or f"No memories found ({result.meta.skipped_reason or 'no match'})."
        return _result(result, text)

    @mcp.tool(description=REMEMBER_DOC, annotations=ToolAnnotations(idempotent_hint=True))
    async def cortex_remember(
        content: Annotated[str, Field(description="One self-contained fact", min_length=1)],
        ctx: Context,
        category: Annotated[Category, Field(description="Kind of memory")] = Category.fact,
        importance: Annotated[float, Field(ge=0, le=1, description="0 trivial .. 1 vital")] = 0.7,
        layer: Annotated[
            Layer, Field(description="core (permanent) or working (48 h)")
        ] = Layer.core,
        supersedes: Annotated[str | None, Field(description="Id of a memory this replaces")] = None,
        source: Annotated[str | None, Field(description="Where it came from")] = None,
        agent_id: Annotated[
            str | None, Field(description="Memory owner; default: server's")
        ] = None,
    ) -> Annotated[CallToolResult, RememberResult]:
        result = await _call(
            service_of(ctx).remember(
                content, category, importance, layer, supersedes, source, agent_id
            )
        )
        verb = "Already remembered" if result.deduplicated else "Remembered"
        return _result(result, f"{verb} as {result.id} ({result.layer.value}).")

    @mcp.tool(description=FORGET_DOC, annotations=ToolAnnotations(destructive_hint=True))
    async def cortex_forget(
        memory_id: Annotated[str, Field(description="Id of the memory", min_length=1)],
        ctx: Context,
        reason: Annotated[str | None, Field(description="Why, for the audit log")] = None,
        correction: Annotated[str | None, Field(description="The corrected fact")] = None,
        purge: Annotated[bool, Field(description="Erase the content everywhere")] = False,
        agent_id: Annotated[
            str | None, Field(description="Memory owner; default: server's")
        ] = None,
    ) -> Annotated[CallToolResult, ForgetResult]:
        result = await _call(service_of(ctx).forget(memory_id, reason, correction, purge, agent_id))
        extra = f"; new memory {result.new_id}" if result.new_id else ""
        return _result(result, f"Memory {result.id} {result.status.value}{extra}.")

    @mcp.tool(description=DEBUG_DOC, annotations=ToolAnnotations(read_only_hint=True))
    async def cortex_search_debug(
        query: Annotated[str, Field(description="The query to explain", min_length=1)],
        ctx: Context,
        max_results: Annotated[int, Field(ge=1, le=50, description="Hits to explain")] = 10,
        agent_id: Annotated[
            str | None, Field(description="Memory owner; default: server's")
        ] = None,
    ) -> dict[str, Any]:
        return await _call(service_of(ctx).search_debug(query, max_results, agent_id))

    @mcp.resource(
        "cortex://core",
        name="core",
        description="Core memory as Markdown, grouped into sections, within 2000 tokens",
        mime_type="text/markdown",
    )
    async def core() -> str:
        return await opened[-1].core_markdown()

    @mcp.resource(
        "cortex://stats",
        name="stats",
        description="Counts, storage, search backends and provider health",
        mime_type="application/json",
    )
    async def stats() -> str:
        return json.dumps(await opened[-1].stats(), ensure_ascii=False, indent=2)

    @mcp.resource(
        "cortex://memories/{id}",
        name="memory",
        description="One memory with its correction chain and access history",
        mime_type="application/json",
    )
    async def memory(id: str, ctx: Context) -> str:
        try:
            detail = await service_of(ctx).memory_detail(id)
        except CortexError as exc:
            raise ResourceNotFoundError(exc.message) from None
        return json.dumps(detail, ensure_ascii=False, indent=2)

    register_prompts(mcp)
    return mcp
