"""Secrets never stored or sent: API keys, tokens, private keys, passwords (in settings, on
command lines and in prose, in English, Chinese, Japanese and the password words of other
languages), credentials in URLs, wallet keys and recovery phrases, long generated tokens, card
numbers, IBANs and national ID numbers are replaced by ``[REDACTED:kind]`` before any text is
written or sent to a provider.

`text` folds the text the detectors read (NFKC, zero-width characters, Greek and Cyrillic
look-alikes in Latin words, letters spelt out one by one), the rule modules (`providers`,
`crypto`, `assignments`, `prose`, `numbers`, `nearby`) find secrets, `detector` resolves
overlaps and cuts them out, and `redactor.Redactor` is the one door write paths use."""

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
