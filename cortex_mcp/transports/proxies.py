"""Reverse proxies this server believes (CORTEX_TRUSTED_PROXIES). A request that comes straight
from one of their addresses is read as the proxy says:

- `X-Forwarded-Proto: https`: it reached the proxy over https, so it is served as an https
  request (`scope["scheme"]`): the dashboard's cookie is `Secure` and a page's `Origin` is
  compared with the https origin the browser sees;
- `X-Forwarded-For`: the client's address (`scope["client"]`) is the nearest address in the
  chain that is not a trusted proxy, so throttling and logs tell the clients apart;
- the header CORTEX_PROXY_USER_HEADER names (`X-Forwarded-User` of oauth2-proxy): the user the
  proxy signed in, kept under PROXY_USER_KEY for `Credentials` to act as that agent.

From any other address none of them is believed (anyone can send them): a user header from
there is dropped and logged, never read."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
PROXY_USER_KEY = "cortex.proxy_user"
_MAX_CHAIN = 32  # X-Forwarded-For addresses read at most


def proxy_networks(values: Sequence[str]) -> list[Network]:
    """Addresses or networks (`10.0.0.5`, `10.0.0.0/8`, `::1`), as the settings checked them."""
    return [ipaddress.ip_network(value.strip(), strict=False) for value in values]


class ForwardedScheme:
    """Read what a trusted proxy says of the request (see the module's docstring)."""

    def __init__(
        self, app: ASGIApp, *, proxies: Sequence[str], user_header: str | None = None
    ) -> None:
        self.app = app
        self.networks = proxy_networks(proxies)
        self.user_header = user_header.lower().encode("latin-1") if user_header else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (self.networks or self.user_header):
            scope = self._read(scope)
        await self.app(scope, receive, send)

    def _read(self, scope: Scope) -> Scope:
        headers = scope.get("headers", [])
        if not self._trusted_client(scope.get("client")):
            if self.user_header is not None and any(k == self.user_header for k, _ in headers):
                log.warning(
                    "ignored %s from %s: it is not a trusted proxy (CORTEX_TRUSTED_PROXIES)",
                    self.user_header.decode("latin-1"),
                    _address(scope),
                )
                kept = [(k, v) for k, v in headers if k != self.user_header]
                return {**scope, "headers": kept}
            return scope
        read = dict(scope)
        for key, value in headers:
            if key == b"x-forwarded-proto":  # the first value is the browser's, behind a chain
                if value.decode("latin-1").split(",")[0].strip().lower() == "https":
                    read["scheme"] = "https"
            elif key == b"x-forwarded-for":
                client = self._client_of(value.decode("latin-1"))
                if client is not None:
                    read["client"] = (client, 0)
            elif self.user_header is not None and key == self.user_header:
                user = value.decode("utf-8", "replace").strip()
                if user:
                    read[PROXY_USER_KEY] = user
        return read

    def _client_of(self, chain: str) -> str | None:
        """The nearest address of the chain that is not a trusted proxy (all trusted: the
        first); None when an address is not one."""
        addresses = [part.strip() for part in chain.split(",")][-_MAX_CHAIN:]
        try:
            parsed = [ipaddress.ip_address(a) for a in addresses]
        except ValueError:
            return None
        for address in reversed(parsed):
            if not any(address in network for network in self.networks):
                return str(address)
        return str(parsed[0]) if parsed else None

    def _trusted_client(self, client: tuple[str, int] | None) -> bool:
        if not client or not self.networks:
            return False
        try:
            address = ipaddress.ip_address(client[0])
        except ValueError:
            return False
        return any(address in network for network in self.networks)


def _address(scope: Scope) -> str:
    return str((scope.get("client") or ("?", 0))[0])
