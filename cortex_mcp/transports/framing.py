"""No page of another origin may frame anything this server answers (the dashboard would run,
signed in or tokenless, inside a page that overlays it: clickjacking).

Every HTTP response gets `X-Frame-Options: DENY` and a Content-Security-Policy whose
`frame-ancestors` is `'none'`: added to the policy a route already sends (the dashboard page's),
or as the whole policy when it sends none."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = b"content-security-policy"
XFO = b"x-frame-options"
NO_ANCESTORS = "frame-ancestors 'none'"


def without_framing(policy: str) -> str:
    """`policy` with its `frame-ancestors` directive set to `'none'` (added when missing)."""
    directives = [d.strip() for d in policy.split(";") if d.strip()]
    named = [d.split()[0].lower() for d in directives]
    if "frame-ancestors" not in named:
        return "; ".join([*directives, NO_ANCESTORS])
    return "; ".join(
        NO_ANCESTORS if n == "frame-ancestors" else d
        for n, d in zip(named, directives, strict=True)
    )


def framing_denied(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    out = [(k, v) for k, v in headers if k.lower() not in (CSP, XFO)]
    policies = [v.decode("latin-1") for k, v in headers if k.lower() == CSP] or [""]
    out += [(CSP, without_framing(p).encode("latin-1")) for p in policies]
    return [*out, (XFO, b"DENY")]


class NoFraming:
    """ASGI middleware: every HTTP response forbids framing (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_denying(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = framing_denied(list(message.get("headers", [])))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_denying)
