"""The dashboard: its page and static files (from the wheel, no network), and its session.

With CORTEX_API_TOKEN set, the page asks for the token once and `POST /ui/session` answers a
session cookie: HttpOnly (scripts cannot read it), SameSite=Strict (another site's page does not
send it), signed with the token (a new token ends every session) and valid for 12 hours.

The cookie alone authorises nothing. A request it authorises must also carry the header
`X-Cortex-Dashboard: 1`, which a page of another origin cannot add without a CORS preflight
that this server refuses, and its Origin (or Sec-Fetch-Site) must say it came from this origin:
so another page on the same host (same site, other port), which the browser would send the
cookie from, gets 401 like a request without it. Without a token (loopback only) everything
is open, as for the REST API."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from http.cookies import CookieError, SimpleCookie
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

STATIC = Path(__file__).resolve().parent.parent / "dashboard" / "static"
COOKIE = "cortex_session"
CSRF_HEADER = "x-cortex-dashboard"
SESSION_SECONDS = 12 * 3600
ASSETS = "/ui"
PUBLIC_PREFIXES = (ASSETS + "/",)
PUBLIC = frozenset({"/", ASSETS + "/session"})

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
    """Signs and checks session cookies with the API token; decides which paths are public."""

    def __init__(self, token: str | None) -> None:
        self._key = _derive(token) if token else None
        self._time = time.time

    @property
    def enabled(self) -> bool:
        return self._key is not None

    def is_public(self, path: str) -> bool:
        return path in PUBLIC or path.startswith(PUBLIC_PREFIXES)

    def token_matches(self, token: str) -> bool:
        return self._key is not None and hmac.compare_digest(_derive(token), self._key)

    def issue(self) -> str:
        issued = str(int(self._time()))
        return f"v1.{issued}.{self._sign(issued)}"

    def valid(self, value: str) -> bool:
        version, _, rest = value.partition(".")
        issued, _, signature = rest.partition(".")
        if version != "v1" or self._key is None or not value.isascii() or not issued.isdigit():
            return False  # (compare_digest refuses non-ASCII text; "²".isdigit() is true)
        if not hmac.compare_digest(signature, self._sign(issued)):
            return False
        return 0 <= self._time() - int(issued) <= SESSION_SECONDS

    def accepts(self, scope: Scope) -> bool:
        """A request authorised by the session cookie: valid cookie, the dashboard's header,
        and sent by a page of this very origin."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if headers.get(CSRF_HEADER) != "1" or not _same_origin(headers, scope):
            return False
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except CookieError:  # a malformed Cookie header is simply no session
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and self.valid(morsel.value)

    def _sign(self, issued: str) -> str:
        assert self._key is not None
        return hmac.new(self._key, issued.encode(), hashlib.sha256).hexdigest()


def _derive(token: str) -> bytes:
    return hashlib.sha256(b"cortex-dashboard-session:" + token.encode()).digest()


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
        response = JSONResponse({"session": "ended"})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def state(request: Request) -> Response:
        """Whether the page must ask for the token (no data: public)."""
        signed_in = not session.enabled or session.accepts(request.scope)
        return JSONResponse({"token_required": session.enabled, "signed_in": signed_in})

    return [
        Route("/", index, methods=["GET"]),
        Route(ASSETS + "/session", login, methods=["POST"]),
        Route(ASSETS + "/session", logout, methods=["DELETE"]),
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
    if not session.token_matches(token):
        return _error(401, "unauthorized", "wrong token (the server's CORTEX_API_TOKEN)")
    response = JSONResponse({"session": "started", "expires_in": SESSION_SECONDS})
    response.set_cookie(
        COOKIE,
        session.issue(),
        max_age=SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _error(status: int, code: str, message: str, field: str | None = None) -> Response:
    error: dict[str, str] = {"code": code, "message": message}
    if field:
        error["field"] = field
    return JSONResponse({"error": error}, status_code=status)
