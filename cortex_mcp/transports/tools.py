"""The four MCP tools: what agents see (names, titles, docs, flat schemas, annotations) and the
thin call into the service facade. Names and parameters are a contract (DESIGN.md §2)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel

from cortex_mcp.engine import validate
from cortex_mcp.models import Category, ForgetResult, Layer, RememberResult, ScoredMemory
from cortex_mcp.service import CortexService
from cortex_mcp.transports import render
from cortex_mcp.transports.arguments import Param

Handler = Callable[[CortexService, dict[str, Any]], Awaitable[CallToolResult]]

RECALL_DOC = """Find memories relevant to a query and get them as a ready-to-paste context block.

Use before answering when earlier conversations may matter. Works in any language (English,
Chinese, Japanese, mixed) and for exact identifiers (IPs, error codes, paths). Small talk such
as "thanks" returns nothing, and meta.skipped_reason says why. `context` stays within
max_tokens; each line is tagged with its layer and date. Every memory comes with its id (use it
with cortex_forget). meta.degraded lists what was not available (for example no embedding
provider: text search only).

Example: {"query": "which cloud provider did we pick for the VPS?", "max_results": 5}
"""

REMEMBER_DOC = """Store one durable memory (a fact, preference, decision...) in long-term memory.

Write one self-contained fact per call, in the user's language, with names and numbers
("User's Oracle Cloud VPS firewall blocks port 8080"). The content is kept exactly as given,
except secrets (API keys, tokens, passwords, card and ID numbers): those are stored as
[REDACTED:kind], and the result's `redacted` says which kinds and how many.
Sending the same content again is safe: it returns the existing id with deduplicated=true. To
replace an outdated memory, pass its id as `supersedes`.

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


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
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
    output schema, and the full model schema (every field of every memory, nullable ones as
    anyOf) cost the SDK's client about 30 ms per recall of 10 memories, several times the
    search itself. Each memory's keys are still required; their values are documented here."""
    memory_keys = [*ScoredMemory.model_fields]
    return {
        "type": "object",
        "properties": {
            "context": {"type": "string", "description": "Block to paste into a prompt"},
            "memories": {
                "type": "array",
                "description": "Best first: " + ", ".join(memory_keys),
                "items": {"type": "object", "required": memory_keys},
            },
            "meta": {
                "type": "object",
                "description": "took_ms, degraded, skipped_reason, channels, tokens, timings_ms, notes",
                "required": ["took_ms", "degraded", "skipped_reason"],
            },
        },
        "required": ["context", "memories", "meta"],
    }


def _agent_param() -> Param:
    return Param(
        "agent_id",
        "string",
        "Memory owner; default: this server's agent (CORTEX_AGENT_ID)",
        min_length=1,
        max_length=validate.MAX_AGENT_ID_CHARS,
    )


def _query_param(description: str) -> Param:
    return Param(
        "query",
        "string",
        description,
        required=True,
        min_length=1,
        max_length=validate.MAX_QUERY_CHARS,
    )


def _max_results(default: int, description: str) -> Param:
    return Param("max_results", "integer", description, default=default, minimum=1, maximum=50)


async def _recall(service: CortexService, a: dict[str, Any]) -> CallToolResult:
    result = await service.memories.recall(
        a["query"], a["max_results"], a["layers"], a["categories"], a["max_tokens"], a["agent_id"]
    )
    return render.tool_result(render.recall_text(result), result.model_dump(mode="json"))


async def _remember(service: CortexService, a: dict[str, Any]) -> CallToolResult:
    result = await service.memories.remember(
        a["content"],
        a["category"],
        a["importance"],
        a["layer"],
        a["supersedes"],
        a["source"],
        a["agent_id"],
    )
    return render.tool_result(render.remember_text(result), result.model_dump(mode="json"))


async def _forget(service: CortexService, a: dict[str, Any]) -> CallToolResult:
    result = await service.memories.forget(
        a["memory_id"], a["reason"], a["correction"], a["purge"], a["agent_id"]
    )
    return render.tool_result(render.forget_text(result), result.model_dump(mode="json"))


async def _search_debug(service: CortexService, a: dict[str, Any]) -> CallToolResult:
    report = await service.memories.search_debug(a["query"], a["max_results"], a["agent_id"])
    return render.tool_result(render.json_text(report), report)


def tool_specs(max_content_chars: int = 8000) -> list[ToolSpec]:
    """The tools, with the content limit this server enforces (settings.max_content_chars)."""
    layers = [layer.value for layer in Layer]
    categories = [category.value for category in Category]
    memory_id = Param(
        "memory_id",
        "string",
        "Id of the memory (from cortex_recall or cortex_remember)",
        required=True,
        min_length=1,
        max_length=validate.MAX_ID_CHARS,
    )
    return [
        ToolSpec(
            "cortex_recall",
            "Recall memories",
            RECALL_DOC,
            [
                _query_param("What to look for, in any language"),
                _max_results(5, "Most memories to return"),
                Param("layers", "array", "Only these layers", enum=layers),
                Param("categories", "array", "Only these categories", enum=categories),
                Param(
                    "max_tokens",
                    "integer",
                    "Token budget of the reply's memories and `context`",
                    default=2000,
                    minimum=50,
                    maximum=100_000,
                ),
                _agent_param(),
            ],
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
            [
                Param(
                    "content",
                    "string",
                    f"One self-contained fact, at most {max_content_chars} characters",
                    required=True,
                    min_length=1,
                    max_length=max_content_chars,
                ),
                Param("category", "string", "Kind of memory", default="fact", enum=categories),
                Param(
                    "importance",
                    "number",
                    "0 trivial .. 1 vital",
                    default=0.7,
                    minimum=0,
                    maximum=1,
                ),
                Param(
                    "layer",
                    "string",
                    "core (permanent), working (48 h) or archive",
                    default="core",
                    enum=layers,
                ),
                Param(
                    "supersedes",
                    "string",
                    "Id of a memory this one replaces",
                    min_length=1,
                    max_length=validate.MAX_ID_CHARS,
                ),
                Param(
                    "source",
                    "string",
                    "Where it came from (a short label)",
                    max_length=validate.MAX_SOURCE_CHARS,
                ),
                _agent_param(),
            ],
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
            [
                memory_id,
                Param(
                    "reason",
                    "string",
                    "Why, for the audit log",
                    max_length=validate.MAX_REASON_CHARS,
                ),
                Param(
                    "correction",
                    "string",
                    f"The corrected fact, at most {max_content_chars} characters",
                    min_length=1,
                    max_length=max_content_chars,
                ),
                Param("purge", "boolean", "Erase the content everywhere", default=False),
                _agent_param(),
            ],
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
            [
                _query_param("The query to explain"),
                _max_results(10, "Hits to explain"),
                _agent_param(),
            ],
            ToolAnnotations(
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            _search_debug,
        ),
    ]
