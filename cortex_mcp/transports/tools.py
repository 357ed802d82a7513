"""The four MCP tools: what agents see (names, titles, docs, annotations; flat schemas generated
from the operations' request models in service/requests.py) and the thin call into the memory
service. Names and parameters are a contract (docs/tools.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from cortex_mcp.models import ForgetResult, RememberResult, ScoredMemory
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    Request,
    SearchDebugRequest,
)
from cortex_mcp.transports.arguments import Param, params_of

if TYPE_CHECKING:  # the service (every engine) is imported when it is opened
    from cortex_mcp.service import CortexService

Handler = Callable[["CortexService", Any], Awaitable[CallToolResult]]

RECALL_DOC = """Find memories relevant to a query and get them as a ready-to-paste context block.

Use before answering when earlier conversations may matter. Works in any language (English,
Chinese, Japanese, mixed) and for exact identifiers (IPs, error codes, paths). Small talk such
as "thanks" returns nothing, and meta.skipped_reason says why. `context` stays within
max_tokens; each line is tagged with its layer, date, kind, the people, pets or places it is
about and its source. Every memory comes with its id (use it with cortex_forget). "Tell me about
Anna" (or `about`: a name or alias, with any query) starts the context with Anna's page
(meta.entity); a name that fits several gives meta.entity_candidates instead. meta.degraded
lists what was not available (for example no embedding provider: text search only).

Example: {"query": "which cloud provider did we pick for the VPS?", "max_results": 5}
"""

REMEMBER_DOC = """Store one durable memory (a fact, preference, decision...) in long-term memory.

Write one self-contained fact per call, in the user's language, with names and numbers
("User's Oracle Cloud VPS firewall blocks port 8080"). The content is kept exactly as given,
except secrets (API keys, tokens, passwords, card and ID numbers): those are stored as
[REDACTED:kind], and the result's `redacted` says which kinds and how many.
Sending the same content again is safe: it returns the existing id with deduplicated=true. To
replace an outdated memory, pass its id as `supersedes`.
When the fact is about something that happened earlier than now, pass `occurred_at`: the day
it happened (an ISO date, "2026-05-12"; the user's "last Tuesday" worked out as a date, read
in `timezone`, the user's IANA zone). Without it the memory is dated now, and "last Tuesday I
switched my phone plan" would be remembered as happening today.

Example: {"content": "User switched their phone plan to Mint Mobile", "category": "fact",
"importance": 0.7, "occurred_at": "2026-05-12"}
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


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    request: type[Request]  # the operation's request model: the schema and the call's argument
    params: Sequence[Param]
    annotations: ToolAnnotations
    handler: Handler
    output_schema: dict[str, Any] | None = None


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with every `$ref` replaced by its definition."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)


def recall_output_schema() -> dict[str, Any]:
    """RecallResult's shape, shallow on purpose: clients validate every result against the
    output schema. The full model schema (every field of every memory, nullable ones as anyOf)
    cost the SDK's client about 30 ms per recall of 10 memories, several times the search
    itself; even a `required` list per memory cost it ~0.1 ms a recall (its validator
    descends into each item), a tenth of the echo floor. Each memory's keys are named here
    instead, and the server's model gives every memory all of them."""
    memory_keys = [*ScoredMemory.model_fields]
    return {
        "type": "object",
        "properties": {
            "context": {"type": "string", "description": "Block to paste into a prompt"},
            "memories": {
                "type": "array",
                "description": "Best first, each an object with every one of the keys: "
                + ", ".join(memory_keys),
            },
            "meta": {
                "type": "object",
                "description": "took_ms, degraded, skipped_reason, channels, tokens, timings_ms, notes,"
                " now, time, entity (the page of the entity asked about), entity_candidates",
                "required": ["took_ms", "degraded", "skipped_reason"],
            },
        },
        "required": ["context", "memories", "meta"],
    }


def tool_result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def tool_error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


# Each handler imports its text from render.py when it is first called: render.py brings the
# engines' text helpers (~10 ms of the server's start), which `initialize` need not wait for.


async def _recall(service: CortexService, request: RecallRequest) -> CallToolResult:
    from cortex_mcp.transports.render import recall_text

    result = await service.memories.recall(request)
    return tool_result(recall_text(result), result.model_dump(mode="json"))


async def _remember(service: CortexService, request: RememberRequest) -> CallToolResult:
    from cortex_mcp.transports.render import remember_text

    result = await service.memories.remember(request)
    return tool_result(remember_text(result), result.model_dump(mode="json"))


async def _forget(service: CortexService, request: ForgetRequest) -> CallToolResult:
    from cortex_mcp.transports.render import forget_text

    result = await service.memories.forget(request)
    return tool_result(forget_text(result), result.model_dump(mode="json"))


async def _search_debug(service: CortexService, request: SearchDebugRequest) -> CallToolResult:
    from cortex_mcp.transports.render import json_text

    report = await service.memories.search_debug(request)
    return tool_result(json_text(report), report)


def tool_specs(max_content_chars: int = 8000) -> list[ToolSpec]:
    """The tools, with the content limit this server enforces (settings.max_content_chars)."""
    limits = {"max_content_chars": max_content_chars}
    return [
        ToolSpec(
            "cortex_recall",
            "Recall memories",
            RECALL_DOC,
            RecallRequest,
            params_of(RecallRequest, limits),
            ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            _recall,
            recall_output_schema(),
        ),
        ToolSpec(
            "cortex_remember",
            "Remember a fact",
            REMEMBER_DOC,
            RememberRequest,
            params_of(RememberRequest, limits),
            # Adds or bumps one memory; with `supersedes` it retires another from recall, which
            # stays in the archive: nothing is erased, so not destructive.
            ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            _remember,
            output_schema(RememberResult),
        ),
        ToolSpec(
            "cortex_forget",
            "Forget or correct a memory",
            FORGET_DOC,
            ForgetRequest,
            params_of(ForgetRequest, limits),
            ToolAnnotations(
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=False,
                open_world_hint=False,
            ),
            _forget,
            output_schema(ForgetResult),
        ),
        ToolSpec(
            "cortex_search_debug",
            "Explain a search",
            DEBUG_DOC,
            SearchDebugRequest,
            params_of(SearchDebugRequest, limits),
            ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            _search_debug,
        ),
    ]
