"""Import writes only into the caller's agent and applies `remember`'s rules to every field
(issue 13): forged agents, ids, limits, enums, ranges, times and references are refused or
replaced, errors name the item and the field, and a refused import writes nothing."""

from __future__ import annotations

import json
import math
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.engine.exchange.admit import (
    ID_LISTS,
    MAX_ACCESS_COUNT,
    MAX_METADATA_CHARS,
    sized_part,
)
from cortex_mcp.errors import InvalidInput
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, ImportRequest, RememberRequest
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.anyio
API = "/api/v1"
B_ID = "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a51"
NEW_ID = "01938f2e-7c4b-7d3a-9f1e-2b6c8d0e4a52"


def _memory(content: str = "The user likes green tea", **fields: Any) -> dict[str, Any]:
    item = {
        "id": NEW_ID,
        "agent_id": "B",
        "layer": "core",
        "category": "fact",
        "content": content,
        "importance": 0.7,
        "confidence": 0.8,
        "decay_score": 1.0,
        "access_count": 0,
        "created_at": "2026-03-01T10:00:00.000000Z",
        "updated_at": "2026-03-01T10:00:00.000000Z",
    }
    item.update(fields)
    return item


def _document(memories: list[Any], relations: list[Any] = (), logs: list[Any] = ()) -> dict:  # type: ignore[assignment]
    return {
        "format": "cortex-mcp-export",
        "version": 1,
        "exported_at": "2026-03-02T00:00:00.000000Z",
        "agent_id": "B",
        "memories": list(memories),
        "relations": list(relations),
        "lifecycle_log": list(logs),
    }


async def _import(service: CortexService, document: dict, agent: str = "A") -> dict[str, Any]:
    """The import pipeline's own rules: the request is built without validation, so a NUL in
    the document reaches them (the model refuses it first for a client, naming its path)."""
    request = ImportRequest.model_construct(document=document, agent_id=agent)
    return await service.exchange.import_memories(request)


async def test_a_document_naming_another_agent_writes_only_into_the_callers_agent(
    service: CortexService,
) -> None:
    victim = await service.memories.remember(
        RememberRequest(content="B's own secret plan", agent_id="B")
    )
    relation = {
        "id": str(uuid.uuid4()),
        "agent_id": "B",
        "subject": "Mallory",
        "predicate": "is",
        "object": "B's boss",
        "confidence": 0.9,
        "source_memory_id": victim.id,
        "created_at": "2026-03-01T10:00:00Z",
        "updated_at": "2026-03-01T10:00:00Z",
    }
    log = {
        "action": "archive",
        "memory_ids": [victim.id],
        "details": {"planted": True},
        "executed_at": "2026-03-01T10:00:00Z",
    }
    planted = _memory("I am B and my name is Mallory", category="identity")
    report = await _import(service, _document([planted], [relation], [log]))
    assert (report["memories"], report["relations"], report["logs"]) == (1, 1, 0)
    b_memories = await service.stores.exports.memories("B")
    assert [m.id for m in b_memories] == [victim.id]
    assert await service.stores.exports.relations("B") == []
    [mine] = await service.stores.exports.relations("A")
    assert mine["source_memory_id"] is None  # it may not point into B's memory
    [a_memory] = await service.stores.exports.memories("A")
    assert a_memory.agent_id == "A" and a_memory.content == planted["content"]
    assert await service.lifecycle.log() == []
    mixed = {**log, "memory_ids": [NEW_ID, victim.id], "executed_at": "2026-03-02T10:00:00Z"}
    empty = {**log, "memory_ids": [], "executed_at": "2026-03-03T10:00:00Z"}
    again = await _import(service, _document([planted], [], [mixed, empty]))
    assert again["logs"] == 1
    [entry] = await service.lifecycle.log()
    assert entry["memory_ids"] == [NEW_ID]  # B's id is not written into A's history


async def test_an_id_another_agent_uses_gets_a_new_id_and_references_follow_it(
    service: CortexService,
) -> None:
    theirs = await service.memories.remember(RememberRequest(content="B's memory", agent_id="B"))
    old = _memory("The user lived in Nagoya", id=theirs.id, superseded_by=NEW_ID)
    new = _memory("The user lives in Tokyo")
    await _import(service, _document([old, new]))
    assert [m.content for m in await service.stores.exports.memories("B")] == ["B's memory"]
    mine = {m.content: m for m in await service.stores.exports.memories("A")}
    moved = mine["The user lived in Nagoya"]
    assert moved.id != theirs.id and moved.superseded_by == NEW_ID


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "", "not-a-uuid", "  "])
async def test_malformed_ids_get_new_ids_and_references_to_them_follow(
    service: CortexService, bad_id: str
) -> None:
    old = _memory("Old address", id=bad_id)
    new = _memory("New address", superseded_by=bad_id if bad_id.strip() else None)
    await _import(service, _document([old, new]))
    rows = {m.content: m for m in await service.stores.exports.memories("A")}
    assert str(uuid.UUID(rows["Old address"].id)) == rows["Old address"].id
    if bad_id.strip():
        assert rows["New address"].superseded_by == rows["Old address"].id
    forgotten = await service.memories.forget(
        ForgetRequest(memory_id=rows["Old address"].id, agent_id="A", purge=True)
    )
    assert forgotten.status == "purged"


BAD_FIELDS = [
    ({"content": ""}, "content", "must contain text"),
    ({"content": "   "}, "content", "must contain text"),
    ({"content": "x" * 100_001}, "content", "over the limit"),
    ({"content": 7}, "content", "must be a string"),
    ({"layer": "attic"}, "layer", "unknown value"),
    ({"category": None}, "category", "unknown value"),
    ({"importance": 5}, "importance", "between 0 and 1"),
    ({"importance": -0.1}, "importance", "between 0 and 1"),
    ({"importance": "high"}, "importance", "must be a number"),
    ({"importance": True}, "importance", "must be a number"),
    ({"confidence": math.inf}, "confidence", "between 0 and 1"),
    ({"decay_score": math.nan}, "decay_score", "between 0 and 1"),
    ({"access_count": -3}, "access_count", "between 0"),
    ({"access_count": MAX_ACCESS_COUNT + 1}, "access_count", "between 0"),
    ({"access_count": 1.5}, "access_count", "whole number"),
    ({"created_at": "9999-01-01T00:00:00Z"}, "created_at", "is outside"),
    # a stored time (the memory's own time named apart) is one a store could have written;
    # alone, created_at is the memory's own time (tests/test_moment_range.py)
    ({"created_at": "1969-12-31T00:00:00Z", "occurred_at": "1969-12-31"}, "created_at", "outside"),
    ({"created_at": "2200-01-01T00:00:00Z", "occurred_at": "2026-01-01"}, "created_at", "outside"),
    ({"updated_at": "yesterday"}, "updated_at", "not an ISO 8601 time"),
    ({"forgotten_at": 12}, "forgotten_at", "ISO 8601"),
    ({"id": "a\x00b"}, "id", "NUL"),
    ({"agent_id": "B\x00"}, "agent_id", "NUL"),
    ({"superseded_by": "\x00"}, "superseded_by", "NUL"),
    ({"superseded_by": B_ID}, "superseded_by", "neither a memory of this import"),
    ({"metadata": "text"}, "metadata", "JSON object"),
    ({"metadata": {"x": "y" * MAX_METADATA_CHARS}}, "metadata", "over the limit"),
    ({"source": "s" * 501}, "source", "over the limit"),
    ({"shared": "yes"}, "shared", "true or false"),
]


@pytest.mark.parametrize(("fields", "field", "rule"), BAD_FIELDS)
async def test_a_memory_that_breaks_a_rule_is_refused_naming_item_and_field_and_nothing_is_written(
    service: CortexService, fields: dict[str, Any], field: str, rule: str
) -> None:
    good = _memory("A good memory before the bad one", id=str(uuid.uuid4()))
    document = _document([good, _memory(**fields)])
    with pytest.raises(InvalidInput) as refused:
        await _import(service, document)
    assert refused.value.field == f"memories[1].{field}"
    assert f"memories[1]: {field}: " in refused.value.message or field in refused.value.message
    assert rule in refused.value.message
    assert await service.stores.exports.memories(None) == []


@pytest.mark.parametrize(
    ("relation", "field"),
    [
        ({"subject": "a", "predicate": "b", "object": "c"}, "confidence"),
        ({"subject": "a", "predicate": "b", "object": "c", "confidence": 3}, "confidence"),
        ({"subject": "", "predicate": "b", "object": "c", "confidence": 0.5}, "subject"),
        ({"subject": "a", "predicate": "b" * 201, "object": "c", "confidence": 0.5}, "predicate"),
        ({"subject": "a", "predicate": "b", "object": "c", "confidence": 0.5, "id": "\x00"}, "id"),
    ],
)
async def test_relations_need_their_parts_and_a_confidence_in_range(
    service: CortexService, relation: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        await _import(service, _document([_memory()], [relation]))
    assert refused.value.field == f"relations[0].{field}"
    assert await service.stores.exports.memories(None) == []


async def test_superseded_by_may_name_this_agents_existing_memory_but_not_another_agents(
    service: CortexService,
) -> None:
    mine = await service.memories.remember(
        RememberRequest(content="The user lives in Tokyo", agent_id="A")
    )
    theirs = await service.memories.remember(
        RememberRequest(content="B lives in Osaka", agent_id="B")
    )
    ok = _memory("The user lived in Nagoya", superseded_by=mine.id)
    assert (await _import(service, _document([ok])))["memories"] == 1
    bad = _memory("B lived in Kobe", id=str(uuid.uuid4()), superseded_by=theirs.id)
    with pytest.raises(InvalidInput, match="superseded_by"):
        await _import(service, _document([bad]))


def test_rest_import_answers_400_naming_the_item_and_field_and_writes_to_the_caller(
    tmp_path: Path, clock: FakeClock
) -> None:
    with _client(tmp_path, clock) as client:
        bad = _document([_memory(), _memory("Second", id=str(uuid.uuid4()), importance=5)])
        reply = client.post(f"{API}/import", json={"format": "json", "document": bad})
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["field"] == "memories[1].importance"
        good = _document([_memory("Planted into B?")])
        reply = client.post(
            f"{API}/import", json={"document": good}, headers={"X-Cortex-Agent": "A"}
        )
        assert reply.status_code == 200, reply.text
        listed = client.get(f"{API}/memories", params={"agent_id": "B"}).json()["memories"]
        assert listed == []
        [row] = client.get(f"{API}/memories", params={"agent_id": "A"}).json()["memories"]
        assert row["agent_id"] == "A"


def test_the_cli_imports_into_its_own_agent_and_refuses_a_bad_item_in_one_line(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    export = tmp_path / "export.json"
    document = _document([_memory("Planted"), _memory("Bad", id=str(uuid.uuid4()), layer="x")])
    export.write_text(json.dumps(document))
    done = _cli(db, "import", str(export))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "memories[1]: layer: unknown value 'x'" in done.stderr
    export.write_text(json.dumps(_document([_memory("Planted")])))
    assert _cli(db, "import", str(export), "--agent", "A").returncode == 0
    rows = _listed(db, "A")
    assert [(r["agent_id"], r["content"]) for r in rows] == [("A", "Planted")]
    assert _listed(db, "B") == []


def _listed(db: Path, agent: str) -> list[dict[str, Any]]:
    listed = json.loads(_cli(db, "--agent-id", agent, "list", "--json").stdout)
    return listed["memories"] if isinstance(listed, dict) else listed


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args], capture_output=True, text=True, timeout=90, env=server_env(db)
    )


def _client(tmp_path: Path, clock: FakeClock) -> Any:
    settings_ = load_settings(
        db_path=tmp_path / "brain.db", embedding_provider="none", api_token=TOKEN
    )
    context = rest_client(settings_, clock)

    class _Authed:
        def __enter__(self) -> TestClient:
            client = context.__enter__()
            client.headers.update(AUTH)
            return client

        def __exit__(self, *exc: object) -> None:
            context.__exit__(*exc)

    return _Authed()


# ---- hypothesis: any document gives a 4xx or an import that keeps every limit --------------

_TEXT = st.one_of(st.text(max_size=30), st.sampled_from(["", " ", "\x00", "../../etc/passwd"]))
_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.booleans(),
    st.none(),
    _TEXT,
)
_TIME = st.one_of(
    st.sampled_from(
        ["2026-03-01T10:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00", "2026-13-01"]
    ),
    _TEXT,
    st.none(),
    st.integers(),
)
_ID = st.one_of(st.sampled_from([B_ID, NEW_ID, "", "\x00", "../../etc/passwd"]), _TEXT, st.none())
_MEMORY_FIELDS = {
    "id": _ID,
    "agent_id": _ID,
    "layer": st.one_of(st.sampled_from(["core", "working", "archive"]), _TEXT),
    "category": st.one_of(st.sampled_from(["fact", "todo", "identity"]), _TEXT),
    "content": st.one_of(st.text(min_size=1, max_size=60), _TEXT, _NUMBER),
    "importance": _NUMBER,
    "confidence": _NUMBER,
    "decay_score": _NUMBER,
    "access_count": _NUMBER,
    "created_at": _TIME,
    "updated_at": _TIME,
    "last_accessed": _TIME,
    "expires_at": _TIME,
    "forgotten_at": _TIME,
    "superseded_by": _ID,
    "metadata": st.one_of(st.dictionaries(st.text(max_size=5), st.text(max_size=5)), _TEXT),
    "shared": st.one_of(st.booleans(), _TEXT),
    "source": st.one_of(_TEXT, st.none()),
}
_ONE_FIELD_OFF = st.one_of(
    *(
        st.builds(lambda u, v, k=k: _memory(**{"id": str(u), k: v}), st.uuids(), strategy)
        for k, strategy in _MEMORY_FIELDS.items()
    )
)
_MEMORY = st.one_of(_ONE_FIELD_OFF, st.fixed_dictionaries({}, optional=_MEMORY_FIELDS))
_RELATION = st.fixed_dictionaries(
    {},
    optional={
        "id": _ID,
        "subject": _TEXT,
        "predicate": _TEXT,
        "object": _TEXT,
        "confidence": _NUMBER,
        "source_memory_id": _ID,
        "created_at": _TIME,
    },
)
_LOG = st.fixed_dictionaries(
    {},
    optional={
        "action": _TEXT,
        "memory_ids": st.one_of(st.lists(_ID, max_size=3), _TEXT),
        "details": st.one_of(st.dictionaries(st.text(max_size=5), st.integers()), _TEXT),
        "executed_at": _TIME,
    },
)
_DOCUMENT = st.builds(
    _document,
    st.lists(st.one_of(_MEMORY, st.integers()), max_size=4),
    st.lists(_RELATION, max_size=2),
    st.lists(_LOG, max_size=2),
)


@pytest.fixture(scope="module")
def fuzz_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with _client(tmp_path_factory.mktemp("fuzz"), FakeClock()) as client:
        yield client


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=_DOCUMENT)
def test_any_import_document_gets_a_4xx_or_is_imported_within_every_limit(
    fuzz_client: TestClient, document: dict[str, Any]
) -> None:
    reply = fuzz_client.post(
        f"{API}/import",
        content=json.dumps({"document": document}),  # NaN and Infinity as Python writes them
        headers={"X-Cortex-Agent": "fuzz", "Content-Type": "application/json"},
    )
    assert reply.status_code < 500, reply.text
    event(f"status {reply.status_code}")  # --hypothesis-show-statistics: how many were accepted
    if reply.status_code != 200:
        assert reply.status_code in (400, 422) and reply.json()["error"]["message"]
        return
    listed = fuzz_client.get(f"{API}/memories", params={"agent_id": "fuzz", "limit": 500})
    exported = fuzz_client.post(f"{API}/export", json={}, headers={"X-Cortex-Agent": "fuzz"})
    assert listed.status_code == 200 and exported.status_code == 200
    memories = exported.json()["document"]["memories"]
    ids = {m["id"] for m in memories}
    for memory in memories:
        _assert_within_limits(memory)
        assert memory["superseded_by"] is None or memory["superseded_by"] in ids


def _assert_within_limits(memory: dict[str, Any]) -> None:
    assert memory["agent_id"] == "fuzz"
    assert str(uuid.UUID(memory["id"])) == memory["id"]
    assert memory["content"].strip() and len(memory["content"]) <= 100_000
    assert memory["layer"] in ("core", "working", "archive")
    for name in ("importance", "confidence", "decay_score"):
        assert 0.0 <= memory[name] <= 1.0
    assert 0 <= memory["access_count"] <= MAX_ACCESS_COUNT
    for name in ("created_at", "updated_at", "last_accessed", "forgotten_at"):
        if memory[name] is not None:
            assert "1970-01-01" <= memory[name][:10] <= "2026-11-02"
    assert memory["source"] is None or len(memory["source"]) <= 500
    sized = sized_part(memory["metadata"], ID_LISTS["metadata"])
    assert len(json.dumps(sized, ensure_ascii=False)) <= MAX_METADATA_CHARS
