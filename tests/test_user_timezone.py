"""The user's time zone (issue 37, item 1): "today", "yesterday" and dates written without an
offset are read in CORTEX_TIMEZONE or a request's `timezone`, and dates are shown in it. At
UTC+9, UTC-8 and UTC+14, half an hour either side of the user's midnight (the clock faked), on
SQLite and PostgreSQL, through the service, a real MCP session and the CLI."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from contextlib import redirect_stdout
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from mcp import Client

from cortex_mcp import cli
from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import to_iso
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import RecallRequest, RememberRequest, SearchRequest, build
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

ZONES = ["Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati"]  # UTC+9, UTC-8, UTC+14
# the user's wall clock: half an hour after their midnight, and half an hour before it
LOCAL_TIMES = ["2026-12-01T00:30:00", "2026-11-30T23:30:00"]


def _local(zone: str, wall: str) -> datetime:
    return datetime.fromisoformat(wall).replace(tzinfo=ZoneInfo(zone))


def _midnight(zone: str, day: date) -> str:
    return to_iso(datetime.combine(day, time(), ZoneInfo(zone)))


def _diary(today: date) -> list[tuple[str, str]]:
    """What the user did, dated on their own clock without an offset."""
    yesterday, before = today - timedelta(days=1), today - timedelta(days=2)
    return [
        (f"{yesterday}T12:00", "Went climbing at the bouldering gym"),
        (f"{before}T12:00", "Baked sourdough bread at home"),
        (f"{today}T00:05", "Booked the train tickets for the holidays"),
    ]


@pytest.fixture(params=ZONES)
def zone(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=LOCAL_TIMES, ids=["after-midnight", "before-midnight"])
def wall(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _diary_service(
    settings: Settings, clock: FakeClock, today: date
) -> AsyncIterator[CortexService]:
    async with open_cortex(settings, clock=clock) as service:
        for when, content in _diary(today):
            if when.startswith(str(today)) and clock.now().astimezone(
                ZoneInfo(settings.timezone)
            ) < datetime.fromisoformat(when).replace(tzinfo=ZoneInfo(settings.timezone)):
                continue  # not yet happened
            await service.memories.remember(
                build(RememberRequest, content=content, occurred_at=when)
            )
        yield service


async def test_yesterday_and_today_are_the_users_days_in_their_zone(
    backend_settings: Settings, zone: str, wall: str
) -> None:
    now = _local(zone, wall)
    clock = FakeClock(now.astimezone(ZoneInfo("UTC")))
    settings = backend_settings.model_copy(update={"timezone": zone})
    today = now.date()
    async for service in _diary_service(settings, clock, today):
        recalled = await service.memories.recall(
            build(RecallRequest, query="what did I do yesterday?")
        )
        assert recalled.meta.time is not None
        assert recalled.meta.time["start"] == _midnight(zone, today - timedelta(days=1))
        assert recalled.meta.time["end"] == _midnight(zone, today)
        assert recalled.memories[0].content == "Went climbing at the bouldering gym"
        # the context a model reads dates it on the user's calendar
        assert f"{today - timedelta(days=1)}, yesterday]" in recalled.context
        assert recalled.meta.timezone == zone
        # a date given without an offset was read on the user's clock
        stored = {m.content: m.occurred_at for m in recalled.memories}
        climbing = datetime.fromisoformat(stored["Went climbing at the bouldering gym"])
        assert climbing.astimezone(ZoneInfo(zone)).hour == 12

        found = await service.memories.search(build(SearchRequest, query="what happened today?"))
        if wall.endswith("00:30:00"):  # the tickets were booked at 00:05 today
            assert found[0].content == "Booked the train tickets for the holidays"
        else:  # nothing of today: the window holds none, so nothing is lifted
            assert found == [] or found[0].content != "Went climbing at the bouldering gym"


async def test_since_and_until_given_as_days_are_the_users_days(
    backend_settings: Settings, zone: str
) -> None:
    """Memories twenty minutes either side of the user's midnight (their times with an
    offset): a day in since/until starts and ends at that midnight, not at UTC's."""
    settings = backend_settings.model_copy(update={"timezone": zone})
    yesterday = date(2026, 11, 30)
    late = _local(zone, "2026-11-29T23:40:00").isoformat()
    early = _local(zone, "2026-11-30T00:20:00").isoformat()
    async with open_cortex(settings, clock=FakeClock()) as service:
        for when, content in ((late, "Late night pizza order"), (early, "Early morning run")):
            await service.memories.remember(
                build(RememberRequest, content=content, occurred_at=when)
            )
        found = await service.memories.search(
            build(SearchRequest, query="pizza run", since=str(yesterday))
        )
        assert [m.content for m in found] == ["Early morning run"]
        found = await service.memories.search(
            build(SearchRequest, query="pizza run", until=str(yesterday - timedelta(days=1)))
        )
        assert [m.content for m in found] == ["Late night pizza order"]


async def test_a_request_timezone_is_honoured_over_a_real_mcp_session(
    backend_settings: Settings, zone: str
) -> None:
    """The server's own zone is UTC; the agent says the user's."""
    now = _local(zone, LOCAL_TIMES[0])
    clock = FakeClock(now.astimezone(ZoneInfo("UTC")))
    settings = backend_settings.model_copy(update={"timezone": "UTC"})
    today = now.date()
    yesterday = today - timedelta(days=1)
    server = build_server(lambda: open_cortex(settings, clock=clock))
    async with Client(server, mode="legacy") as client:
        for when, content in _diary(today):
            stored = await client.call_tool(
                "cortex_remember", {"content": content, "occurred_at": when, "timezone": zone}
            )
            assert not stored.is_error, stored.content
        result = await client.call_tool(
            "cortex_recall", {"query": "what did I do yesterday?", "timezone": zone}
        )
        assert not result.is_error, result.content
        meta = result.structured_content["meta"]
        assert meta["time"]["start"] == _midnight(zone, yesterday)
        assert meta["timezone"] == zone
        text = result.content[0].text
        first = result.structured_content["memories"][0]
        assert first["content"] == "Went climbing at the bouldering gym"
        assert f"{yesterday}, yesterday" in text
        # without the zone the server reads the words on its own clock (UTC)
        utc = await client.call_tool("cortex_recall", {"query": "what did I do yesterday?"})
        utc_start = utc.structured_content["meta"]["time"]["start"]
        assert utc_start == to_iso(
            datetime.combine(now.astimezone(ZoneInfo("UTC")).date(), time(), ZoneInfo("UTC"))
            - timedelta(days=1)
        )
        debug = await client.call_tool(
            "cortex_search_debug", {"query": "what did I do yesterday?", "timezone": zone}
        )
        assert debug.structured_content["facts"]["time"]["start"] == _midnight(zone, yesterday)


async def test_a_now_with_an_offset_and_no_timezone_is_read_at_that_offset(
    service: CortexService,
) -> None:
    recalled = await service.memories.recall(
        build(RecallRequest, query="what did I do yesterday?", now="2026-05-20T01:00:00+08:00")
    )
    assert recalled.meta.time is not None
    assert recalled.meta.time["start"] == "2026-05-18T16:00:00.000000Z"
    assert recalled.meta.timezone == "+08:00"


@pytest.mark.parametrize("bad", ["Mars/Olympus_Mons", "+09:00", "../../etc/passwd", "JST-9"])
async def test_a_time_zone_that_is_not_an_iana_name_is_refused_naming_the_field(
    service: CortexService, bad: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        build(RecallRequest, query="yesterday", timezone=bad)
    assert refused.value.field == "timezone"
    assert "IANA time zone" in refused.value.message
    with pytest.raises(InvalidInput, match="timezone"):
        build(RememberRequest, content="x", timezone=bad)


def test_the_setting_defaults_to_the_machines_zone_and_refuses_a_wrong_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert load_settings().timezone == "Asia/Tokyo"
    monkeypatch.setenv("TZ", ":America/Los_Angeles")
    assert load_settings().timezone == "America/Los_Angeles"
    monkeypatch.setenv("CORTEX_TIMEZONE", "Pacific/Kiritimati")
    assert load_settings().timezone == "Pacific/Kiritimati"
    monkeypatch.setenv("CORTEX_TIMEZONE", "Mars/Base")
    with pytest.raises(Exception, match=r"CORTEX_TIMEZONE: .*IANA time zone"):
        load_settings()


def _cli(args: list[str], monkeypatch: pytest.MonkeyPatch, db: Path, zone: str) -> str:
    monkeypatch.setenv("CORTEX_DB_PATH", str(db))
    monkeypatch.setenv("CORTEX_TIMEZONE", zone)
    monkeypatch.setenv("CORTEX_EMBEDDING_PROVIDER", "none")
    monkeypatch.setenv("CORTEX_LLM_PROVIDER", "none")
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(args)
    assert code == 0
    return out.getvalue()


@pytest.mark.parametrize("zone", ZONES)
def test_the_cli_reads_and_shows_dates_in_the_users_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    db = tmp_path / "brain.db"
    # 23:30 on 30 November on the user's clock, written without an offset
    added = _cli(
        ["add", "Watched the meteor shower", "--occurred-at", "2026-11-30T23:30", "--json"],
        monkeypatch,
        db,
        zone,
    )
    memory_id = json.loads(added)["id"]
    listed = _cli(["list"], monkeypatch, db, zone)
    assert "2026-11-30  Watched the meteor shower" in listed
    assert _json_ids(_cli(["list", "--since", "2026-11-30", "--json"], monkeypatch, db, zone)) == [
        memory_id
    ]
    assert _json_ids(_cli(["list", "--until", "2026-11-29", "--json"], monkeypatch, db, zone)) == []
    shown = _cli(["show", memory_id], monkeypatch, db, zone)
    offset = _local(zone, "2026-11-30T23:30:00").isoformat()[-6:]
    assert f"occurred_at: 2026-11-30T23:30:00{offset}" in shown
    found = _cli(["search", "meteor shower on 30 November 2026"], monkeypatch, db, zone)
    assert "2026-11-30  Watched the meteor shower" in found


def _json_ids(output: str) -> list[str]:
    rows: list[dict[str, Any]] = json.loads(output)
    return [row["id"] for row in rows]
