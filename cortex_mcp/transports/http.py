"""One Starlette app for remote clients: MCP over SSE (`/sse` + `/messages/`), MCP over
Streamable HTTP (`/mcp`) and the REST API (`/api/v1`), over one service opened in the app's
lifespan (the SSE transport would otherwise open one per connection).

Guards, outermost first: no framing by other pages (every response), a deadline for request
bodies (transports/timeouts.py, which also bounds request heads), CORS (when origins are
configured), Host and exact Origin checks (DNS
rebinding, other pages), the throttle of refused credentials, the caller (the MCP SDK's bearer
token check, else the dashboard's session: transports/callers.py), body limit, JSON bodies
only (415). MCP sessions are shared fairly between callers (transports/sessions.py). uvicorn drains in-flight requests on SIGTERM before the lifespan
closes the service, which waits for its background writes: an acknowledged write is never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from cortex_mcp import __version__
from cortex_mcp.config import Settings
from cortex_mcp.errors import ConfigError
from cortex_mcp.logs import configure_logging
from cortex_mcp.service import CortexService
from cortex_mcp.transports.callers import (
    SCOPE,
    CallerBackend,
    CallerVerifier,
    Credentials,
    RefusedCredentials,
    RevokedStreams,
    Throttle,
)
from cortex_mcp.transports.dashboard import (
    SIGN_IN,
    DashboardSession,
    ProviderClient,
    dashboard_routes,
)
from cortex_mcp.transports.endpoints import error_response, route_for
from cortex_mcp.transports.framing import NoFraming
from cortex_mcp.transports.guards import (
    LOOPBACK_HOSTS,
    BodyLimit,
    HostGuard,
    JsonBodies,
    JsonRpcBodies,
    is_loopback,
)
from cortex_mcp.transports.mcp import build_server
from cortex_mcp.transports.proxies import ForwardedScheme
from cortex_mcp.transports.resource import protected_resource
from cortex_mcp.transports.rest import ENDPOINTS
from cortex_mcp.transports.sessions import SseStreams, streamable_http_routes
from cortex_mcp.transports.timeouts import (
    BODY_TIMEOUT_S,
    HEAD_TIMEOUT_S,
    BodyDeadline,
    bounded_h11,
)

log = logging.getLogger(__name__)

Transport = Literal["sse", "http", "all"]
ServiceFactory = Callable[[], AbstractAsyncContextManager[CortexService]]
CORE_URI = "cortex://core"
MCP_POST_PATHS = ("/mcp", "/messages/")
WATCH_INTERVAL_S = 1.0


def check_bind(settings: Settings, host: str) -> None:
    """A server reachable from other machines must have a token."""
    if not is_loopback(host) and settings.api_token is None and settings.oauth_issuer is None:
        raise ConfigError(
            f"refusing to listen on {host} without CORTEX_API_TOKEN: anyone on the network"
            " could read and change the memories. Set CORTEX_API_TOKEN, or bind 127.0.0.1.",
            field="CORTEX_API_TOKEN",
        )


def allowed_hosts(settings: Settings, host: str) -> list[str] | None:
    """Host header values to accept; None turns the check off (a public bind with no list:
    the token is the protection there)."""
    extra = list(settings.allowed_hosts)
    if is_loopback(host):
        return [*LOOPBACK_HOSTS, *extra]
    return extra or None


def create_app(
    settings: Settings,
    open_service: ServiceFactory,
    *,
    transport: Transport = "all",
    host: str = "127.0.0.1",
    setup_notes: Sequence[str] = (),
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> Starlette:
    """A new app (and MCP session manager) per call: a session manager runs once only.
    `setup_notes` (no embedding provider, say) go once into the MCP server's instructions."""
    check_bind(settings, host)
    holder: dict[str, CortexService] = {}

    @contextlib.asynccontextmanager
    async def current_service() -> AsyncIterator[CortexService]:
        yield holder["service"]

    bus = InMemorySubscriptionBus()
    # else a loopback server, open to every agent
    required = (
        settings.api_token is not None
        or settings.oauth_issuer is not None
        or settings.proxy_user_header is not None
    )
    resource = protected_resource(settings)
    verifier = CallerVerifier(lambda: holder["service"].tokens) if required else None
    mcp = build_server(
        current_service,
        settings,
        subscriptions=bus,
        setup_notes=setup_notes,
        token_verifier=verifier,
    )
    hosts = allowed_hosts(settings, host)
    # HostGuard checks Host and Origin for every route, MCP ones included
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    routes: list[BaseRoute] = [route_for(ep) for ep in ENDPOINTS]
    if resource is not None:
        routes += resource.routes()
    manager = None
    if transport in ("sse", "all"):
        sse = mcp.sse_app(
            transport_security=security, max_request_body_size=settings.max_body_bytes
        )
        routes += sse.routes
    if transport in ("http", "all"):
        streamable, manager = streamable_http_routes(
            mcp,
            security,
            auth_scopes=[SCOPE] if required else None,
            max_body_bytes=settings.max_body_bytes,
            per_caller=settings.mcp_sessions_per_caller,
            total=settings.mcp_sessions_total,
            idle_s=settings.mcp_session_idle_s,
        )
        routes += streamable

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_service() as service:
            app.state.service = holder["service"] = service
            service.start_warm_up()  # no handshake to protect here: load providers now
            if await service.tokens.unenforced():
                log.warning(
                    "agent tokens exist but CORTEX_API_TOKEN is not set: this server checks no"
                    " token and every caller may act for any agent; set CORTEX_API_TOKEN"
                )
            watcher = asyncio.create_task(_watch_core(service, bus))
            try:
                if manager is not None:
                    async with manager.run():
                        yield
                else:
                    yield
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
                log.info("HTTP server stopping: waiting for background writes")

    refused = RefusedCredentials(settings.auth_failures_per_minute)
    provider = None
    if settings.oauth_client_id and settings.public_url and settings.oauth_issuer:
        provider = ProviderClient(settings.oauth_client_id, settings.public_url)
    session = DashboardSession(required, lambda: holder["service"].tokens, refused, provider)
    routes += dashboard_routes(session)  # the dashboard at / (transports/dashboard.py)
    middleware = [
        Middleware(
            ForwardedScheme,
            proxies=settings.trusted_proxies,
            user_header=settings.proxy_user_header,
        ),
        Middleware(HostGuard, allowed_hosts=hosts, cors_origins=settings.cors_origins),
        Middleware(Throttle, ledger=refused, skip=frozenset({SIGN_IN})),
        *_sdk_authentication(verifier),
        Middleware(Credentials, required=required, session=session, resource=resource),
        Middleware(RevokedStreams, tokens=lambda: holder["service"].tokens),
        *_sse_bounds(settings, transport),
        Middleware(BodyLimit, limit=settings.max_body_bytes),
        Middleware(JsonBodies),
        Middleware(JsonRpcBodies, paths=MCP_POST_PATHS),
    ]
    if settings.cors_origins:
        middleware.insert(
            0,
            Middleware(
                CORSMiddleware,
                allow_origins=settings.cors_origins,
                allow_methods=["GET", "POST", "PATCH", "DELETE"],
                allow_headers=["authorization", "content-type", "x-cortex-agent", "mcp-session-id"],
                expose_headers=["mcp-session-id"],
            ),
        )
    middleware.insert(0, Middleware(BodyDeadline, seconds=body_timeout_s))
    middleware.insert(0, Middleware(NoFraming))  # outermost: refusals are covered too
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.resource = resource  # route_for's insufficient-scope challenge points at it
    return app


def _sse_bounds(settings: Settings, transport: Transport) -> list[Middleware]:
    """The SSE transport's streams bounded like Streamable HTTP's sessions."""
    if transport not in ("sse", "all"):
        return []
    per_caller, total = settings.mcp_sessions_per_caller, settings.mcp_sessions_total
    return [Middleware(SseStreams, path="/sse", per_caller=per_caller, total=total)]


def _sdk_authentication(verifier: CallerVerifier | None) -> list[Middleware]:
    """The MCP SDK's own middleware, on every route: a bearer token verified once per request
    (`scope["user"]`, and the SDK's access-token context the MCP handlers read)."""
    if verifier is None:
        return []
    return [
        Middleware(AuthenticationMiddleware, backend=CallerBackend(verifier)),
        Middleware(AuthContextMiddleware),
    ]


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    response = error_response(exc.status_code, codes.get(exc.status_code, "http_error"), exc.detail)
    if exc.status_code == 405:
        response.headers["Allow"] = ", ".join(_allowed_methods(request))
    return response


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path (one path is often several
    routes: GET and POST /memories), as a 405's `Allow` lists them (RFC 9110)."""
    path = request.scope.get("path", "")
    methods: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.methods and route.path_regex.fullmatch(path):
            methods |= route.methods
    return sorted(methods)


async def _watch_core(service: CortexService, bus: InMemorySubscriptionBus) -> None:
    """Publish `cortex://core` updated whenever core memory changes, whoever changed it
    (this server, or a stdio server on the same file). Polls a counter that costs no table
    read, and looks at core only when something was committed."""
    last_counter: Any = None
    last_core: Any = None
    while True:
        try:
            counter = await service.status.change_counter()
            if counter != last_counter:
                last_counter = counter
                core = await service.status.core_version()
                if last_core is not None and core != last_core:
                    await bus.publish(ResourceUpdated(uri=CORE_URI))
                last_core = core
        except Exception:  # the watcher must never take the server down; say why once
            log.exception("core-memory watcher failed; resource notifications paused")
            return
        await asyncio.sleep(WATCH_INTERVAL_S)


def server_config(
    app: Starlette, host: str, port: int, *, head_timeout_s: float = HEAD_TIMEOUT_S
) -> Any:
    """uvicorn's settings for the app: our logging, h11 with a deadline for request heads."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=bounded_h11(head_timeout_s),
        log_config=None,  # our logging (stderr) stays in charge
        access_log=False,
        timeout_graceful_shutdown=10,
        proxy_headers=False,
    )


def run_http(
    settings: Settings,
    open_service: ServiceFactory,
    *,
    transport: Transport = "all",
    host: str | None = None,
    port: int | None = None,
    setup_notes: Sequence[str] = (),
) -> None:
    import uvicorn

    bind_host = host or settings.host
    bind_port = port or settings.port
    app = create_app(
        settings, open_service, transport=transport, host=bind_host, setup_notes=setup_notes
    )
    configure_logging(settings)  # MCPServer() may install its own root handler; keep ours
    config = server_config(app, bind_host, bind_port)
    paths = {"sse": "/sse", "http": "/mcp", "all": "/mcp and /sse"}[transport]
    origin = f"http://{f'[{bind_host}]' if ':' in bind_host else bind_host}:{bind_port}"
    log.info(
        "cortex-mcp %s serving %s and /api/v1 on %s (token %s); dashboard: %s/",
        __version__,
        paths,
        origin,
        "required" if settings.api_token else "off",
        origin,
    )
    uvicorn.Server(config).run()
