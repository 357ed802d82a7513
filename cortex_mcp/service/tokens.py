"""Credentials: agent tokens (create, list, revoke), the admin token, the dashboard's sessions,
and `identify`, which turns what a request presents into a `Caller` (or None: refused).

A token is `cxt_<id>_<secret>`: `id` finds its row, `secret` is 256 random bits. A row keeps
a random per-token salt and HMAC-SHA256(salt, secret), compared with `hmac.compare_digest`;
the token itself is printed once and stored nowhere. A slow password hash (scrypt, PBKDF2)
defends guessable passwords against a stolen database; a 256-bit random secret cannot be
guessed at any hashing speed, so a fast keyed hash loses nothing and lets every request
check its token without a cost worth caching for long.

Checks are cached for `CACHE_SECONDS` (1 s), so a revoke on any server sharing the database is
honoured everywhere within about a second. `last_used_at` is written at most once a minute
per token and server, off the request's answer path when it fails (a read-only database).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cortex_mcp.engine import validate
from cortex_mcp.errors import CortexError, Forbidden, InvalidInput
from cortex_mcp.models import ADMIN, AGENT_SCOPES, LOCAL, READ_SCOPE, Caller, Clock, to_iso
from cortex_mcp.service.identity import AccessTokens
from cortex_mcp.service.requests import RevokeRequest, TokenRequest
from cortex_mcp.store.interfaces import TokenStorage
from cortex_mcp.store.tokens import AGENT, SESSION, TokenRow

log = logging.getLogger(__name__)

PREFIX = "cxt_"
_ID_HEX = 12
CACHE_SECONDS = 1.0
TOUCH_SECONDS = 60.0
MAX_NAME_CHARS = 100
SESSION_HOURS = 12
PROVIDER_PARENT = "oidc"  # what a session opened through the identity provider stands for
_CACHE_MAX = 10_000


def _digest(salt: str, secret: str) -> str:
    return hmac.new(bytes.fromhex(salt), secret.encode(), hashlib.sha256).hexdigest()


def _split(presented: str) -> tuple[str, str] | None:
    """`cxt_<12 hex>_<secret>` -> (id, secret); anything else None."""
    if not presented.startswith(PREFIX) or not presented.isascii():
        return None
    rest = presented[len(PREFIX) :]
    token_id, sep, secret = rest[:_ID_HEX], rest[_ID_HEX : _ID_HEX + 1], rest[_ID_HEX + 1 :]
    if sep != "_" or len(token_id) != _ID_HEX or not secret or len(secret) > 200:
        return None
    if any(c not in "0123456789abcdef" for c in token_id):
        return None
    return token_id, secret


READ_ONLY = frozenset({READ_SCOPE})
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def lifetime(expires: str) -> timedelta:
    """`30d` -> 30 days (TokenRequest's pattern has checked the shape)."""
    return int(expires[:-1]) * _UNITS[expires[-1]]


def scopes_of(row: TokenRow) -> frozenset[str]:
    """An agent token's rights: read and write unless it was made read-only."""
    return frozenset(row.scopes.split()) if row.scopes else AGENT_SCOPES


def admin_fingerprint(admin_token: str) -> str:
    """What a session opened with the admin token records of it: a new admin token ends
    those sessions. Half a SHA-256 of a secret no one can guess reveals nothing of it."""
    return "admin:" + hashlib.sha256(b"cortex-admin:" + admin_token.encode()).hexdigest()[:32]


@dataclass
class _Checked:
    caller: Caller | None
    at: float


@dataclass(kw_only=True)
class TokenService:
    """Agent tokens, the admin token and dashboard sessions, over the token store."""

    tokens: TokenStorage
    clock: Clock
    admin_token: str | None
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)
    access_tokens: AccessTokens | None = None  # an identity provider's (CORTEX_OAUTH_ISSUER)
    _cache: dict[str, _Checked] = field(default_factory=dict)
    _touched: dict[str, float] = field(default_factory=dict)

    @property
    def required(self) -> bool:
        """Whether remote requests must present a credential (CORTEX_API_TOKEN or an identity
        provider is set)."""
        return self.admin_token is not None or self.access_tokens is not None

    # ---- management (the CLI; REST for the admin) ---------------------------------------

    def _admin_only(self) -> None:
        if self.caller.is_agent:
            raise Forbidden(
                "tokens: only the admin token (CORTEX_API_TOKEN) or the command line manages"
                " tokens; an agent token cannot",
                field="token",
            )

    async def create(self, request: TokenRequest) -> dict[str, Any]:
        """A new token for `request.agent`; the answer is the only place the token ever
        appears."""
        self._admin_only()
        agent = validate.agent_id(request.agent, "")
        chosen = await self._name(request.name, agent)
        token_id = secrets.token_hex(_ID_HEX // 2)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        now = self.clock.now()
        expires_at = to_iso(now + lifetime(request.expires)) if request.expires else None
        row = TokenRow(
            id=token_id,
            kind=AGENT,
            name=chosen,
            agent_id=agent,
            salt=salt,
            hash=_digest(salt, secret),
            parent=None,
            created_at=to_iso(now),
            expires_at=expires_at,
            scopes=READ_SCOPE if request.read_only else None,
        )
        await self.tokens.add(row)
        log.info("agent token %s (%s) created for agent %r", token_id, chosen, agent)
        return {
            "id": token_id,
            "name": chosen,
            "agent": agent,
            "token": f"{PREFIX}{token_id}_{secret}",
            "read_only": request.read_only,
            "expires_at": expires_at,
        }

    async def list(self, *, include_revoked: bool = False) -> list[dict[str, Any]]:
        """Id, name, agent, created, last used (and revoked): never a token or its hash."""
        self._admin_only()
        rows = await self.tokens.agent_tokens(include_revoked=include_revoked)
        return [
            {
                "id": r.id,
                "name": r.name,
                "agent": r.agent_id,
                "created_at": r.created_at,
                "last_used_at": r.last_used_at,
                "revoked_at": r.revoked_at,
                "read_only": scopes_of(r) == READ_ONLY,
                "expires_at": r.expires_at,
            }
            for r in rows
        ]

    async def unenforced(self) -> bool:
        """Live agent tokens exist but no admin token is set: servers check no token."""
        return self.admin_token is None and bool(await self.tokens.agent_tokens())

    async def revoke(self, request: RevokeRequest) -> dict[str, Any]:
        """Revoke by id or name (and end the dashboard sessions opened with it); every server
        on the database refuses it within CACHE_SECONDS."""
        self._admin_only()
        key = validate.text("token", request.token, MAX_NAME_CHARS, verbatim=True)
        row = await self.tokens.revoke(key, self._now())
        self._cache.clear()
        log.info("agent token %s (%s) revoked", row.id, row.name)
        return {"id": row.id, "name": row.name, "agent": row.agent_id, "revoked": True}

    async def _name(self, name: str | None, agent: str) -> str:
        if name is not None:
            chosen = validate.text("name", name, MAX_NAME_CHARS, verbatim=True)
            if validate.CONTROL_CHARS.search(chosen):
                raise InvalidInput("name: must not contain control characters", field="name")
            return chosen
        taken = await self.tokens.names(agent)
        if agent not in taken:
            return agent
        n = 2
        while f"{agent}-{n}" in taken:
            n += 1
        return f"{agent}-{n}"

    # ---- identifying a request ----------------------------------------------------------

    async def identify(self, presented: str) -> Caller | None:
        """The caller a bearer token stands for: the admin token, a live agent token, an
        identity provider's access token, else None. Answers are cached for CACHE_SECONDS (a revoke elsewhere is seen after that)."""
        if self.admin_token is not None and hmac.compare_digest(
            presented.encode("utf-8", "surrogatepass"), self.admin_token.encode()
        ):
            return ADMIN
        if self.access_tokens is not None and not presented.startswith(PREFIX):
            return await self.access_tokens.identify(presented)
        return await self._check(presented, AGENT)

    async def _check(self, presented: str, kind: str) -> Caller | None:
        key = kind + hashlib.sha256(presented.encode("utf-8", "surrogatepass")).hexdigest()
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and now - cached.at < CACHE_SECONDS:
            return cached.caller
        caller = await self._lookup(presented, kind)
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = _Checked(caller, now)
        if caller is not None and caller.token_id is not None:
            await self._touch(caller.token_id, now)
        return caller

    async def _lookup(self, presented: str, kind: str) -> Caller | None:
        parts = _split(presented)
        if parts is None:
            return None
        token_id, secret = parts
        row = await self.tokens.get(token_id)
        if row is None or row.kind != kind or not row.live(self._now()):
            return None
        if not hmac.compare_digest(_digest(row.salt, secret), row.hash):
            return None
        if kind == SESSION:
            return await self._session_caller(row)
        assert row.agent_id is not None
        return Caller.for_agent(row.agent_id, row.id, scopes_of(row))

    async def _touch(self, token_id: str, now: float) -> None:
        """`last_used_at`, written at most once a minute per token (per server)."""
        if now - self._touched.get(token_id, -TOUCH_SECONDS) < TOUCH_SECONDS:
            return
        self._touched[token_id] = now
        try:
            await self.tokens.touch([token_id], self._now())
        except CortexError as exc:  # a read-only database: the request goes on
            log.debug("could not record the use of token %s: %s", token_id, exc.message)

    # ---- dashboard sessions -------------------------------------------------------------

    async def open_session(self, caller: Caller, until: datetime | None = None) -> str:
        """A session for the dashboard, standing for `caller` (the admin or an agent token, or
        an identity provider's user until `until`, its access token's expiry) until it is
        ended, its token revoked, or SESSION_HOURS pass. Returns the cookie."""
        token_id = secrets.token_hex(_ID_HEX // 2)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        now = self.clock.now()
        if caller.subject is not None:  # an identity provider's user: no token row of ours
            return await self._provider_session(caller, token_id, secret, salt, until)
        if caller.is_agent:
            parent = caller.token_id
        else:
            assert self.admin_token is not None
            parent = admin_fingerprint(self.admin_token)
        await self.tokens.add(
            TokenRow(
                id=token_id,
                kind=SESSION,
                name=None,
                agent_id=caller.agent_id if caller.is_agent else None,
                salt=salt,
                hash=_digest(salt, secret),
                parent=parent,
                created_at=to_iso(now),
                expires_at=to_iso(now + timedelta(hours=SESSION_HOURS)),
            )
        )
        await self.tokens.forget_ended_sessions(to_iso(now - timedelta(days=1)))
        return f"{PREFIX}{token_id}_{secret}"

    async def session(self, cookie: str) -> Caller | None:
        """The caller a session cookie stands for, else None (ended, expired, its token
        revoked, or a new admin token since)."""
        return await self._check(cookie, SESSION)

    async def end_session(self, cookie: str) -> bool:
        """Sign-out: the session ends on every server (within CACHE_SECONDS elsewhere)."""
        parts = _split(cookie)
        if parts is None or await self.session(cookie) is None:
            return False
        self._cache.clear()
        return await self.tokens.end_session(parts[0], self._now())

    async def _provider_session(
        self, caller: Caller, token_id: str, secret: str, salt: str, until: datetime | None
    ) -> str:
        now = self.clock.now()
        ends = now + timedelta(hours=SESSION_HOURS)
        await self.tokens.add(
            TokenRow(
                id=token_id,
                kind=SESSION,
                name=caller.subject,
                agent_id=caller.agent_id if caller.is_agent else None,
                salt=salt,
                hash=_digest(salt, secret),
                parent=PROVIDER_PARENT,
                created_at=to_iso(now),
                expires_at=to_iso(min(ends, until) if until is not None else ends),
                scopes=" ".join(sorted(caller.scopes)),
            )
        )
        return f"{PREFIX}{token_id}_{secret}"

    async def _session_caller(self, row: TokenRow) -> Caller | None:
        parent = row.parent or ""
        if parent == PROVIDER_PARENT:  # signed in with the identity provider
            if self.access_tokens is None:
                return None
            kind = "agent" if row.agent_id is not None else "admin"
            scopes = frozenset((row.scopes or "").split())
            issuer = self.access_tokens.rules.issuer
            return Caller(kind, row.agent_id, None, scopes, row.name, issuer)
        if row.agent_id is None:
            admin = self.admin_token
            if admin is None or not hmac.compare_digest(parent, admin_fingerprint(admin)):
                return None
            return ADMIN
        opened_with = await self.tokens.get(parent)
        if opened_with is None or not opened_with.live(self._now()):
            return None
        return Caller.for_agent(row.agent_id, opened_with.id, scopes_of(opened_with))

    def _now(self) -> str:
        return to_iso(self.clock.now())
