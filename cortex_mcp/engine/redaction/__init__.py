"""Secrets never stored or sent: API keys, tokens, private keys, passwords (in settings and in
prose, in English, Chinese and Japanese), credentials in URLs, card numbers, IBANs and national
ID numbers are replaced by ``[REDACTED:kind]`` before any text is written or sent to a provider.

`text` folds the text the detectors read (zero-width and full-width characters), the rule
modules (`providers`, `assignments`, `prose`, `numbers`, `nearby`) find secrets, `detector`
resolves overlaps and cuts them out, and `redactor.Redactor` is the one door write paths use."""

from cortex_mcp.engine.redaction.checks import luhn_valid
from cortex_mcp.engine.redaction.detector import (
    Redacted,
    describe_redactions,
    find,
    mark,
    redact,
)
from cortex_mcp.engine.redaction.redactor import Redactor, redact_all, redact_json

__all__ = [
    "Redacted",
    "Redactor",
    "describe_redactions",
    "find",
    "luhn_valid",
    "mark",
    "redact",
    "redact_all",
    "redact_json",
]
