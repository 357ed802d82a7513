"""The identity provider's signing keys (CORTEX_OAUTH_ISSUER), for checking its access tokens.

The keys' address (`jwks_uri`) comes from the issuer's metadata (OpenID Connect discovery, else
RFC 8414), whose `issuer` must be the configured one exactly. Keys are kept by `kid` and
fetched again when a token names a `kid` not held (a rotation at the provider), at most once
every `REFRESH_GAP_S`, and every `MAX_AGE_S` anyway; at most `MAX_KEYS` are kept. When the
provider cannot be reached, the keys already held keep working (tokens signed with them are
still checked) and a token needing another key raises `IssuerUnavailable`, said in the log
once per outage.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
from jwt import PyJWK
from jwt.exceptions import PyJWKError

from cortex_mcp.errors import IssuerUnavailable

log = logging.getLogger(__name__)

REFRESH_GAP_S = 1.0  # unknown kids fetch the keys again at most this often, whoever sends them
MAX_AGE_S = 3600.0  # the keys are fetched again this long after the last fetch anyway
MAX_KEYS = 64
MAX_DOCUMENT_BYTES = 512 * 1024
FETCH_TIMEOUT_S = 5.0

FetchJson = Callable[[str], Awaitable[Any]]


async def fetch_json(url: str) -> Any:
    """GET `url` as JSON (bounded size, short timeout); IssuerUnavailable on any failure."""
    try:
        async with httpx2.AsyncClient(timeout=FETCH_TIMEOUT_S, follow_redirects=False) as client:
            reply = await client.get(url, headers={"Accept": "application/json"})
    except Exception as exc:  # any transport failure means the same to a caller: unreachable
        raise IssuerUnavailable(f"{url}: {type(exc).__name__}: {exc}") from None
    if reply.status_code != 200:
        raise IssuerUnavailable(f"{url}: HTTP {reply.status_code}")
    if len(reply.content) > MAX_DOCUMENT_BYTES:
        raise IssuerUnavailable(f"{url}: the document is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        return json.loads(reply.content)
    except ValueError:
        raise IssuerUnavailable(f"{url}: the answer is not JSON") from None


async def post_form(url: str, form: dict[str, str]) -> Any:
    """POST a form to the issuer (its token endpoint), the JSON answer; IssuerUnavailable on a
    failure to reach it, the answer as it is otherwise (an OAuth error is the caller's)."""
    try:
        async with httpx2.AsyncClient(timeout=FETCH_TIMEOUT_S, follow_redirects=False) as client:
            reply = await client.post(url, data=form, headers={"Accept": "application/json"})
    except Exception as exc:  # any transport failure: unreachable
        raise IssuerUnavailable(f"{url}: {type(exc).__name__}: {exc}") from None
    try:
        answer = json.loads(reply.content[:MAX_DOCUMENT_BYTES])
    except ValueError:
        raise IssuerUnavailable(f"{url}: HTTP {reply.status_code}, not JSON") from None
    return answer if isinstance(answer, dict) else {}


def metadata_urls(issuer: str) -> list[str]:
    """Where the issuer's metadata may be: OpenID Connect discovery (the path appended) and
    RFC 8414 (the well-known path inserted before the issuer's path)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return [
        issuer.rstrip("/") + "/.well-known/openid-configuration",
        urlunsplit(
            (parts.scheme, parts.netloc, "/.well-known/oauth-authorization-server" + path, "", "")
        ),
    ]


class IssuerKeys:
    """The issuer's public keys by `kid` (see the module's docstring)."""

    def __init__(
        self,
        issuer: str,
        *,
        fetch: FetchJson = fetch_json,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self._fetch = fetch
        self._clock = clock
        self._keys: dict[str, PyJWK] = {}
        self._jwks_uri: str | None = None
        self._metadata: dict[str, Any] | None = None
        self._fetched_at: float | None = None
        self._down = False
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> PyJWK | None:
        """The key `kid` names (None: the issuer has no such key, even after fetching its keys
        again); a token without `kid` gets the issuer's only key, if it has one."""
        async with self._lock:  # one fetch at a time, whatever many requests wait on it
            if self._stale():
                await self._refresh(required=not self._keys)
            found = self._find(kid)
            if found is not None:
                return found
            if not self._may_refresh():
                if self._down:  # not a wrong key: one the issuer may have, unreachable now
                    raise self._unavailable()
                return None
            await self._refresh(required=True)
            return self._find(kid)

    def _unavailable(self) -> IssuerUnavailable:
        return IssuerUnavailable(
            f"the identity provider {self.issuer} cannot be reached; try again shortly"
        )

    async def metadata(self) -> dict[str, Any]:
        """The issuer's metadata (its endpoints), fetched once; IssuerUnavailable meanwhile."""
        if self._metadata is None:
            self._jwks_uri = await self._discover()
        assert self._metadata is not None
        return self._metadata

    def _find(self, kid: str | None) -> PyJWK | None:
        if kid is not None:
            return self._keys.get(kid)
        return next(iter(self._keys.values())) if len(self._keys) == 1 else None

    def _stale(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= MAX_AGE_S

    def _may_refresh(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= REFRESH_GAP_S

    async def _refresh(self, *, required: bool) -> None:
        """Fetch the keys again. A failure raises IssuerUnavailable when `required` (no key
        held could do); otherwise the keys held stay in use."""
        try:
            keys = await self._fetch_keys()
        except IssuerUnavailable as exc:
            self._fetched_at = self._clock()  # wait REFRESH_GAP_S before trying again
            if not self._down:
                log.warning(
                    "the identity provider %s cannot be reached (%s): tokens signed with keys"
                    " already fetched are still accepted, others get 503 until it answers",
                    self.issuer,
                    exc.message,
                )
                self._down = True
            if required:
                raise self._unavailable() from None
            return
        if self._down:
            log.info("the identity provider %s answers again", self.issuer)
            self._down = False
        self._keys = keys
        self._fetched_at = self._clock()

    async def _fetch_keys(self) -> dict[str, PyJWK]:
        if self._jwks_uri is None:
            self._jwks_uri = await self._discover()
        document = await self._fetch(self._jwks_uri)
        found = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(found, list):
            raise IssuerUnavailable(f"{self._jwks_uri}: no 'keys' list")
        keys: dict[str, PyJWK] = {}
        for entry in found[: MAX_KEYS * 4]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = PyJWK(entry)
            except PyJWKError:  # a key type or curve this library does not take: skipped
                continue
            keys[str(entry.get("kid", ""))] = key
            if len(keys) >= MAX_KEYS:
                break
        return keys

    async def _discover(self) -> str:
        problems = []
        for url in metadata_urls(self.issuer):
            try:
                metadata = await self._fetch(url)
            except IssuerUnavailable as exc:
                problems.append(exc.message)
                continue
            if not isinstance(metadata, dict) or metadata.get("issuer") != self.issuer:
                problems.append(f"{url}: its issuer is not {self.issuer}")
                continue
            jwks_uri = metadata.get("jwks_uri")
            if isinstance(jwks_uri, str) and jwks_uri.startswith(("https://", "http://")):
                self._metadata = metadata
                return jwks_uri
            problems.append(f"{url}: no jwks_uri")
        raise IssuerUnavailable("; ".join(problems))
