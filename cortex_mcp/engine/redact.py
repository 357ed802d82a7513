"""Facade kept for existing imports: the redaction subsystem lives in `engine/redaction/`."""

from cortex_mcp.engine.redaction import (
    Redacted,
    Redactor,
    find,
    luhn_valid,
    mark,
    redact,
    redact_all,
    redact_json,
)

__all__ = [
    "Redacted",
    "Redactor",
    "find",
    "luhn_valid",
    "mark",
    "redact",
    "redact_all",
    "redact_json",
]
