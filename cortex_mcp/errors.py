"""The one exception tree of cortex-mcp.

CortexError                 base; ``code`` maps to an HTTP status at the edge
├── InvalidInput            bad argument: names the field and the rule (400)
│   └── InvalidSetting      a setting's new value breaks its rule (422)
├── Forbidden               the caller may not act for what it named (403)
├── NotFound                unknown memory or resource (404)
├── Conflict                state does not allow the change (409)
├── ConfigError             invalid settings at start
├── ProviderError           an LLM or embedding provider failed (callers degrade)
│   └── IssuerUnavailable   the identity provider's keys cannot be fetched (503)
└── StorageError            the database file cannot be used: one line naming the path,
    │                       the cause and what to do (503)
    ├── DiskFull            a write did not fit on the disk (507)
    └── ReadOnlyStorage     the database may only be read: writes are refused (503)
"""

from __future__ import annotations


class CortexError(Exception):
    code = "internal"
    status = 500

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(CortexError):
    code = "invalid_input"
    status = 400


class InvalidSetting(InvalidInput):
    status = 422


class Forbidden(CortexError):
    code = "forbidden"
    status = 403


class NotFound(CortexError):
    code = "not_found"
    status = 404


class Conflict(CortexError):
    code = "conflict"
    status = 409


class ConfigError(CortexError):
    code = "config"


class ProviderError(CortexError):
    code = "provider"
    status = 503


class IssuerUnavailable(ProviderError):
    code = "issuer_unavailable"


class StorageError(CortexError):
    code = "storage"
    status = 503


class DiskFull(StorageError):
    code = "disk_full"
    status = 507


class ReadOnlyStorage(StorageError):
    code = "read_only"
    status = 503
