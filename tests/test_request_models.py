"""One request model per operation: the service takes it, and the MCP tool's input schema, the
REST body or query string, the OpenAPI document and the CLI's defaults are generated from it,
so a limit, an enum, a default or a description written there is what every transport
publishes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from cortex_mcp.cli import build_parser
from cortex_mcp.config import load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.service.config import ConfigService
from cortex_mcp.service.conversation import ConversationService
from cortex_mcp.service.entities import EntityService
from cortex_mcp.service.exchange import ExchangeService
from cortex_mcp.service.lifecycle import LifecycleService
from cortex_mcp.service.memories import MemoryService
from cortex_mcp.service.reading import MemoryReading
from cortex_mcp.service.relations import RelationService
from cortex_mcp.service.requests import (
    DECIMAL_MARK,
    REST_ONLY,
    SETTING,
    ForgetQuery,
    ForgetRequest,
    IngestRequest,
    LifecycleLogRequest,
    ListRequest,
    RecallRequest,
    RememberRequest,
    Request,
    SearchRequest,
    build,
)
from cortex_mcp.service.status import StatusService
from cortex_mcp.service.tokens import TokenService
from cortex_mcp.transports.arguments import input_schema
from cortex_mcp.transports.dashboard_api import DASHBOARD_ENDPOINTS
from cortex_mcp.transports.endpoints import Call, Endpoint, openapi_document
from cortex_mcp.transports.rest import ENDPOINTS
from cortex_mcp.transports.tools import tool_specs

CONTENT_LIMIT = 1234
COMPARED = ("type", "minimum", "maximum", "minLength", "maxLength", "enum", "default")


def _settings() -> Any:
    return load_settings(max_content_chars=CONTENT_LIMIT)


def _document() -> dict[str, Any]:
    return openapi_document(ENDPOINTS, "test", _settings())


def _resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A published property without `$ref`/`anyOf [..., null]`, array items resolved too."""
    own = {k: v for k, v in node.items() if k not in ("$ref", "anyOf")}
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return {**_resolve(document, document["components"]["schemas"][name]), **own}
    if "anyOf" in node:
        [branch] = [b for b in node["anyOf"] if b.get("type") != "null"]
        return {**_resolve(document, branch), **own}
    if "items" in own:
        own["items"] = _resolve(document, own["items"])
    return own


def _as_tool_sees_it(published: dict[str, Any]) -> dict[str, Any]:
    """The REST property in the tools' terms: a number that may also come as decimal text is
    a number; an array's enum is its items'."""
    shown = dict(published)
    if isinstance(shown.get("type"), list):  # [number, string]: the decimal-text form
        shown["type"] = shown["type"][0]
        for key in ("pattern", "maxLength"):
            shown.pop(key)
    if shown.get("type") == "array":
        shown["enum"] = shown["items"]["enum"]
        shown.pop("maxLength", None)
    if shown.get("default", 0) is None:  # an optional field: the tools leave it out
        del shown["default"]
    return {key: shown[key] for key in COMPARED if key in shown}


def _tool_property(schema: dict[str, Any]) -> dict[str, Any]:
    shown = dict(schema)
    if shown.get("type") == "array":
        shown["enum"] = shown["items"]["enum"]
    return {key: shown[key] for key in COMPARED if key in shown}


@pytest.mark.parametrize(
    ("tool", "model"), [("cortex_recall", RecallRequest), ("cortex_remember", RememberRequest)]
)
def test_a_tool_schema_and_its_rest_body_are_the_same_model(
    tool: str, model: type[Request]
) -> None:
    document = _document()
    [spec] = [s for s in tool_specs(CONTENT_LIMIT) if s.name == tool]
    assert spec.request is model
    published = document["components"]["schemas"][model.schema_name]
    tool_schema = input_schema(spec.params)
    assert list(tool_schema["properties"]) == model.tool_fields()
    assert set(published["properties"]) == set(model.model_fields)
    assert set(model.model_fields) - set(model.tool_fields()) == {
        name
        for name, prop in published["properties"].items()
        if name not in tool_schema["properties"]
    }
    assert tool_schema["required"] == published.get("required", [])
    for name, prop in tool_schema["properties"].items():
        rest = _resolve(document, published["properties"][name])
        assert _tool_property(prop) == _as_tool_sees_it(rest), name
        assert prop["description"].startswith(rest["description"]), name
    dumped = str(document)
    assert REST_ONLY not in dumped and SETTING not in dumped and DECIMAL_MARK not in dumped


def test_every_tool_schema_is_generated_from_its_request_model() -> None:
    for spec in tool_specs(CONTENT_LIMIT):
        schema = spec.request.model_json_schema()
        properties = input_schema(spec.params)["properties"]
        assert list(properties) == spec.request.tool_fields()
        for name, prop in properties.items():
            field = spec.request.model_fields[name]
            default = None if field.is_required() else field.default
            assert prop.get("default") == getattr(default, "value", default), (spec.name, name)
        assert set(schema["properties"]) >= set(properties)
        assert properties.get("content", {}).get("maxLength", CONTENT_LIMIT) == CONTENT_LIMIT


def test_a_setting_limit_is_published_with_the_servers_value_by_both() -> None:
    document = _document()
    content = document["components"]["schemas"]["RememberBody"]["properties"]["content"]
    [remember] = [s for s in tool_specs(CONTENT_LIMIT) if s.name == "cortex_remember"]
    assert content["maxLength"] == CONTENT_LIMIT
    assert input_schema(remember.params)["properties"]["content"]["maxLength"] == CONTENT_LIMIT


def test_a_request_built_by_keyword_names_the_field_and_the_rule() -> None:
    with pytest.raises(InvalidInput) as refused:
        build(RememberRequest, content="A fact", importance=1.5)
    assert refused.value.field == "importance" and "1" in refused.value.message
    with pytest.raises(InvalidInput) as unknown:
        build(RecallRequest, query="x", agentId="someone")
    assert unknown.value.field == "agentId"
    assert build(RecallRequest, query="x").max_results == 5


# every REST route that takes a body or a query string -> the service method it calls
SERVED_BY: dict[str, Callable[..., Any]] = {
    "recall": MemoryService.recall,
    "search": MemoryService.search,
    "remember": MemoryService.remember,
    "update_memory": MemoryService.update_memory,
    "forget_memory": MemoryService.forget,  # through ForgetQuery.as_forget (the id is the path's)
    "get_memory": MemoryReading.memory_detail,
    "list_memories": MemoryReading.list_memories,
    "stats": StatusService.stats,
    "ingest": ConversationService.ingest,
    "flush": ConversationService.flush,
    "lifecycle_run": LifecycleService.run,
    "lifecycle_preview": LifecycleService.preview,
    "lifecycle_log": LifecycleService.log,
    "reflect": LifecycleService.reflect,
    "list_proposals": LifecycleService.proposals,
    "decide_proposal": LifecycleService.decide,
    "export": ExchangeService.export_memories,
    "import": ExchangeService.import_memories,
    "list_relations": RelationService.list,
    "add_relation": RelationService.add,
    "delete_relation": RelationService.delete,
    "create_token": TokenService.create,
    "revoke_token": TokenService.revoke,
    "list_entities": EntityService.list,
    "get_entity": EntityService.page,
    "add_alias": EntityService.add_alias,
    "remove_alias": EntityService.remove_alias,
    "rename_entity": EntityService.rename,
    "merge_entities": EntityService.merge,
    "entity_log": EntityService.log,
    "unresolved_entities": EntityService.unresolved,
    "undo_entity_change": EntityService.undo,
    "change_config": ConfigService.change,
}
REST_VIEWS = {ForgetQuery: ForgetRequest}  # a REST-shaped view -> the model it is turned into
_API_ROUTES = [ep for ep in ENDPOINTS if ep not in DASHBOARD_ENDPOINTS]


def _taken(method: Callable[..., Any]) -> type[Request]:
    """The request model a service method takes (its one parameter annotated with one)."""
    [model] = [
        method.__globals__[p.annotation]
        for p in inspect.signature(method).parameters.values()
        if isinstance(method.__globals__.get(p.annotation), type)
        and issubclass(method.__globals__[p.annotation], Request)
    ]
    return model


def _rest_model(endpoint: Endpoint) -> type[Request]:
    model = endpoint.body or endpoint.query
    assert model is not None and issubclass(model, Request), endpoint.summary
    return model


def test_every_rest_body_and_query_is_the_model_its_service_takes() -> None:
    taking = [ep for ep in _API_ROUTES if ep.body is not None or ep.query is not None]
    assert {ep.summary for ep in taking} == set(SERVED_BY)
    for endpoint in taking:
        model = _rest_model(endpoint)
        assert model.__module__ == "cortex_mcp.service.requests", endpoint.summary
        taken = _taken(SERVED_BY[endpoint.summary])
        assert REST_VIEWS.get(model, model) is taken, endpoint.summary


def test_a_rest_view_publishes_its_operations_fields_as_the_operations_model_does() -> None:
    for view, model in REST_VIEWS.items():
        own, full = view.model_json_schema(), model.model_json_schema()
        assert set(own["properties"]) < set(full["properties"])
        for name, prop in own["properties"].items():
            assert prop == full["properties"][name], (view.__name__, name)
        assert inspect.signature(view.as_forget).return_annotation == model.__name__


async def _unused(call: Call) -> None:
    del call


def _published_alone(model: type[Request], where: str) -> dict[str, Any]:
    """What a document with one route taking `model` publishes (the model's own schema, its
    marks filled in as the served document fills them)."""
    probe = Endpoint("POST", "/probe", _unused, "probe", **{where: model})
    return openapi_document([probe], "test", _settings())


def test_the_openapi_document_states_each_services_model_exactly() -> None:
    """Compared from the service's side: the schema of the model the service method takes is
    what the served document publishes for its route (component, or query parameters)."""
    document = _document()
    components = document["components"]["schemas"]
    for endpoint in _API_ROUTES:
        if endpoint.summary not in SERVED_BY:
            continue
        taken = _taken(SERVED_BY[endpoint.summary])
        model = next((v for v, m in REST_VIEWS.items() if m is taken), taken)
        served = document["paths"][endpoint.full_path][endpoint.method.lower()]
        if endpoint.body is not None:
            alone = _published_alone(model, "body")
            for name, schema in alone["components"]["schemas"].items():
                assert components[name] == schema, (endpoint.summary, name)
            ref = served["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.rsplit("/", 1)[-1] == model.schema_name, endpoint.summary
        else:
            alone = _published_alone(model, "query")
            [probe] = alone["paths"]["/api/v1/probe"].values()
            queried = [p for p in served.get("parameters", []) if p["in"] == "query"]
            assert queried == probe["parameters"], endpoint.summary
            for name, schema in alone["components"]["schemas"].items():
                assert components[name] == schema, (endpoint.summary, name)


# (the command line, its option's dest, the model and field whose default it must show)
CLI_DEFAULTS: list[tuple[list[str], str, type[Request], str]] = [
    (["search", "tea"], "limit", SearchRequest, "limit"),
    (["add", "a fact"], "category", RememberRequest, "category"),
    (["add", "a fact"], "importance", RememberRequest, "importance"),
    (["add", "a fact"], "layer", RememberRequest, "layer"),
    (["add", "a fact"], "occurred_at", RememberRequest, "occurred_at"),
    (["forget", "0123"], "reason", ForgetRequest, "reason"),
    (["forget", "0123"], "purge", ForgetRequest, "purge"),
    (["list"], "limit", ListRequest, "limit"),
    (["list"], "layer", ListRequest, "layer"),
    (["list"], "since", ListRequest, "since"),
    (["lifecycle", "log"], "limit", LifecycleLogRequest, "limit"),
    (["lifecycle", "log"], "agent", LifecycleLogRequest, "agent_id"),
    (["ingest", "--user", "hi"], "assistant", IngestRequest, "assistant_message"),
    (["ingest", "--user", "hi"], "session", IngestRequest, "session_id"),
    (["ingest", "--user", "hi"], "said_at", IngestRequest, "said_at"),
]


@pytest.mark.parametrize(("argv", "dest", "model", "field"), CLI_DEFAULTS)
def test_a_command_lines_defaults_are_its_request_models(
    argv: list[str], dest: str, model: type[Request], field: str
) -> None:
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == model.default(field)
