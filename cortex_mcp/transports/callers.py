"""Who is asking, once per HTTP request: a bearer token (the admin token or an agent token,
checked by the token service through the MCP SDK's own auth hooks) or the dashboard's session,
resolved into a `Caller` that the service receives (`CortexService.acting_for`).

- `CallerVerifier` is the SDK's `TokenVerifier`: the SDK's `AuthenticationMiddleware` runs it
  for every request; `/mcp`, `/sse` and `/messages/` accept bearer tokens only (never the
  dashboard's cookie) and answer 401 in OAuth's form (`invalid_token`, `WWW-Authenticate`)
  with the same description of the token expected as REST's. The SDK binds each MCP session
  to the token that opened it.
- `Credentials` does the same for REST and the dashboard's API: a verified bearer token, else
  the dashboard's session, else 401.
- `Throttle` answers 429 to a credential that was refused `FAILURES` times within `WINDOW_S`
  from one address (told apart by a keyed fingerprint of what was presented, never kept
  itself), until the oldest of those refusals is that old; every other credential from that
  address (the right token of another client on the same machine) is served as before. An
  address that had `GUESSES_PER_FAILURE` times as many refusals (many different wrong tokens:
  guessing) gets 429 for any credential this server has not seen accepted recently.
  `RefusedCredentials` holds the counts in bounded tables; the dashboard's sign-in uses it too.

Without CORTEX_API_TOKEN (a loopback server) nothing is checked and every caller is the admin.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cortex_mcp.errors import CortexError, IssuerUnavailable
from cortex_mcp.models import ADMIN, AGENT_SCOPES, READ_SCOPE, Caller, agent_id_problem
from cortex_mcp.transports.guards import PUBLIC_PATHS, send_error
from cortex_mcp.transports.proxies import PROXY_USER_KEY
from cortex_mcp.transports.resource import ProtectedResource

if TYPE_CHECKING:  # the token service (and the identity provider's JWT library) load with it
    from cortex_mcp.service.tokens import TokenService

log = logging.getLogger(__name__)

CALLER_KEY = "cortex.caller"
UNAVAILABLE_KEY = "cortex.issuer_unavailable"
CALLER_CLAIM = "cortex_caller"  # the resolved Caller, kept on the SDK's AccessToken
SCOPE = READ_SCOPE  # what every MCP request needs; each tool asks for its own too
ADMIN_CLIENT = "admin"
OAUTH_CLIENT = "oauth"  # the SDK's client id of an identity provider's access token
PROXY_ISSUER = "proxy"  # who vouched for a user a trusted proxy's header names
MCP_PREFIXES = ("/mcp", "/sse", "/messages")
FAILURES = 10
WINDOW_S = 60.0
GUESSES_PER_FAILURE = 10  # an address's refusals (any credential) before it counts as guessing
TABLE_SIZE = 10_000  # credentials (and addresses) the throttle remembers, least recent dropped
FINGERPRINT_SHOWN = 12  # hex characters of a fingerprint in the log
RETRY_AFTER_S = 10  # a 503 while the identity provider cannot be reached


class Unauthenticated(CortexError):
    code = "unauthorized"
    status = 401


class CallerVerifier:
    """The MCP SDK's TokenVerifier over the token service: the principal is the token's id
    (or "admin", or the identity provider's issuer and subject), its scopes the caller's."""

    def __init__(self, tokens: Callable[[], TokenService]) -> None:
        self._tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        caller = await self._tokens().identify(token)
        return access_token_of(caller) if caller is not None else None


def access_token_of(caller: Caller) -> AccessToken:
    """The SDK's view of a resolved caller (the Caller itself kept in its claims)."""
    if caller.subject is not None:
        client = OAUTH_CLIENT
    else:
        client = caller.token_id if caller.is_agent and caller.token_id else ADMIN_CLIENT
    # the token itself is not kept on the request: nothing downstream needs it
    claims: dict[str, Any] = {"cortex_kind": caller.kind, CALLER_CLAIM: caller}
    if caller.issuer is not None:
        claims["iss"] = caller.issuer
    return AccessToken(
        token="",
        client_id=client,
        subject=caller.subject or caller.agent_id,
        scopes=sorted(caller.scopes),
        claims=claims,
    )


def proxy_caller(user: str) -> Caller | None:
    """The agent a trusted proxy's user header names (None: not a valid agent id)."""
    if agent_id_problem(user) is not None:
        log.info("refused the proxy's user header: %s", agent_id_problem(user))
        return None
    return Caller("agent", user, None, AGENT_SCOPES, user, PROXY_ISSUER)


def caller_from_token(access: AccessToken) -> Caller:
    caller = (access.claims or {}).get(CALLER_CLAIM)
    return caller if isinstance(caller, Caller) else ADMIN


class CallerBackend(BearerAuthBackend):
    """The SDK's bearer backend; an identity provider that cannot be reached marks the request
    (`Credentials` answers 503) instead of failing it with a traceback."""

    async def authenticate(self, conn: HTTPConnection) -> Any:
        try:
            found = await super().authenticate(conn)
        except IssuerUnavailable as exc:
            conn.scope[UNAVAILABLE_KEY] = exc.message
            return None
        user = conn.scope.get(PROXY_USER_KEY)
        if found is not None or user is None or "authorization" in conn.headers:
            return found
        caller = proxy_caller(str(user))
        if caller is None:
            return None
        return AuthCredentials(sorted(caller.scopes)), AuthenticatedUser(access_token_of(caller))


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

    def __init__(
        self,
        app: ASGIApp,
        *,
        required: bool,
        session: Session,
        resource: ProtectedResource | None = None,
    ) -> None:
        self.app = app
        self.required = required
        self.session = session
        self.resource = resource
        self.public = resource.public_paths() if resource is not None else frozenset()

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
            verified = caller_from_token(user.access_token)
            scope[CALLER_KEY] = verified
            if _is_mcp(path) and not verified.may(SCOPE):
                await self._insufficient(scope, send, SCOPE)
                return
        elif scope["method"] == "OPTIONS" or path in self.public:
            pass  # a CORS preflight carries no credentials; the resource metadata is public
        elif UNAVAILABLE_KEY in scope:
            await self._unavailable(scope, send)
            return
        elif _is_mcp(path):  # bearer tokens only: a 401 before any body check
            if self.resource is None:  # in OAuth's form, for MCP clients
                await _refuse_mcp(send)
            else:
                await self._unauthenticated(scope, send)
            return
        elif not (path in PUBLIC_PATHS or self.session.is_public(path)):
            caller = await self.session.caller(scope)
            if caller is None:
                await self._unauthenticated(scope, send)
                return
            scope[CALLER_KEY] = caller
        await self.app(scope, receive, send)

    async def _unauthenticated(self, scope: Scope, send: Send) -> None:
        presented = _bearer(scope) is not None
        kinds = "an access token of the identity provider, an agent token, or the admin token"
        message = TOKEN_EXPECTED if self.resource is None else _expected(kinds)
        if self.resource is None:
            challenge = 'Bearer realm="cortex"'
        else:
            error = "invalid_token" if presented else None
            challenge = self.resource.challenge(
                scope["path"], error=error, description="the token was not accepted"
            )
        await send_error(
            send, 401, "unauthorized", message, headers={"www-authenticate": challenge}
        )

    async def _insufficient(self, scope: Scope, send: Send, needed: str) -> None:
        await send_error(
            send,
            403,
            "insufficient_scope",
            f"this token lacks the {needed} scope",
            headers={"www-authenticate": insufficient_scope(self.resource, scope["path"], needed)},
        )

    async def _unavailable(self, scope: Scope, send: Send) -> None:
        await send_error(
            send,
            503,
            "issuer_unavailable",
            str(scope[UNAVAILABLE_KEY]),
            headers={"retry-after": str(RETRY_AFTER_S)},
        )


def _expected(kinds: str) -> str:
    return f"missing or wrong bearer token (send Authorization: Bearer <token>: {kinds})"


TOKEN_EXPECTED = _expected("the admin token CORTEX_API_TOKEN, or an agent token")


async def _refuse_mcp(send: Send) -> None:
    """401 on the MCP paths without an identity provider, in the form the MCP SDK gives an
    OAuth client (RFC 6750's `invalid_token`, in the body and in `WWW-Authenticate`), saying
    which token is expected as REST does (the SDK's own said only "Authentication required")."""
    body = json.dumps({"error": "invalid_token", "error_description": TOKEN_EXPECTED}).encode()
    challenge = (
        f'Bearer realm="cortex", error="invalid_token", error_description="{TOKEN_EXPECTED}"'
    )
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", challenge.encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def insufficient_scope(resource: ProtectedResource | None, path: str, needed: str) -> str:
    """The `WWW-Authenticate` of a 403 for a missing scope (RFC 6750 section 3.1)."""
    if resource is None:
        return f'Bearer error="insufficient_scope", scope="{needed}"'
    return resource.challenge(
        path, error="insufficient_scope", description=f"needs {needed}", scope=needed
    )


@dataclass(frozen=True)
class Refusal:
    """Why a credential gets 429, and for how long."""

    wait_s: int
    guessing: bool  # the address, not this credential, is over its count


class _Windows:
    """Refusal times per key within a sliding window, for at most `size` keys (the least
    recently refused are forgotten first: memory stays bounded whatever a flood sends)."""

    def __init__(self, limit: int, size: int) -> None:
        self.limit = limit
        self.size = size
        self._times: OrderedDict[str, deque[float]] = OrderedDict()

    def wait(self, key: str, now: float, window_s: float) -> int:
        """Seconds until `key` is under its limit again (0: it is now)."""
        times = self._times.get(key)
        if times is None:
            return 0
        while times and times[0] <= now - window_s:
            times.popleft()
        if not times:
            del self._times[key]
            return 0
        if len(times) < self.limit:
            return 0
        return max(1, math.ceil(times[0] + window_s - now))

    def add(self, key: str, now: float) -> int:
        """Count one refusal; how many `key` has in the window now."""
        times = self._times.pop(key, None)
        if times is None:
            times = deque(maxlen=self.limit)
        times.append(now)
        self._times[key] = times  # the most recent last
        while len(self._times) > self.size:
            self._times.popitem(last=False)
        return len(times)


class RefusedCredentials:
    """The throttle's memory: refusals by (address, fingerprint) and by address, and the
    fingerprints of credentials accepted lately (which guessing from their address does not
    stop). A fingerprint is an HMAC of the credential under a key made at start, so neither
    the tables nor the log hold anything a token could be read back from."""

    def __init__(
        self,
        failures: int = FAILURES,
        window_s: float = WINDOW_S,
        *,
        size: int = TABLE_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_s = window_s
        self._key = secrets.token_bytes(32)
        self._credentials = _Windows(failures, size)
        self._addresses = _Windows(failures * GUESSES_PER_FAILURE, size)
        self._accepted: OrderedDict[str, None] = OrderedDict()
        self._size = size
        self._clock = clock

    def fingerprint(self, credential: str) -> str:
        raw = credential.encode("utf-8", "surrogatepass")
        return hmac.new(self._key, raw, hashlib.sha256).hexdigest()

    def refusal(self, address: str, fingerprint: str) -> Refusal | None:
        """429 for this credential from this address, or None: serve it."""
        now = self._clock()
        wait = self._credentials.wait(f"{address} {fingerprint}", now, self.window_s)
        if wait > 0:
            return Refusal(wait, guessing=False)
        if fingerprint in self._accepted:
            return None
        wait = self._addresses.wait(address, now, self.window_s)
        return Refusal(wait, guessing=True) if wait > 0 else None

    def refuse(self, address: str, fingerprint: str) -> None:
        now = self._clock()
        shown = fingerprint[:FINGERPRINT_SHOWN]
        count = self._credentials.add(f"{address} {fingerprint}", now)
        if count == self._credentials.limit:
            log.warning(
                "credential %s from %s was refused %d times within %.0f s: it gets 429 until"
                " that many are older (other credentials from %s are served as before)",
                shown,
                address,
                count,
                self.window_s,
                address,
            )
        count = self._addresses.add(address, now)
        if count == self._addresses.limit:
            log.warning(
                "%s had %d credentials refused within %.0f s (the last %s): credentials not"
                " accepted lately get 429 from it until fewer are that recent",
                address,
                count,
                self.window_s,
                shown,
            )

    def accept(self, fingerprint: str) -> None:
        self._accepted.pop(fingerprint, None)
        self._accepted[fingerprint] = None
        while len(self._accepted) > self._size:
            self._accepted.popitem(last=False)


async def send_refusal(send: Send, refusal: Refusal) -> None:
    reason = (
        "too many different credentials were refused from this address"
        if refusal.guessing
        else "this credential was refused too often from this address (check the token)"
    )
    await send_error(
        send,
        429,
        "too_many_failures",
        f"{reason}; try again in {refusal.wait_s} s",
        headers={"retry-after": str(refusal.wait_s)},
    )


def client_address(scope: Scope) -> str:
    return str((scope.get("client") or ("?", 0))[0])


class Throttle:
    """429 for a refused credential (see the module's docstring), checked before the
    credential is: a stale token sent in a loop costs no more checks once it is throttled.

    A refusal counts when the request presented a bearer token and got 401; a request with
    none (a page asking whether it must sign in) does not, nor does `/health` or a path in
    `skip` (the dashboard's sign-in counts its own, the token being in its body). A credential
    the server accepts is never counted, so it never gets 429 for its own sake. Behind a
    reverse proxy every client has the proxy's address."""

    def __init__(
        self, app: ASGIApp, *, ledger: RefusedCredentials, skip: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.ledger = ledger
        self.skip = PUBLIC_PATHS | skip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        credential = _bearer(scope) if scope["type"] == "http" else None
        if credential is None or scope["path"] in self.skip:
            await self.app(scope, receive, send)
            return
        address = client_address(scope)
        fingerprint = self.ledger.fingerprint(credential)
        refusal = self.ledger.refusal(address, fingerprint)
        if refusal is not None:
            await send_refusal(send, refusal)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                if message["status"] == 401:
                    self.ledger.refuse(address, fingerprint)
                elif isinstance(scope.get("user"), AuthenticatedUser):
                    self.ledger.accept(fingerprint)
            await send(message)

        await self.app(scope, receive, watch)


def _bearer(scope: Scope) -> str | None:
    """What the request presents as its credential: its Authorization header, whole."""
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            return str(value.decode("latin-1"))
    return None


STREAM_CHECK_S = 1.0  # how often a stream's token is checked again (the token cache's second)


class RevokedStreams:
    """A response on an MCP path (an SSE stream, a Streamable HTTP GET stream, a streamed
    reply) made with an agent token lasts only as long as the token: it is checked again every
    STREAM_CHECK_S through the token service (whose cache sees a revoke on any server within
    CACHE_SECONDS), and once it no longer identifies its agent (revoked, expired) the
    response is ended and the request's handler cancelled. A stream accepts nothing more from
    a revoked token anyway; this closes what it would still send."""

    def __init__(
        self, app: ASGIApp, *, tokens: Callable[[], TokenService], every_s: float = STREAM_CHECK_S
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.every_s = every_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = scope.get(CALLER_KEY)
        token = _bearer_token(scope) if scope["type"] == "http" else None
        if token is None or not _is_mcp(scope["path"]) or not isinstance(caller, Caller):
            await self.app(scope, receive, send)
            return
        if not caller.is_agent:  # the admin token changes only with a restart
            await self.app(scope, receive, send)
            return
        await self._while_valid(token, caller, scope, receive, send)

    async def _while_valid(
        self, token: str, caller: Caller, scope: Scope, receive: Receive, send: Send
    ) -> None:
        started = ended = revoked = False

        async def tracked(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                ended = True
            await send(message)

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal revoked
                while True:
                    await anyio.sleep(self.every_s)
                    if not await self._still_valid(token):
                        break
                revoked = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await self.app(scope, receive, tracked)
            group.cancel_scope.cancel()
        if not revoked:
            return
        log.info("ended a stream of token %s: the token was revoked or expired", caller.token_id)
        if started and not ended:
            with anyio.move_on_after(self.every_s):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        elif not started:
            await send_error(send, 401, "unauthorized", "the token was revoked or has expired")

    async def _still_valid(self, token: str) -> bool:
        return await self.tokens().identify(token) is not None


def _bearer_token(scope: Scope) -> str | None:
    header = _bearer(scope)
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
