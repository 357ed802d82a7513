"""Merge compares by cosine when both memories have a vector of the current embedding model
(>= merge_threshold), by the text measure otherwise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cortex_mcp.config import Settings
from cortex_mcp.models import to_iso
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RememberRequest
from cortex_mcp.store.vectors import PendingEmbedding
from cortex_mcp.tokenize import content_hash
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(backend_settings: Settings) -> Settings:
    """Every test here runs on SQLite and on PostgreSQL."""
    return backend_settings


MODEL = "fixed-test-model"


async def _write_vectors(
    service: CortexService, clock: FakeClock, pairs: list[tuple[Any, list[float]]]
) -> None:
    items = []
    for written, vector in pairs:
        m = await service.stores.memories.get(written.id)
        assert m is not None
        blob = np.array(vector, np.float32).tobytes()
        items.append((PendingEmbedding(m.id, m.content, content_hash(m.content)), blob))
    await service.stores.vectors.save(items, MODEL, 4, to_iso(clock.now()))


def _use_model(service: CortexService, model: str) -> None:
    assert service.engines.lifecycle is not None
    service.engines.lifecycle.vector_model = lambda: model


async def test_memories_with_close_vectors_merge_though_their_words_differ(
    service: CortexService, clock: FakeClock
) -> None:
    old = await service.memories.remember(
        RememberRequest(content="The user lives in Tokyo", category="identity")
    )
    clock.advance(minutes=5)
    new = await service.memories.remember(
        RememberRequest(content="Harry's home is in Japan's capital", category="identity")
    )
    other = await service.memories.remember(
        RememberRequest(content="Harry was born in Osaka", category="identity")
    )
    await _write_vectors(
        service,
        clock,
        [(old, [1.0, 0.1, 0.0, 0.0]), (new, [0.95, 0.15, 0.05, 0.0]), (other, [0, 0, 1.0, 0])],
    )
    _use_model(service, MODEL)
    preview = await service.lifecycle.preview()
    report = await service.lifecycle.run()
    merges = [(a.ids, a.into) for a in report.actions if a.kind == "merge"]
    assert merges == [([old.id, new.id], new.id)]
    assert [(a.ids, a.into) for a in preview.actions if a.kind == "merge"] == merges
    kept_old = await service.stores.memories.get(old.id)
    assert kept_old is not None and kept_old.superseded_by == new.id


async def test_text_near_duplicates_with_distant_vectors_stay_apart(
    service: CortexService, clock: FakeClock
) -> None:
    a = await service.memories.remember(
        RememberRequest(content="The user lives in Tokyo", category="identity")
    )
    b = await service.memories.remember(
        RememberRequest(content="User lives in Tokyo.", category="identity")
    )
    await _write_vectors(service, clock, [(a, [1.0, 0, 0, 0]), (b, [0, 1.0, 0, 0])])
    _use_model(service, MODEL)
    report = await service.lifecycle.run()
    assert report.counts["merge"] == 0


async def test_without_vectors_of_the_current_model_the_text_measure_decides(
    service: CortexService, clock: FakeClock
) -> None:
    a = await service.memories.remember(
        RememberRequest(content="The user lives in Tokyo", category="identity")
    )
    clock.advance(minutes=5)
    b = await service.memories.remember(
        RememberRequest(content="User lives in Tokyo.", category="identity")
    )
    c = await service.memories.remember(
        RememberRequest(content="Harry's home is in Japan's capital", category="identity")
    )
    await _write_vectors(
        service, clock, [(a, [1.0, 0, 0, 0]), (b, [0, 1.0, 0, 0]), (c, [1, 0, 0, 0])]
    )
    _use_model(service, "another-model")  # the vectors above belong to a former model
    report = await service.lifecycle.run()
    assert [a_.ids for a_ in report.actions if a_.kind == "merge"] == [[a.id, b.id]]
