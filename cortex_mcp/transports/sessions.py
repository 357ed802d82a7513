"""MCP sessions over Streamable HTTP (`/mcp`), shared fairly between callers.

The MCP SDK's session manager keeps every session until its client ends it or it has been idle
for 30 minutes, and refuses every new one (503) while 10,000 are open: one token could open
them all and lock every other agent out. `CallerSessions` is that manager with three bounds:

- a caller (an agent token, the admin token; everyone on a tokenless server is one caller)
  holds at most `per_caller` sessions: opening one more closes that caller's least recently
  used idle session first; when every one of them has a request in flight, the new one is
  refused with 429 (`SessionGate`), never anyone else's;
- the server holds at most `total`: at that bound a new session closes the least recently used
  idle session of the caller holding the most, so a caller under its own cap is never
  refused;
- a session with no request in flight for `idle_s` is closed (the SDK's own timer).

A closed session's id answers 404 from then on, and its client opens a new one (the protocol's
rule). Requests of protocol 2026-07-28 are stateless and open no session at all. The older SSE
transport's sessions (one per open `GET /sse` stream) get the same cap and bound (`SseStreams`),
the oldest stream giving way: a stream has no idle time to go by.

A session with a request in flight (an open GET stream included) is never closed to make room:
sessions opened at the same moment may pass a bound for as long as they are busy opening, and
the bound is restored as each of them finishes opening. It extends three hooks of the SDK's
`StreamableHTTPSessionManager` (mcp 2.3): `_admit_session`, called under the manager's lock for
each new session, `_serve_opening_request` and `_discard_session`, called however a session
ends (tests/test_caller_limits.py drives them through a served process).
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    AuthorizationContext,
    RequireAuthMiddleware,
    authorization_context,
)
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types import INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from cortex_mcp.models import Caller
from cortex_mcp.transports.callers import CALLER_KEY

log = logging.getLogger(__name__)

LOCAL_CALLER = "local"  # every caller of a server that checks no token


class CallerSessions(StreamableHTTPSessionManager):
    """The SDK's session manager with a cap per caller and a bounded total (see the module)."""

    def __init__(
        self, app: Any, *, per_caller: int, total: int, idle_s: float, **options: Any
    ) -> None:
        # max_sessions=None: the bounds are kept here, by closing idle sessions, never by a 503
        super().__init__(app, session_idle_timeout=idle_s, max_sessions=None, **options)
        self.per_caller = per_caller
        self.total = total
        self._callers: dict[str, str] = {}  # session id -> its caller, oldest first

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        caller = _caller_key(requestor)
        self._make_room(caller, opening=1)
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            self._callers[transport.mcp_session_id] = caller
        return transport

    async def _serve_opening_request(
        self,
        http_transport: StreamableHTTPServerTransport,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            await super()._serve_opening_request(http_transport, scope, receive, send)
        finally:
            # sessions opened at once may have gone past a bound while each was busy opening
            opened = http_transport.mcp_session_id or ""
            self._make_room(self._callers.get(opened, ""), opening=0, keep=opened)

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        self._callers.pop(session_id, None)
        await super()._discard_session(session_id, transport)

    def all_busy_at_cap(self, caller: str) -> bool:
        """The caller holds its cap and none of its sessions is idle: a new one is refused."""
        mine = [sid for sid, c in self._callers.items() if c == caller]
        return len(mine) >= self.per_caller and all(self._idle_since(s) is None for s in mine)

    def _make_room(self, caller: str, *, opening: int, keep: str = "") -> None:
        """Close least recently used idle sessions until `caller` (with `opening` more) is
        within its cap and the server within its bound, the latter from the caller holding
        the most (only: a lighter caller's session never goes for it). A session with a
        request in flight is never closed: while every candidate is busy, the bound waits for
        the next session to open or finish opening. `keep`: the
        session that just opened, which its client is about to use."""
        held = Counter(self._callers.values())
        while held[caller] + opening > self.per_caller:
            victim = self._idle_victim(caller, keep)
            if victim is None:
                break
            self._close(victim, f"{caller} is at its cap of {self.per_caller}")
            held[caller] -= 1
        while len(self._callers) + opening > self.total:
            most = max(held.values(), default=0)
            heaviest = sorted(c for c in held if held[c] == most and most > 0)
            found = next(((c, v) for c in heaviest if (v := self._idle_victim(c, keep))), None)
            if found is None:
                break
            self._close(found[1], f"the server is at its bound of {self.total}")
            held[found[0]] -= 1

    def _idle_victim(self, caller: str, keep: str) -> str | None:
        """The caller's least recently used idle session but `keep`, if any."""
        mine = [sid for sid, c in self._callers.items() if c == caller and sid != keep]
        idle = [(since, sid) for sid in mine if (since := self._idle_since(sid)) is not None]
        return min(idle)[1] if idle else None

    def _idle_since(self, session_id: str) -> float | None:
        """When the session's idle timer runs out (the earliest is the least recently used),
        or None while a request of it is in flight (or it is still opening)."""
        transport = self._server_instances.get(session_id)
        scope = transport.idle_scope if transport is not None else None
        if scope is None or math.isinf(scope.deadline):
            return None
        return float(scope.deadline)

    def _close(self, session_id: str, why: str) -> None:
        """Forget the session at once (its id answers 404 from now on) and end its task,
        which terminates its transport (`_discard_session`)."""
        caller = self._callers.pop(session_id, "?")
        transport = self._server_instances.pop(session_id, None)
        self._session_owners.pop(session_id, None)
        if transport is not None and transport.idle_scope is not None:
            transport.idle_scope.cancel()
        log.info("closed MCP session %s… of %s to open another: %s", session_id[:8], caller, why)


class SessionGate:
    """In front of the session manager: a request that would open a session for a caller
    whose sessions are all at its cap and busy gets 429 (a JSON-RPC error) instead of closing
    one of them in the middle of a request."""

    def __init__(self, manager: CallerSessions) -> None:
        self.manager = manager
        self.app = StreamableHTTPASGIApp(manager)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _opens_session(scope):
            user = scope.get("user")
            requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
            caller = _caller_key(requestor)
            if self.manager.all_busy_at_cap(caller):
                log.info(
                    "refused a new MCP session of %s: its %d are all busy",
                    caller,
                    self.manager.per_caller,
                )
                await _too_many(send, self.manager.per_caller)
                return
        await self.app(scope, receive, send)


def _opens_session(scope: Scope) -> bool:
    """A POST with no session id in a protocol era that has sessions (no version header,
    or a handshake version): the SDK opens a session for it."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return False
    headers = dict(scope.get("headers", []))
    if MCP_SESSION_ID_HEADER.encode() in headers:
        return False
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER.encode())
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


async def _too_many(send: Send, cap: int) -> None:
    message = (
        f"too many MCP sessions open for this caller ({cap}, each with a request in flight);"
        " end one (DELETE /mcp) or retry when one is done"
    )
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _caller_key(requestor: AuthorizationContext | None) -> str:
    """Who a session belongs to: the token's id ("admin" for the admin token) and the agent
    it acts for; never the token itself."""
    if requestor is None:
        return LOCAL_CALLER
    subject = requestor.get("subject")
    return requestor["client_id"] + (f" ({subject})" if subject else "")


def streamable_http_routes(
    server: MCPServer,
    security: TransportSecuritySettings,
    *,
    auth_scopes: list[str] | None,
    max_body_bytes: int,
    per_caller: int,
    total: int,
    idle_s: float,
    path: str = "/mcp",
) -> tuple[list[BaseRoute], CallerSessions]:
    """The `/mcp` route over a `CallerSessions` (behind the SDK's bearer check when
    `auth_scopes` is given), and the manager, whose `run()` the app's lifespan enters."""
    manager = CallerSessions(
        server._lowlevel_server,  # the documented v2 replacement for _mcp_server
        per_caller=per_caller,
        total=total,
        idle_s=idle_s,
        security_settings=security,
        max_request_body_size=max_body_bytes,
    )
    endpoint: Any = SessionGate(manager)
    if auth_scopes is not None:
        auth = server.settings.auth
        resource = auth.resource_server_url if auth is not None else None
        metadata = build_resource_metadata_url(resource) if resource is not None else None
        endpoint = RequireAuthMiddleware(endpoint, auth_scopes, metadata)
    return [Route(path, endpoint=endpoint)], manager


class SseStreams:
    """The same bounds for the older SSE transport, whose session lives exactly as long as
    its `GET /sse` stream: a caller's stream beyond `per_caller` closes that caller's oldest
    one, and a stream beyond `total` closes the oldest of the caller holding the most, so a
    caller under its own cap is never refused. Sits after `Credentials`, which named the
    caller."""

    def __init__(self, app: ASGIApp, *, path: str, per_caller: int, total: int) -> None:
        self.app = app
        self.path = path
        self.per_caller = per_caller
        self.total = total
        self._open: dict[int, tuple[str, anyio.CancelScope]] = {}  # oldest first
        self._next = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        caller = _sse_caller(scope.get(CALLER_KEY))
        self._make_room(caller)
        key, self._next = self._next, self._next + 1
        with anyio.CancelScope() as stream:
            self._open[key] = (caller, stream)
            try:
                await self.app(scope, receive, send)
            finally:
                self._open.pop(key, None)

    def _make_room(self, caller: str) -> None:
        held = Counter(c for c, _ in self._open.values())
        while held[caller] >= self.per_caller:
            self._close(caller, f"{caller} is at its cap of {self.per_caller}")
            held[caller] -= 1
        while len(self._open) >= self.total:
            heaviest = max(held, key=lambda c: (held[c], c != caller))
            self._close(heaviest, f"the server is at its bound of {self.total}")
            held[heaviest] -= 1

    def _close(self, caller: str, why: str) -> None:
        oldest = next(key for key, (c, _) in self._open.items() if c == caller)
        _, stream = self._open.pop(oldest)
        stream.cancel()
        log.info("closed an MCP SSE stream of %s to open another: %s", caller, why)


def _sse_caller(caller: object) -> str:
    """The caller `Credentials` named, as a key: its token's id and agent, never the token."""
    if not isinstance(caller, Caller) or caller.kind == "local":
        return LOCAL_CALLER
    return f"{caller.token_id or caller.kind} ({caller.agent_id or caller.kind})"
