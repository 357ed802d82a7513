"""Reverse proxies this server believes (CORTEX_TRUSTED_PROXIES): a request that comes straight
from one of their addresses and says `X-Forwarded-Proto: https` reached the proxy over https,
so it is served as an https request (`scope["scheme"]`): the dashboard's cookie is `Secure`
and a page's `Origin` is compared with the https origin the browser sees. From any other
address the header is ignored (anyone can send it). Nothing else a proxy says is read here."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def proxy_networks(values: Sequence[str]) -> list[Network]:
    """Addresses or networks (`10.0.0.5`, `10.0.0.0/8`, `::1`), as the settings checked them."""
    return [ipaddress.ip_network(value.strip(), strict=False) for value in values]


class ForwardedScheme:
    """Serve a request as https when a trusted proxy says the browser used https."""

    def __init__(self, app: ASGIApp, *, proxies: Sequence[str]) -> None:
        self.app = app
        self.networks = proxy_networks(proxies)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.networks and self._says_https(scope):
            scope = {**scope, "scheme": "https"}
        await self.app(scope, receive, send)

    def _says_https(self, scope: Scope) -> bool:
        if not self._trusted(scope.get("client")):
            return False
        for key, value in scope.get("headers", []):
            if key == b"x-forwarded-proto":  # the first value is the browser's, behind a chain
                return bool(value.decode("latin-1").split(",")[0].strip().lower() == "https")
        return False

    def _trusted(self, client: tuple[str, int] | None) -> bool:
        if not client:
            return False
        try:
            address = ipaddress.ip_address(client[0])
        except ValueError:
            return False
        return any(address in network for network in self.networks)
