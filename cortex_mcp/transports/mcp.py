"""MCP tools, resources and prompts over the services. Errors are translated here, once."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

import anyio
from mcp import MCPError
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver import server as sdk_server
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.subscriptions import SubscriptionBus
from mcp.types import INVALID_PARAMS, CallToolResult
from pydantic import AnyHttpUrl, Field

from cortex_mcp import __version__
from cortex_mcp.config import Settings
from cortex_mcp.engine.validate import preview
from cortex_mcp.errors import CortexError
from cortex_mcp.models import LOCAL, READ_SCOPE, WRITE_SCOPE, Caller
from cortex_mcp.service.requests import AgentRequest, EntityListRequest, EntityRequest, build
from cortex_mcp.transports.agent_header import AGENT_HEADER, header_agent
from cortex_mcp.transports.arguments import input_schema, parse_arguments
from cortex_mcp.transports.callers import SCOPE, Unauthenticated, caller_from_token
from cortex_mcp.transports.mcp_prompts import known_prompts_only, prompt_templates
from cortex_mcp.transports.tools import ToolSpec, tool_error, tool_specs

if TYPE_CHECKING:  # the service (every engine) is imported when it is opened
    from cortex_mcp.service import CortexService

ServiceFactory = Callable[[], AbstractAsyncContextManager["CortexService"]]

INSTRUCTIONS = """Long-term memory. Call cortex_recall before answering anything that may depend on
what you were told earlier (preferences, decisions, people, projects). Call cortex_remember for
durable facts worth keeping (one fact per call). Use cortex_forget to retract or correct a memory."""


class _Runtime:
    """The service as the handlers reach it: open before the server reads its first message,
    or (`open_after_initialize`) opened while the first ones are answered, each handler that
    needs it waiting until it is."""

    def __init__(self, auth_required: bool) -> None:
        self.auth_required = auth_required
        self._service: CortexService | None = None
        self._ready = anyio.Event()
        self.wanted = anyio.Event()  # set when a message needs the service, or has been answered

    def opened(self, service: CortexService) -> None:
        self._service = service
        self._ready.set()

    async def service(self) -> CortexService:
        self.wanted.set()
        await self._ready.wait()
        assert self._service is not None
        return self._service

    @property
    def service_if_open(self) -> CortexService | None:
        return self._service


class CortexTool(Tool):
    """A tool whose arguments are checked by its own declaration (see arguments.py) instead of
    the SDK's pydantic model, which drops unknown names and reads "yes" as true."""

    spec: Any = Field(exclude=True)

    @classmethod
    def from_spec(cls, spec: ToolSpec) -> CortexTool:
        return cls(
            fn=spec.handler,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            parameters=input_schema(spec.params),
            # A published output schema with no model: the SDK advertises it and validates
            # nothing again on the server (the models built the result).
            fn_metadata=FuncMetadata(arg_model=ArgModelBase, output_schema=spec.output_schema),
            is_async=True,
            context_kwarg=None,
            annotations=spec.annotations,
            spec=spec,
        )

    async def run(
        self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False
    ) -> CallToolResult:
        try:
            service = await _service_of(context)
            needed = READ_SCOPE if self.spec.annotations.read_only_hint else WRITE_SCOPE
            if not service.caller.may(needed):
                return tool_error(
                    f"{self.name}: this token does not hold the {needed} scope this tool needs;"
                    " nothing was changed"
                )
            values = parse_arguments(self.spec.params, arguments)
            if "agent_id" in values and values["agent_id"] is None:
                values["agent_id"] = _header_agent(context)
            request = build(self.spec.request, **values)
            return await self.spec.handler(service, request)
        except CortexError as exc:
            # Returned, not raised: the SDK would log the message, which may quote user text.
            return tool_error(f"{self.name}: {exc.message}")
        except MCPError:
            raise
        except Exception as exc:
            # A crash: the SDK logs the traceback and the client sees only the generic line,
            # as for the SDK's own tools (its text could carry internals or user data).
            raise UnexpectedToolError(f"Error executing tool {self.name}") from exc


async def _service_of(ctx: Context) -> CortexService:
    runtime = cast(_Runtime, ctx.request_context.lifespan_context)
    service = await runtime.service()
    return service.acting_for(_caller(runtime.auth_required))


def _caller(auth_required: bool) -> Caller:
    """Who is asking: the token the SDK's auth middleware verified for this request (MCP over
    HTTP with CORTEX_API_TOKEN set), else the local user (stdio, a tokenless server)."""
    access = get_access_token()
    if access is not None:
        return caller_from_token(access)
    if auth_required:  # the SDK refuses such a request first; never take it for the admin
        raise Unauthenticated("this server needs a bearer token")
    return LOCAL


async def _warm_up_once_answered(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Middleware: provider SDK imports and model loads start with the first message after
    `initialize` (never before `initialize` is answered), so no timed call pays for them."""
    result = await call_next(ctx)
    runtime = ctx.lifespan_context
    if isinstance(runtime, _Runtime):
        runtime.wanted.set()  # a service opened after `initialize` may open now
        service = runtime.service_if_open
        if ctx.method != "initialize" and service is not None:
            service.start_warm_up()
    return result


def _header_agent(ctx: Context) -> str | None:
    """An HTTP client may name its agent once, in the X-Cortex-Agent header."""
    headers = ctx.headers
    if headers is None:
        return None
    runtime = cast(_Runtime, ctx.request_context.lifespan_context)
    return header_agent(headers.get(AGENT_HEADER), _caller(runtime.auth_required))


# The agent of the request being handled, for the static resources (cortex://core, ...),
# which the SDK calls without a Context. None: the server's own agent (stdio, in-process).
_request_agent: ContextVar[str | None] = ContextVar("cortex_request_agent", default=None)


async def _agent_of_request(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Middleware: remember the request's X-Cortex-Agent for the handlers it runs."""
    headers = getattr(ctx.request, "headers", None)
    token = _request_agent.set(headers.get(AGENT_HEADER) if headers is not None else None)
    try:
        return await call_next(ctx)
    finally:
        _request_agent.reset(token)


MAX_NAME_CHARS = 128  # tool and prompt names (the MCP tool-name rule's limit)
MAX_URI_CHARS = 512  # resource URIs: cortex://memories/{id} needs about 60


async def _bounded_names(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Middleware: an oversized tool name, prompt name or resource URI is refused before the SDK
    echoes it whole in its error (and its log line)."""
    params = ctx.params or {}
    if ctx.method in ("tools/call", "prompts/get"):
        name = params.get("name")
        if isinstance(name, str) and len(name) > MAX_NAME_CHARS:
            message = f"name: {preview(name)} is not a known {ctx.method.split('/')[0][:-1]}"
            if ctx.method == "tools/call":
                return tool_error(message)
            raise MCPError(INVALID_PARAMS, message)
    if ctx.method == "resources/read":
        uri = params.get("uri")
        if isinstance(uri, str) and len(uri) > MAX_URI_CHARS:
            raise MCPError(INVALID_PARAMS, f"uri: {preview(uri)} is not a known resource")
    return await call_next(ctx)


@contextmanager
def _logging_as_configured() -> Iterator[None]:
    """While MCPServer() is built, its logging set-up is skipped when the root logger already
    has a handler (the entry points configure logging first): there it changes nothing
    (logging.basicConfig leaves a configured root alone), yet it imports rich to build a
    handler that is thrown away, ~15 ms of a stdio server's start before `initialize`."""
    sdk_configure = getattr(sdk_server, "configure_logging", None)
    if sdk_configure is None or not logging.getLogger().handlers:
        yield
        return
    sdk_server.configure_logging = _configured  # type: ignore[assignment]
    try:
        yield
    finally:
        sdk_server.configure_logging = sdk_configure


def _configured(level: str = "INFO") -> None:
    """The SDK's logging set-up once logging is configured: nothing to do."""


def instructions(setup_notes: Sequence[str] = ()) -> str:
    """The server's instructions; a setup note (no embedding provider, say) is said here once
    instead of in every recall, so a model does not ask its user about it at every turn."""
    if not setup_notes:
        return INSTRUCTIONS
    return (
        f"{INSTRUCTIONS}\n\nSetup of this server, for its operator (`cortex-mcp doctor` shows"
        f" it too; recall works regardless): {'; '.join(setup_notes)}."
    )


def build_server(
    open_service: ServiceFactory,
    settings: Settings | None = None,
    *,
    subscriptions: SubscriptionBus | None = None,
    setup_notes: Sequence[str] = (),
    token_verifier: TokenVerifier | None = None,
    open_after_initialize: bool = False,
) -> MCPServer:
    """An MCPServer whose lifespan opens the service through `open_service`; `settings` give
    the limits the tool schemas publish (the defaults when absent); `subscriptions` is the bus
    the HTTP app publishes resource updates on; `setup_notes` go into the instructions;
    `token_verifier` (HTTP with CORTEX_API_TOKEN) makes the SDK require a bearer token on
    `/mcp`, `/sse` and `/messages/` (401 with WWW-Authenticate). `open_after_initialize`
    (stdio): the service opens once the first message has been answered or a message needs
    it, so `initialize` costs the server little more than importing the SDK; a failure to open
    stops the server as it did before."""
    auth_required = token_verifier is not None

    opened: list[_Runtime] = []  # static resources get no Context: they read it here

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[_Runtime]:
        runtime = _Runtime(auth_required)
        if not open_after_initialize:
            async with open_service() as service:
                runtime.opened(service)
                opened.append(runtime)
                try:
                    yield runtime
                finally:
                    opened.remove(runtime)
            return
        closing = anyio.Event()

        async def keep_open() -> None:
            await runtime.wanted.wait()
            await anyio.sleep(0.05)  # the answer that set it is written first
            async with open_service() as service:
                runtime.opened(service)
                service.start_warm_up()
                await closing.wait()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(keep_open)
            opened.append(runtime)
            try:
                yield runtime
            finally:
                opened.remove(runtime)
                runtime.wanted.set()
                closing.set()

    content_limit = (
        settings.max_content_chars
        if settings
        else Settings.model_fields["max_content_chars"].default
    )
    tools: list[Tool] = [CortexTool.from_spec(spec) for spec in tool_specs(content_limit)]
    prompts = prompt_templates()
    with _logging_as_configured():  # the entry point's logging, not the SDK's
        mcp = MCPServer(
            "cortex",
            version=__version__,
            instructions=instructions(setup_notes),
            lifespan=lifespan,
            tools=tools,
            middleware=[
                _bounded_names,
                _agent_of_request,
                known_prompts_only(p.name for p in prompts),
                _warm_up_once_answered,
            ],
            subscriptions=subscriptions,
            token_verifier=token_verifier,
            auth=_auth_settings(settings) if token_verifier is not None else None,
        )

    async def for_agent(read: Callable[[CortexService, str | None], Awaitable[str]]) -> str:
        """Read a static resource for the request's agent (header), else the server's own."""
        try:
            caller = _caller(auth_required)
            service = (await opened[-1].service()).acting_for(caller)
            return await read(service, header_agent(_request_agent.get(), caller))
        except CortexError as exc:
            raise MCPError(INVALID_PARAMS, exc.message) from None

    @mcp.resource(
        "cortex://core",
        name="core",
        description="Core memory as Markdown, grouped into sections, within 2000 tokens",
        mime_type="text/markdown",
    )
    async def core() -> str:
        return await for_agent(lambda service, agent: service.status.core_markdown(agent))

    @mcp.resource(
        "cortex://stats",
        name="stats",
        description="Counts, storage, search backends and provider health",
        mime_type="application/json",
    )
    async def stats() -> str:
        return await for_agent(
            lambda service, agent: _json(service.status.stats(build(AgentRequest, agent_id=agent)))
        )

    @mcp.resource(
        "cortex://profile",
        name="profile",
        description="The user profile built from core memory (JSON, with a readable summary)",
        mime_type="application/json",
    )
    async def profile() -> str:
        return await for_agent(lambda service, agent: _json(service.conversation.profile(agent)))

    @mcp.resource(
        "cortex://memories/{id}",
        name="memory",
        description="One memory with its correction chain and access history",
        mime_type="application/json",
    )
    async def memory(id: str, ctx: Context) -> str:
        try:
            request = build(AgentRequest, agent_id=_header_agent(ctx))
            detail = await (await _service_of(ctx)).reading.memory_detail(id, request)
        except CortexError as exc:
            raise ResourceNotFoundError(exc.message) from None
        return json.dumps(detail, ensure_ascii=False, indent=2)

    @mcp.resource(
        "cortex://entities",
        name="entities",
        description="The people, pets, places and things memories are about, the most"
        " mentioned first (JSON: name, kind, aliases, mention count, first and last seen)",
        mime_type="application/json",
    )
    async def entities() -> str:
        return await for_agent(
            lambda service, agent: _json(
                service.entities.list(build(EntityListRequest, agent_id=agent, limit=200))
            )
        )

    @mcp.resource(
        "cortex://entities/{name}",
        name="entity",
        description="One entity by name or alias, with the memories linked to it (JSON)",
        mime_type="application/json",
    )
    async def entity(name: str, ctx: Context) -> str:
        try:
            service = await _service_of(ctx)
            request = build(EntityRequest, agent_id=_header_agent(ctx), limit=50)
            page = await service.entities.page(unquote(name), request, memories=True)
        except CortexError as exc:
            raise ResourceNotFoundError(exc.message) from None
        return json.dumps(page, ensure_ascii=False, indent=2)

    for prompt in prompts:
        mcp.add_prompt(prompt)
    return mcp


def _auth_settings(settings: Settings | None) -> AuthSettings:
    """The SDK's resource-server settings: every MCP request needs a bearer token that may
    read. The issuer is the identity provider's (CORTEX_OAUTH_ISSUER), else a placeholder the
    SDK requires and nothing advertises. The protected resource metadata and its challenges
    are served by transports/resource.py (at both of this server's resources), hence no
    resource_server_url here."""
    issuer = settings.oauth_issuer if settings is not None else None
    return AuthSettings(
        issuer_url=AnyHttpUrl(issuer or "http://localhost/cortex-mcp"),
        resource_server_url=None,
        required_scopes=[SCOPE],
    )


async def _json(pending: Awaitable[Any]) -> str:
    return json.dumps(await pending, ensure_ascii=False, indent=2)
