"""The people's commands as a person types them, through the installed console script: what
they accept (id prefixes, future dates), what they say, and what they leave untouched."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.stdio_helpers import server_command, server_env


def _cli(*args: str, db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*server_command(), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=server_env(db, **env),
    )


def _json(*args: str, db: Path) -> Any:
    done = _cli(*args, "--json", db=db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


SERVER_STACK = ("mcp", "starlette", "uvicorn", "sse_starlette", "httpx2", "openai", "anthropic")
# What `list` and `show` do not need: they read the database through `MemoryReading` alone.
ENGINES = (
    "numpy",
    "cortex_mcp.service.cortex",
    "cortex_mcp.search",
    "cortex_mcp.providers",
    "cortex_mcp.engine.ingest",
    "cortex_mcp.engine.lifecycle",
    "cortex_mcp.engine.recall",
    "cortex_mcp.engine.exchange",
)


def _modules_loaded_by(argv: list[str], watched: tuple[str, ...], db: Path) -> list[str]:
    """Which of `watched` a fresh interpreter has imported once `cortex-mcp argv` is done."""
    probe = (
        "import sys\n"
        "from cortex_mcp.cli import main\n"
        f"code = main({argv!r})\n"
        f"loaded = sorted(m for m in {watched!r} if m in sys.modules)\n"
        "sys.stderr.write('LOADED ' + ','.join(loaded) + '\\n')\n"
        "raise SystemExit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=90,
        env=server_env(db),
    )
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("LOADED ")]
    return [m for m in line.removeprefix("LOADED ").split(",") if m]


@pytest.mark.parametrize("command", ["list", "show", "stats", "search"])
def test_commands_that_do_not_serve_mcp_do_not_import_the_mcp_sdk_or_the_http_stack(
    tmp_path: Path, command: str
) -> None:
    db = tmp_path / "brain.db"
    added = _json("add", "the user drinks green tea", db=db)
    argv = {"list": ["list"], "show": ["show", added["id"]], "stats": ["stats"]}.get(
        command, ["search", "green tea"]
    )
    assert _modules_loaded_by(argv, SERVER_STACK, db) == []


def test_list_and_show_read_the_database_without_the_engines_or_numpy(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    added = _json("add", "the user drinks green tea", db=db)
    assert _modules_loaded_by(["list"], ENGINES, db) == []
    assert _modules_loaded_by(["show", added["id"][:8]], ENGINES, db) == []
    # the same probe sees them when a command does need them
    assert "numpy" in _modules_loaded_by(["search", "green tea"], ENGINES, db)


def _common_prefix(a: str, b: str) -> str:
    size = 0
    while size < min(len(a), len(b)) and a[size] == b[size]:
        size += 1
    return a[:size]


def test_show_and_forget_take_a_unique_id_prefix_and_refuse_an_ambiguous_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    first = _json("add", "The user's bike is a blue Brompton", db=db)["id"]
    second = _json("add", "The user's car is a red Fiat", db=db)["id"]
    shared = _common_prefix(first, second)
    assert len(shared) >= 4, (first, second)  # UUIDv7: the first digits are the time

    unique = first[: len(shared) + 1]
    shown = _cli("show", unique, db=db)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("The user's bike is a blue Brompton")
    assert _json("show", unique.upper(), db=db)["memory"]["id"] == first

    ambiguous = _cli("show", shared, db=db)
    assert ambiguous.returncode == 2 and ambiguous.stdout == ""
    (line,) = ambiguous.stderr.splitlines()
    assert "ambiguous" in line and first in line and second in line

    for too_short in ("01", "xyz!"):
        refused = _cli("forget", too_short, db=db)
        assert refused.returncode == 2 and "at least its first 4 characters" in refused.stderr
    missing = _cli("show", "ffff", db=db)
    assert missing.returncode == 1 and "no memory starts with ffff" in missing.stderr

    forgotten = _cli("forget", second[: len(shared) + 1], db=db)
    assert forgotten.stdout.strip() == f"forgotten: {second}"
    assert [m["id"] for m in _json("list", db=db)] == [first]


def test_forgotten_memories_are_listed_and_forgetting_one_again_says_so(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    kept = _json("add", "The user likes jazz", db=db)["id"]
    gone = _json("add", "The user likes polka", db=db)["id"]
    assert _cli("list", "--forgotten", db=db).stdout.strip() == "no forgotten memories"
    assert _json("forget", gone, db=db)["status"] == "forgotten"

    again = _cli("forget", gone, db=db)
    assert again.returncode == 0
    assert again.stdout.strip() == f"already forgotten (nothing changed): {gone}"
    assert _json("forget", gone, db=db)["status"] == "already_forgotten"

    listed = _json("list", "--forgotten", db=db)
    assert [m["id"] for m in listed] == [gone] and listed[0]["forgotten_at"]
    human = _cli("list", "--forgotten", db=db).stdout
    assert gone in human and "polka" in human and "forgotten 20" in human
    assert [m["id"] for m in _json("list", db=db)] == [kept]


def test_search_answers_small_talk_words_and_is_not_an_access(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    memory_id = _json("add", "Send thanks to Dana for the thesis review", db=db)["id"]
    before = _json("show", memory_id, db=db)

    for query in ("thanks", "thanks!", "thesis review"):
        found = _cli("search", query, db=db)
        assert found.returncode == 0, found.stderr
        assert memory_id in found.stdout, (query, found.stdout)
        assert [m["id"] for m in _json("search", query, db=db)["memories"]] == [memory_id]

    after = _json("show", memory_id, db=db)
    assert after["memory"] == before["memory"]  # access_count, last_accessed, decay unchanged
    assert after["memory"]["access_count"] == 0 and after["access_history"] == []


def test_lifecycle_run_refuses_a_future_now_and_preview_takes_it(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    _json("add", "A forgettable fact", "--importance", "0.1", db=db)
    future = "2999-01-01T03:00:00+00:00"
    refused = _cli("lifecycle", "run", "--now", future, db=db)
    assert refused.returncode == 2 and refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert "in the future" in line and "preview" in line
    assert _cli("lifecycle", "run", "--now", "2999-01-01", db=db).returncode == 2
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM lifecycle_log").fetchone() == (0,)

    preview = _json("lifecycle", "preview", "--now", future, db=db)
    assert preview["status"] == "preview" and preview["actions"]
    recent = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    assert _cli("lifecycle", "run", "--now", recent, db=db).returncode == 0


def test_a_fact_added_today_is_not_archived_two_minutes_or_a_day_later(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    text = "The nightly backup job runs at 02:30 UTC on the staging box"
    memory_id = _json("add", text, "--importance", "0.3", db=db)["id"]
    added = datetime.fromisoformat(_json("show", memory_id, db=db)["memory"]["created_at"])
    for later in (timedelta(minutes=2), timedelta(days=1)):
        now = (added + later).isoformat()
        preview = _cli("lifecycle", "preview", "--now", now, db=db)
        assert preview.returncode == 0 and "archive 0" in preview.stdout, preview.stdout
        assert "would archive" not in preview.stdout
    past_min_age = (added + timedelta(days=31)).isoformat()
    [action] = _json("lifecycle", "preview", "--now", past_min_age, db=db)["actions"]
    assert action["ids"] == [memory_id] and action["reason"] == "decayed"


def test_add_names_the_kinds_of_secret_it_stored_as_redacted(tmp_path: Path) -> None:
    key = "ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4"
    text = f"Deploy token is {key} and the wifi password is sunflower42"
    added = _cli("add", text, db=tmp_path / "brain.db")
    assert added.returncode == 0, added.stderr
    said = added.stdout.splitlines()[1]
    assert said == (
        "Secrets redacted before storing: 1 github_token, 1 password"
        " (stored as [REDACTED:github_token], [REDACTED:password])."
    )
    assert key not in added.stdout and "sunflower42" not in added.stdout


def test_import_refuses_a_file_it_does_not_read_naming_the_formats_it_does(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    note = tmp_path / "notes.txt"
    note.write_text("hello\n")
    done = _cli("import", str(note), db=db)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("cortex-mcp: path: notes.txt: not a file an import reads")
    assert all(kind in line for kind in (".md", "MEMORY.md", ".jsonl", ".json", "folder"))
    assert _json("stats", db=db)["memories"]["total"] == 0
    renamed = note.rename(tmp_path / "notes.md")  # the way the line gives: read as a MEMORY.md
    assert _json("import", str(renamed), db=db)["memories"] == 1
    [memory] = _json("list", db=db)
    assert (memory["content"], memory["layer"]) == ("hello", "core")


def test_doctor_without_the_postgres_extra_says_so_in_one_line(tmp_path: Path) -> None:
    blocked = tmp_path / "no-extra"  # psycopg as an install without the extra has it: missing
    for name in ("psycopg", "psycopg_pool"):
        (blocked / name).mkdir(parents=True)
        missing = f"No module named {name!r}"
        (blocked / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError({missing!r}, name={name!r})\n"
        )
    url = "postgresql://cortex:secret@127.0.0.1:1/cortex"
    env = {"CORTEX_DATABASE_URL": url, "PYTHONPATH": str(blocked), "HOME": str(tmp_path)}
    done = _cli("doctor", db=tmp_path / "brain.db", **env)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("postgres ")]
    assert line.split()[1] == "failed" and "`postgres` extra" in line
    assert "unset CORTEX_DATABASE_URL" in line and "secret" not in done.stdout
    assert done.stdout.rstrip().endswith("failed: postgres (see above)")
    added = _cli("add", "hello", db=tmp_path / "brain.db", **env)  # the same line as `add`
    assert added.returncode != 0 and line.split(None, 2)[2] in added.stderr


def test_ingest_prints_its_note_without_a_warning_log_line(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    done = _cli(
        "ingest", "--user", "My name is Ann and I live in Berlin", "--assistant", "Hi Ann", db=db
    )
    assert done.returncode == 0, done.stderr
    assert "note: extraction: no LLM provider configured" in done.stdout
    assert done.stderr == ""
    debug = _cli("ingest", "--user", "My name is Bo", "--log-level", "WARNING", db=db)
    assert "WARNING" in debug.stderr  # asked for: the log line is still there


def test_profile_refresh_without_an_llm_says_it_was_rebuilt_by_rules(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    _json("add", "The user is a nurse in Leeds", "--category", "identity", db=db)
    done = _cli("profile", "--refresh", db=db)
    assert done.returncode == 0, done.stderr
    assert "nurse in Leeds" in done.stdout
    note = done.stdout.strip().splitlines()[-1]
    assert note.startswith("note: rebuilt by rules: no LLM provider is configured")
    data = _json("profile", "--refresh", db=db)
    assert data["source"]["built_by"] == "rules" and "rules" in data["note"]
    assert "note" not in _json("profile", db=db)  # reading it rebuilds nothing


def test_serve_on_a_port_in_use_says_so_in_one_line_before_anything_else(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _cli("serve", "--transport", "http", "--port", str(port), db=db)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert f"cannot listen on 127.0.0.1:{port}: address already in use" in line
    assert "serving" not in done.stderr and "Errno" not in done.stderr
    assert not db.exists()


def test_serve_on_a_public_address_without_a_token_refuses_before_creating_the_database(
    tmp_path: Path,
) -> None:
    db = tmp_path / "new" / "brain.db"
    done = _cli("serve", "--transport", "http", "--host", "0.0.0.0", "--port", "1", db=db)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "refusing to listen on 0.0.0.0 without CORTEX_API_TOKEN" in line
    assert not db.parent.exists()


def test_list_and_show_read_postgresql_and_keep_to_their_agent(tmp_path: Path, pg_url: str) -> None:
    unused = tmp_path / "brain.db"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return _cli(*args, db=unused, CORTEX_DATABASE_URL=pg_url)

    def added(text: str, agent: str) -> str:
        done = cli("add", text, "--agent-id", agent, "--json")
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["id"])

    bike = added("The user's bike is a blue Brompton", "alice")
    car = added("The user's car is a red Fiat", "alice")
    other = added("Bob keeps his keys in the blue bowl", "bob")

    listed = cli("list", "--agent-id", "alice", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [m["id"] for m in json.loads(listed.stdout)] == [car, bike]
    shown = cli("show", bike, "--agent-id", "alice")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("The user's bike is a blue Brompton\n")
    hidden = cli("show", other, "--agent-id", "alice")
    assert hidden.returncode == 1 and "no memory starts with" in hidden.stderr
    assert not unused.exists()  # everything went to PostgreSQL


def test_show_prints_a_memorys_own_time_and_a_summarys_period_beside_the_stored_time(
    tmp_path: Path,
) -> None:
    """A memory said in 2023 and stored today: show gives both times; a summary also the
    period it covers (its metadata's period_range); --json carries them."""
    import asyncio

    from cortex_mcp.config import load_settings
    from cortex_mcp.models import Category
    from cortex_mcp.runtime import open_cortex
    from cortex_mcp.service.requests import RememberRequest

    db = tmp_path / "brain.db"
    period = {"start": "2023-05-02T09:00:00.000000Z", "end": "2023-05-29T18:30:00.000000Z"}

    async def seed() -> tuple[str, str]:
        async with open_cortex(load_settings(db_path=db, embedding_provider="none")) as service:
            said = await service.memories.remember(
                RememberRequest(content="Visited the Rodin museum", occurred_at="2023-05-06")
            )
            summary = await service.memories.remember(
                RememberRequest(
                    content="[2023-05] museum visits and a pottery class",
                    category=Category.summary,
                    occurred_at=period["start"],
                ),
                metadata={"period": "2023-05", "period_range": period},
            )
            return said.id, summary.id

    said_id, summary_id = asyncio.run(seed())
    shown = _cli("show", said_id, db=db)
    assert shown.returncode == 0, shown.stderr
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in shown.stdout.splitlines()[2:])
    )
    # given as a day: shown as the day in CORTEX_TIMEZONE (UTC here), no 00:00:00 never said
    assert fields["occurred_at"] == "2023-05-06", shown.stdout
    assert fields["created_at"].startswith(str(datetime.now(UTC).year)), shown.stdout
    assert "period" not in fields
    memory = _json("show", said_id, db=db)["memory"]
    assert memory["occurred_at"] == "2023-05-06T00:00:00.000000Z"
    assert memory["created_at"] != memory["occurred_at"]

    summary = _cli("show", summary_id, db=db).stdout
    assert f"       period: {period['start']} to {period['end']}" in summary.splitlines()
    shown_json = _json("show", summary_id, db=db)["memory"]
    assert shown_json["occurred_at"] == period["start"]
    assert shown_json["metadata"]["period_range"] == period


def test_list_and_show_build_only_the_validators_they_use(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    added = _json("add", "the user drinks green tea", db=db)
    probe = (
        "import io, sys, contextlib, pydantic\n"
        "from cortex_mcp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(sys.argv[1:])\n"
        "from cortex_mcp import models\n"
        "from cortex_mcp.service import requests\n"
        "built = sorted(name for module in (models, requests) for name, kind in vars(module).items()"
        " if isinstance(kind, type) and issubclass(kind, pydantic.BaseModel)"
        " and kind.__module__ == module.__name__ and kind.__pydantic_complete__)\n"
        "services = [m for m in ('cortex_mcp.service.tokens', 'cortex_mcp.service.config')"
        " if m in sys.modules]\n"
        "sys.stderr.write('BUILT ' + ','.join(built + services) + '\\n')\n"
        "raise SystemExit(code)\n"
    )
    for argv in (["list"], ["show", added["id"]]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv],
            capture_output=True,
            text=True,
            timeout=90,
            env=server_env(db),
        )
        assert done.returncode == 0, done.stderr
        (line,) = [x for x in done.stderr.splitlines() if x.startswith("BUILT ")]
        built = set(line.removeprefix("BUILT ").split(","))
        # what they read and print, not the other operations' requests and results
        assert built <= {"Memory", "ListRequest", "AgentRequest", "Period"}, built


def test_rule_ingest_stores_the_fact_without_the_request_to_remember_it(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    fact = "our staging database is db-staging.internal on port 5433."
    for said in (f"Please remember: {fact}", "Remember that I am allergic to peanuts."):
        assert _cli("ingest", "--user", said, db=db).returncode == 0
    core = {m["content"] for m in _json("list", "--layer", "core", db=db)}
    assert core == {fact, "I am allergic to peanuts."}, core
    # what a person or an agent gives to be remembered is stored exactly as given
    given = "Please remember: the VPN expires in March."
    added = _json("add", given, db=db)["id"]
    assert _json("show", added, db=db)["memory"]["content"] == given


def test_ingest_prints_a_memory_once_when_both_channels_stored_it(tmp_path: Path) -> None:
    done = _cli("ingest", "--user", "I am allergic to peanuts.", db=tmp_path / "brain.db")
    assert done.returncode == 0, done.stderr
    memories = [line for line in done.stdout.splitlines() if "allergic" in line]
    assert memories == ["  core    identity      1.00  I am allergic to peanuts."], done.stdout


def test_the_rule_built_profile_speaks_of_the_user_and_leaves_out_finished_projects(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    for text, category in (
        ("I'm a nurse in Leeds and my sister lives with me", "identity"),
        ("I love jazz", "preference"),
        ("We launched the beta last week", "project_state"),
        ("Working on the billing migration", "project_state"),
        ("我是护士", "identity"),
    ):
        _cli("add", text, "--category", category, db=db)
    profile = _json("profile", "--refresh", db=db)
    summary = profile["summary"]
    assert "They're a nurse in Leeds and their sister lives with them." in summary, summary
    assert "They love jazz." in summary and "用户是护士" in summary, summary
    assert not any(word in summary.split() for word in ("I", "I'm", "my", "me")), summary
    assert profile["active_projects"] == ["Working on the billing migration"], profile
