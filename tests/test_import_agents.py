"""An export of several agents imported back gives each memory, relation and log entry to its
own agent (issue 32, item 2): `--agent` / `agent_id` remaps a file of one agent only (a file of
several with it is refused, naming the rule), merging several into one takes
`--merge-agents-into` / `merge_agents_into` and the report says so, and an agent token imports
into its own agent only (a file of several through it writes no other agent). The CLI and
REST, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ForgetRequest,
    LifecycleLogRequest,
    RelationRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.anyio
API = "/api/v1"
NOTES = {
    "alice": ["Alice keeps bees on the roof", "Alice's sister lives in Lyon"],
    "bob": ["Bob rows on Sundays", "Bob's car is a green Volvo", "Bob is allergic to kiwi"],
}


@contextmanager
def _second_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """Another empty store on the same backend: its SQLite path, or its PostgreSQL URL."""
    if backend == "sqlite":
        yield str(tmp_path / "restored.db")
        return
    with request.getfixturevalue("pg_server").fresh_database() as url:
        yield url


def _settings_of(store: str, tmp_path: Path, **extra: Any) -> Settings:
    if store.startswith("postgresql"):
        return load_settings(
            db_path=tmp_path / "unused.db",
            database_url=store,
            embedding_provider="none",
            **extra,
        )
    return load_settings(db_path=Path(store), embedding_provider="none", **extra)


async def _seed(service: CortexService) -> None:
    """Each agent's memories, a relation, and log entries (alice forgets, bob supersedes)."""
    for agent, notes in NOTES.items():
        made = [
            await service.memories.remember(RememberRequest(content=n, agent_id=agent))
            for n in notes
        ]
        await service.relations.add(
            build(RelationRequest, subject=agent, predicate="owns", object="a boat", agent_id=agent)
        )
        if agent == "alice":
            await service.memories.forget(ForgetRequest(memory_id=made[1].id, agent_id=agent))
        else:
            newer = RememberRequest(
                content="Bob rows on Saturdays", supersedes=made[0].id, agent_id=agent
            )
            await service.memories.remember(newer)


async def _owners(settings: Settings) -> dict[str, Any]:
    """Per agent: its memories' contents, its relations' subjects, its log's actions."""
    async with open_cortex(settings, clock=FakeClock()) as service:
        found: dict[str, Any] = {}
        for memory in await service.stores.exports.memories(None):
            found.setdefault(memory.agent_id, {"memories": set(), "relations": [], "log": []})
            found[memory.agent_id]["memories"].add(memory.content)
        for agent, seen in found.items():
            seen["relations"] = [
                r["subject"] for r in await service.stores.exports.relations(agent)
            ]
            log = await service.lifecycle.log(build(LifecycleLogRequest, agent_id=agent))
            seen["log"] = sorted(e["action"] for e in log)
        return found


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    assert settings.db_path is not None
    extra = {}
    if settings.database_url is not None:
        extra["CORTEX_DATABASE_URL"] = settings.database_url.get_secret_value()
    return subprocess.run(
        [*server_command(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=server_env(settings.db_path, **extra),
    )


async def test_the_cli_restores_each_agent_remaps_one_and_merges_only_when_asked(
    backend: str,
    backend_settings: Settings,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    async with open_cortex(backend_settings, clock=FakeClock()) as service:
        await _seed(service)
    original = await _owners(backend_settings)
    assert set(original) == {"alice", "bob"}
    everything = tmp_path / "all.json"
    assert (
        _cli(backend_settings, "export", "--format", "json", "--out", str(everything)).returncode
        == 0
    )

    with _second_store(backend, tmp_path, request) as store:
        restored = _settings_of(store, tmp_path)
        refused = _cli(restored, "import", str(everything), "--agent", "carol")
        assert refused.returncode == 2 and refused.stdout == ""
        assert "2 agents (alice, bob)" in refused.stderr and "--merge-agents-into" in refused.stderr
        assert refused.stderr.count("\n") == 1
        assert await _owners(restored) == {}  # nothing written

        done = _cli(restored, "import", str(everything), "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["from_agents"] == ["alice", "bob"] and report["merged_into"] is None
        assert report["agents"] == {"alice": 2, "bob": 4}
        assert await _owners(restored) == original  # memories, relations and log entries
        human = _cli(restored, "import", str(everything))
        assert "each agent's memories back to it: alice, bob" in human.stdout

    with _second_store(backend, tmp_path / "merged", request) as store:
        (tmp_path / "merged").mkdir(exist_ok=True)
        merged = _settings_of(store, tmp_path / "merged")
        done = _cli(merged, "import", str(everything), "--merge-agents-into", "team")
        assert done.returncode == 0, done.stderr
        assert "merged the agents alice, bob into team" in done.stdout
        owners = await _owners(merged)
        assert set(owners) == {"team"}
        assert (
            owners["team"]["memories"]
            == original["alice"]["memories"] | original["bob"]["memories"]
        )
        assert sorted(owners["team"]["relations"]) == ["alice", "bob"]


@contextmanager
def _app(settings: Settings) -> Iterator[TestClient]:
    with rest_client(settings, FakeClock()) as client:
        client.headers.update(AUTH)
        yield client


def _document(client: TestClient, *agents: str) -> dict[str, Any]:
    """One document holding the exports of `agents` (as an export of every agent does)."""
    parts = [
        client.post(f"{API}/export", json={"format": "json", "agent_id": a}).json()["document"]
        for a in agents
    ]
    document = dict(parts[0])
    for section in ("memories", "relations", "lifecycle_log"):
        document[section] = [item for part in parts for item in part[section]]
    document["agent_id"] = None if len(agents) > 1 else agents[0]
    return document


def _contents(client: TestClient, agent: str) -> set[str]:
    listed = client.get(f"{API}/memories", params={"agent_id": agent, "limit": 100})
    assert listed.status_code == 200, listed.text
    return {m["content"] for m in listed.json()["memories"]}


async def test_rest_restores_each_agent_and_an_agent_token_imports_into_its_own_agent_only(
    backend: str,
    backend_settings: Settings,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    async with open_cortex(backend_settings, clock=FakeClock()) as service:
        await _seed(service)
    url = backend_settings.database_url
    store = url.get_secret_value() if url is not None else str(backend_settings.db_path)
    with _app(_settings_of(store, tmp_path, api_token=TOKEN)) as client:
        both = _document(client, "alice", "bob")
        bobs_only = _document(client, "bob")
    live = {agent: set(notes) for agent, notes in NOTES.items()}
    live["alice"] -= {NOTES["alice"][1]}  # forgotten
    live["bob"] = (live["bob"] - {NOTES["bob"][0]}) | {"Bob rows on Saturdays"}  # superseded

    with (
        _second_store(backend, tmp_path, request) as store,
        _app(_settings_of(store, tmp_path, api_token=TOKEN)) as client,
    ):
        remapped = client.post(f"{API}/import", json={"document": both, "agent_id": "carol"})
        assert remapped.status_code == 400, remapped.text
        assert remapped.json()["error"]["field"] == "agent_id"
        assert "2 agents (alice, bob)" in remapped.json()["error"]["message"]
        by_header = client.post(
            f"{API}/import", json={"document": both}, headers={"X-Cortex-Agent": "carol"}
        )
        assert by_header.status_code == 400, by_header.text

        token = client.post(f"{API}/tokens", json={"agent": "alice"}).json()["token"]
        as_alice = {"Authorization": f"Bearer {token}"}
        refused = client.post(f"{API}/import", json={"document": both}, headers=as_alice)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["field"] == "merge_agents_into"
        into_bob = client.post(
            f"{API}/import", json={"document": both, "merge_agents_into": "bob"}, headers=as_alice
        )
        assert into_bob.status_code == 403, into_bob.text
        assert _contents(client, "alice") == set() and _contents(client, "bob") == set()

        # a file of one agent through alice's token: into alice, bob untouched
        mine = client.post(f"{API}/import", json={"document": bobs_only}, headers=as_alice)
        assert mine.status_code == 200, mine.text
        assert mine.json()["from_agents"] == ["bob"] and set(mine.json()["agents"]) == {"alice"}
        assert _contents(client, "alice") == live["bob"] and _contents(client, "bob") == set()

        restored = client.post(f"{API}/import", json={"document": both})
        assert restored.status_code == 200, restored.text
        assert restored.json()["from_agents"] == ["alice", "bob"]
        assert _contents(client, "bob") == live["bob"]
        assert _contents(client, "alice") == live["alice"] | live["bob"]
        bobs_log = client.get(f"{API}/lifecycle/log", params={"agent_id": "bob"}).json()
        assert sorted(e["action"] for e in bobs_log["entries"]) == ["supersede"]

        merged = client.post(
            f"{API}/import", json={"document": both, "merge_agents_into": "alice"}, headers=as_alice
        )
        assert merged.status_code == 200, merged.text
        assert merged.json()["merged_into"] == "alice"
        assert _contents(client, "bob") == live["bob"]  # the token wrote no other agent
