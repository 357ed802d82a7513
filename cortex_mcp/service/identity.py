"""Access tokens from an identity provider (CORTEX_OAUTH_ISSUER): a JWT is checked with PyJWT
against the issuer's keys (providers/issuer.py), then its claims say who the caller is.

Checked: the signature, with an algorithm from CORTEX_OAUTH_ALGORITHMS (public-key ones only,
never `none` or HS*: the settings refuse them) that the key itself is for; `iss` exactly the
issuer; `aud` naming this server (CORTEX_OAUTH_AUDIENCE, else the public URL or its `/mcp`);
`exp` (required) and `nbf` with LEEWAY_S of clock skew. The agent is CORTEX_OAUTH_AGENT_CLAIM:
a claim's name (`sub`, `email`) or a template of claims (`{email}`, `team-{org}`). Scopes
(`scope`, a space list, or `scp`) give the rights: memories:read, memories:write, admin (every
agent; it includes the other two).
"""

from __future__ import annotations

import hashlib
import logging
import re
import string
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

import jwt
from jwt import PyJWK
from jwt.exceptions import InvalidTokenError

from cortex_mcp.errors import IssuerUnavailable
from cortex_mcp.models import (
    ADMIN_SCOPE,
    EVERY_SCOPE,
    READ_SCOPE,
    WRITE_SCOPE,
    Caller,
    agent_id_problem,
)

log = logging.getLogger(__name__)

LEEWAY_S = 30
MAX_GROUP_AGENTS = 50  # agents one group claim may give
CACHE_SECONDS = 60.0  # a verified token is trusted this long (never past its expiry)
_CACHE_MAX = 10_000
KNOWN_SCOPES = frozenset({READ_SCOPE, WRITE_SCOPE, ADMIN_SCOPE})
_JWT_SHAPE = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


class SigningKeys(Protocol):
    """The issuer's keys (providers/issuer.py IssuerKeys)."""

    issuer: str

    async def key(self, kid: str | None) -> PyJWK | None: ...

    async def metadata(self) -> dict[str, Any]: ...


PostForm = Callable[[str, dict[str, str]], Awaitable[Any]]


@dataclass(frozen=True)
class AccessTokenRules:
    """What an access token must say to be accepted here (from the settings)."""

    issuer: str
    audiences: tuple[str, ...]
    algorithms: tuple[str, ...]
    agent_claim: str


def looks_like_jwt(presented: str) -> bool:
    return len(presented) < 16_384 and bool(_JWT_SHAPE.match(presented))


class AccessTokens:
    """Identify the caller a JWT access token stands for, or None (refused). Raises
    IssuerUnavailable when the key it needs cannot be fetched."""

    def __init__(
        self,
        keys: SigningKeys,
        rules: AccessTokenRules,
        *,
        clock: Callable[[], float] = time.time,
        post_form: PostForm | None = None,
    ) -> None:
        self.keys = keys
        self.rules = rules
        self._clock = clock
        self._post_form = post_form
        self._verified: dict[str, tuple[Caller, float]] = {}  # sha256 -> (caller, until)

    async def identify(self, presented: str) -> Caller | None:
        """The caller, from the verified tokens of the last CACHE_SECONDS (a signature
        check costs about 0.1 ms; a look-up, a hash), else checked now."""
        if not looks_like_jwt(presented):
            return None
        key = hashlib.sha256(presented.encode()).hexdigest()
        now = self._clock()
        cached = self._verified.get(key)
        if cached is not None and now < cached[1]:
            return cached[0]
        caller, expires = await self._verify(presented)
        if caller is not None:
            if len(self._verified) >= _CACHE_MAX:
                self._verified.clear()
            self._verified[key] = (caller, min(now + CACHE_SECONDS, expires))
        return caller

    # ---- the dashboard's sign-in (authorization code with PKCE) ----------------------------

    async def authorization_url(self, params: dict[str, str]) -> str:
        """The provider's authorization endpoint with `params` (client_id, redirect_uri,
        state, code_challenge, ...)."""
        endpoint = (await self.keys.metadata()).get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise IssuerUnavailable(f"{self.keys.issuer}: no authorization_endpoint")
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)

    async def redeem(self, form: dict[str, str]) -> tuple[Caller | None, float]:
        """Exchange an authorization code (`form`: code, code_verifier, client_id,
        redirect_uri, resource) at the token endpoint; the caller its access token stands for
        (checked like any other) and when it expires, or (None, 0)."""
        endpoint = (await self.keys.metadata()).get("token_endpoint")
        if not isinstance(endpoint, str) or self._post_form is None:
            raise IssuerUnavailable(f"{self.keys.issuer}: no token_endpoint")
        answer = await self._post_form(endpoint, {"grant_type": "authorization_code", **form})
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str):
            log.info("the provider refused a sign-in code: %s", answer.get("error", "no token"))
            return None, 0.0
        return await self._verify(token)

    async def _verify(self, presented: str) -> tuple[Caller | None, float]:
        """The caller and the token's expiry (None, 0: refused)."""
        refused: tuple[Caller | None, float] = (None, 0.0)
        try:
            header = jwt.get_unverified_header(presented)
        except InvalidTokenError:
            return refused
        algorithm = header.get("alg")
        if algorithm not in self.rules.algorithms:
            log.info("refused an access token signed with %r (not allowed)", algorithm)
            return refused
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None)
        if key is None:
            log.info("refused an access token: the issuer has no key %r", kid)
            return refused
        try:
            # PyJWT refuses a key of another type than the algorithm's (an RSA key for ES256)
            claims = jwt.decode(
                presented,
                key=key.key,
                algorithms=[algorithm],
                audience=list(self.rules.audiences),
                issuer=self.rules.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except InvalidTokenError as exc:
            log.info("refused an access token: %s", exc)
            return refused
        return self._caller(claims), float(claims["exp"]) + LEEWAY_S

    def _caller(self, claims: dict[str, Any]) -> Caller | None:
        scopes = granted_scopes(claims)
        subject = str(claims.get("sub")) if claims.get("sub") is not None else None
        issuer = str(claims["iss"])
        if ADMIN_SCOPE in scopes:
            return Caller("admin", None, None, EVERY_SCOPE, subject, issuer)
        agents = agents_of(claims, self.rules.agent_claim)
        if not agents:
            return None
        return Caller("agent", agents[0], None, scopes, subject, issuer, tuple(agents[1:]))


def granted_scopes(claims: dict[str, Any]) -> frozenset[str]:
    """The rights a token's scopes give (`scope`: a space list; `scp`: a list or a string)."""
    raw = claims.get("scope", claims.get("scp", ""))
    names = raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return frozenset(str(n) for n in names) & KNOWN_SCOPES


def agents_of(claims: dict[str, Any], rule: str) -> list[str]:
    """The agents a token may act for, the first when it names none: the claim `rule` names,
    or the template `rule` filled with claims; a list claim (groups) gives one agent per value,
    in its order (one list claim per template). Empty (refused, and logged) when a claim is
    missing or empty, or a result is not a valid agent id."""
    template = rule if "{" in rule else "{" + rule + "}"
    values: dict[str, list[str]] = {}
    for _, name, _, _ in string.Formatter().parse(template):
        if name is None:
            continue
        raw = claims.get(name)
        items = raw[:MAX_GROUP_AGENTS] if isinstance(raw, list) else [raw]
        if not items or not all(_scalar(v) for v in items):
            log.info("refused an access token: its claim %r does not name an agent", name)
            return []
        values[name] = [str(v) for v in items]
    if sum(len(v) > 1 for v in values.values()) > 1:
        log.info("refused an access token: the agent template has several list claims")
        return []
    agents: list[str] = []
    for fill in _fillings(values):
        agent = template.format_map(fill)
        problem = agent_id_problem(agent)
        if problem is not None:
            log.info("refused an access token: its agent id %s", problem)
            return []
        if agent not in agents:
            agents.append(agent)
    return agents


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and value != ""


def _fillings(values: dict[str, list[str]]) -> list[dict[str, str]]:
    """One mapping per value of the (single) list claim, the other claims alike in each."""
    longest = max((len(v) for v in values.values()), default=1)
    return [{k: v[i] if len(v) > 1 else v[0] for k, v in values.items()} for i in range(longest)]
