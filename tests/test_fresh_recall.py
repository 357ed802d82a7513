"""A memory is found by meaning in the very next recall, and providers warm up after
`initialize`, not inside a timed call. The real openai SDK talks to the stub on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from cortex_mcp.config import Settings
from cortex_mcp.providers.embeddings import OpenAIEmbedder
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, RecallRequest, RememberRequest
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState, embedding_stub
from tests.helpers.stdio_helpers import HANG_S, server_command, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("on_both_stores")]


OTHER_FACTS = [
    "The VPS firewall blocks port 8080 by default",
    "The quarterly budget review is scheduled for Friday",
    "Harry booked a flight to Osaka for the spring trip",
    "Sofia cooks ramen for dinner on Sundays",
]
PET = "User has a golden retriever named Max"
PARAPHRASE = "any pets at home?"  # no word in common with PET


@pytest.fixture
def meaning_stub() -> Iterator[tuple[str, StubState]]:
    with embedding_stub(StubState(meaning=True)) as served:
        yield served


def _settings(tmp_path: Path, url: str) -> Settings:
    # generous: a query embedding timed out on a loaded machine finds no paraphrase
    return stub_settings(tmp_path / "brain.db", url, timeout_s=30.0)


def test_the_paraphrase_shares_no_word_with_the_memory() -> None:
    words = {w.strip("?").lower() for w in PARAPHRASE.split()}
    assert not words & {w.lower() for w in PET.split()}


async def test_the_first_recall_after_remember_finds_the_memory_by_meaning(
    tmp_path: Path, meaning_stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = meaning_stub
    # background=False: no indexer runs on its own, so only the recall can embed the memory
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        for fact in OTHER_FACTS:
            await service.memories.remember(RememberRequest(content=fact))
        await service.embed_pending()
        made = await service.memories.remember(RememberRequest(content=PET))
        calls_before = len(state.requests)

        result = await service.memories.recall(RecallRequest(query=PARAPHRASE))

        assert result.memories[0].id == made.id
        assert len(state.requests) == calls_before + 1  # query and memory in one call
        assert state.requests[-1]["input"] == [PARAPHRASE, PET]
        await service.drain()  # the recall's vector is saved, not computed again
        assert (await service.status.stats())["vectors"] == {"stub-embed": len(OTHER_FACTS) + 1}
        assert await service.embed_pending() == 0


async def test_pending_memories_of_another_agent_are_neither_sent_nor_returned(
    tmp_path: Path, meaning_stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = meaning_stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        await service.memories.remember(RememberRequest(content=PET, agent_id="someone-else"))
        result = await service.memories.recall(RecallRequest(query=PARAPHRASE))
        assert result.memories == []
        assert state.requests[-1]["input"] == [PARAPHRASE]


async def test_a_forgotten_pending_memory_is_not_sent_with_the_next_query(
    tmp_path: Path, meaning_stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = meaning_stub
    async with open_cortex(_settings(tmp_path, url), clock=clock, background=False) as service:
        made = await service.memories.remember(RememberRequest(content=PET))
        await service.memories.forget(ForgetRequest(memory_id=made.id, purge=True))
        result = await service.memories.recall(RecallRequest(query=PARAPHRASE))
        assert result.memories == []
        assert all(PET not in request["input"] for request in state.requests)


async def test_over_stdio_the_next_recall_finds_a_paraphrase_of_what_was_just_remembered(
    tmp_path: Path, meaning_stub: tuple[str, StubState]
) -> None:
    url, _ = meaning_stub
    command, *args = server_command()
    env = server_env(
        tmp_path / "brain.db",
        CORTEX_EMBEDDING_PROVIDER="openai",
        CORTEX_EMBEDDING_BASE_URL=url,
        CORTEX_EMBEDDING_MODEL="stub-embed",
        CORTEX_EMBEDDING_TIMEOUT_S="30",  # as above: the paraphrase needs the vector channel
    )
    with anyio.fail_after(HANG_S):
        async with Client(
            StdioServerParameters(command=command, args=args, env=env), mode="legacy"
        ) as client:
            for fact in OTHER_FACTS:
                await client.call_tool("cortex_remember", {"content": fact})
            made = await client.call_tool("cortex_remember", {"content": PET})
            recall = await client.call_tool("cortex_recall", {"query": PARAPHRASE})
            found = [m["id"] for m in recall.structured_content["memories"]]
            assert found and found[0] == made.structured_content["id"]


async def test_providers_warm_up_after_initialize_and_not_before(
    tmp_path: Path, meaning_stub: tuple[str, StubState]
) -> None:
    url, state = meaning_stub
    services: list[CortexService] = []
    cold_at_open: list[bool] = []

    @asynccontextmanager
    async def open_service() -> AsyncIterator[CortexService]:
        async with open_cortex(_settings(tmp_path, url)) as service:
            embedder = service.engines.embeddings.primary
            assert isinstance(embedder, OpenAIEmbedder)
            cold_at_open.append(embedder._client is None)
            services.append(service)
            yield service

    with anyio.fail_after(2 * HANG_S):  # bounds a hang: the SDK's import is slow under load
        async with Client(build_server(open_service)) as client:
            await client.list_tools()
            embedder = services[0].engines.embeddings.primary
            assert isinstance(embedder, OpenAIEmbedder)
            for _ in range(int(HANG_S / 0.02)):
                if embedder._client is not None:
                    break
                await anyio.sleep(0.02)
            assert embedder._client is not None  # built in the background, before any recall
    assert cold_at_open == [True]
    assert state.requests == []  # warming up calls no provider
