"""Pure ASGI guards in front of every HTTP route: Host and Origin checks, body size, JSON
bodies only (credentials: transports/callers.py).

Each answers the same JSON error shape as the REST routes, so a client sees one format whether
the refusal came from a guard or from a handler.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cortex_mcp.transports.json_checks import MAX_MCP_DEPTH, MalformedJson, check_json

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
    """DNS-rebinding and cross-site protection for every route, MCP ones included.

    - a request whose Host is not ours gets 421;
    - a request with an Origin gets 403 unless the Origin is exactly this server's own
      (scheme, host and port of the request) or one of CORTEX_CORS_ORIGINS: a page on another
      localhost port is another origin;
    - a browser request the browser marks as cross-site or same-site (Sec-Fetch-Site; another
      port on localhost is "same-site") without an allowed Origin gets 403, unless it is a plain
      GET navigation (a link opened in a tab, which cannot read or change anything here).
    """

    def __init__(
        self, app: ASGIApp, allowed_hosts: list[str] | None, cors_origins: list[str]
    ) -> None:
        self.app = app
        self.allowed = allowed_hosts  # None: Host check off (a public bind with no list)
        self.origins = {_normal_origin(o) for o in cors_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                status, code, message = refusal
                await send_error(send, status, code, message)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        host = _header(scope, b"host") or ""
        if self.allowed is not None and not host_allowed(host, self.allowed):
            log.warning("refused a request for host %r (not in the allowed hosts)", host[:100])
            return (
                421,
                "host_not_allowed",
                "Host header is not allowed here; add it to CORTEX_ALLOWED_HOSTS",
            )
        origin = _header(scope, b"origin")
        if origin is not None:
            if self._origin_allowed(origin, scope, host):
                return None
            log.warning("refused a request from origin %r", origin[:100])
            return (
                403,
                "origin_not_allowed",
                "Origin is not allowed here (only this server's own origin, exactly, and"
                " CORTEX_CORS_ORIGINS); add it to CORTEX_CORS_ORIGINS",
            )
        site = _header(scope, b"sec-fetch-site")
        if site in ("cross-site", "same-site") and not _is_navigation(scope):
            log.warning("refused a %s browser request without an Origin", site)
            return (
                403,
                "cross_site_request",
                "a request from another site's page is not allowed here",
            )
        return None

    def _origin_allowed(self, origin: str, scope: Scope, host: str) -> bool:
        """Exact: the scheme, host and port of the Origin equal this request's own, or the
        Origin is one of the configured CORS origins."""
        normal = _normal_origin(origin)
        if normal in self.origins:
            return True
        own = _normal_origin(f"{scope.get('scheme', 'http')}://{host}")
        return bool(host) and normal == own


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _normal_origin(origin: str) -> str:
    """ "HTTP://LocalHost:80" -> "http://localhost": lower case, the scheme's default port
    dropped; anything that is not exactly scheme://host[:port] stays as it is (so "null"
    equals only "null", which is never our own origin)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return origin
    if not parts.scheme or not parts.hostname or parts.path not in ("", "/"):
        return origin
    if parts.username is not None or parts.query or parts.fragment:
        return origin
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = _DEFAULT_PORTS.get(parts.scheme)
    shown_port = "" if port is None or port == default else f":{port}"
    return f"{parts.scheme}://{host}{shown_port}"


def _is_navigation(scope: Scope) -> bool:
    mode = _header(scope, b"sec-fetch-mode")
    return scope["method"] in ("GET", "HEAD") and mode == "navigate"


class BodyLimit:
    """Refuse bodies over `limit` bytes with 413 before any handler reads them: by
    Content-Length up front, and a body of undeclared length (chunked) is read here, up to the
    limit, and handed on only when it ended within it. The MCP transports parse bodies
    themselves, so a limit enforced while they read would surface as a crash (500)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self.limit:
                await send_error(send, 413, "body_too_large", self._message())
                return
            await self.app(scope, receive, send)
            return
        body = await self._read_within_limit(receive)
        if body is None:
            await send_error(send, 413, "body_too_large", self._message())
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read_within_limit(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)  # the client went away; the app sees an empty body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _message(self) -> str:
        return f"request body is over the limit of {self.limit} bytes (CORTEX_MAX_BODY_BYTES)"


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` once, then passes through (for http.disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


JSON_MEDIA_TYPES = frozenset({"application/json"})


class JsonBodies:
    """A request that carries a body (POST, PUT, PATCH) must say `Content-Type:
    application/json`, else 415. A browser page can send text/plain or a form to another
    origin without asking first (no CORS preflight); it cannot send application/json so."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH"):
            declared = _header(scope, b"content-type") or ""
            media_type = declared.partition(";")[0].strip().lower()
            if media_type not in JSON_MEDIA_TYPES:
                shown = repr(declared[:60]) if declared else "none"
                await send_error(
                    send,
                    415,
                    "unsupported_media_type",
                    f"Content-Type: must be application/json (got {shown})",
                    field="Content-Type",
                )
                return
        await self.app(scope, receive, send)


class JsonRpcBodies:
    """A body posted to the MCP transports (`/mcp`, `/messages/`) must be JSON this server
    reads (json_checks: bounded depth, finite numbers, sane integers, valid Unicode), else 400
    with a JSON-RPC parse error. The SSE transport would otherwise accept `NaN` with 202 and
    the SDK's parser refuses the rest with bodies of its own."""

    def __init__(self, app: ASGIApp, paths: tuple[str, ...]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        try:
            check_json(body, MAX_MCP_DEPTH)
        except MalformedJson as exc:
            await _send_parse_error(send, str(exc))
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(receive: Receive) -> bytes:
    """The whole body (BodyLimit, further out, has bounded it)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _send_parse_error(send: Send, reason: str) -> None:
    error = {"code": -32700, "message": f"Parse error: {reason}"}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})
