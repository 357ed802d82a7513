"""The token service on SQLite and PostgreSQL: what a presented token stands for, dashboard
sessions (12 hours, sign-out, a revoked token or a new admin token ends them), `last_used_at`
written at most once a minute, and no token in the logs."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import ADMIN, Caller
from cortex_mcp.reader import build_tokens, open_stores
from cortex_mcp.service import tokens as token_module
from cortex_mcp.service.requests import RevokeRequest, TokenRequest, build
from cortex_mcp.service.tokens import TokenService
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

ADMIN_TOKEN = "admin-token-5d1c"


@asynccontextmanager
async def _service(
    settings: Settings, clock: FakeClock, admin: str = ADMIN_TOKEN
) -> AsyncIterator[TokenService]:
    configured = settings.model_copy(update={"api_token": None})
    async with open_stores(configured, allow_vec=False) as stores:
        service = build_tokens(configured, stores, clock)
        yield TokenService(tokens=service.tokens, clock=clock, admin_token=admin)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each check reads the database (the 1 s cache is for running servers)."""
    monkeypatch.setattr(token_module, "CACHE_SECONDS", 0.0)


async def test_a_token_stands_for_its_agent_until_revoked(
    backend_settings: Settings, clock: FakeClock, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    async with _service(backend_settings, clock) as tokens:
        made = await tokens.create(build(TokenRequest, agent="alice"))
        assert await tokens.identify(made["token"]) == Caller.for_agent("alice", made["id"])
        assert await tokens.identify(ADMIN_TOKEN) == ADMIN
        for wrong in ("", "cxt_", made["token"] + "x", made["token"][:-1], "Bearer x", "é" * 40):
            assert await tokens.identify(wrong) is None, wrong
        other_id = made["token"].replace(made["id"], "0" * 12)
        assert await tokens.identify(other_id) is None
        await tokens.revoke(build(RevokeRequest, token=made["id"]))
        assert await tokens.identify(made["token"]) is None
    assert made["token"].split("_", 2)[2] not in caplog.text


async def test_last_used_is_written_at_most_once_a_minute(
    backend_settings: Settings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(token_module.time, "monotonic", lambda: now[0])
    async with _service(backend_settings, clock) as tokens:
        made = await tokens.create(build(TokenRequest, agent="alice"))
        await tokens.identify(made["token"])
        first = (await tokens.list())[0]["last_used_at"]
        assert first is not None
        clock.advance(seconds=30)
        now[0] += 30
        await tokens.identify(made["token"])
        assert (await tokens.list())[0]["last_used_at"] == first
        clock.advance(seconds=31)
        now[0] += 31
        await tokens.identify(made["token"])
        assert (await tokens.list())[0]["last_used_at"] > first


async def test_a_dashboard_session_ends_at_sign_out_after_12_hours_or_with_its_token(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with _service(backend_settings, clock) as tokens:
        made = await tokens.create(build(TokenRequest, agent="alice"))
        alice = await tokens.identify(made["token"])
        assert alice is not None
        signed_out = await tokens.open_session(alice)
        expiring = await tokens.open_session(alice)
        revoked_with_token = await tokens.open_session(alice)
        assert await tokens.session(signed_out) == alice
        assert await tokens.identify(signed_out) is None  # a cookie is no bearer token
        assert await tokens.session(made["token"]) is None  # nor a token a cookie
        assert await tokens.end_session(signed_out)
        assert await tokens.session(signed_out) is None
        clock.advance(hours=11, minutes=59)
        assert await tokens.session(expiring) == alice
        await tokens.revoke(build(RevokeRequest, token="alice"))
        assert await tokens.session(revoked_with_token) is None
        clock.advance(minutes=2)
        assert await tokens.session(expiring) is None


async def test_a_new_admin_token_ends_the_admin_sessions(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with _service(backend_settings, clock) as tokens:
        cookie = await tokens.open_session(ADMIN)
        assert await tokens.session(cookie) == ADMIN
    async with _service(backend_settings, clock, admin="rotated-admin-token") as rotated:
        assert await rotated.session(cookie) is None
