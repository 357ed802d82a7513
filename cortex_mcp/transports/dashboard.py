"""The dashboard: its page and static files (from the wheel, no network), and its session.

With CORTEX_API_TOKEN set, the page asks for a token once (the admin token, or an agent token:
then the dashboard shows that agent only) and `POST /ui/session` answers a session cookie:
HttpOnly (scripts cannot read it), SameSite=Strict (another site's page does not send it), kept
in the database as a salted hash (service/tokens.py), and valid for 12 hours until sign-out
(`DELETE /ui/session`) ends it on every server, as does revoking its token or a new admin
token. The cookie opens the dashboard's REST routes only: never `/mcp` or `/sse`.

The cookie alone authorises nothing. A request it authorises must also carry the header
`X-Cortex-Dashboard: 1`, which a page of another origin cannot add without a CORS preflight
that this server refuses, and its Origin (or Sec-Fetch-Site) must say it came from this origin:
so another page on the same host (same site, other port), which the browser would send the
cookie from, gets 401 like a request without it. Without a token (loopback only) everything
is open, as for the REST API."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.cookies import CookieError, SimpleCookie
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from cortex_mcp.errors import CortexError
from cortex_mcp.models import Caller
from cortex_mcp.service.identity import AccessTokens
from cortex_mcp.service.tokens import SESSION_HOURS, TokenService
from cortex_mcp.transports.callers import RefusedCredentials, client_address

STATIC = Path(__file__).resolve().parent.parent / "dashboard" / "static"
COOKIE = "cortex_session"
CSRF_HEADER = "x-cortex-dashboard"
SESSION_SECONDS = SESSION_HOURS * 3600
ASSETS = "/ui"
SIGN_IN = ASSETS + "/session"
OAUTH_START = ASSETS + "/oauth/start"  # the dashboard's sign-in with the identity provider
OAUTH_CALLBACK = ASSETS + "/oauth/callback"
PENDING_COOKIE = "cortex_oauth"  # the sign-in's state and PKCE verifier, until it returns
PENDING_SECONDS = 600
PUBLIC_PREFIXES = (ASSETS + "/",)
PUBLIC = frozenset({"/", SIGN_IN})

# scripts and styles from this origin only; no inline script; nothing may frame the page
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'"
    " data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class _Assets(StaticFiles):
    """The dashboard's files, each with the page's security headers (`/ui/index.html` is the
    page itself)."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(SECURITY_HEADERS)
        return response


class DashboardSession:
    """The dashboard's sign-in: a session kept in the database (service/tokens.py), standing
    for the token it was opened with (the admin's or an agent's); decides which paths are
    public. `tokens` gives the running server's token service."""

    def __init__(
        self,
        required: bool,
        tokens: Callable[[], TokenService],
        refused: RefusedCredentials | None = None,
        provider: ProviderClient | None = None,
    ) -> None:
        self.enabled = required
        self.provider = provider  # sign-in with the identity provider, when configured
        self._tokens = tokens
        self.refused = refused or RefusedCredentials()  # the sign-in's throttle

    def is_public(self, path: str) -> bool:
        return path in PUBLIC or path.startswith(PUBLIC_PREFIXES)

    async def caller(self, scope: Scope) -> Caller | None:
        """The caller of a request the session cookie authorises: a live session, the
        dashboard's header, and sent by a page of this very origin."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if headers.get(CSRF_HEADER) != "1" or not _same_origin(headers, scope):
            return None
        cookie = _cookie(headers)
        return await self._tokens().session(cookie) if cookie else None

    async def start(self, token: str) -> str | None:
        """A new session's cookie for a right token (admin or agent), else None."""
        tokens = self._tokens()
        try:
            caller = await tokens.identify(token)
        except CortexError:  # the identity provider is unreachable: not signed in
            return None
        if caller is None or caller.subject is not None:  # sessions stand for our own tokens
            return None
        return await tokens.open_session(caller)

    def tokens(self) -> TokenService:
        return self._tokens()

    def access_tokens(self) -> AccessTokens | None:
        return self._tokens().access_tokens

    async def end(self, scope: Scope) -> None:
        """Sign-out: the session ends here and on every server sharing the database."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        cookie = _cookie(headers)
        if cookie:
            await self._tokens().end_session(cookie)


def _cookie(headers: dict[str, str]) -> str | None:
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except CookieError:  # a malformed Cookie header is simply no session
        return None
    morsel = cookie.get(COOKIE)
    return morsel.value if morsel is not None and morsel.value.isascii() else None


def _same_origin(headers: dict[str, str], scope: Scope) -> bool:
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site != "same-origin":
        return False
    origin = headers.get("origin")
    if origin is None:
        return True  # same-origin GETs carry no Origin; Sec-Fetch-Site spoke above
    scheme = scope.get("scheme", "http")
    return origin == f"{scheme}://{headers.get('host', '')}"


def dashboard_routes(session: DashboardSession) -> list[BaseRoute]:
    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=SECURITY_HEADERS)

    async def login(request: Request) -> Response:
        return await _login(request, session)

    async def logout(request: Request) -> Response:
        if session.enabled:
            await session.end(request.scope)
        response = JSONResponse({"session": "ended"})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def state(request: Request) -> Response:
        """Whether the page must ask for the token (no data: public)."""
        signed_in = not session.enabled or await session.caller(request.scope) is not None
        return JSONResponse(
            {
                "token_required": session.enabled,
                "signed_in": signed_in,
                "provider": session.provider is not None,
            }
        )

    async def provider_start(request: Request) -> Response:
        return await _provider_start(request, session)

    async def provider_callback(request: Request) -> Response:
        return await _provider_callback(request, session)

    return [
        Route(OAUTH_START, provider_start, methods=["GET"]),
        Route(OAUTH_CALLBACK, provider_callback, methods=["GET"]),
        Route("/", index, methods=["GET"]),
        Route(SIGN_IN, login, methods=["POST"]),
        Route(SIGN_IN, logout, methods=["DELETE"]),
        Route(ASSETS + "/auth", state, methods=["GET"]),
        Mount(ASSETS, app=_Assets(directory=STATIC), name="dashboard"),
    ]


async def _login(request: Request, session: DashboardSession) -> Response:
    if not _same_origin(dict(request.headers.items()), request.scope):
        return _error(403, "origin_not_allowed", "sign in from the dashboard page itself")
    if not session.enabled:
        return JSONResponse({"session": "not needed: this server has no token"})
    try:
        body = json.loads(await request.body() or b"{}")
        token = body["token"] if isinstance(body, dict) else None
    except (ValueError, KeyError):
        token = None
    if not isinstance(token, str) or not token:
        return _error(422, "invalid_input", 'token: send {"token": "..."}', "token")
    address, fingerprint = client_address(request.scope), session.refused.fingerprint(token)
    refusal = session.refused.refusal(address, fingerprint)
    if refusal is not None:
        return _error(
            429,
            "too_many_failures",
            f"too many refused tokens from this address; try again in {refusal.wait_s} s",
            headers={"retry-after": str(refusal.wait_s)},
        )
    cookie = await session.start(token)
    if cookie is None:
        session.refused.refuse(address, fingerprint)
        return _error(401, "unauthorized", "wrong token (CORTEX_API_TOKEN, or an agent token)")
    session.refused.accept(fingerprint)
    response = JSONResponse({"session": "started", "expires_in": SESSION_SECONDS})
    _keep_session(response, request, cookie, SESSION_SECONDS)
    return response


def _keep_session(response: Response, request: Request, cookie: str, seconds: int) -> None:
    """The session cookie: this origin's pages only, never read by scripts, sent over https only
    when the page came over https (directly or through a trusted proxy)."""
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=seconds,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


@dataclass(frozen=True)
class ProviderClient:
    """The dashboard as a client of the identity provider (CORTEX_OAUTH_CLIENT_ID): a public
    client using the authorization code with PKCE, its redirect URI this server's callback."""

    client_id: str
    public_url: str

    @property
    def redirect_uri(self) -> str:
        return self.public_url + OAUTH_CALLBACK


async def _provider_start(request: Request, session: DashboardSession) -> Response:
    """Off to the provider's sign-in, with a fresh state and PKCE verifier kept in a short-lived
    cookie of this browser (SameSite=Lax: the provider's redirect back is a top-level GET)."""
    provider, access = session.provider, session.access_tokens()
    if provider is None or access is None:
        return _error(404, "not_found", "this server signs in with its API token only")
    state, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
    challenge = _b64(hashlib.sha256(verifier.encode()).digest())
    try:
        url = await access.authorization_url(
            {
                "response_type": "code",
                "client_id": provider.client_id,
                "redirect_uri": provider.redirect_uri,
                "scope": "openid memories:read memories:write",
                "state": state,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": provider.public_url,
            }
        )
    except CortexError as exc:
        return _error(503, "issuer_unavailable", exc.message)
    response = RedirectResponse(url, status_code=302)
    response.set_cookie(
        PENDING_COOKIE,
        f"{state}.{verifier}",
        max_age=PENDING_SECONDS,
        path=OAUTH_CALLBACK,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


async def _provider_callback(request: Request, session: DashboardSession) -> Response:
    """Back from the provider: the state must be this browser's, the code is redeemed (with the
    verifier) for an access token checked like any other, and a session opened for its user."""
    provider, access = session.provider, session.access_tokens()
    if provider is None or access is None:
        return _error(404, "not_found", "this server signs in with its API token only")
    pending = request.cookies.get(PENDING_COOKIE, "")
    state, _, verifier = pending.partition(".")
    given = request.query_params.get("state", "")
    code = request.query_params.get("code")
    if not state or not code or not hmac.compare_digest(state.encode(), given.encode()):
        return _error(400, "invalid_request", "sign-in: start again from the dashboard page")
    try:
        caller, expires = await access.redeem(
            {
                "code": code,
                "code_verifier": verifier,
                "client_id": provider.client_id,
                "redirect_uri": provider.redirect_uri,
                "resource": provider.public_url,
            }
        )
    except CortexError as exc:
        return _error(503, "issuer_unavailable", exc.message)
    if caller is None:
        return _error(401, "unauthorized", "the identity provider's sign-in was not accepted")
    until = datetime.fromtimestamp(expires, UTC)
    cookie = await session.tokens().open_session(caller, until=until)
    response = RedirectResponse("/", status_code=302)
    response.delete_cookie(PENDING_COOKIE, path=OAUTH_CALLBACK)
    # the browser forgets the cookie when the provider's token (and so the session) ends
    lifetime = int(expires - datetime.now(UTC).timestamp())
    _keep_session(response, request, cookie, max(0, min(SESSION_SECONDS, lifetime)))
    return response


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _error(
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    error: dict[str, str] = {"code": code, "message": message}
    if field:
        error["field"] = field
    return JSONResponse({"error": error}, status_code=status, headers=headers)
