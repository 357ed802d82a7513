"""Tool parameters declared once: the flat JSON schema clients see and the strict check the server
runs on every call come from the same declaration, so they cannot drift apart.

Schemas stay flat because several clients (Gemini, Cursor, Copilot) reject `$ref`/`$defs` and
`anyOf [..., null]`: enums are inline, an optional value is simply not `required`, and every
limit the server enforces is in the schema. The check is stricter than pydantic's lax mode:
unknown names are refused with the valid ones listed, booleans must be JSON booleans (`purge`
destroys: "yes" or "1" must not), numbers must be finite, and a refused value is quoted only
by a short prefix. One leniency: a number sent as a plain decimal string (`"0.9"`, `"5"`), as
models often do, is read as that number; the schema still says number, so clients that check
it keep sending numbers.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cortex_mcp.engine.validate import decimal_string, preview
from cortex_mcp.errors import InvalidInput
from cortex_mcp.service.requests import SETTING, Request

Kind = Literal["string", "integer", "number", "boolean", "array"]


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    description: str
    required: bool = False
    default: Any = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    enum: Sequence[str] | None = None  # for strings, or the items of an array

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "description": self.description}
        if self.kind == "array":
            out["items"] = {"type": "string", "enum": list(self.enum or ())}
            out["maxItems"] = len(self.enum or ())
            out["uniqueItems"] = True
        elif self.enum is not None:
            out["enum"] = list(self.enum)
        for key, value in (
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("minimum", self.minimum),
            ("maximum", self.maximum),
        ):
            if value is not None:
                out[key] = value
        if self.default is not None:
            out["default"] = self.default
        return out

    def check(self, value: Any) -> Any:
        """`value` if it has this parameter's type and limits, else InvalidInput naming both."""
        checker = _CHECKS[self.kind]
        return checker(self, value)

    def refuse(self, rule: str) -> InvalidInput:
        return InvalidInput(f"{self.name}: {rule}", field=self.name)


def _check_string(param: Param, value: Any) -> str:
    if not isinstance(value, str):
        raise param.refuse(f"must be a string, got {_json_type(value)}")
    if param.max_length is not None and len(value) > param.max_length:
        raise param.refuse(
            f"{len(value)} characters is over the limit of {param.max_length}"
            + (
                " (CORTEX_MAX_CONTENT_CHARS); split it into separate facts"
                if param.name == "content"
                else ""
            )
        )
    if param.min_length is not None and len(value) < param.min_length:
        raise param.refuse(f"must be at least {param.min_length} character(s)")
    if not _is_valid_unicode(value):
        raise param.refuse("is not valid Unicode text (it contains a lone surrogate)")
    if param.enum is not None and value not in param.enum:
        raise param.refuse(f"unknown value {preview(value)}; use one of: {', '.join(param.enum)}")
    return value


def _check_integer(param: Param, value: Any) -> int:
    value = decimal_string(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise param.refuse(f"must be an integer, got {_json_type(value)}")
    _check_range(param, value)
    return value


def _check_number(param: Param, value: Any) -> float:
    value = decimal_string(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise param.refuse(f"must be a number, got {_json_type(value)}")
    if not math.isfinite(value):
        raise param.refuse(f"must be a finite number, got {value}")
    _check_range(param, value)
    return float(value)


def _check_range(param: Param, value: float) -> None:
    low, high = param.minimum, param.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        raise param.refuse(f"must be between {_num(low)} and {_num(high)}, got {_num(value)}")


def _check_boolean(param: Param, value: Any) -> bool:
    if not isinstance(value, bool):
        raise param.refuse(f"must be true or false (a JSON boolean), got {_json_type(value)}")
    return value


def _check_array(param: Param, value: Any) -> list[str]:
    if isinstance(value, str) and len(value) <= 1000 and value.lstrip().startswith("["):
        # Some clients (Claude Desktop among them) send arrays as JSON text.
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(value)
    if not isinstance(value, list):
        raise param.refuse(f"must be an array of strings, got {_json_type(value)}")
    allowed = list(param.enum or ())
    if len(value) > len(allowed):
        raise param.refuse(f"at most {len(allowed)} items")
    for item in value:
        if not isinstance(item, str) or item not in allowed:
            shown = preview(item) if isinstance(item, str) else _json_type(item)
            raise param.refuse(f"unknown value {shown}; use any of: {', '.join(allowed)}")
    return list(dict.fromkeys(value))


_CHECKS = {
    "string": _check_string,
    "integer": _check_integer,
    "number": _check_number,
    "boolean": _check_boolean,
    "array": _check_array,
}


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    """The flat JSON schema of a tool's arguments."""
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def parse_arguments(params: Sequence[Param], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Checked values for every declared parameter (defaults filled in).

    Unknown names are refused (the SDK would drop them silently, so `agentId` would store under
    the default agent); an explicit null counts as "not given", as many clients send it."""
    known = {p.name: p for p in params}
    unknown = [name for name in arguments if name not in known]
    if unknown:
        shown = ", ".join(preview(name, 40) for name in unknown[:5])
        raise InvalidInput(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {shown}; "
            f"valid arguments: {', '.join(known)}",
            field=unknown[0][:40],
        )
    values: dict[str, Any] = {}
    for param in params:
        value = arguments.get(param.name)
        if value is None:
            if param.required:
                raise param.refuse("is required")
            values[param.name] = param.default
            continue
        values[param.name] = param.check(value)
    return values


def _is_valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"the string {preview(value)}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _num(value: float | None) -> str:
    if value is None:
        return "any"
    return str(int(value)) if float(value).is_integer() else str(value)


def params_of(request: type[Request], limits: Mapping[str, int]) -> list[Param]:
    """The tool parameters of a request model: its fields but the REST-only ones, each with the
    model's type, limits, enum, default and description, and the server's value for a limit
    that is a setting's (`limits`, e.g. max_content_chars)."""
    schema = request.model_json_schema(mode="validation")
    definitions = schema.get("$defs", {})
    required = set(schema.get("required", []))
    params = []
    for name in request.tool_fields():
        prop = _flat(schema["properties"][name], definitions)
        kind = prop["type"]
        enum = prop.get("enum")
        max_length = prop.get("maxLength")
        description = prop.get("description", "")
        setting = prop.get(SETTING)
        if setting is not None:
            max_length = limits[setting]
            description += f", at most {max_length} characters"
        if kind == "array":
            enum = _flat(prop["items"], definitions)["enum"]
            max_length = None
        params.append(
            Param(
                name,
                kind,
                description,
                required=name in required,
                default=prop.get("default"),
                min_length=prop.get("minLength") if kind != "array" else None,
                max_length=max_length,
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                enum=enum,
            )
        )
    return params


def _flat(prop: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A property schema without `$ref` or an `anyOf [..., null]`: the referenced or non-null
    schema, with the property's own keys (description, default) over it."""
    own = {key: value for key, value in prop.items() if key not in ("$ref", "anyOf")}
    if "$ref" in prop:
        return {**_flat(definitions[prop["$ref"].rsplit("/", 1)[-1]], definitions), **own}
    if "anyOf" in prop:
        [branch] = [b for b in prop["anyOf"] if b.get("type") != "null"]
        return {**_flat(branch, definitions), **own}
    return own
