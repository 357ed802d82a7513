"""The first steps of the composition root, alone: the database, its stores and the memory
reads. `runtime.open_cortex` starts with these and builds the rest on them; the people's `list`
and `show` stop here (`open_reader`), so that a script calling them many times does not pay for
the engines, providers and numpy."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from cortex_mcp.config import Settings
from cortex_mcp.models import Clock, SystemClock
from cortex_mcp.service.reading import MemoryReading
from cortex_mcp.store.backend import (
    ReadStores,
    Stores,
    build_read_stores,
    build_stores,
    open_database,
)
from cortex_mcp.store.memories import LayerTtl

if TYPE_CHECKING:  # imported where built: `list` and `show` use none of them
    from cortex_mcp.service.config import ConfigService
    from cortex_mcp.service.identity import AccessTokens
    from cortex_mcp.service.tokens import TokenService


def layer_ttl(settings: Settings) -> LayerTtl:
    """How long a memory stays in the working layer and in the archive."""
    return LayerTtl(
        working=timedelta(hours=settings.layers.working_ttl_hours),
        archive=timedelta(days=settings.layers.archive_ttl_days),
    )


@asynccontextmanager
async def open_stores(settings: Settings, *, allow_vec: bool = True) -> AsyncIterator[Stores]:
    """The database `settings` name, opened, with every store over it; closed on exit."""
    async with open_database(settings, allow_vec=allow_vec) as db:
        yield build_stores(db, layer_ttl(settings))


@asynccontextmanager
async def open_read_stores(
    settings: Settings, *, reading: bool = False
) -> AsyncIterator[ReadStores]:
    """`open_stores` for the commands that read memories, tokens or settings: the stores they
    use, no others imported; `reading`: nothing but reads, one at a time (`list`, `show`)."""
    async with open_database(settings, allow_vec=False, reading=reading) as db:
        yield build_read_stores(db, layer_ttl(settings))


def build_reading(
    settings: Settings, stores: ReadStores, drain: Callable[[], Awaitable[None]] | None = None
) -> MemoryReading:
    """The memory reads; `drain` is what they wait for first (the full service's writes in
    flight)."""
    return MemoryReading(
        settings=settings,
        memories=stores.memories,
        exports=stores.exports,
        relations=stores.relations,
        entities=stores.entities,
        drain=drain,
        history=stores.browse.history,
    )


@asynccontextmanager
async def open_reader(settings: Settings) -> AsyncIterator[MemoryReading]:
    async with open_read_stores(settings, reading=True) as stores:
        yield build_reading(settings, stores)


def build_tokens(settings: Settings, stores: ReadStores, clock: Clock) -> TokenService:
    """Agent tokens, the admin token (CORTEX_API_TOKEN) and dashboard sessions."""
    from cortex_mcp.service.tokens import TokenService

    admin = settings.api_token.get_secret_value() if settings.api_token else None
    access = access_tokens(settings)
    return TokenService(tokens=stores.tokens, clock=clock, admin_token=admin, access_tokens=access)


def access_tokens(settings: Settings) -> AccessTokens | None:
    """The identity provider's access tokens, when CORTEX_OAUTH_ISSUER is set."""
    if settings.oauth_issuer is None or settings.public_url is None:
        return None
    from cortex_mcp.providers.issuer import IssuerKeys, post_form
    from cortex_mcp.service.identity import AccessTokenRules, AccessTokens

    audiences = (
        (settings.oauth_audience,)
        if settings.oauth_audience
        else (settings.public_url, settings.public_url + "/", settings.public_url + "/mcp")
    )
    rules = AccessTokenRules(
        issuer=settings.oauth_issuer,
        audiences=audiences,
        algorithms=tuple(settings.oauth_algorithms),
        agent_claim=settings.oauth_agent_claim,
    )
    return AccessTokens(IssuerKeys(settings.oauth_issuer), rules, post_form=post_form)


@asynccontextmanager
async def open_tokens(settings: Settings) -> AsyncIterator[TokenService]:
    """The token commands' service: the database alone."""
    async with open_read_stores(settings) as stores:
        yield build_tokens(settings, stores, SystemClock())


@asynccontextmanager
async def open_config(settings: Settings) -> AsyncIterator[ConfigService]:
    """The `config` command's service: the settings changed while running, over the
    database alone (servers on it apply a change within about a second)."""
    from cortex_mcp.config_live import LiveSettings
    from cortex_mcp.service.config import ConfigService

    async with open_read_stores(settings) as stores:
        yield ConfigService(live=LiveSettings(settings), store=stores.settings)
