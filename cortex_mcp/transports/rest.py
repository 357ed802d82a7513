"""The REST API under /api/v1 (docs/http.md): thin handlers over the services, one call each."""

from __future__ import annotations

from typing import Any

from cortex_mcp import __version__
from cortex_mcp.models import (
    READ_SCOPE,
    CoreProposal,
    ForgetResult,
    LifecycleReport,
    Memory,
    RecallResult,
    ReflectReport,
    RememberResult,
)
from cortex_mcp.service.requests import (
    AgentRequest,
    AliasRequest,
    EntityListRequest,
    EntityLogRequest,
    EntityRequest,
    ExportRequest,
    FlushRequest,
    ForgetQuery,
    ImportRequest,
    IngestRequest,
    LifecycleLogRequest,
    LifecycleRequest,
    ListRequest,
    MergeRequest,
    ProposalDecision,
    ProposalListRequest,
    RecallRequest,
    ReflectRequest,
    RelationListRequest,
    RelationRequest,
    RememberRequest,
    RenameRequest,
    RevokeRequest,
    SearchDebugRequest,
    SearchRequest,
    SettingsChangeRequest,
    TokenRequest,
    UndoRequest,
    UpdateRequest,
    build,
)
from cortex_mcp.transports import rest_responses as r
from cortex_mcp.transports.dashboard_api import DASHBOARD_ENDPOINTS
from cortex_mcp.transports.endpoints import Call, Endpoint, openapi_document

_MEMORY = "/memories/{id}"


def _own(call: Call, request: Any) -> Any:
    """`request` for the caller's agent (body or query `agent_id`, else X-Cortex-Agent)."""
    return request.model_copy(update={"agent_id": call.agent_id})


async def health(call: Call) -> dict[str, Any]:
    return call.service.status.health()


async def openapi(call: Call) -> dict[str, Any]:
    return openapi_document(ENDPOINTS, __version__, call.service.settings)


async def recall(call: Call) -> RecallResult:
    return await call.service.memories.recall(_own(call, call.body))


async def search(call: Call) -> r.SearchResponse:
    b: SearchRequest = _own(call, call.body)
    answer = await call.service.memories.search_answer(b)
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
            timezone=b.timezone,
        )
        debug = await call.service.memories.search_debug(explain)
    return r.SearchResponse(results=answer.memories, meta=answer.meta, debug=debug)


async def remember(call: Call) -> RememberResult:
    return await call.service.memories.remember(_own(call, call.body))


async def get_memory(call: Call) -> dict[str, Any]:
    return await call.service.reading.memory_detail(call.path["id"], _own(call, call.query))


async def patch_memory(call: Call) -> Any:
    return await call.service.memories.update_memory(call.path["id"], _own(call, call.body))


async def delete_memory(call: Call) -> Any:
    q: ForgetQuery = _own(call, call.query)
    return await call.service.memories.forget(q.as_forget(call.path["id"]))


async def list_memories(call: Call) -> Any:
    return await call.service.reading.list_memories(_own(call, call.query))


async def stats(call: Call) -> dict[str, Any]:
    return await call.service.status.stats(_own(call, call.query))


async def ingest(call: Call) -> Any:
    return await call.service.conversation.ingest(_own(call, call.body), wait=False)


async def flush(call: Call) -> Any:
    return await call.service.conversation.flush(_own(call, call.body))


async def lifecycle_run(call: Call) -> Any:
    return await call.service.lifecycle.run(_own(call, call.body))


async def lifecycle_preview(call: Call) -> Any:
    return await call.service.lifecycle.preview(_own(call, call.query))


async def reflect(call: Call) -> Any:
    return await call.service.lifecycle.reflect(_own(call, call.body))


async def list_proposals(call: Call) -> Any:
    found = await call.service.lifecycle.proposals(_own(call, call.query))
    return {"proposals": [p.model_dump() for p in found]}


async def decide_proposal(call: Call) -> Any:
    return await call.service.lifecycle.decide(call.path["id"], _own(call, call.body))


async def lifecycle_log(call: Call) -> Any:
    entries = await call.service.lifecycle.log(_own(call, call.query))
    return {"entries": entries}


async def export(call: Call) -> Any:
    return await call.service.exchange.export_memories(_own(call, call.body))


async def import_(call: Call) -> Any:
    return await call.service.exchange.import_memories(_own(call, call.body))


async def list_relations(call: Call) -> Any:
    return await call.service.relations.list(_own(call, call.query))


async def add_relation(call: Call) -> Any:
    return await call.service.relations.add(_own(call, call.body))


async def delete_relation(call: Call) -> Any:
    return await call.service.relations.delete(call.path["id"], _own(call, call.query))


async def list_entities(call: Call) -> Any:
    return await call.service.entities.list(_own(call, call.query))


async def get_entity(call: Call) -> Any:
    return await call.service.entities.page(call.path["id"], _own(call, call.query))


async def add_alias(call: Call) -> Any:
    return await call.service.entities.add_alias(call.path["id"], _own(call, call.body))


async def remove_alias(call: Call) -> Any:
    path = call.path
    return await call.service.entities.remove_alias(
        path["id"], path["alias"], _own(call, call.query)
    )


async def rename_entity(call: Call) -> Any:
    return await call.service.entities.rename(call.path["id"], _own(call, call.body))


async def merge_entities(call: Call) -> Any:
    return await call.service.entities.merge(_own(call, call.body))


async def entity_log(call: Call) -> Any:
    return await call.service.entities.log(_own(call, call.query))


async def unresolved_entities(call: Call) -> Any:
    return await call.service.entities.unresolved(_own(call, call.query))


async def undo_entity_change(call: Call) -> Any:
    return await call.service.entities.undo(_own(call, call.body))


async def list_tokens(call: Call) -> r.TokenList:
    return r.TokenList.model_validate({"tokens": await call.service.tokens.list()})


async def create_token(call: Call) -> Any:
    return await call.service.tokens.create(call.body)


async def revoke_token(call: Call) -> Any:
    return await call.service.tokens.revoke(call.body)


async def get_config(call: Call) -> Any:
    return await call.service.config.get()


async def change_config(call: Call) -> Any:
    return await call.service.config.change(call.body)


_LATER = (400, 401, 413, 422, 503)
_ADMIN = (400, 401, 403, 404, 409, 413, 422)
_BY_ID = (400, 401, 404, 413, 422)

ENDPOINTS: list[Endpoint] = [
    Endpoint("GET", "/health", health, "health", response=r.Health, public=True),
    Endpoint("GET", "/openapi.json", openapi, "openapi", errors=(401,)),
    Endpoint("POST", "/recall", recall, "recall", RecallRequest, response=RecallResult,
             scope=READ_SCOPE),
    Endpoint("POST", "/search", search, "search", SearchRequest, response=r.SearchResponse,
             scope=READ_SCOPE),
    Endpoint("POST", "/ingest", ingest, "ingest", IngestRequest, response=r.IngestResponse,
             status=202, errors=_LATER),
    Endpoint("POST", "/flush", flush, "flush", FlushRequest, response=r.FlushResponse,
             errors=_LATER),
    Endpoint("GET", "/memories", list_memories, "list_memories", query=ListRequest,
             response=r.MemoryList, errors=_LATER),
    Endpoint("POST", "/memories", remember, "remember", RememberRequest,
             response=RememberResult, status=201, errors=(400, 401, 404, 413, 422)),
    Endpoint("GET", _MEMORY, get_memory, "get_memory", query=AgentRequest,
             response=r.MemoryDetail, errors=_BY_ID),
    Endpoint("PATCH", _MEMORY, patch_memory, "update_memory", UpdateRequest,
             response=Memory, errors=_BY_ID),
    Endpoint("DELETE", _MEMORY, delete_memory, "forget_memory", query=ForgetQuery,
             response=ForgetResult, errors=_BY_ID),
    Endpoint("GET", "/stats", stats, "stats", query=AgentRequest, response=r.Stats),
    Endpoint("POST", "/lifecycle/run", lifecycle_run, "lifecycle_run", LifecycleRequest,
             response=LifecycleReport, errors=_LATER),
    Endpoint("GET", "/lifecycle/preview", lifecycle_preview, "lifecycle_preview",
             query=LifecycleRequest, response=LifecycleReport, errors=_LATER),
    Endpoint("GET", "/lifecycle/log", lifecycle_log, "lifecycle_log", query=LifecycleLogRequest,
             response=r.LifecycleLog, errors=_LATER),
    Endpoint("POST", "/reflect", reflect, "reflect", ReflectRequest, response=ReflectReport,
             errors=_LATER),
    Endpoint("GET", "/reflect/proposals", list_proposals, "list_proposals",
             query=ProposalListRequest, response=r.ProposalList, errors=_LATER),
    Endpoint("POST", "/reflect/proposals/{id}", decide_proposal, "decide_proposal",
             ProposalDecision, response=CoreProposal, errors=_BY_ID),
    Endpoint("POST", "/export", export, "export", ExportRequest, response=r.ExportResponse,
             errors=_LATER, scope=READ_SCOPE),
    Endpoint("POST", "/import", import_, "import", ImportRequest, response=r.ImportResponse,
             errors=_LATER),
    Endpoint("GET", "/relations", list_relations, "list_relations", query=RelationListRequest,
             response=r.RelationList, errors=_LATER),
    Endpoint("POST", "/relations", add_relation, "add_relation", RelationRequest,
             response=r.StoredRelation, status=201, errors=(400, 401, 413, 422)),
    Endpoint("DELETE", "/relations/{id}", delete_relation, "delete_relation",
             query=AgentRequest, response=r.DeletedRelation, errors=_BY_ID),
]  # fmt: skip

_ENTITY = "/entities/{id}"
ENDPOINTS += [
    Endpoint("GET", "/entities", list_entities, "list_entities", query=EntityListRequest,
             response=r.EntityList, errors=_LATER),
    Endpoint("GET", "/entities/log", entity_log, "entity_log", query=EntityLogRequest,
             response=r.EntityLog, errors=_LATER),
    Endpoint("GET", "/entities/unresolved", unresolved_entities, "unresolved_entities",
             query=EntityLogRequest, response=r.UnresolvedList, errors=_LATER),
    Endpoint("POST", "/entities/merge", merge_entities, "merge_entities", MergeRequest,
             response=r.MergeReport, errors=_BY_ID),
    Endpoint("POST", "/entities/undo", undo_entity_change, "undo_entity_change", UndoRequest,
             response=r.Undone, errors=_BY_ID),
    Endpoint("GET", _ENTITY, get_entity, "get_entity", query=EntityRequest,
             response=r.EntityPage, errors=_BY_ID),
    Endpoint("POST", _ENTITY + "/aliases", add_alias, "add_alias", AliasRequest,
             response=r.EntityChange, errors=_BY_ID),
    Endpoint("DELETE", _ENTITY + "/aliases/{alias}", remove_alias, "remove_alias",
             query=AgentRequest, response=r.EntityChange, errors=_BY_ID),
    Endpoint("POST", _ENTITY + "/rename", rename_entity, "rename_entity", RenameRequest,
             response=r.EntityChange, errors=_BY_ID),
]  # fmt: skip

ENDPOINTS += [
    Endpoint("GET", "/tokens", list_tokens, "list_tokens", response=r.TokenList,
             errors=(401, 403)),
    Endpoint("POST", "/tokens", create_token, "create_token", TokenRequest,
             response=r.TokenCreated, status=201, errors=_ADMIN),
    Endpoint("POST", "/tokens/revoke", revoke_token, "revoke_token", RevokeRequest,
             response=r.TokenRevoked, errors=_ADMIN),
]  # fmt: skip
ENDPOINTS += [
    Endpoint("GET", "/config", get_config, "get_config", response=r.SettingsList,
             errors=(401, 403)),
    Endpoint("PATCH", "/config", change_config, "change_config", SettingsChangeRequest,
             response=r.SettingsChanged, errors=_ADMIN),
]  # fmt: skip
ENDPOINTS += DASHBOARD_ENDPOINTS  # the dashboard's routes (transports/dashboard_api.py)
