"""One range of valid moments (issue 32, item 7): every date a caller gives, once its offset is
applied, lies from 1000-01-01T00:00:00Z up to (not including) 9000-01-01T00:00:00Z, on every
way in (remember, import, ingest, flush, recall, search, list, browse, the lifecycle's `now`,
the MCP tools, the CLI). A moment outside is refused with 422 (an import's document: 400) or a
tool error naming the field, and nothing changes; a moment inside is stored and every read of
it works (recall, timeline, export and its re-import), on SQLite and PostgreSQL.

The fuzz tests draw date-like values (any year, month, day, time and offset, and any text)
into every date-taking field of every transport: no 500, and every refusal names the field."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from mcp import Client
from starlette.testclient import TestClient

from cortex_mcp import cli
from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.models import EARLIEST_MOMENT, END_OF_MOMENTS, to_iso
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    ExportRequest,
    ImportRequest,
    RememberRequest,
    SearchRequest,
    build,
)
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.postgres.schema import MIGRATIONS as PG_MIGRATIONS
from cortex_mcp.store.schema import MIGRATIONS, TIMES_INTO_RANGE
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock
from tests.helpers.http_helpers import authed_rest_client

API = "/api/v1"
RANGE_WORDS = "1000-01-01T00:00:00Z"  # every range refusal says where the range starts


@pytest.fixture
def client(tmp_path: Path, clock: FakeClock, backend_settings: Settings) -> Iterator[TestClient]:
    """On SQLite and on PostgreSQL."""
    url = backend_settings.database_url
    secret = url.get_secret_value() if url is not None else None
    with authed_rest_client(tmp_path, clock, database_url=secret) as c:
        yield c


def _all_memories(client: TestClient, agent: str = "default") -> list[dict[str, Any]]:
    reply = client.get(
        f"{API}/browse", params={"status": "all", "limit": 500}, headers={"X-Cortex-Agent": agent}
    )
    assert reply.status_code == 200, reply.text
    return list(reply.json()["memories"])


def _export(client: TestClient, agent: str = "default") -> dict[str, Any]:
    reply = client.post(f"{API}/export", json={"format": "json", "agent_id": agent})
    assert reply.status_code == 200, reply.text
    return dict(reply.json()["document"])


def _document(*occurred: str) -> dict[str, Any]:
    return {
        "format": "cortex-mcp-export",
        "memories": [
            {"content": f"Dated note {n}", "layer": "core", "category": "fact", "occurred_at": at}
            for n, at in enumerate(occurred)
        ],
    }


# ---- the cases: refused, naming the field, nothing changed -------------------------

# no time words: what it tells is dated by when it was said, the edge under test
MESSAGE = "I moved to Paris and I love living there"
OUTSIDE = [
    ("POST", "/memories", {"content": "An old story", "occurred_at": "1000-01-01T00:00:00+14:00"},
     "occurred_at"),
    ("POST", "/memories", {"content": "A far plan", "occurred_at": "9000-01-01T00:00:00Z"},
     "occurred_at"),
    ("POST", "/recall", {"query": "story", "until": "9999-12-31"}, "until"),
    ("POST", "/search", {"query": "story", "until": "9999-12-31"}, "until"),
    ("GET", "/memories", {"until": "9999-12-31"}, "until"),
    ("POST", "/recall", {"query": "what happened next year", "now": "9999-12-31"}, "now"),
    ("POST", "/search", {"query": "story", "since": "1000-01-01T01:00:00+02:00"}, "since"),
    ("POST", "/flush",
     {"messages": [{"role": "user", "content": MESSAGE, "timestamp": 253402300799999}]},
     "messages.0.timestamp"),
    ("POST", "/ingest",
     {"messages": [{"role": "user", "content": MESSAGE, "timestamp": "9999-12-31T00:00:00Z"}]},
     "messages.0.timestamp"),
    ("POST", "/ingest", {"user_message": MESSAGE, "said_at": "0999-12-31"}, "said_at"),
    ("POST", "/flush",
     {"messages": [{"role": "user", "content": MESSAGE}], "said_at": "9999-12-31"}, "said_at"),
    ("GET", "/browse", {"since": "0999-12-31"}, "since"),
    ("GET", "/browse", {"until": "9999-12-31"}, "until"),
    ("POST", "/import", {"document": _document("2026-05-06", "0999-12-31T10:00:00Z")},
     "memories[1].occurred_at"),
    ("POST", "/import", {"document": _document("9000-01-01T00:00:00Z")},
     "memories[0].occurred_at"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "payload", "field"), OUTSIDE)
def test_a_moment_outside_the_range_is_refused_naming_the_field_and_changes_nothing(
    client: TestClient, method: str, path: str, payload: dict[str, Any], field: str
) -> None:
    before = _all_memories(client)
    if method == "GET":
        reply = client.get(f"{API}{path}", params=payload)
    else:
        reply = client.post(f"{API}{path}", json=payload)
    assert reply.status_code == (400 if path == "/import" else 422), reply.text
    error = reply.json()["error"]
    assert error["field"] == field
    assert "outside 1000-01-01 .. 8999-12-31" in error["message"] or (
        RANGE_WORDS in error["message"]
    )
    assert _all_memories(client) == before


def test_the_edges_of_the_range_are_stored_and_every_read_of_them_works(
    client: TestClient,
) -> None:
    written = {
        "The first moment of the range": "1000-01-01T00:00:00Z",
        "Just inside, written with an offset": "1000-01-01T13:59:00+13:59",
        "The last moment of the range": "8999-12-31T23:59:59.999999Z",
        "Late, written with an offset": "8999-12-31T10:00:00-13:59",
    }
    for content, at in written.items():
        reply = client.post(f"{API}/memories", json={"content": content, "occurred_at": at})
        assert reply.status_code == 201, reply.text
    said = int((END_OF_MOMENTS - timedelta(seconds=1)).timestamp() * 1000)
    flushed = client.post(
        f"{API}/flush", json={"messages": [{"role": "user", "content": MESSAGE, "timestamp": said}]}
    )
    assert flushed.status_code == 200, flushed.text
    stored = {m["content"]: m["occurred_at"] for m in _all_memories(client)}
    assert stored["The first moment of the range"] == "1000-01-01T00:00:00.000000Z"
    assert stored["Just inside, written with an offset"] == "1000-01-01T00:00:00.000000Z"
    assert stored["The last moment of the range"] == "8999-12-31T23:59:59.999999Z"
    assert stored["Late, written with an offset"] == "8999-12-31T23:59:00.000000Z"
    assert stored[MESSAGE] == "8999-12-31T23:59:59.000000Z"

    recalled = client.post(f"{API}/recall", json={"query": "moment of the range"})
    assert recalled.status_code == 200, recalled.text
    assert len(recalled.json()["memories"]) == 2
    for fit in ("auto", "all"):
        assert client.get(f"{API}/timeline", params={"fit": fit}).status_code == 200
    for path in ("/recall", "/search"):
        for body in (
            {"query": "range", "until": "8999-12-31", "since": "1000-01-01"},
            {"query": "what happened next year", "now": "8999-12-31T23:59:59Z"},
            {"query": "what happened 100 years ago", "now": "1000-01-01"},
            {"query": "what happened this winter", "now": "8999-12-31"},
        ):
            reply = client.post(f"{API}{path}", json=body)
            assert reply.status_code == 200, (path, body, reply.text)
    listed = client.get(f"{API}/memories", params={"until": "8999-12-31", "since": "1000-01-01"})
    assert listed.status_code == 200 and len(listed.json()["memories"]) == len(stored)
    browsed = client.get(f"{API}/browse", params={"since": "1000-01-01", "until": "8999-12-31"})
    assert browsed.status_code == 200, browsed.text

    document = _export(client)
    imported = client.post(f"{API}/import", json={"document": document, "agent_id": "restored"})
    assert imported.status_code == 200, imported.text
    again = {m["content"]: m["occurred_at"] for m in _all_memories(client, "restored")}
    assert again == stored


def test_an_export_holding_a_date_two_centuries_ahead_is_imported_whole(
    client: TestClient,
) -> None:
    """Import refused occurred_at above now + 100 years (2127 in 2026), which remember took."""
    reply = client.post(
        f"{API}/memories", json={"content": "Time capsule opens", "occurred_at": "2200-01-01"}
    )
    assert reply.status_code == 201, reply.text
    document = _export(client)
    imported = client.post(f"{API}/import", json={"document": document, "agent_id": "heir"})
    assert imported.status_code == 200, imported.text
    assert imported.json()["memories"] == 1
    restored = _all_memories(client, "heir")
    assert [m["occurred_at"] for m in restored] == ["2200-01-01T00:00:00.000000Z"]


# ---- fuzz: every date-taking field on every transport ----------------------------------------

_OFFSETS = st.one_of(
    st.just(""),
    st.just("Z"),
    st.builds(
        lambda sign, h, m, colon: f"{sign}{h:02d}{':' if colon else ''}{m:02d}",
        st.sampled_from("+-"),
        st.integers(0, 25),
        st.integers(0, 60),
        st.booleans(),
    ),
)
_DATE_LIKE = st.builds(
    lambda y, mo, d, time, offset: f"{y:04d}-{mo:02d}-{d:02d}{time}{offset if time else ''}",
    st.one_of(st.integers(0, 10000), st.sampled_from([999, 1000, 1001, 8999, 9000, 9999])),
    st.integers(0, 13),
    st.integers(0, 32),
    st.one_of(
        st.just(""),
        st.builds(
            lambda sep, h, mi, s: f"{sep}{h:02d}:{mi:02d}{s}",
            st.sampled_from(["T", " ", "t"]),
            st.integers(0, 24),
            st.integers(0, 60),
            st.sampled_from(["", ":00", ":59.999999", ":30,5", ":61"]),
        ),
    ),
    _OFFSETS,
)
MOMENT_TEXT = st.one_of(
    _DATE_LIKE,
    st.sampled_from(
        ["1000-01-01T00:00:00+14:00", "9999-12-31", "0001-01-01T00:00-23:59", "8999-12-31",
         "9999-12-31T23:59:59-14:00", "2026-02-29", "yesterday", "", " ", "2026-05-06\x00"]
    ),
    st.text(max_size=45),
)  # fmt: skip
TIMESTAMPS = st.one_of(
    MOMENT_TEXT,
    st.integers(-(10**19), 10**19),
    st.floats(min_value=-1e19, max_value=1e19, allow_nan=False),
    st.sampled_from([253402300799999, 32503680000, 10**11 - 1, 0, -1, 2.5e14]),
)
TIME_QUERIES = st.sampled_from(
    ["what happened next year", "100 years ago", "this winter", "last 100 years", "a story"]
)
FUZZ = hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _rest_case(field: str, value: Any, query: str) -> tuple[str, str, dict[str, Any], str]:
    """(method, path, payload, the field a refusal must name) for one date field."""
    message = {"role": "user", "content": MESSAGE, "timestamp": value}
    cases = {
        "remember.occurred_at": ("POST", "/memories", {"content": MESSAGE, "occurred_at": value},
                                 "occurred_at"),
        "recall.since": ("POST", "/recall", {"query": query, "since": value}, "since"),
        "recall.until": ("POST", "/recall", {"query": query, "until": value}, "until"),
        "recall.now": ("POST", "/recall", {"query": query, "now": value}, "now"),
        "search.since": ("POST", "/search", {"query": query, "since": value}, "since"),
        "search.until": ("POST", "/search", {"query": query, "until": value}, "until"),
        "search.now": ("POST", "/search", {"query": query, "now": value}, "now"),
        "list.since": ("GET", "/memories", {"since": value}, "since"),
        "list.until": ("GET", "/memories", {"until": value}, "until"),
        "browse.since": ("GET", "/browse", {"since": value}, "since"),
        "browse.until": ("GET", "/browse", {"until": value}, "until"),
        "ingest.said_at": ("POST", "/ingest", {"user_message": MESSAGE, "said_at": value},
                           "said_at"),
        "ingest.timestamp": ("POST", "/ingest", {"messages": [message]}, "messages.0.timestamp"),
        "flush.said_at": ("POST", "/flush", {"messages": [message | {"timestamp": None}],
                                             "said_at": value}, "said_at"),
        "flush.timestamp": ("POST", "/flush", {"messages": [message]}, "messages.0.timestamp"),
        "import.occurred_at": ("POST", "/import", {"document": {
            "format": "cortex-mcp-export",
            "memories": [{"content": MESSAGE, "layer": "core", "category": "fact",
                          "occurred_at": value}]}},
            "memories[0].occurred_at"),
    }  # fmt: skip
    return cases[field]


REST_FIELDS = [
    "remember.occurred_at", "recall.since", "recall.until", "recall.now", "search.since",
    "search.until", "search.now", "list.since", "list.until", "browse.since", "browse.until",
    "ingest.said_at", "ingest.timestamp", "flush.said_at", "flush.timestamp",
    "import.occurred_at",
]  # fmt: skip


def _text_only(value: Any) -> bool:
    return isinstance(value, str)


def test_fuzzed_dates_in_every_rest_field_never_give_a_500_and_refusals_name_the_field(
    client: TestClient,
) -> None:
    @FUZZ
    @given(
        field=st.sampled_from(REST_FIELDS),
        value=TIMESTAMPS,
        query=TIME_QUERIES,
    )
    def one(field: str, value: Any, query: str) -> None:
        if not field.endswith("timestamp") and not _text_only(value):
            value = str(value)
        method, path, payload, named = _rest_case(field, value, query)
        if method == "GET":
            reply = client.get(f"{API}{path}", params=payload)
        else:
            reply = client.post(f"{API}{path}", json=payload)
        assert reply.status_code < 500, (field, value, reply.text)
        if reply.status_code >= 400:
            error = reply.json()["error"]
            names = {named}
            if path == "/import":
                names.add("document.memories.0.occurred_at")  # the import's NUL rule names it so
            assert error.get("field") in names, (field, value, reply.text)
            assert error["message"].startswith(f"{named}: ") or path == "/import", error

    one()
    # whatever was stored is read back by every reader
    assert client.post(f"{API}/recall", json={"query": "Paris"}).status_code == 200
    assert client.get(f"{API}/timeline", params={"fit": "all"}).status_code == 200
    document = _export(client)
    again = client.post(f"{API}/import", json={"document": document, "agent_id": "copy"})
    assert again.status_code == 200, again.text


MCP_FIELDS = [
    ("cortex_remember", "occurred_at"),
    ("cortex_recall", "since"),
    ("cortex_recall", "until"),
    ("cortex_recall", "now"),
    ("cortex_search_debug", "since"),
    ("cortex_search_debug", "until"),
    ("cortex_search_debug", "now"),
]


@pytest.fixture
async def session(settings: Settings, clock: FakeClock) -> AsyncIterator[Client]:
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode="legacy") as c:
        yield c


@pytest.mark.anyio
@FUZZ
@given(case=st.sampled_from(MCP_FIELDS), value=MOMENT_TEXT, query=TIME_QUERIES)
async def test_fuzzed_dates_in_every_tool_argument_are_answered_and_refusals_name_the_field(
    session: Client, case: tuple[str, str], value: str, query: str
) -> None:
    tool, field = case
    arguments: dict[str, Any] = {field: value}
    arguments |= {"content": MESSAGE} if tool == "cortex_remember" else {"query": query}
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    if result.is_error:
        assert f"{field}: " in text, (tool, field, value, text)
    recalled = await session.call_tool("cortex_recall", {"query": "Paris"})
    assert not recalled.is_error, recalled.content


CLI_FIELDS = [
    ("add", "--occurred-at", "occurred_at"),
    ("search", "--since", "since"),
    ("search", "--until", "until"),
    ("ingest", "--said-at", "said_at"),
    ("list", "--since", "since"),
    ("list", "--until", "until"),
    ("lifecycle", "--now", "now"),
]


def _cli(argv: list[str]) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse's own refusals
            code = int(exit_.code or 0)
    return code, err.getvalue()


def test_fuzzed_dates_on_the_command_line_exit_2_naming_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORTEX_DB_PATH", str(tmp_path / "brain.db"))
    monkeypatch.setenv("CORTEX_EMBEDDING_PROVIDER", "none")

    @hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=st.sampled_from(CLI_FIELDS), value=MOMENT_TEXT.filter(lambda v: "\x00" not in v))
    def one(case: tuple[str, str, str], value: str) -> None:
        command, option, field = case
        words = {
            "add": ["A story about Paris"],
            "search": ["Paris"],
            "lifecycle": ["preview"],
            "ingest": ["--user", MESSAGE],
        }
        code, err = _cli([command, *words.get(command, []), f"{option}={value}"])
        assert code in (0, 2), (case, value, err)
        if code == 2:
            assert f"{field}: " in err or option in err, (case, value, err)

    one()
    for now in ("9999-12-31", "0001-01-01", "1000-01-01T00:00:00+14:00"):
        code, err = _cli(["lifecycle", "preview", f"--now={now}"])
        assert code == 2 and "now: must lie from 1000-01-01T00:00:00Z" in err, err


# ---- property: any accepted moment round-trips through export and import --------------------

_ZONES = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
_MOMENTS = st.datetimes(
    min_value=datetime(1000, 1, 2), max_value=datetime(8999, 12, 30), timezones=_ZONES
)
_EDGES = [
    (datetime(1000, 1, 1, tzinfo=UTC), 0),
    (datetime(8999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), 1),
    (datetime(1000, 1, 1, 13, 59, tzinfo=timezone(timedelta(hours=13, minutes=59))), 0),
    (datetime(8999, 12, 31, 10, 0, tzinfo=timezone(timedelta(hours=-13, minutes=-59))), 0),
]


def _written(moment: datetime, form: int) -> str:
    """`moment` as a caller may write it: with its offset, in UTC, or as its date."""
    if form == 0:
        return moment.isoformat()
    if form == 1:
        return to_iso(moment)
    return moment.date().isoformat()


@pytest.fixture
async def service(backend_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(backend_settings, clock=clock) as svc:
        yield svc


_batches = iter(range(10**6))


@pytest.mark.anyio
@hypothesis_settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batch=st.lists(st.tuples(_MOMENTS, st.integers(0, 2)), min_size=1, max_size=5) | st.just(_EDGES)
)
async def test_any_accepted_moment_round_trips_through_export_and_import(
    service: CortexService, batch: list[tuple[datetime, int]]
) -> None:
    n = next(_batches)
    expected = {}
    for i, (moment, form) in enumerate(batch):
        text = _written(moment, form)
        utc = validate.moment(text)  # the rule accepts it: it lies in the range
        assert EARLIEST_MOMENT <= utc < END_OF_MOMENTS
        content = f"Dated note {i} of batch {n}"
        request = build(RememberRequest, content=content, occurred_at=text, agent_id=f"a{n}")
        await service.memories.remember(request)
        expected[content] = to_iso(utc)
    exported = await service.exchange.export_memories(ExportRequest(agent_id=f"a{n}"))
    document = json.loads(json.dumps(exported["document"]))  # as it travels
    await service.exchange.import_memories(
        build(ImportRequest, document=document, agent_id=f"b{n}")
    )
    restored = await service.stores.exports.memories(f"b{n}")
    assert {m.content: m.occurred_at for m in restored} == expected


# ---- a store written before the range: mended by its migration ------------------------------


def _as_the_old_build_left_it(settings: Settings, times: dict[str, str]) -> None:
    """Rows holding times outside the range (as the build before it wrote them: a year of
    three digits, year 9999), the schema version before the migration that mends them."""
    before = MIGRATIONS.index(TIMES_INTO_RANGE)  # the version before it
    updates = [
        ("UPDATE memories SET occurred_at = %s WHERE id = %s", (at, i)) for i, at in times.items()
    ]
    if settings.database_url is None:
        with contextlib.closing(sqlite_module().connect(settings.db_path)) as conn:
            for sql, params in updates:
                conn.execute(sql.replace("%s", "?"), params)
            conn.execute(f"PRAGMA user_version = {before}")
            conn.commit()
        return
    import psycopg

    pg_before = PG_MIGRATIONS.index(TIMES_INTO_RANGE)
    with psycopg.connect(settings.database_url.get_secret_value(), autocommit=True) as conn:
        for sql, params in updates:
            conn.execute(sql, params)  # type: ignore[arg-type]
        conn.execute("DELETE FROM cortex_schema WHERE version > %s", (pg_before,))


def _only_the_mending_migration_runs_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The migrations after it find their work done (the store is newer than the version it
    is set back to): they run as no steps, on both stores."""
    from cortex_mcp.store import database
    from cortex_mcp.store.postgres import database as pg_database

    for module, steps in ((database, MIGRATIONS), (pg_database, PG_MIGRATIONS)):
        mine = steps.index(TIMES_INTO_RANGE)
        later: list[list[str]] = [[] for _ in steps[mine + 1 :]]
        monkeypatch.setattr(module, "MIGRATIONS", [*steps[: mine + 1], *later])


@pytest.mark.anyio
async def test_a_store_holding_times_outside_the_range_is_mended_when_it_opens(
    backend_settings: Settings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = {
            content: (await svc.memories.remember(build(RememberRequest, content=content))).id
            for content in ("An old family story", "A far plan for the year 9999", "Likes tea")
        }
    _as_the_old_build_left_it(
        backend_settings,
        {
            ids["An old family story"]: "999-12-31T10:00:00.000000Z",
            ids["A far plan for the year 9999"]: "9999-12-31T23:59:59.999000Z",
        },
    )
    _only_the_mending_migration_runs_again(monkeypatch)
    async with open_cortex(backend_settings, clock=clock) as svc:
        stored = {m.content: m.occurred_at for m in await svc.stores.exports.memories("default")}
        assert stored == {
            "An old family story": "1000-01-01T00:00:00.000000Z",
            "A far plan for the year 9999": "8999-12-31T23:59:59.999999Z",
            "Likes tea": "2026-11-01T12:00:00.000000Z",
        }
        found = await svc.memories.search(build(SearchRequest, query="story plan"))
        assert len(found) == 2
        assert (await svc.browse.timeline("default", None, "all"))["total"] == 3
        exported = await svc.exchange.export_memories(ExportRequest(agent_id="default"))
        await svc.exchange.import_memories(
            build(ImportRequest, document=exported["document"], agent_id="restored")
        )
        again = {m.content: m.occurred_at for m in await svc.stores.exports.memories("restored")}
        assert again == stored


def test_the_document_publishes_where_a_message_timestamp_is_refused(client: TestClient) -> None:
    """The number's exclusiveMaximum and the text's pattern are exactly where the server's
    refusals begin (a number) or a part of them (text: a date in year 9000 or on its eve)."""
    document = client.get(f"{API}/openapi.json").json()
    message = document["components"]["schemas"]["Message"]["properties"]["timestamp"]
    number, text = (
        next(m for m in message["anyOf"] if m["type"] == t) for t in ("number", "string")
    )
    bound = number["exclusiveMaximum"]
    assert bound == int(END_OF_MOMENTS.timestamp()) * 1000
    for value, status in ((bound - 1, 200), (bound, 422), ("8999-12-31T23:00:00-02:00", 422)):
        said = {"role": "user", "content": MESSAGE, "timestamp": value}
        reply = client.post(f"{API}/flush", json={"messages": [said]})
        assert reply.status_code == status, (value, reply.text)
    pattern = re.compile(text["pattern"])
    assert not pattern.search("9000-01-01") and not pattern.search(" 8999-12-31T23:00-02:00")
    assert pattern.search("8999-12-30T23:00-02:00") and pattern.search("not a time")


def test_a_markdown_export_gives_back_each_memorys_day_across_the_range(
    client: TestClient,
) -> None:
    """Markdown carries one date per note, its occurred_at's day: an import reads it as the
    memory's own time (any moment of the range, as remember takes), and as its stored time
    only when a store could have written it then (else the import's now)."""
    written = {
        "A saga told at the first feast": ("core", "1000-01-01T00:00:00Z"),
        "A tapestry finished in spring": ("archive", "1500-05-06T10:00:00Z"),
        "The time capsule opens": ("working", "2200-01-01"),
        "The last plan of the range": ("core", "8999-12-31T23:59:59Z"),
    }
    for content, (layer, at) in written.items():
        reply = client.post(
            f"{API}/memories", json={"content": content, "layer": layer, "occurred_at": at}
        )
        assert reply.status_code == 201, reply.text
    files = client.post(f"{API}/export", json={"format": "markdown"}).json()["files"]
    imported = client.post(
        f"{API}/import", json={"format": "markdown", "files": files, "agent_id": "md"}
    )
    assert imported.status_code == 200, imported.text
    days = {m["content"]: m["occurred_at"][:10] for m in _all_memories(client, "md")}
    assert days == {content: at[:10] for content, (_, at) in written.items()}
    stored = {m["created_at"] for m in _all_memories(client, "md")}
    assert stored == {"2026-11-01T12:00:00.000000Z"}  # the import's now (the FakeClock's)
