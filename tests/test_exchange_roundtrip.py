"""Export and import that round-trip (issue 18): the Markdown folder and the REST bodies give
back every memory with its layer, category, date and content; one overwrite rule for every
export format; OpenClaw workspaces dated by their file names (issue 19)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ImportRequest, RelationRequest, RememberRequest, build
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = pytest.mark.anyio
API = "/api/v1"
FIXTURES = Path(__file__).parent / "fixtures"


async def _fill(service: CortexService, clock: FakeClock) -> None:
    """Every layer, several categories and days, content with line breaks, relations."""
    await service.memories.remember(
        RememberRequest(content="The user's name is Harry", category="identity")
    )
    await service.memories.remember(
        RememberRequest(content="Buy a new router\n  - with IPv6\n\nbefore March", category="todo")
    )
    await service.memories.remember(
        RememberRequest(content="Prefers green tea", category="preference", importance=0.9)
    )
    await service.memories.remember(RememberRequest(content="Knows Rust well", category="skill"))
    await service.memories.remember(
        RememberRequest(content="[2026-01-01] is a date the user wrote", category="insight")
    )
    await service.memories.remember(
        RememberRequest(content="Chose Oracle Cloud ARM", category="decision")
    )
    await service.memories.remember(
        RememberRequest(content="Works at Acme", category="relationship")
    )
    clock.advance(days=3, hours=5)
    await service.memories.remember(
        RememberRequest(content="Debugging the gateway crash", category="context", layer="working")
    )
    await service.memories.remember(
        RememberRequest(content="Wants a summary by Friday", category="todo", layer="working")
    )
    clock.advance(days=40)
    await service.memories.remember(
        RememberRequest(content="Old trip notes", category="fact", layer="archive")
    )
    await service.memories.remember(
        RememberRequest(content="Old lesson\nwith two lines", category="insight", layer="archive")
    )
    await service.relations.add(
        build(RelationRequest, subject="Harry", predicate="works at", object="Acme")
    )


def _shape(memories: list[Any]) -> set[tuple[str, str, str, str]]:
    return {(m.layer.value, m.category.value, m.created_at[:10], m.content) for m in memories}


def _triples(relations: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(r["subject"], r["predicate"], r["object"]) for r in relations}


async def test_a_markdown_export_imports_into_an_empty_database_with_layer_category_date_and_content(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    await _fill(service, clock)
    folder = tmp_path / "export"
    await service.exchange.export_markdown(str(folder))
    original = await service.stores.exports.memories(None, live_only=True)
    relations = await service.stores.exports.relations(None)
    settings = load_settings(db_path=tmp_path / "empty.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as other:
        first = await other.exchange.import_path(str(folder))
        assert first.memories == len(original) == 11
        back = await other.stores.exports.memories(None)
        assert _shape(back) == _shape(original)
        assert _triples(await other.stores.exports.relations(None)) == _triples(relations)
        again = await other.exchange.import_path(str(folder))
        assert (again.memories, again.relations) == (0, 0)
        assert again.existing == len(original)
    working = [m for m in back if m.layer.value == "working"]
    assert {m.category.value for m in working} == {"context", "todo"}
    assert not any("[context]" in m.content or "00:" in m.content for m in working)


async def test_the_exported_memory_folder_alone_and_a_working_file_import(
    service: CortexService, clock: FakeClock, tmp_path: Path
) -> None:
    await _fill(service, clock)
    folder = tmp_path / "export"
    await service.exchange.export_markdown(str(folder))
    [day] = sorted((folder / "memory" / "working").glob("*.md"))
    settings = load_settings(db_path=tmp_path / "empty.db", embedding_provider="none")
    async with open_cortex(settings, clock=clock) as other:
        one = await other.exchange.import_path(str(day))
        assert one.memories == 2
        rest = await other.exchange.import_path(str(folder / "memory"))
        assert rest.memories == 2 and rest.existing == 2 and rest.relations == 1
        layers = sorted(m.layer.value for m in await other.stores.exports.memories(None))
        assert layers == ["archive", "archive", "working", "working"]


async def test_an_openclaw_workspace_dates_daily_notes_by_file_name_and_reads_user_md(
    service: CortexService, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES / "openclaw", workspace)
    (workspace / "USER.md").write_text("# User\n\n- Name: Harry\n- Lives in Tokyo\n")
    note = workspace / "memory" / "2026-03-07.md"
    note.write_text("## 08:15 Morning\n\n- Walked to the station\n")
    report = await service.exchange.import_path(str(workspace))
    assert str(workspace / "USER.md") in report.files
    rows = {m.content: m for m in await service.stores.exports.memories(None)}
    assert rows["Walked to the station"].created_at.startswith("2026-03-07T08:15")
    assert rows["Lives in Tokyo"].category.value == "identity"
    posted = await service.exchange.import_memories(
        build(
            ImportRequest,
            format="openclaw",
            files={"memory/2026-03-09.md": "- Took the train home\n"},
        )
    )
    assert posted["memories"] == 1
    rows = {m.content: m for m in await service.stores.exports.memories(None)}
    assert rows["Took the train home"].created_at.startswith("2026-03-09")


# ---- REST: what /export answers is posted back to /import as is ----------------------------


def _client(path: Path, clock: FakeClock) -> Any:
    settings = load_settings(db_path=path, embedding_provider="none", api_token=TOKEN)
    return rest_client(settings, clock)


@pytest.fixture
def two_clients(tmp_path: Path, clock: FakeClock) -> Iterator[tuple[TestClient, TestClient]]:
    with _client(tmp_path / "a.db", clock) as a, _client(tmp_path / "b.db", clock) as b:
        a.headers.update(AUTH)
        b.headers.update(AUTH)
        yield a, b


def _remember(client: TestClient, content: str, **extra: Any) -> None:
    reply = client.post(f"{API}/memories", json={"content": content, **extra})
    assert reply.status_code == 201, reply.text


def _listed(client: TestClient) -> set[tuple[str, str, str]]:
    rows = client.get(f"{API}/memories", params={"limit": 500}).json()["memories"]
    return {(r["layer"], r["category"], r["content"]) for r in rows}


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_a_rest_export_posted_as_is_to_import_gives_every_memory_back_once(
    two_clients: tuple[TestClient, TestClient], fmt: str
) -> None:
    source, target = two_clients
    _remember(source, "Prefers oolong tea", category="preference")
    _remember(source, "Ship the beta\nthen rest", category="todo")
    _remember(source, "Reading logs", category="context", layer="working")
    exported = source.post(f"{API}/export", json={"format": fmt})
    assert exported.status_code == 200, exported.text
    first = target.post(f"{API}/import", json=exported.json())
    assert first.status_code == 200, first.text
    assert first.json()["memories"] == 3
    assert _listed(target) == _listed(source)
    again = target.post(f"{API}/import", json=exported.json())
    assert again.json()["memories"] == 0 and again.json()["existing"] == 3


def test_rest_import_reads_memory_jsonl_and_the_old_content_body(
    two_clients: tuple[TestClient, TestClient],
) -> None:
    client, _ = two_clients
    jsonl = (FIXTURES / "memory.jsonl").read_text()
    reply = client.post(f"{API}/import", json={"format": "jsonl", "content": jsonl})
    assert reply.status_code == 200, reply.text
    assert (reply.json()["memories"], reply.json()["relations"]) == (4, 1)
    document = json.dumps(client.post(f"{API}/export", json={}).json()["document"])
    old = client.post(f"{API}/import", json={"format": "json", "content": document})
    assert old.status_code == 200 and old.json()["existing"] == 4
    both = client.post(f"{API}/import", json={"content": document, "document": {}})
    assert both.status_code == 422


def test_the_openapi_document_types_export_and_import_responses(
    two_clients: tuple[TestClient, TestClient],
) -> None:
    client, _ = two_clients
    doc = client.get(f"{API}/openapi.json").json()
    schemas = doc["components"]["schemas"]
    for path, name in (("/api/v1/export", "ExportResponse"), ("/api/v1/import", "ImportResponse")):
        ok = doc["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]
        assert ok["schema"]["$ref"].endswith(name)
        assert schemas[name].get("additionalProperties") is not True
    assert set(schemas["ImportResponse"]["required"]) == {
        "files",
        "memories",
        "relations",
        "logs",
        "existing",
        "dropped_ids",
        "from_agents",
        "agents",
        "merged_into",
    }


# ---- the export matrix: every format x existing file, folder, missing parent ----------------


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args], capture_output=True, text=True, timeout=90, env=server_env(db)
    )


def _target(tmp_path: Path, case: str) -> Path:
    if case == "existing file":
        path = tmp_path / "taken"
        path.write_text("mine\n")
    elif case == "existing folder":
        path = tmp_path / "folder"
        path.mkdir()
        (path / "notes.txt").write_text("mine\n")
    else:
        path = tmp_path / "missing" / "out"
    return path


CELLS = [
    ("json", "existing file", "exists; choose a new file or pass --force"),
    ("json", "existing folder", "is a folder; this format writes a file"),
    ("json", "missing parent", "does not exist; create it first"),
    ("sqlite", "existing file", "exists; choose a new file or pass --force"),
    ("sqlite", "existing folder", "is a folder; this format writes a file"),
    ("sqlite", "missing parent", "does not exist; create it first"),
    ("markdown", "existing file", "is a file; this format writes a folder"),
    ("markdown", "existing folder", "exists; choose a new folder or pass --force"),
    ("markdown", "missing parent", "does not exist; create it first"),
]


@pytest.mark.parametrize(("fmt", "case", "message"), CELLS)
def test_each_export_format_refuses_an_unsafe_target_in_one_line_with_exit_2(
    tmp_path: Path, fmt: str, case: str, message: str
) -> None:
    target = _target(tmp_path, case)
    done = _cli(tmp_path / "brain.db", "export", "--format", fmt, "--out", str(target))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "missing").exists()
    if case == "existing file":
        assert target.read_text() == "mine\n"


@pytest.mark.parametrize(
    ("fmt", "case"),
    [("json", "existing file"), ("sqlite", "existing file"), ("markdown", "existing folder")],
)
def test_force_replaces_an_existing_target_of_the_right_kind(
    tmp_path: Path, fmt: str, case: str
) -> None:
    db = tmp_path / "brain.db"
    assert _cli(db, "add", "Prefers green tea").returncode == 0
    target = _target(tmp_path, case)
    done = _cli(db, "export", "--format", fmt, "--out", str(target), "--force")
    assert done.returncode == 0, done.stderr
    if fmt == "markdown":
        assert "Prefers green tea" in (target / "MEMORY.md").read_text()
        assert (target / "notes.txt").read_text() == "mine\n"  # not ours: left alone
        return
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    if fmt == "sqlite":
        assert not Path(f"{target}-wal").exists() and not Path(f"{target}-shm").exists()
        assert "Prefers green tea" in _cli(target, "list").stdout
    else:
        assert "Prefers green tea" in target.read_text()


def test_a_long_import_shows_per_item_progress_only_when_asked_off_a_terminal(
    tmp_path: Path,
) -> None:
    note = tmp_path / "MEMORY.md"
    note.write_text("## Facts\n\n" + "".join(f"- Fact number {n}\n" for n in range(450)))
    quiet = _cli(tmp_path / "quiet.db", "import", str(note))
    assert quiet.returncode == 0 and quiet.stderr == ""
    shown = _cli(tmp_path / "shown.db", "import", str(note), "--progress")
    assert shown.returncode == 0, shown.stderr
    assert "checking" in shown.stderr and "importing" in shown.stderr
    assert "/450" in shown.stderr and "item" in shown.stderr  # items, not files


async def test_a_folder_with_nothing_importable_is_refused_and_an_empty_file_imports_nothing(
    service: CortexService, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match="nothing to import"):
        await service.exchange.import_path(str(tmp_path / "empty"))
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n## Facts\n")
    report = await service.exchange.import_path(str(tmp_path / "MEMORY.md"))
    assert (report.memories, report.files) == (0, [str(tmp_path / "MEMORY.md")])
