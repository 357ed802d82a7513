"""The reranker stage: a /rerank endpoint (tests/helpers/rerank_stub.py on 127.0.0.1) reorders the
top candidates before the cut; a slow, failing or nonsensical one changes nothing but a line in
`meta.degraded`, and its breaker stops asking it for a while. Recalls on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import ConfigError
from cortex_mcp.providers.rerank import BadAnswer, LocalReranker, read_scores
from cortex_mcp.runtime import build_reranker, open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest, SearchDebugRequest
from tests.conftest import TEST_KNOBS, FakeClock
from tests.helpers.rerank_stub import RerankStubState, rerank_stub, stub_score

pytestmark = pytest.mark.anyio

NOTES = [
    "The office firewall blocks port 22 for the printer",
    "The VPS firewall blocks port 8080 by default",
    "Firewall rules are reviewed every quarter by the firewall team",
    "The firewall log rotates nightly",
]
QUERY = "firewall port"
FAVOURITES = ["nightly", "rotates"]  # the stub's "model" prefers the note BM25 ranks last


@pytest.fixture
def served() -> Iterator[tuple[str, RerankStubState]]:
    with rerank_stub(RerankStubState(favourites=list(FAVOURITES))) as pair:
        yield pair


def _with_reranker(base: Settings, url: str, **rerank: Any) -> Settings:
    fields = {"provider": "http", "base_url": url, "model": "stub-rerank", **rerank}
    return base.model_copy(update={f"rerank_{name}": value for name, value in fields.items()})


async def _fill(settings: Settings, clock: FakeClock) -> list[str]:
    """The notes stored, and the order a recall gives them without a reranker."""
    async with open_cortex(settings, clock=clock) as service:
        for note in NOTES:
            await service.memories.remember(RememberRequest(content=note))
        return await _order(service)


async def _order(service: CortexService, **fields: Any) -> list[str]:
    result = await service.memories.recall(RecallRequest(query=QUERY, max_results=4, **fields))
    return [m.content for m in result.memories]


async def _recall(service: CortexService) -> tuple[list[str], list[str], list[float]]:
    """The order, what meta.degraded says of the reranker, the scores."""
    result = await service.memories.recall(RecallRequest(query=QUERY, max_results=4))
    notes = [note for note in result.meta.degraded if note.startswith("reranker")]
    return [m.content for m in result.memories], notes, [m.score for m in result.memories]


async def test_the_reranker_orders_the_top_candidates_as_it_says(
    backend_settings: Settings, clock: FakeClock, served: tuple[str, RerankStubState]
) -> None:
    url, state = served
    before = await _fill(backend_settings, clock)
    async with open_cortex(_with_reranker(backend_settings, url), clock=clock) as service:
        order, degraded, scores = await _recall(service)
        report = await service.memories.search_debug(SearchDebugRequest(query=QUERY))
    assert sorted(order) == sorted(before) and order != before
    assert order == sorted(before, key=lambda note: -stub_score(note, FAVOURITES))
    assert order[0] == "The firewall log rotates nightly"
    assert degraded == []
    assert scores == sorted(scores, reverse=True)  # the scores follow the new order
    request = state.requests[0]
    assert request["model"] == "stub-rerank" and request["query"] == QUERY
    assert sorted(request["documents"]) == sorted(NOTES) and request["top_n"] == 4
    assert report["hits"][0]["rerank_score"] == 2.0  # "rotates" and "nightly"
    assert {hit["rerank_score"] for hit in report["hits"][1:]} == {0.0}
    assert report["facts"]["rerank"] == {"reranker": "http", "reranked": 4}
    names = [s["name"] for s in report["stages"]]  # after every stage that scores, then MMR
    assert names.index("rerank") == len(names) - 3 and names[-2:] == ["diversity", "budget"]


@pytest.mark.parametrize("shape", ["results", "data", "tei"])
async def test_each_wire_shape_is_read(
    settings: Settings, clock: FakeClock, served: tuple[str, RerankStubState], shape: str
) -> None:
    """Cohere/Jina/Infinity (results), Voyage (data), TEI (a bare list, and its route wants
    the documents as `texts`)."""
    url, state = served
    state.shape, state.needs_texts = shape, shape == "tei"
    await _fill(settings, clock)
    async with open_cortex(_with_reranker(settings, url), clock=clock) as service:
        order, degraded, _ = await _recall(service)
        again, _, _ = await _recall(service)
    assert order[0] == again[0] == "The firewall log rotates nightly" and degraded == []
    if shape == "tei":  # refused once without texts, then sent with them from then on
        assert ["texts" in r for r in state.requests] == [False, True, True]


async def test_only_the_top_n_are_reranked(
    settings: Settings, clock: FakeClock, served: tuple[str, RerankStubState]
) -> None:
    url, state = served
    before = await _fill(settings, clock)
    async with open_cortex(_with_reranker(settings, url, top_n=2), clock=clock) as service:
        order, degraded, _ = await _recall(service)
    assert len(state.requests[0]["documents"]) == 2
    assert sorted(order[:2]) == sorted(before[:2]) and order[2:] == before[2:]
    assert degraded == []


async def test_a_slow_reranker_is_left_behind_at_its_timeout_and_the_order_kept(
    backend_settings: Settings, clock: FakeClock, served: tuple[str, RerankStubState]
) -> None:
    url, state = served
    state.delay_s = 3.0
    before = await _fill(backend_settings, clock)
    settings = _with_reranker(backend_settings, url, timeout_s=0.3)
    async with open_cortex(settings, clock=clock) as service:
        started = time.monotonic()
        order, degraded, _ = await _recall(service)
        took = time.monotonic() - started
    assert order == before
    assert degraded == ["reranker http: no answer within 0.3 s; order kept"]
    assert took < 2.0


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("nonjson", "answer is not JSON"),
        ("http500", "HTTP 500"),
        ("out_of_range", "result index 7 is not 0..3"),
        ("nonnumeric", "score 'high' is not a finite number"),
        ("noresults", "answer has no list of results"),
    ],
)
async def test_a_bad_answer_changes_nothing_and_says_why(
    settings: Settings,
    clock: FakeClock,
    served: tuple[str, RerankStubState],
    mode: str,
    says: str,
) -> None:
    url, state = served
    state.mode = mode
    before = await _fill(settings, clock)
    async with open_cortex(_with_reranker(settings, url), clock=clock) as service:
        order, degraded, _ = await _recall(service)
        report = await service.memories.search_debug(SearchDebugRequest(query=QUERY))
    assert order == before
    assert len(degraded) == 1 and degraded[0].startswith("reranker http: ")
    assert says in degraded[0] and degraded[0].endswith("; order kept")
    assert "\n" not in degraded[0]
    assert all(hit["rerank_score"] is None for hit in report["hits"])


async def test_the_breaker_opens_after_failures_and_recall_keeps_working(
    backend_settings: Settings, clock: FakeClock, served: tuple[str, RerankStubState]
) -> None:
    url, state = served
    state.mode = "http500"
    before = await _fill(backend_settings, clock)
    async with open_cortex(_with_reranker(backend_settings, url), clock=clock) as service:
        reranker = service.engines.reranker
        assert reranker is not None
        reranker.health.base_cooldown_s = 0.3
        for _ in range(3):
            order, degraded, _ = await _recall(service)
            assert order == before and "HTTP 500" in degraded[0]
        order, degraded, _ = await _recall(service)  # open: not asked at all
        assert order == before and "skipped for" in degraded[0]
        assert len(state.requests) == 3
        state.mode = None  # it recovers; after the cool-down one recall tries it again
        await anyio.sleep(0.35)
        order, degraded, _ = await _recall(service)
        assert degraded == [] and order[0] == "The firewall log rotates nightly"
        assert reranker.health.state() == "ok"


def test_read_scores_takes_every_shape_and_refuses_nonsense() -> None:
    results = {
        "results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]
    }
    assert read_scores(results, 2) == [0.1, 0.9]
    assert read_scores({"data": [{"index": 0, "relevance_score": 3}]}, 2)[0] == 3.0
    assert read_scores([{"index": 1, "score": -2.5}, {"index": 0, "score": 1}], 2) == [1.0, -2.5]
    left_out = read_scores([{"index": 1, "score": 0.5}], 2)  # a server that sent its top one
    assert left_out[1] == 0.5 and left_out[0] < -1e300
    for bad in (
        {"results": []},
        {"results": "x"},
        [{"index": 0, "score": float("nan")}],
        [{"index": -1, "score": 1}],
        [{"index": True, "score": 1}],
        [{"index": 0, "score": 1}, {"index": 0, "score": 2}],
        [{"index": 0, "score": None}],
        ["0.5"],
    ):
        with pytest.raises(BadAnswer):
            read_scores(bad, 2)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"provider": "http"}, "CORTEX_RERANK_PROVIDER=http needs CORTEX_RERANK_BASE_URL"),
        ({"provider": "http", "base_url": "ftp://x"}, "CORTEX_RERANK_BASE_URL: "),
        ({"provider": "cohere"}, "CORTEX_RERANK_PROVIDER: "),
        ({"top_n": 1}, "CORTEX_RERANK_TOP_N: "),
        ({"top_n": 500}, "CORTEX_RERANK_TOP_N: "),
        ({"timeout_s": 0}, "CORTEX_RERANK_TIMEOUT_S: "),
    ],
)
def test_settings_are_checked_and_name_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, Any], says: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(f"CORTEX_RERANK_{name.upper()}", str(value))
    with pytest.raises(ConfigError, match="invalid settings") as raised:
        load_settings(db_path=tmp_path / "brain.db")
    assert says in raised.value.message


def test_no_reranker_unless_configured(tmp_path: Path) -> None:
    settings = load_settings(db_path=tmp_path / "brain.db")
    assert settings.rerank_provider == "none"
    assert build_reranker(settings) == (None, [])


def test_a_local_reranker_without_the_extra_is_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LocalReranker, "available", staticmethod(lambda: False))
    settings = load_settings(db_path=tmp_path / "brain.db", rerank_provider="local")
    reranker, notes = build_reranker(settings)
    assert reranker is None
    assert notes == ["reranker local: install cortex-mcp with its `local` extra (fastembed)"]


async def test_a_local_reranker_that_cannot_load_degrades_in_one_line(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No copy in the models folder and the hub offline: the model fails for good, recall
    answers from the order it had and says why (nothing is downloaded)."""
    if TEST_KNOBS.get("CORTEX_TEST_LOCAL_EXTRA") != "required":
        pytest.importorskip("fastembed", reason="the `local` extra is not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    base = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        models_dir=tmp_path / "models",
    )
    before = await _fill(base, clock)
    settings = base.model_copy(update={"rerank_provider": "local"})
    async with open_cortex(settings, clock=clock) as service:
        reranker = service.engines.reranker
        assert reranker is not None
        for _ in range(100):  # it loads (and fails) in a background thread
            if reranker.inner.failure() is not None:  # type: ignore[attr-defined]
                break
            await anyio.sleep(0.05)
        order, degraded, _ = await _recall(service)
    assert order == before
    assert degraded == [
        "reranker local: model failed: HF_HUB_OFFLINE is set and the model is not in"
        f" {tmp_path / 'models'}; order kept"
    ]
