"""A turn is dated by when what it tells happened (issue 37, item 6): "last Tuesday I switched my
phone plan", said today, is remembered as last Tuesday's, read in the user's zone; questions,
long periods and times to come keep the time it was said. The agent is told about
`occurred_at` (the cortex_remember description and the remember_conversation prompt). On SQLite
and PostgreSQL, through the service with a faked clock and a real MCP session."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from mcp import Client

from cortex_mcp.config import Settings
from cortex_mcp.engine.ingest.event_time import event_time
from cortex_mcp.models import Category, to_iso
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import FlushRequest, IngestRequest, build
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock

pytestmark = pytest.mark.anyio

TOKYO = ZoneInfo("Asia/Tokyo")
SAID = datetime(2026, 5, 20, 10, 0, tzinfo=TOKYO)  # a Wednesday


def _day(zone: ZoneInfo, text: str) -> str:
    return to_iso(datetime.fromisoformat(text).replace(tzinfo=zone))


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Last Tuesday I switched my phone plan to Mint Mobile.", "2026-05-19"),
        ("Yesterday we adopted a cat called Miso.", "2026-05-19"),
        ("On May 2 I ran my first half marathon.", "2026-05-02"),
        ("上周五我去看了牙医。", "2026-05-15"),
        ("先週の金曜日に歯医者に行きました。", "2026-05-15"),
    ],
)
def test_a_statement_dated_by_its_speaker_takes_that_day(text: str, day: str) -> None:
    assert event_time(text, SAID) == _day(TOKYO, day)


@pytest.mark.parametrize(
    "text",
    [
        "What did I do last Tuesday?",  # a question dates nothing
        "I moved to Berlin last year.",  # a long period: the day is not known
        "Today I finally fixed the boiler.",  # said today: the time it was said
        "Next Friday I fly to Lisbon.",  # a time to come
        "I prefer green tea.",
    ],
)
def test_questions_long_periods_and_times_to_come_keep_the_time_said(text: str) -> None:
    assert event_time(text, SAID) is None


@pytest.mark.parametrize(
    ("zone", "said_local"),
    [
        ("Asia/Tokyo", "2026-05-20T00:30:00"),  # UTC+9, just after midnight
        ("America/Los_Angeles", "2026-05-19T23:30:00"),  # UTC-8 (PDT: -7), just before it
        ("Pacific/Kiritimati", "2026-05-20T00:30:00"),  # UTC+14
    ],
)
async def test_an_ingested_turn_is_dated_by_its_words_in_the_users_zone(
    backend_settings: Settings, zone: str, said_local: str
) -> None:
    where = ZoneInfo(zone)
    said = datetime.fromisoformat(said_local).replace(tzinfo=where)
    clock = FakeClock(said.astimezone(ZoneInfo("UTC")))
    settings = backend_settings.model_copy(update={"timezone": zone})
    expected = to_iso(datetime.combine(said.date() - timedelta(days=1), time(), where))
    async with open_cortex(settings, clock=clock) as service:
        result = await service.conversation.ingest(
            build(
                IngestRequest,
                user_message="Yesterday I switched my phone plan to Mint Mobile.",
                assistant_message="Noted.",
            )
        )
        memories = [*result.high_signals, *result.extracted]
        assert memories, result
        assert {m.occurred_at for m in memories} == {expected}
        for memory in memories:
            if "said_at" in memory.metadata:  # the raw turn still says when it was said
                assert memory.metadata["said_at"] == to_iso(said)
        # a request's own zone wins over the server's
        again = await service.conversation.ingest(
            build(
                IngestRequest,
                user_message="Yesterday I cancelled the gym membership.",
                assistant_message="Noted.",
                timezone="UTC",
            )
        )
        utc_day = said.astimezone(ZoneInfo("UTC")).date() - timedelta(days=1)
        utc_expected = to_iso(datetime.combine(utc_day, time(), ZoneInfo("UTC")))
        assert {m.occurred_at for m in [*again.high_signals, *again.extracted]} == {utc_expected}


async def test_the_agent_is_told_about_occurred_at(
    backend_settings: Settings, clock: FakeClock
) -> None:
    server = build_server(lambda: open_cortex(backend_settings, clock=clock))
    async with Client(server, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        described = tools["cortex_remember"].description or ""
        assert "occurred_at" in described and "last Tuesday" in described
        prompt = await client.get_prompt("remember_conversation", {})
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert "occurred_at" in text and "last Tuesday" in text


async def test_a_flushed_message_is_dated_by_its_words_in_the_users_zone(
    backend_settings: Settings,
) -> None:
    """UTC+14 half an hour after midnight: "yesterday" is the day before there, not in UTC."""
    where = ZoneInfo("Pacific/Kiritimati")
    said = datetime(2026, 5, 20, 0, 30, tzinfo=where)
    clock = FakeClock(said.astimezone(ZoneInfo("UTC")))
    settings = backend_settings.model_copy(update={"timezone": "Pacific/Kiritimati"})
    async with open_cortex(settings, clock=clock) as service:
        text = "Yesterday I moved to Berlin."
        flushed = await service.conversation.flush(
            build(FlushRequest, messages=[{"role": "user", "content": text}])
        )
        kept = [m for m in flushed.flushed if m.category != Category.summary]
        assert kept, flushed
        day = to_iso(datetime(2026, 5, 19, tzinfo=where))
        assert {m.occurred_at for m in kept} == {day}


def test_a_bare_weekday_is_as_often_a_plan_and_dates_nothing() -> None:
    assert event_time("For the deploy window: Tuesday night.", SAID) is None
    assert event_time("Over the weekend we painted the fence.", SAID) is None
