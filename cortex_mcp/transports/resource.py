"""This server as an OAuth 2.1 protected resource (RFC 9728), when CORTEX_OAUTH_ISSUER and
CORTEX_PUBLIC_URL are set: its metadata at `/.well-known/oauth-protected-resource` (the
whole server: REST, SSE) and `/.well-known/oauth-protected-resource/mcp` (Streamable HTTP),
served with the MCP SDK's handler, and the `WWW-Authenticate` challenge of every 401 and
insufficient-scope 403 pointing at it, so an MCP client finds the identity provider from the
server's first answer.

With a path in the public URL (`https://example.com/memory`), the metadata's RFC 9728 address
is `https://example.com/.well-known/oauth-protected-resource/memory[/mcp]`: it is served at
that path too, for a proxy that forwards it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.routing import BaseRoute, Route

from cortex_mcp.config import Settings
from cortex_mcp.models import ADMIN_SCOPE, READ_SCOPE, WRITE_SCOPE

WELL_KNOWN = "/.well-known/oauth-protected-resource"
MCP_PATHS = ("/mcp", "/sse", "/messages")
SCOPES = [READ_SCOPE, WRITE_SCOPE, ADMIN_SCOPE]


@dataclass(frozen=True)
class ProtectedResource:
    """The resource identifiers and metadata addresses of this server."""

    public_url: str
    issuer: str

    @property
    def mcp_url(self) -> str:
        return self.public_url + "/mcp"

    def metadata_url(self, path: str) -> str:
        """The metadata address a refusal on `path` points at."""
        resource = self.mcp_url if _is_streamable(path) else self.public_url
        return str(build_resource_metadata_url(AnyHttpUrl(resource)))

    def routes(self) -> list[BaseRoute]:
        prefix = urlsplit(self.public_url).path.rstrip("/")
        routes: list[BaseRoute] = []
        for resource, suffix in ((self.public_url, ""), (self.mcp_url, "/mcp")):
            # from text, so the model keeps an empty path empty: a client compares the issuer
            # with the provider's own metadata exactly (`http://idp` is not `http://idp/`)
            metadata = ProtectedResourceMetadata.model_validate(
                {
                    "resource": resource,
                    "authorization_servers": [self.issuer],
                    "scopes_supported": SCOPES,
                    "bearer_methods_supported": ["header"],
                    "resource_name": "cortex-mcp",
                }
            )
            handler = ProtectedResourceMetadataHandler(metadata).handle
            for path in {WELL_KNOWN + suffix, WELL_KNOWN + prefix + suffix}:
                routes.append(Route(path, handler, methods=["GET"]))
        return routes

    def public_paths(self) -> frozenset[str]:
        return frozenset(r.path for r in self.routes() if isinstance(r, Route))

    def challenge(
        self, path: str, *, error: str | None = None, description: str = "", scope: str = ""
    ) -> str:
        """The `WWW-Authenticate` value of a refusal on `path` (RFC 6750 section 3)."""
        parts = []
        if error is not None:
            parts.append(f'error="{error}"')
            if description:
                parts.append(f'error_description="{_quoted(description)}"')
        if scope:
            parts.append(f'scope="{scope}"')
        parts.append(f'resource_metadata="{self.metadata_url(path)}"')
        return "Bearer " + ", ".join(parts)


def protected_resource(settings: Settings) -> ProtectedResource | None:
    if settings.oauth_issuer is None or settings.public_url is None:
        return None
    return ProtectedResource(public_url=settings.public_url, issuer=settings.oauth_issuer)


def _is_streamable(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/")


def _quoted(text: str) -> str:
    return text.replace("\\", "").replace('"', "'")
