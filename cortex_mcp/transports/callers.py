"""Who is asking, once per HTTP request: a bearer token (the admin token or an agent token,
checked by the token service through the MCP SDK's own auth hooks) or the dashboard's session,
resolved into a `Caller` that the service receives (`CortexService.acting_for`).

- `CallerVerifier` is the SDK's `TokenVerifier`: the SDK's `AuthenticationMiddleware` runs it
  for every request, and its `RequireAuthMiddleware` answers 401 with `WWW-Authenticate` on
  `/mcp`, `/sse` and `/messages/` (which accept bearer tokens only, never the dashboard's
  cookie). The SDK binds each MCP session to the token that opened it.
- `Credentials` does the same for REST and the dashboard's API: a verified bearer token, else
  the dashboard's session, else 401.
- `Throttle` answers 429 to a client (by address) after `FAILURES` refused credentials within
  `WINDOW_S`, until the oldest of them is that old; other clients are not affected.

Without CORTEX_API_TOKEN (a loopback server) nothing is checked and every caller is the admin.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cortex_mcp.errors import CortexError
from cortex_mcp.models import ADMIN, Caller
from cortex_mcp.service.tokens import TokenService
from cortex_mcp.transports.guards import PUBLIC_PATHS, send_error

CALLER_KEY = "cortex.caller"
SCOPE = "memories"
ADMIN_CLIENT = "admin"
MCP_PREFIXES = ("/mcp", "/sse", "/messages")
FAILURES = 10
WINDOW_S = 60.0


class Unauthenticated(CortexError):
    code = "unauthorized"
    status = 401


class CallerVerifier:
    """The MCP SDK's TokenVerifier over the token service: the principal is the token's id
    (or "admin"), its subject the agent it acts for."""

    def __init__(self, tokens: Callable[[], TokenService]) -> None:
        self._tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        caller = await self._tokens().identify(token)
        if caller is None:
            return None
        client = caller.token_id if caller.is_agent and caller.token_id else ADMIN_CLIENT
        # the token itself is not kept on the request: nothing downstream needs it
        return AccessToken(
            token="",
            client_id=client,
            subject=caller.agent_id,
            scopes=[SCOPE],
            claims={"cortex_kind": caller.kind},
        )


def caller_from_token(access: AccessToken) -> Caller:
    if (access.claims or {}).get("cortex_kind") == "agent" and access.subject:
        return Caller.for_agent(access.subject, access.client_id)
    return ADMIN


def caller_of(scope: Scope) -> Caller:
    """The caller `Credentials` resolved for this request; none (a route it did not cover)
    is refused rather than taken for the admin."""
    caller = scope.get(CALLER_KEY)
    if not isinstance(caller, Caller):
        raise Unauthenticated("no credential was checked for this request")
    return caller


class Session(Protocol):
    """The dashboard's session (transports/dashboard.py)."""

    def is_public(self, path: str) -> bool: ...

    async def caller(self, scope: Scope) -> Caller | None: ...


def _is_mcp(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in MCP_PREFIXES)


class Credentials:
    """Resolve the request's caller (see the module's docstring), or answer 401."""

    def __init__(self, app: ASGIApp, *, required: bool, session: Session) -> None:
        self.app = app
        self.required = required
        self.session = session
        self.mcp_refusal = RequireAuthMiddleware(app, [SCOPE])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.required:
            scope[CALLER_KEY] = ADMIN
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        user = scope.get("user")
        if isinstance(user, AuthenticatedUser):
            scope[CALLER_KEY] = caller_from_token(user.access_token)
        elif scope["method"] == "OPTIONS":  # CORS preflight carries no credentials
            pass
        elif _is_mcp(path):  # bearer tokens only: the SDK's own 401, before any body check
            await self.mcp_refusal(scope, receive, send)
            return
        elif not (path in PUBLIC_PATHS or self.session.is_public(path)):
            caller = await self.session.caller(scope)
            if caller is None:
                await send_error(
                    send,
                    401,
                    "unauthorized",
                    "missing or wrong bearer token (send Authorization: Bearer <token>: the"
                    " admin token CORTEX_API_TOKEN, or an agent token)",
                    headers={"www-authenticate": 'Bearer realm="cortex"'},
                )
                return
            scope[CALLER_KEY] = caller
        await self.app(scope, receive, send)


class Throttle:
    """429 for a client whose credentials were refused FAILURES times within WINDOW_S.

    A refusal counts when the request presented a credential (a bearer token, or a token
    posted to the dashboard's sign-in) and got 401; a request with none (a page asking whether
    it must sign in) does not. Clients are told apart by address: behind a reverse proxy
    every client has the proxy's."""

    def __init__(self, app: ASGIApp, *, failures: int = FAILURES, window_s: float = WINDOW_S):
        self.app = app
        self.failures = failures
        self.window_s = window_s
        self._refused: dict[str, deque[float]] = {}
        self._clock = time.monotonic

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("?", 0))[0]
        wait = self._wait(client)
        if wait > 0:
            await send_error(
                send,
                429,
                "too_many_failures",
                f"too many refused credentials from this address; try again in {wait} s",
                headers={"retry-after": str(wait)},
            )
            return
        if not _presents_credential(scope):
            await self.app(scope, receive, send)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                self._refuse(client)
            await send(message)

        await self.app(scope, receive, watch)

    def _recent(self, client: str) -> deque[float]:
        refused = self._refused.get(client)
        if refused is None:
            return deque()
        horizon = self._clock() - self.window_s
        while refused and refused[0] < horizon:
            refused.popleft()
        if not refused:
            del self._refused[client]
        return refused

    def _wait(self, client: str) -> int:
        refused = self._recent(client)
        if len(refused) < self.failures:
            return 0
        return max(1, math.ceil(refused[0] + self.window_s - self._clock()))

    def _refuse(self, client: str) -> None:
        if len(self._refused) > 100_000:  # a flood of addresses: forget, rather than grow
            self._refused.clear()
        self._refused.setdefault(client, deque(maxlen=self.failures)).append(self._clock())


def _presents_credential(scope: Scope) -> bool:
    if scope["method"] == "POST" and scope["path"].endswith("/ui/session"):
        return True
    return any(key == b"authorization" for key, _ in scope.get("headers", []))
