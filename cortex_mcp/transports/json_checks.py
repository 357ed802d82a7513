"""What a JSON body must be before any model reads it: parseable, no deeper than a real request
ever is, with finite numbers of sane size and valid Unicode text.

Python's parser turns each of these into a different exception (RecursionError for 100,000
nested arrays, ValueError for an integer over 4300 digits, a float `nan` for `NaN`, a str that
cannot be encoded for `"\\udfff"`); here they all become one MalformedJson, answered 400.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 32  # the deepest REST body is 4 levels (flush: body, messages, message, blocks)
MAX_MCP_DEPTH = 64  # JSON-RPC envelope, params, arguments, _meta: far below this
MAX_INT_DIGITS = 20  # every integer the API takes fits in 64 bits


class MalformedJson(ValueError):
    """The body is not JSON this server reads; the message says why, without echoing it."""


def _refuse_constant(name: str) -> Any:
    raise MalformedJson(f"{name} is not a JSON number (numbers must be finite)")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise MalformedJson(f"an integer of {len(digits)} digits is out of range")
    return int(digits)


def check_json(raw: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The parsed value of `raw`, or MalformedJson."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant, parse_int=_bounded_int)
    except MalformedJson:
        raise
    except RecursionError:
        raise MalformedJson(f"nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError:
        raise MalformedJson("not valid UTF-8") from None
    except ValueError as exc:  # JSONDecodeError and the like
        raise MalformedJson(f"not valid JSON ({_short(exc)})") from None
    _check_tree(value, max_depth)
    return value


def _check_tree(value: Any, max_depth: int) -> None:
    """Depth, float range and Unicode of every node, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise MalformedJson(f"nested deeper than {max_depth} levels")
        if isinstance(node, dict):
            for key, item in node.items():
                _check_text(key)
                stack.append((item, depth + 1))
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, str):
            _check_text(node)
        elif isinstance(node, float) and node in (float("inf"), float("-inf")):
            raise MalformedJson("a number is out of range (numbers must be finite)")


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedJson("holds text that is not valid Unicode (a lone surrogate)") from None


def _short(exc: ValueError) -> str:
    return str(exc)[:120]
