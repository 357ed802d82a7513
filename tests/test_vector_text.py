"""What a memory's vector is made from: its content without the greeting that opens it, while the
content itself is stored exactly as given, on both stores and on each way a vector is made (the
indexer, and a recall that embeds the memories just written with its query).

Real parts: SQLite files and PostgreSQL (pgserver), the openai SDK against the local embedding
stub, which records every text it is sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.vector_text import vector_text
from cortex_mcp.service.requests import RecallRequest, RememberRequest
from tests.conftest import FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState, embedding_stub

pytestmark = pytest.mark.anyio

GREETED = "Caroline: Hey Mel! Good to see you! How are you doing? I adopted a retriever."
EMBEDDED = "Caroline: Mel, I adopted a retriever."


@pytest.fixture
def stub() -> Iterator[tuple[str, StubState]]:
    with embedding_stub(StubState(meaning=True)) as served:
        yield served


@pytest.fixture
def on_either_store(
    backend: str, tmp_path: Path, stub: tuple[str, StubState], request: pytest.FixtureRequest
) -> Settings:
    """Settings embedded by the stub, on SQLite and on PostgreSQL (`backend`)."""
    extra = {"database_url": request.getfixturevalue("pg_url")} if backend == "postgres" else {}
    return stub_settings(tmp_path / "brain.db", stub[0], **extra)


def _texts(state: StubState) -> list[str]:
    return [text for body in state.requests for text in body["input"]]


@pytest.mark.parametrize(
    ("content", "embedded"),
    [
        (GREETED, EMBEDDED),
        ("Melanie: Hi Caroline, how's it going? I ran a charity race.", "Melanie: Caroline, I ran a charity race."),
        ("Gina: Hey! Long time no see. Hope you're doing well! I opened my store.", "Gina: I opened my store."),
        ("小丽：嗨，小丽！好久不见！我昨天去上了陶艺课。", "小丽：小丽，我昨天去上了陶艺课。"),
        ("由紀：おはよう、健太！昨日陶芸教室に行ったよ。", "由紀：健太、昨日陶芸教室に行ったよ。"),
        ("Hello there, the staging database moved to eu-west-2.", "the staging database moved to eu-west-2."),
    ],
)  # fmt: skip
def test_the_embedded_text_leaves_out_the_greeting_that_opens_a_line(
    content: str, embedded: str
) -> None:
    assert vector_text(content) == embedded


@pytest.mark.parametrize(
    "content",
    [
        "Caroline: Hey Mel! Good to see you!",  # nothing but a greeting
        "Caroline: Thanks, Mel! The necklace was my grandma's.",  # thanks and interjections stay
        "Jon: Wow, Paris! It was great.",
        "哈哈，我养了一只猫。",
        "The VPS firewall blocks port 8080 by default",
    ],
)
def test_a_line_without_an_opening_greeting_or_with_nothing_else_keeps_its_text(
    content: str,
) -> None:
    assert vector_text(content) == content


async def test_a_greeted_memory_is_stored_as_given_and_indexed_without_its_greeting(
    on_either_store: Settings, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    state = stub[1]
    async with open_cortex(on_either_store, clock=clock, background=False) as service:
        memory_id = (await service.memories.remember(RememberRequest(content=GREETED))).id
        assert await service.embed_pending() == 1
        stored = await service.stores.memories.get(memory_id)
    assert stored is not None and stored.content == GREETED
    assert EMBEDDED in _texts(state) and GREETED not in _texts(state)


async def test_a_recall_embeds_a_memory_just_written_without_its_greeting(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    url, state = stub
    settings = stub_settings(tmp_path / "brain.db", url)
    async with open_cortex(settings, clock=clock, background=False) as service:
        await service.memories.remember(RememberRequest(content=GREETED))
        await service.memories.recall(RecallRequest(query="which animal did Caroline adopt"))
    assert EMBEDDED in _texts(state) and GREETED not in _texts(state)


async def test_a_line_that_opens_with_a_greeting_is_found_by_the_meaning_of_the_rest(
    tmp_path: Path, stub: tuple[str, StubState], clock: FakeClock
) -> None:
    """No word of the question is in the answer: only its vector finds it, and the greeting
    weighed the answer's vector below a line about another animal that is not Caroline's."""
    url, _ = stub
    settings = stub_settings(tmp_path / "brain.db", url)
    async with open_cortex(settings, clock=clock, background=False) as service:
        answer = (await service.memories.remember(RememberRequest(content=GREETED))).id
        for line in [
            "Melanie: my cat sleeps all day on the sofa near the window",
            "Melanie: we painted the fence blue last weekend",
        ]:
            await service.memories.remember(RememberRequest(content=line))
        await service.embed_pending()
        result = await service.memories.recall(RecallRequest(query="pets?", max_results=1))
    assert [m.id for m in result.memories] == [answer]
