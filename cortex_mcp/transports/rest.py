"""The REST API under /api/v1 (docs/http.md): thin handlers over the services, one call each."""

from __future__ import annotations

from typing import Any

from cortex_mcp import __version__
from cortex_mcp.models import (
    ForgetResult,
    LifecycleReport,
    Memory,
    MemoryChanges,
    RecallResult,
    RememberResult,
)
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
    SearchRequest,
    build,
)
from cortex_mcp.transports import rest_models as m
from cortex_mcp.transports import rest_responses as r
from cortex_mcp.transports.dashboard_api import DASHBOARD_ENDPOINTS
from cortex_mcp.transports.endpoints import Call, Endpoint, openapi_document

_MEMORY = "/memories/{id}"


async def health(call: Call) -> dict[str, Any]:
    return call.service.status.health()


async def openapi(call: Call) -> dict[str, Any]:
    return openapi_document(ENDPOINTS, __version__, call.service.settings)


async def recall(call: Call) -> RecallResult:
    b: RecallRequest = call.body
    return await call.service.memories.recall(b.model_copy(update={"agent_id": call.agent_id}))


async def search(call: Call) -> r.SearchResponse:
    b: SearchRequest = call.body.model_copy(update={"agent_id": call.agent_id})
    results = await call.service.memories.search(b)
    debug = None
    if b.debug:
        explain = build(
            SearchDebugRequest,
            query=b.query,
            max_results=b.limit,
            agent_id=b.agent_id,
            since=b.since,
            until=b.until,
            now=b.now,
        )
        debug = await call.service.memories.search_debug(explain)
    return r.SearchResponse(results=results, debug=debug)


async def remember(call: Call) -> RememberResult:
    b: RememberRequest = call.body
    return await call.service.memories.remember(b.model_copy(update={"agent_id": call.agent_id}))


async def get_memory(call: Call) -> dict[str, Any]:
    return await call.service.reading.memory_detail(call.path["id"], call.agent_id)


async def patch_memory(call: Call) -> Any:
    b: m.PatchBody = call.body
    changes = MemoryChanges(**b.model_dump(exclude={"agent_id"}))
    return await call.service.memories.update_memory(call.path["id"], changes, call.agent_id)


async def delete_memory(call: Call) -> Any:
    q: m.ForgetQuery = call.query
    request = build(
        ForgetRequest,
        memory_id=call.path["id"],
        reason=q.reason,
        purge=q.purge,
        agent_id=call.agent_id,
    )
    return await call.service.memories.forget(request)


async def list_memories(call: Call) -> Any:
    q: m.ListQuery = call.query
    return await call.service.reading.list_memories(
        agent_id=call.agent_id,
        layer=q.layer,
        category=q.category,
        limit=q.limit,
        offset=q.offset,
        include_shared=q.include_shared,
        since=q.since,
        until=q.until,
    )


async def stats(call: Call) -> dict[str, Any]:
    return await call.service.status.stats(call.agent_id)


async def ingest(call: Call) -> Any:
    b: m.IngestBody = call.body
    messages = [msg.model_dump() for msg in b.messages] if b.messages is not None else None
    return await call.service.conversation.ingest(
        b.user_message,
        b.assistant_message,
        call.agent_id,
        b.session_id,
        messages=messages,
        wait=False,
        said=b.said_at,
    )


async def flush(call: Call) -> Any:
    b: m.FlushBody = call.body
    messages = [msg.model_dump() for msg in b.messages]
    return await call.service.conversation.flush(
        messages, call.agent_id, b.session_id, b.reason, said=b.said_at
    )


async def lifecycle_run(call: Call) -> Any:
    return await call.service.lifecycle.run(agent_id=call.agent_id)


async def lifecycle_preview(call: Call) -> Any:
    return await call.service.lifecycle.preview(agent_id=call.agent_id)


async def lifecycle_log(call: Call) -> Any:
    q: m.LogQuery = call.query
    entries = await call.service.lifecycle.log(q.limit, agent_id=call.agent_id)
    return {"entries": entries}


async def export(call: Call) -> Any:
    b: m.ExportBody = call.body
    return await call.service.exchange.export_memories(format=b.format, agent_id=call.agent_id)


async def import_(call: Call) -> Any:
    b: m.ImportBody = call.body
    return await call.service.exchange.import_memories(
        b.content, format=b.format, agent_id=call.agent_id, document=b.document, files=b.files
    )


async def list_relations(call: Call) -> Any:
    q: m.RelationsQuery = call.query
    return await call.service.relations.list(agent_id=call.agent_id, limit=q.limit)


async def add_relation(call: Call) -> Any:
    b: m.RelationBody = call.body
    return await call.service.relations.add(b.subject, b.predicate, b.object, call.agent_id)


async def delete_relation(call: Call) -> Any:
    return await call.service.relations.delete(call.path["id"], call.agent_id)


async def list_tokens(call: Call) -> r.TokenList:
    return r.TokenList.model_validate({"tokens": await call.service.tokens.list()})


async def create_token(call: Call) -> Any:
    b: m.TokenBody = call.body
    return await call.service.tokens.create(b.agent, b.name)


async def revoke_token(call: Call) -> Any:
    b: m.RevokeBody = call.body
    return await call.service.tokens.revoke(b.token)


_LATER = (400, 401, 413, 422, 503)
_ADMIN = (400, 401, 403, 404, 409, 413, 422)
_BY_ID = (400, 401, 404, 413, 422)

ENDPOINTS: list[Endpoint] = [
    Endpoint("GET", "/health", health, "health", response=r.Health, public=True),
    Endpoint("GET", "/openapi.json", openapi, "openapi", errors=(401,)),
    Endpoint("POST", "/recall", recall, "recall", RecallRequest, response=RecallResult),
    Endpoint("POST", "/search", search, "search", SearchRequest, response=r.SearchResponse),
    Endpoint("POST", "/ingest", ingest, "ingest", m.IngestBody, response=r.IngestResponse,
             status=202, errors=_LATER),
    Endpoint("POST", "/flush", flush, "flush", m.FlushBody, response=r.FlushResponse,
             errors=_LATER),
    Endpoint("GET", "/memories", list_memories, "list_memories", query=m.ListQuery,
             response=r.MemoryList, errors=_LATER),
    Endpoint("POST", "/memories", remember, "remember", RememberRequest,
             response=RememberResult, status=201, errors=(400, 401, 404, 413, 422)),
    Endpoint("GET", _MEMORY, get_memory, "get_memory", query=m.AgentQuery,
             response=r.MemoryDetail, errors=_BY_ID),
    Endpoint("PATCH", _MEMORY, patch_memory, "update_memory", m.PatchBody,
             response=Memory, errors=_BY_ID),
    Endpoint("DELETE", _MEMORY, delete_memory, "forget_memory", query=m.ForgetQuery,
             response=ForgetResult, errors=_BY_ID),
    Endpoint("GET", "/stats", stats, "stats", query=m.AgentQuery, response=r.Stats),
    Endpoint("POST", "/lifecycle/run", lifecycle_run, "lifecycle_run", m.LifecycleBody,
             response=LifecycleReport, errors=_LATER),
    Endpoint("GET", "/lifecycle/preview", lifecycle_preview, "lifecycle_preview",
             query=m.AgentQuery, response=LifecycleReport, errors=_LATER),
    Endpoint("GET", "/lifecycle/log", lifecycle_log, "lifecycle_log", query=m.LogQuery,
             response=r.LifecycleLog, errors=_LATER),
    Endpoint("POST", "/export", export, "export", m.ExportBody, response=r.ExportResponse,
             errors=_LATER),
    Endpoint("POST", "/import", import_, "import", m.ImportBody, response=r.ImportResponse,
             errors=_LATER),
    Endpoint("GET", "/relations", list_relations, "list_relations", query=m.RelationsQuery,
             response=r.RelationList, errors=_LATER),
    Endpoint("POST", "/relations", add_relation, "add_relation", m.RelationBody,
             response=r.StoredRelation, status=201, errors=(400, 401, 413, 422)),
    Endpoint("DELETE", "/relations/{id}", delete_relation, "delete_relation",
             query=m.AgentQuery, response=r.DeletedRelation, errors=_BY_ID),
]  # fmt: skip

ENDPOINTS += [
    Endpoint("GET", "/tokens", list_tokens, "list_tokens", response=r.TokenList,
             errors=(401, 403)),
    Endpoint("POST", "/tokens", create_token, "create_token", m.TokenBody,
             response=r.TokenCreated, status=201, errors=_ADMIN),
    Endpoint("POST", "/tokens/revoke", revoke_token, "revoke_token", m.RevokeBody,
             response=r.TokenRevoked, errors=_ADMIN),
]  # fmt: skip
ENDPOINTS += DASHBOARD_ENDPOINTS  # the dashboard's routes (transports/dashboard_api.py)
