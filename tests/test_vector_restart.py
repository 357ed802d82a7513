"""The vector index after a restart: built in the background (recall answers from text
meanwhile and says so), saved beside the database, read back on the next start with what
changed since applied, and ignored when the file is not right.

Real parts: SQLite files in a tmp dir, the openai SDK against the local embedding stub. A
budget of 0 MB puts every agent on the IVF path (the one that is built and saved)."""

from __future__ import annotations

import asyncio
import logging
import shutil
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.search.saved_index import index_dir, index_path, load
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    SearchDebugRequest,
)
from tests.conftest import FACTS, FakeClock, stub_settings
from tests.helpers.embedding_stub import StubState

pytestmark = pytest.mark.anyio

BUILDING = "vector index for this agent is building"
LOADING = "vector index for this agent is loading from its saved copy"


@pytest.fixture
def settings(tmp_path: Path, stub: tuple[str, StubState]) -> Any:
    """The store of every test here: `a.db` in the tmp dir, embedded by the stub."""
    return _settings(tmp_path / "a.db", stub[0])


def _settings(db: Path, url: str) -> Settings:
    return stub_settings(db, url, search={"vector_backend": "auto", "numpy_max_mb": 0})


def _open(settings: Any, clock: FakeClock) -> AbstractAsyncContextManager[CortexService]:
    """A server on `settings` whose tests embed when they choose (`embed_pending`)."""
    return open_cortex(settings, clock=clock, background=False)


async def _first_run(settings: Any, clock: FakeClock, **agents: int) -> dict[str, list[str]]:
    """A first server on `settings`: each agent's memories (the FACTS, then `n` fillers)
    embedded and its index built, which saves it. The ids by agent (`default`: 40 fillers)."""
    async with _open(settings, clock) as service:
        ids = {
            agent: await _fill(service, agent, n)
            for agent, n in (agents or {"default": 40}).items()
        }
        for agent in ids:
            assert (await _ready(service, agent))["source"] == "built"
    return ids


async def _fill(service: CortexService, agent: str = "default", n: int = 40) -> list[str]:
    """Every id remembered, the FACTS first in their order."""
    ids = [
        (await service.memories.remember(RememberRequest(content=fact, agent_id=agent))).id
        for fact in FACTS
    ]
    for i in range(n):
        filler = f"Filler note {i} of {agent} on gardening and tomatoes"
        ids.append(
            (await service.memories.remember(RememberRequest(content=filler, agent_id=agent))).id
        )
    await service.embed_pending()
    return ids


async def _ready(service: CortexService, agent: str = "default") -> dict[str, Any]:
    """Ask once (that starts the build or load), wait for it, and return the debug view."""
    await service.memories.recall(RecallRequest(query="anything", agent_id=agent))
    await service.engines.searcher.index.settled()
    report = await service.memories.search_debug(
        SearchDebugRequest(query="anything", agent_id=agent)
    )
    assert report["vector_index"]["state"] == "ready", report["vector_index"]
    return report["vector_index"]


def _sources(service: CortexService, agent: str) -> list[str]:
    return [b.source for b in service.engines.searcher.index.builds if b.agent_id == agent]


async def test_a_recall_during_the_build_answers_from_text_and_says_so_then_is_hybrid(
    settings: Any, clock: FakeClock
) -> None:
    async with _open(settings, clock) as service:
        ids = await _fill(service)
        first = await service.memories.recall(
            RecallRequest(query="firewall blocks port", agent_id="default")
        )
        assert ids[1] in {m.id for m in first.memories}  # the text channel found it
        assert any(line.startswith(BUILDING) for line in first.meta.degraded), first.meta.degraded
        await service.engines.searcher.index.settled()
        report = await service.memories.search_debug(
            SearchDebugRequest(query="firewall blocks port")
        )
        assert "vector" in report["channels"] and report["providers"]["vector_backend"] == "ivf"
        assert not [line for line in report["degraded"] if "vector index" in line]
        assert report["vector_index"]["state"] == "ready"
        assert report["vector_index"]["source"] == "built"


async def test_concurrent_recalls_start_one_build(settings: Any, clock: FakeClock) -> None:
    async with _open(settings, clock) as service:
        await _fill(service)
        answers = await asyncio.gather(
            *(
                service.memories.recall(RecallRequest(query=fact, agent_id="default"))
                for fact in FACTS * 2
            )
        )
        assert all(answer.memories for answer in answers)
        await service.engines.searcher.index.settled()
        assert _sources(service, "default") == ["built"]


async def test_a_restart_reads_the_saved_index_instead_of_building_it(
    tmp_path: Path, settings: Any, clock: FakeClock
) -> None:
    ids = (await _first_run(settings, clock))["default"]
    assert list(index_dir(tmp_path / "a.db").glob("*.npz"))

    async with _open(settings, clock) as service:
        first = await service.memories.recall(
            RecallRequest(query="golden retriever adopted", agent_id="default")
        )
        assert any(line.startswith(LOADING) for line in first.meta.degraded), first.meta.degraded
        described = await _ready(service)
        assert described["source"] == "saved" and described["kind"] == "ivf"
        assert _sources(service, "default") == ["saved"]  # no k-means ran in this process
        report = await service.memories.search_debug(
            SearchDebugRequest(query="golden retriever adopted", max_results=5)
        )
        assert report["hits"][0]["id"] == ids[2]
        assert report["hits"][0]["vector"]["rank"] == 0


async def test_what_changed_after_the_save_is_seen_and_what_was_removed_is_not(
    settings: Any, clock: FakeClock
) -> None:
    ids = (await _first_run(settings, clock))["default"]
    async with _open(settings, clock) as service:  # no recall
        added = (
            await service.memories.remember(
                RememberRequest(content="Bob keeps bees on the roof in Kyoto")
            )
        ).id
        await service.embed_pending()
        await service.memories.forget(
            ForgetRequest(memory_id=ids[2], purge=True)
        )  # its vector is deleted
        await service.memories.forget(
            ForgetRequest(memory_id=ids[3])
        )  # forgotten: the vector stays, recall must not show it
    async with _open(settings, clock) as service:
        assert (await _ready(service))["source"] == "saved"
        index = service.engines.searcher.index
        live = set(index._partitions["default"].live_ids())
        assert added in live and ids[2] not in live
        for query, gone in [(FACTS[2], ids[2]), (FACTS[3], ids[3])]:
            report = await service.memories.search_debug(
                SearchDebugRequest(query=query, max_results=10)
            )
            assert gone not in {hit["id"] for hit in report["hits"]}
        report = await service.memories.search_debug(
            SearchDebugRequest(query="bees on the roof", max_results=3)
        )
        assert report["hits"][0]["id"] == added and report["hits"][0]["vector"]["rank"] == 0


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
async def test_a_corrupt_saved_index_is_ignored_and_rebuilt(
    tmp_path: Path,
    settings: Any,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    damage: str,
) -> None:
    ids = (await _first_run(settings, clock))["default"]
    [saved] = index_dir(tmp_path / "a.db").glob("*.npz")
    data = bytearray(saved.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF  # inside the arrays: only the checksum can tell
    else:
        data = bytearray(b"not an index at all")
    saved.write_bytes(bytes(data))

    caplog.set_level(logging.WARNING, logger="cortex_mcp")
    async with _open(settings, clock) as service:
        assert (await _ready(service))["source"] == "built"
        report = await service.memories.search_debug(
            SearchDebugRequest(query="golden retriever adopted", max_results=5)
        )
        assert report["hits"][0]["id"] == ids[2]
    ignored = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert len(ignored) == 1 and "rebuilt" in ignored[0], ignored


async def test_two_agents_never_mix_even_through_a_swapped_or_foreign_file(
    tmp_path: Path, stub: tuple[str, StubState], settings: Any, clock: FakeClock
) -> None:
    ids = await _first_run(settings, clock, a=20, b=30)
    mine, theirs = set(ids["a"]), set(ids["b"])
    saved = index_dir(tmp_path / "a.db")
    a_file = index_path(saved, "a", "stub-embed", 64)
    b_file = index_path(saved, "b", "stub-embed", 64)
    shutil.copy(b_file, a_file)  # b's index where a's belongs
    # and another database's index for the same agent name, model and dimensions
    await _first_run(_settings(tmp_path / "other.db", stub[0]), clock, b=25)
    shutil.copy(index_path(index_dir(tmp_path / "other.db"), "b", "stub-embed", 64), b_file)

    async with _open(settings, clock) as service:
        assert (await _ready(service, "a"))["source"] == "built"  # the header names b: ignored
        assert (await _ready(service, "b"))["source"] == "built"  # other.db's: ignored
        index = service.engines.searcher.index
        assert set(index._partitions["a"].live_ids()) >= mine
        for agent, own in [("a", mine), ("b", theirs)]:
            live = set(index._partitions[agent].live_ids())
            others = mine | theirs
            assert not (live & (others - own)), agent
            for fact in FACTS:
                recalled = await service.memories.recall(
                    RecallRequest(query=fact, agent_id=agent, max_results=10)
                )
                assert {m.id for m in recalled.memories} <= own, (agent, fact)
                assert not recalled.meta.degraded


async def test_closing_during_a_build_stops_it(settings: Any, clock: FakeClock) -> None:
    async with _open(settings, clock) as service:
        await _fill(service)
        first = await service.memories.recall(RecallRequest(query="firewall", agent_id="default"))
        assert any(line.startswith(BUILDING) for line in first.meta.degraded)
    async with _open(settings, clock) as service:
        await _ready(service)  # whatever the first run left, this one is right
        report = await service.memories.search_debug(
            SearchDebugRequest(query="firewall blocks port", max_results=3)
        )
        assert report["hits"][0]["content"] == FACTS[1]


def _on_disk(db: Path, agent: str = "default") -> tuple[set[str], dict[str, int]]:
    """(ids live in the saved file, id -> nonzero int8 codes of each row in it)."""
    path = index_path(index_dir(db), agent, "stub-embed", 64)
    saved = load(path, agent, "stub-embed", 64)
    assert saved is not None
    index = saved.index
    nonzero = {i: int(np.count_nonzero(index.codes[p])) for p, i in enumerate(index.ids)}
    return set(index.positions), nonzero


async def test_a_purged_memory_leaves_the_saved_file_too(
    tmp_path: Path, settings: Any, clock: FakeClock
) -> None:
    db = tmp_path / "a.db"
    async with _open(settings, clock) as service:
        ids = await _fill(service)
        await _ready(service)
        await service.memories.forget(
            ForgetRequest(memory_id=ids[2], purge=True)
        )  # while its index is loaded
        await service.memories.recall(
            RecallRequest(query="anything", agent_id="default")
        )  # the index sees it
        await service.engines.searcher.index.settled()
    live, nonzero = _on_disk(db)
    assert ids[2] not in live and nonzero[ids[2]] == 0 and nonzero[ids[1]] > 0

    async with _open(settings, clock) as service:
        await service.memories.forget(
            ForgetRequest(memory_id=ids[1], purge=True)
        )  # while no index is loaded
    async with _open(settings, clock) as service:
        assert (await _ready(service))["source"] == "saved"
    live, nonzero = _on_disk(db)
    assert ids[1] not in live and nonzero[ids[1]] == 0 and ids[3] in live


async def test_a_server_loads_the_saved_indexes_at_start_before_any_recall(
    settings: Any, clock: FakeClock
) -> None:
    await _first_run(settings, clock, a=10, b=10)
    async with open_cortex(settings, clock=clock, scheduler=True) as service:
        index = service.engines.searcher.index
        await index.settled()
        for agent in ("a", "b"):
            assert index.describe(agent)["state"] == "ready"
            assert index.describe(agent)["source"] == "saved"
        first = await service.memories.recall(RecallRequest(query=FACTS[2], agent_id="a"))
        assert not first.meta.degraded
