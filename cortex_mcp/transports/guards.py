"""Pure ASGI guards in front of every HTTP route: Host check, bearer token, body size.

Each answers the same JSON error shape as the REST routes, so a client sees one format whether
the refusal came from a guard or from a handler. The token is compared in constant time and
never logged.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from typing import Any, Protocol

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

PUBLIC_PATHS = frozenset({"/api/v1/health"})
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def send_error(
    send: Send,
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    body = json.dumps({"error": error}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _split_host(host_header: str) -> str:
    """The name part of a Host header: "a.b:8080" -> "a.b", "[::1]:80" -> "[::1]"."""
    if host_header.startswith("["):
        return host_header[: host_header.find("]") + 1]
    return host_header.partition(":")[0]


def host_allowed(host_header: str, allowed: list[str]) -> bool:
    """`allowed` holds names ("example.com"), exact "name:port" values or "name:*"."""
    name = _split_host(host_header)
    for entry in allowed:
        if entry in (host_header, name):
            return True
        if entry.endswith(":*") and entry[:-2] == name:
            return True
    return False


class HostGuard:
    """DNS-rebinding protection for every route: a request whose Host is not ours gets 421,
    one from a browser page whose Origin is neither ours nor a configured CORS origin 403."""

    def __init__(
        self, app: ASGIApp, allowed_hosts: list[str] | None, cors_origins: list[str]
    ) -> None:
        self.app = app
        self.allowed = allowed_hosts  # None: protection off (a public bind with no list)
        self.origins = set(cors_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.allowed is not None:
            host = _header(scope, b"host") or ""
            if not host_allowed(host, self.allowed):
                log.warning("refused a request for host %r (not in the allowed hosts)", host[:100])
                await send_error(
                    send,
                    421,
                    "host_not_allowed",
                    "Host header is not allowed here; add it to CORTEX_ALLOWED_HOSTS",
                )
                return
            origin = _header(scope, b"origin")
            if origin is not None and not self._origin_allowed(origin):
                log.warning("refused a request from origin %r", origin[:100])
                await send_error(
                    send,
                    403,
                    "origin_not_allowed",
                    "Origin is not allowed here; add it to CORTEX_CORS_ORIGINS",
                )
                return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        if origin in self.origins:
            return True
        scheme, sep, netloc = origin.partition("://")
        return (
            bool(sep) and scheme in ("http", "https") and host_allowed(netloc, self.allowed or [])
        )


class Session(Protocol):
    """The dashboard's session (transports/dashboard.py): its public paths (page, assets,
    sign-in) and the requests its cookie authorises."""

    def is_public(self, path: str) -> bool: ...

    def accepts(self, scope: Scope) -> bool: ...


class BearerAuth:
    """Every path but the public ones needs `Authorization: Bearer <CORTEX_API_TOKEN>`, or the
    dashboard's session when one is given."""

    def __init__(self, app: ASGIApp, token: str | None, session: Session | None = None) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.session = session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and self.token is not None
            and scope["path"] not in PUBLIC_PATHS
            and not (self.session is not None and self.session.is_public(scope["path"]))
            and scope["method"] != "OPTIONS"  # CORS preflight carries no credentials
            and not self._authorised(scope)
            and not (self.session is not None and self.session.accepts(scope))
        ):
            await send_error(
                send,
                401,
                "unauthorized",
                "missing or wrong bearer token (send Authorization: Bearer $CORTEX_API_TOKEN)",
                headers={"www-authenticate": 'Bearer realm="cortex"'},
            )
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        assert self.token is not None
        header = _header(scope, b"authorization") or ""
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(presented.strip().encode("latin-1"), self.token)


class BodyLimit:
    """Refuse bodies over `limit` bytes with 413: by Content-Length up front, and by counting
    what arrives when the length is not declared."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await send_error(send, 413, "body_too_large", self._message())
            return
        received = 0

        async def counting_receive() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLarge(self._message())
            return message

        await self.app(scope, counting_receive, send)

    def _message(self) -> str:
        return f"request body is over the limit of {self.limit} bytes (CORTEX_MAX_BODY_BYTES)"


class BodyTooLarge(Exception):
    """Raised while reading a body that grew past the limit; handlers answer 413."""
