"""The REST kit: one table of endpoints drives both the Starlette routes and the OpenAPI
document, so the document cannot drift from what is served.

Every failure leaves as JSON `{"error": {"code", "message", "field"?}}`: bad JSON 400, a body
that fails its model 422 (naming the field and the rule), CortexError by its status, a
capability that has not landed yet 503. Nothing is written before validation has passed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cortex_mcp.engine.validate import DECIMAL_TEXT, MAX_DECIMAL_CHARS, shown_name
from cortex_mcp.errors import CortexError
from cortex_mcp.models import ADMIN, READ_SCOPE, WRITE_SCOPE, Caller
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import DECIMAL_MARK, REST_ONLY, SETTING, rule_of
from cortex_mcp.transports.agent_header import AGENT_HEADER, header_agent
from cortex_mcp.transports.callers import caller_of, insufficient_scope
from cortex_mcp.transports.json_checks import MalformedJson, check_json
from cortex_mcp.transports.rest_responses import ErrorBody

log = logging.getLogger(__name__)

PREFIX = "/api/v1"


class BadRequest(CortexError):
    code = "invalid_json"
    status = 400


@dataclass
class Call:
    """What a handler gets: the parsed, validated request."""

    service: CortexService
    body: Any
    query: Any
    path: dict[str, str]
    agent_id: str | None
    request: Request


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # below PREFIX, Starlette syntax: "/memories/{id}"
    handler: Handler
    summary: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    status: int = 200
    public: bool = False
    errors: tuple[int, ...] = field(default=(400, 401, 413, 422))
    scope: str | None = None  # the right it needs; None: reading for GET, else writing

    @property
    def full_path(self) -> str:
        return PREFIX + self.path

    @property
    def needs(self) -> str:
        if self.scope is not None:
            return self.scope
        return READ_SCOPE if self.method == "GET" else WRITE_SCOPE


def error_response(status: int, code: str, message: str, field: str | None = None) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    return JSONResponse({"error": error}, status_code=status)


def _insufficient_scope(request: Request, needed: str) -> Response:
    """403: the caller's token does not hold the right this route needs; nothing was read."""
    response = error_response(
        403,
        "insufficient_scope",
        f"{needed}: this token does not hold the {needed} scope this request needs",
        "scope",
    )
    resource = getattr(request.app.state, "resource", None)
    response.headers["WWW-Authenticate"] = insufficient_scope(resource, request.url.path, needed)
    return response


def _validation_response(exc: ValidationError, where: str = "") -> Response:
    problems = []
    for error in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in error["loc"]) or where or "body"
        problems.append((shown_name(loc), shown_name(rule_of(error))))
    message = "; ".join(f"{loc}: {msg}" for loc, msg in problems[:5])
    return error_response(422, "invalid_input", message, problems[0][0])


async def _json_body(request: Request, model: type[BaseModel]) -> BaseModel:
    """The body checked as JSON (bounded depth, finite numbers, valid Unicode), then against
    `model` in strict mode: the types are as strict as the MCP tools' ("true" is not a
    boolean, 2.0 not an integer, "1" not a number)."""
    raw = await request.body()
    if not raw.strip():
        raise BadRequest("body: send a JSON object (the body is empty)", field="body")
    check_json(raw)
    settings = request.app.state.service.settings
    limits = {"max_content_chars": settings.max_content_chars}  # the SETTING-marked limits
    return model.model_validate_json(raw, strict=True, context=limits)


def _agent(request: Request, parsed: Any, caller: Caller) -> str | None:
    explicit = getattr(parsed, "agent_id", None)
    if explicit is not None:
        return str(explicit).strip()
    return header_agent(request.headers.get(AGENT_HEADER), caller)


def _to_json(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    return result


def route_for(endpoint: Endpoint) -> Route:
    async def run(request: Request) -> Response:
        try:
            # a public route (health) reads nothing of any agent; every other one has its caller
            caller = ADMIN if endpoint.public else caller_of(request.scope)
            if not caller.may(endpoint.needs):
                return _insufficient_scope(request, endpoint.needs)
            body = query = None
            if endpoint.body is not None:
                body = await _json_body(request, endpoint.body)
            if endpoint.query is not None:
                query = endpoint.query.model_validate(dict(request.query_params))
            call = Call(
                service=request.app.state.service.acting_for(caller),
                body=body,
                query=query,
                path=dict(request.path_params),
                agent_id=_agent(request, body or query, caller),
                request=request,
            )
            result = await endpoint.handler(call)
        except MalformedJson as exc:
            return error_response(400, "invalid_json", f"body: {exc}", "body")
        except ValidationError as exc:
            return _validation_response(exc)
        except CortexError as exc:
            return error_response(exc.status, exc.code, exc.message, exc.field)
        except Exception:
            log.exception("%s %s failed", endpoint.method, endpoint.full_path)
            return error_response(500, "internal", "internal error; the server log has details")
        return JSONResponse(_to_json(result), status_code=endpoint.status)

    return Route(endpoint.full_path, run, methods=[endpoint.method], name=endpoint.summary)


# ---- OpenAPI -------------------------------------------------------------------------------


def openapi_document(
    endpoints: list[Endpoint], version: str, settings: Any = None
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `endpoints`; a limit marked as a setting's (requests.
    SETTING) is stated with `settings`' value, the one this server enforces."""
    schemas: dict[str, Any] = {}

    def ref(model: type[BaseModel], mode: str) -> dict[str, Any]:
        schema = model.model_json_schema(
            ref_template="#/components/schemas/{model}",
            mode=mode,  # type: ignore[arg-type]
        )
        schemas.update(schema.pop("$defs", {}))
        name = getattr(model, "schema_name", model.__name__)
        schemas[name] = schema
        return {"$ref": f"#/components/schemas/{name}"}

    error = {"content": {"application/json": {"schema": ref(ErrorBody, "serialization")}}}
    paths: dict[str, Any] = {}
    for ep in endpoints:
        op: dict[str, Any] = {"summary": ep.summary, "operationId": ep.summary}
        params = [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {"type": "string", "format": "uuid"},
            }
            for name in _path_names(ep.path)
        ]
        if ep.query is not None:
            schema = ep.query.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(schema.pop("$defs", {}))  # a parameter's enum (Layer) is a component
            required = set(schema.get("required", []))
            for name, prop in schema["properties"].items():
                params.append(
                    {"name": name, "in": "query", "required": name in required, "schema": prop}
                )
        if params:
            op["parameters"] = params
        if ep.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": ref(ep.body, "validation")}},
            }
        ok: dict[str, Any] = {"description": "success"}
        if ep.response is not None:
            ok["content"] = {"application/json": {"schema": ref(ep.response, "serialization")}}
        op["responses"] = {str(ep.status): ok}
        codes = _error_codes(ep)
        op["responses"].update({str(c): {"description": "error", **error} for c in codes})
        if not ep.public:
            op["security"] = [{"bearer": []}]
        paths.setdefault(ep.full_path, {})[ep.method.lower()] = op
    document = {
        "openapi": "3.1.0",
        "info": {"title": "cortex-mcp REST API", "version": version},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
    _fill_setting_limits(document, settings)
    return document


def _error_codes(ep: Endpoint) -> list[int]:
    """The error statuses of `ep`: its own, 403 on every route (a page of another origin; an
    agent token naming another agent or on an admin route) and 415 on every method that
    carries a body (guards.JsonBodies)."""
    codes = {403, *(() if ep.public else ep.errors)}
    if ep.method in ("POST", "PUT", "PATCH"):
        codes.add(415)
    return sorted(codes)


def _fill_setting_limits(node: Any, settings: Any) -> None:
    """Fill in the marked limits (requests.SETTING, DECIMAL_MARK) of the document."""
    if isinstance(node, dict):
        node.pop(REST_ONLY, None)  # the REST document states every field
        name = node.pop(SETTING, None)
        if name is not None and settings is not None:
            node["maxLength"] = int(getattr(settings, name))
        if node.get(DECIMAL_MARK):
            or_decimal_text(node)
        _no_nul(node)
        for value in node.values():
            _fill_setting_limits(value, settings)
    elif isinstance(node, list):
        for value in node:
            _fill_setting_limits(value, settings)


NO_NUL = "^[^\\u0000]*$"


def _no_nul(schema: dict[str, Any]) -> None:
    """No text may hold NUL (refused on every route): a string without a pattern of its own
    gets this one (the project's own patterns exclude NUL), and so do an object's keys."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds and "pattern" not in schema and "enum" not in schema:
        schema["pattern"] = NO_NUL
    if "object" in kinds and schema.get("additionalProperties") not in (None, False):
        schema.setdefault("propertyNames", {"pattern": NO_NUL})


def _path_names(path: str) -> list[str]:
    return [part[1:-1].split(":")[0] for part in path.split("/") if part.startswith("{")]


DECIMAL_MARK_PATTERN = rf"^\s*{DECIMAL_TEXT}\s*$"


def or_decimal_text(schema: dict[str, Any]) -> None:
    """Publish a marked number as it is read: a JSON number, or a plain decimal string whose
    pattern admits only values within the number's bounds (the server reads more forms, such
    as exponents: the pattern is the part of them a client can rely on)."""
    del schema[DECIMAL_MARK]
    kind = schema["type"]
    schema["type"] = [kind, "string"]
    schema["pattern"] = _bounded_decimal_pattern(kind, schema.get("minimum"), schema.get("maximum"))
    schema["maxLength"] = MAX_DECIMAL_CHARS


def _bounded_decimal_pattern(kind: str, low: Any, high: Any) -> str:
    if not (isinstance(low, int) and isinstance(high, int) and 0 <= low <= high):
        return DECIMAL_MARK_PATTERN
    whole = _integer_range(low, high)
    if kind == "integer":
        return rf"^\s*0*(?:{whole})\s*$"
    if low == high:
        return rf"^\s*0*(?:{whole})(?:\.0*)?\s*$"
    below = _integer_range(low, high - 1)  # any fraction after these stays within bounds
    return rf"^\s*0*(?:(?:{whole})(?:\.0*)?|(?:{below})\.[0-9]*)\s*$"


def _integer_range(low: int, high: int) -> str:
    """A regular expression (alternatives) for exactly the decimal integers low..high."""
    alternatives: list[str] = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        first = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        last = min(high, 10**digits - 1)
        if first <= last:
            alternatives += _same_length(str(first), str(last))
    return "|".join(alternatives)


def _same_length(first: str, last: str) -> list[str]:
    if first == last:
        return [first]
    rest = len(first) - 1
    if first[1:] == "0" * rest and last[1:] == "9" * rest:
        return [f"[{first[0]}-{last[0]}]" + "[0-9]" * rest]
    if first[0] == last[0]:
        return [first[0] + "(?:" + "|".join(_same_length(first[1:], last[1:])) + ")"]
    out = [first[0] + "(?:" + "|".join(_same_length(first[1:], "9" * rest)) + ")"]
    if int(last[0]) - int(first[0]) > 1:
        out.append(f"[{int(first[0]) + 1}-{int(last[0]) - 1}]" + "[0-9]" * rest)
    out.append(last[0] + "(?:" + "|".join(_same_length("0" * rest, last[1:])) + ")")
    return out
