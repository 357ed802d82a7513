"""One request model per operation: the MCP tool's input schema, the REST body and the OpenAPI
document are generated from it, so a limit, an enum, a default or a description written there
is what every transport publishes."""

from __future__ import annotations

from typing import Any

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.service.requests import (
    DECIMAL_MARK,
    REST_ONLY,
    SETTING,
    RecallRequest,
    RememberRequest,
    Request,
    build,
)
from cortex_mcp.transports.arguments import input_schema
from cortex_mcp.transports.endpoints import openapi_document
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
