"""An identity provider's signing side on loopback, for the OAuth tests: its metadata
(`/.well-known/openid-configuration`) and JWKS served over real HTTP by uvicorn in a thread,
keys of its own (RSA, made here), and access tokens signed with PyJWT. `rotate()` changes
its key, `down` makes every request fail with 503, `fetches` counts the JWKS requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.helpers.http_helpers import free_port


class SigningKey:
    def __init__(self, kid: str) -> None:
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = RSAAlgorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}


class LocalIssuer:
    """See the module's docstring."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.keys = [SigningKey("key-1")]
        self.down = False
        self.fetches = 0
        self._server: uvicorn.Server | None = None

    @property
    def key(self) -> SigningKey:
        return self.keys[-1]

    def rotate(self) -> SigningKey:
        """A new key, published alone (the old one withdrawn)."""
        self.keys = [SigningKey(f"key-{len(self.keys) + 1}-{time.monotonic_ns()}")]
        return self.key

    def token(
        self,
        *,
        subject: str = "alice",
        scope: str = "memories:read memories:write",
        audience: str | None = None,
        issuer: str | None = None,
        lifetime_s: int = 300,
        key: SigningKey | None = None,
        kid: str | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": issuer or self.url,
            "sub": subject,
            "aud": audience,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime_s,
            "scope": scope,
            **claims,
        }
        signer = key or self.key
        headers = {"kid": kid or signer.kid}
        return jwt.encode(payload, signer.private, algorithm="RS256", headers=headers)

    def _app(self) -> Starlette:
        async def metadata(request: Request) -> Response:
            if self.down:
                return Response(status_code=503)
            return JSONResponse(
                {
                    "issuer": self.url,
                    "jwks_uri": self.url + "/jwks",
                    "authorization_endpoint": self.url + "/auth",
                    "token_endpoint": self.url + "/token",
                }
            )

        async def jwks(request: Request) -> Response:
            if self.down:
                return Response(status_code=503)
            self.fetches += 1
            return JSONResponse({"keys": [k.public_jwk() for k in self.keys]})

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", metadata),
                Route("/jwks", jwks),
            ]
        )

    @contextmanager
    def serving(self) -> Iterator[LocalIssuer]:
        config = uvicorn.Config(self._app(), host="127.0.0.1", port=self.port, log_level="error")
        self._server = uvicorn.Server(config)
        thread = threading.Thread(target=self._server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test issuer did not start")
            time.sleep(0.02)
        try:
            yield self
        finally:
            self._server.should_exit = True
            thread.join(timeout=10)
