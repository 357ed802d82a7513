"""Entities over every surface: REST (list by prefix, a page with its memory ids, alias add and
remove, rename, merge with a dry run that equals the run, the log and undo), the command line
(`entities`, `entity NAME` and its verbs) and the MCP resources (`cortex://entities`,
`cortex://entities/{name}`); an agent token sees and changes only its agent's entities."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from pydantic import SecretStr
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest, build
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import TOKEN, rest_client
from tests.helpers.stdio_helpers import server_command, server_env

API = "/api/v1"
ALICE = [
    "My sister Anna is a doctor in Lyon",
    "Anna runs the Lyon marathon every spring",
    "Andrea: I moved my clinic to the old town",
    "Tom: my cousin Kate plays the sax",
]


async def _seed(settings: Settings, clock: FakeClock, agent: str, texts: list[str]) -> None:
    async with open_cortex(settings, clock=clock) as svc:
        for text in texts:
            request = build(RememberRequest, content=text, category="fact", agent_id=agent)
            await svc.memories.remember(request)
        await svc.drain()


@pytest.fixture
def seeded(backend_settings: Settings, clock: FakeClock) -> Settings:
    import anyio

    settings = backend_settings.model_copy(update={"api_token": SecretStr(TOKEN)})
    anyio.run(_seed, settings, clock, "alice", ALICE)
    anyio.run(_seed, settings, clock, "bob", ["My sister Zoe paints"])
    return settings


@pytest.fixture
def client(seeded: Settings, clock: FakeClock) -> Iterator[TestClient]:
    with rest_client(seeded, clock) as c:
        c.headers.update({"Authorization": f"Bearer {TOKEN}", "X-Cortex-Agent": "alice"})
        yield c


def _ok(reply: Any, status: int = 200) -> Any:
    assert reply.status_code == status, reply.text
    return reply.json()


def test_rest_lists_shows_and_mends_entities_and_every_verb_is_logged_and_undone(
    client: TestClient,
) -> None:
    listed = _ok(client.get(f"{API}/entities", params={"prefix": "an", "limit": 1}))
    assert [e["name"] for e in listed["entities"]] == ["Anna"] and listed["total"] == 2
    assert {e["name"] for e in _ok(client.get(f"{API}/entities"))["entities"]} >= {
        "Anna", "Andrea", "Lyon", "Tom", "Kate",
    }  # fmt: skip
    anna = listed["entities"][0]
    page = _ok(client.get(f"{API}/entities/{anna['id']}"))
    assert len(page["memory_ids"]) == 2 and page["entity"]["aliases"] == ["My sister"]
    andrea = _ok(client.get(f"{API}/entities", params={"prefix": "andrea"}))["entities"][0]

    preview = _ok(
        client.post(
            f"{API}/entities/merge", json={"source": "Andrea", "into": "Anna", "dry_run": True}
        )
    )
    assert _ok(client.get(f"{API}/entities/{andrea['id']}"))["entity"]["name"] == "Andrea"
    merged = _ok(
        client.post(f"{API}/entities/merge", json={"source": andrea["id"], "into": anna["id"]})
    )
    assert {**preview, "dry_run": False, "log_id": merged["log_id"]} == merged
    assert client.get(f"{API}/entities/{andrea['id']}").status_code == 404
    assert len(_ok(client.get(f"{API}/entities/{anna['id']}"))["memory_ids"]) == 3

    added = _ok(client.post(f"{API}/entities/{anna['id']}/aliases", json={"alias": "Dr. Anna"}))
    assert "Dr. Anna" in added["entity"]["aliases"]
    renamed = _ok(client.post(f"{API}/entities/Anna/rename", json={"name": "Anna Martin"}))
    assert renamed["entity"]["name"] == "Anna Martin" and "Anna" in renamed["entity"]["aliases"]
    removed = _ok(client.delete(f"{API}/entities/{anna['id']}/aliases/Dr.%20Anna"))
    assert "Dr. Anna" not in removed["entity"]["aliases"]

    log = _ok(client.get(f"{API}/entities/log"))["entries"]
    assert [e["action"] for e in log] == ["alias_remove", "rename", "alias_add", "merge"]
    for entry in log:  # newest first, each undone
        assert (
            _ok(client.post(f"{API}/entities/undo", json={"log_id": entry["id"]}))["undone"]
            == entry["id"]
        )
    assert _ok(client.get(f"{API}/entities/{andrea['id']}"))["entity"]["name"] == "Andrea"
    back = _ok(client.get(f"{API}/entities/{anna['id']}"))["entity"]
    assert (back["name"], back["aliases"]) == ("Anna", ["My sister"])

    bad = client.post(f"{API}/entities/{anna['id']}/aliases", json={"alias": "  "})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "alias"
    taken = client.post(f"{API}/entities/{anna['id']}/rename", json={"name": "lyon"})
    assert taken.status_code == 400 and "merge" in taken.json()["error"]["message"]


def test_an_agent_token_sees_and_changes_only_its_own_agents_entities(
    client: TestClient,
) -> None:
    made = _ok(client.post(f"{API}/tokens", json={"agent": "bob"}), 201)
    bob = {"Authorization": f"Bearer {made['token']}", "X-Cortex-Agent": "bob"}
    anna = _ok(client.get(f"{API}/entities", params={"prefix": "anna"}))["entities"][0]
    seen = _ok(client.get(f"{API}/entities", headers=bob))
    assert [e["name"] for e in seen["entities"]] == ["Zoe"]
    assert client.get(f"{API}/entities/{anna['id']}", headers=bob).status_code == 404
    assert client.get(f"{API}/entities/Anna", headers=bob).status_code == 404
    for method, path, body in (
        ("POST", f"/entities/{anna['id']}/aliases", {"alias": "x"}),
        ("POST", f"/entities/{anna['id']}/rename", {"name": "x"}),
        ("DELETE", f"/entities/{anna['id']}/aliases/My%20sister", None),
        ("POST", "/entities/merge", {"source": anna["id"], "into": "Zoe"}),
    ):
        reply = client.request(method, API + path, json=body, headers=bob)
        assert reply.status_code == 404, (path, reply.text)
    asked = client.get(f"{API}/entities", params={"agent_id": "alice"}, headers=bob)
    assert asked.status_code == 403
    assert _ok(client.get(f"{API}/entities/{anna['id']}"))["entity"]["aliases"] == ["My sister"]
    assert _ok(client.get(f"{API}/entities/log", headers=bob))["entries"] == []


# ---- the command line -------------------------------------------------------------------------


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args], capture_output=True, text=True, timeout=90, env=server_env(db)
    )


@pytest.mark.slow
def test_the_command_line_lists_shows_and_mends_entities(tmp_path: Path, clock: FakeClock) -> None:
    import anyio

    settings = load_settings(db_path=tmp_path / "brain.db", embedding_provider="none")
    anyio.run(_seed, settings, clock, "default", ALICE)
    db = settings.db_path
    listed = _cli(db, "entities", "an")
    assert listed.returncode == 0, listed.stderr
    assert "Anna" in listed.stdout and "Andrea" in listed.stdout and "Lyon" not in listed.stdout
    page = json.loads(_cli(db, "entity", "my sister", "--json").stdout)
    assert page["entity"]["name"] == "Anna" and len(page["memories"]) == 2
    assert "doctor in Lyon" in _cli(db, "entity", "Anna").stdout
    dry = _cli(db, "entity", "Andrea", "merge-into", "Anna", "--dry-run")
    assert dry.stdout.startswith("would merge Andrea into Anna: 1 memories")
    assert _cli(db, "entity", "Andrea").returncode == 0  # nothing moved
    assert _cli(db, "entity", "Anna", "alias", "Doc").stdout.startswith("done (log ")
    log = json.loads(_cli(db, "entities", "--log", "--json").stdout)["entries"]
    undone = _cli(db, "entities", "--undo", str(log[0]["id"]))
    assert undone.stdout.strip() == f"undone: alias_add (log {log[0]['id']})"
    missing = _cli(db, "entity", "Nobody")
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1
    assert "no entity 'Nobody'" in missing.stderr


# ---- MCP resources ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_entity_resources_show_one_agents_entities_only(
    settings: Settings, clock: FakeClock, mode: str
) -> None:
    await _seed(settings, clock, "alice", ALICE)
    for agent, names in (("alice", {"Anna", "Kate"}), ("bob", set())):
        own = settings.model_copy(update={"agent_id": agent})
        server = build_server(lambda own=own: open_cortex(own, clock=clock), own)  # type: ignore[misc]
        async with Client(server, mode=mode) as c:
            listed = json.loads((await c.read_resource("cortex://entities")).contents[0].text)
            assert names <= {e["name"] for e in listed["entities"]}
            if not names:
                assert listed["entities"] == []
                with pytest.raises(MCPError, match="no entity"):
                    await c.read_resource("cortex://entities/Anna")
                continue
            page = json.loads(
                (await c.read_resource("cortex://entities/my%20sister")).contents[0].text
            )
            assert page["entity"]["name"] == "Anna"
            assert [m["content"] for m in page["memories"]] == [
                "Anna runs the Lyon marathon every spring",
                "My sister Anna is a doctor in Lyon",
            ] or len(page["memories"]) == 2
