"""The dashboard's REST routes and its session, in-process (a real Starlette app over a real
SQLite file): keyset pages, filters, one agent at a time, restore and correct, the system
report's masked settings, and the cookie that only this origin's page can use."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.engine.recall.latency import LatencyWindow
from cortex_mcp.transports.dashboard import CSRF_HEADER
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, TOKEN, authed_rest_client, rest_client

API = "/api/v1"
ORIGIN = "http://127.0.0.1:21100"


@pytest.fixture
def client(tmp_path: Path, clock: FakeClock, backend_settings: Settings) -> Iterator[TestClient]:
    """On SQLite and on PostgreSQL."""
    url = backend_settings.database_url
    secret = url.get_secret_value() if url is not None else None
    with authed_rest_client(tmp_path, clock, database_url=secret) as c:
        yield c


def remember(client: TestClient, content: str, agent: str = "alice", **extra: Any) -> str:
    reply = client.post(f"{API}/memories", json={"content": content, "agent_id": agent, **extra})
    assert reply.status_code == 201, reply.text
    return str(reply.json()["id"])


def browse(client: TestClient, agent: str = "alice", **query: Any) -> dict[str, Any]:
    reply = client.get(f"{API}/browse", params=query, headers={"X-Cortex-Agent": agent})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_keyset_pages_cover_every_memory_once_in_order(
    client: TestClient, clock: FakeClock
) -> None:
    ids = []
    for n in range(23):
        clock.advance(minutes=1 if n % 3 else 0)  # ties on created_at fall back to seq
        ids.append(remember(client, f"fact number {n}", importance=(n % 5) / 5))
    remember(client, "bob's own fact", agent="bob")
    for sort in ("created_at", "importance", "access_count", "updated_at"):
        for order in ("desc", "asc"):
            seen: list[str] = []
            first = browse(client, sort=sort, order=order, limit=5)
            assert first["total"] == 23
            page = first
            while True:
                seen += [m["id"] for m in page["memories"]]
                if page["next_cursor"] is None:
                    break
                page = browse(client, sort=sort, order=order, limit=5, cursor=page["next_cursor"])
                assert page["total"] is None  # counted on the first page only
            assert sorted(seen) == sorted(ids), (sort, order)
            assert len(seen) == len(set(seen))
    newest_first = [m["id"] for m in browse(client, limit=50)["memories"]]
    assert newest_first == list(reversed(ids))


def test_filters_narrow_the_table(client: TestClient, clock: FakeClock) -> None:
    todo = remember(client, "Renew the TLS certificate", category="todo", layer="working")
    fact = remember(client, "The VPS runs on Oracle Cloud")
    clock.advance(days=2)
    later = remember(client, "Oracle support ticket opened")
    assert [m["id"] for m in browse(client, layer="working")["memories"]] == [todo]
    assert [m["id"] for m in browse(client, category="todo")["memories"]] == [todo]
    by_text = browse(client, q="oracle")
    assert {m["id"] for m in by_text["memories"]} == {fact, later}
    assert (by_text["total"], by_text["total_capped"]) == (2, False)
    assert browse(client, layer="working", category="todo")["total"] == 1
    assert [m["id"] for m in browse(client, q="oracle cloud")["memories"]] == [fact]
    since = clock.now().isoformat()[:10]
    assert [m["id"] for m in browse(client, since=since)["memories"]] == [later]
    assert browse(client, q="???")["memories"] == []
    forgotten = client.delete(f"{API}/memories/{fact}", headers={"X-Cortex-Agent": "alice"})
    assert forgotten.status_code == 200
    assert [m["id"] for m in browse(client, status="forgotten")["memories"]] == [fact]
    assert fact not in [m["id"] for m in browse(client)["memories"]]


def test_the_all_filter_lists_live_forgotten_and_superseded_memories_on_both_stores(
    client: TestClient,
) -> None:
    kept = remember(client, "Keeps a sourdough starter in the fridge")
    dropped = remember(client, "Owns a red bicycle")
    old = remember(client, "Works at Initech")
    new = remember(client, "Works at Globex", supersedes=old)
    alice = {"X-Cortex-Agent": "alice"}
    assert client.delete(f"{API}/memories/{dropped}", headers=alice).status_code == 200
    everything = browse(client, status="all")
    assert {m["id"] for m in everything["memories"]} == {kept, dropped, old, new}
    assert everything["total"] == 4
    for sort in ("occurred_at", "importance"):
        assert len(browse(client, status="all", sort=sort, limit=2)["memories"]) == 2


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"sort": "content"}, "sort"),
        ({"limit": 0}, "limit"),
        ({"layer": "attic"}, "layer"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "WyJ4IiwxXQ", "sort": "importance"}, "cursor"),  # ["x",1] for a number sort
        ({"since": "yesterday"}, "since"),
        ({"agent_id": ""}, "agent_id"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_table_queries_get_4xx_naming_the_field(
    client: TestClient, query: dict[str, Any], field: str
) -> None:
    reply = client.get(f"{API}/browse", params=query)
    assert 400 <= reply.status_code < 500, reply.text
    assert reply.json()["error"]["field"].startswith(field)


def test_one_agent_never_sees_or_changes_anothers_memory(client: TestClient) -> None:
    mine = remember(client, "Alice's secret garden is behind the shed")
    as_bob = {"X-Cortex-Agent": "bob"}
    assert client.get(f"{API}/memories/{mine}/detail", headers=as_bob).status_code == 404
    assert client.post(f"{API}/memories/{mine}/restore", json={}, headers=as_bob).status_code == 404
    fix = {"content": "Bob's version"}
    assert (
        client.post(f"{API}/memories/{mine}/correct", json=fix, headers=as_bob).status_code == 404
    )
    assert browse(client, agent="bob")["memories"] == []
    agents = client.get(f"{API}/agents").json()
    assert {"agent_id": "alice", "memories": 1} in agents["agents"]


def test_forget_restore_and_correct_through_the_dashboard_routes(client: TestClient) -> None:
    alice = {"X-Cortex-Agent": "alice"}
    memory = remember(client, "Lives in Porto", category="identity")
    assert client.delete(f"{API}/memories/{memory}", headers=alice).status_code == 200
    restored = client.post(
        f"{API}/memories/{memory}/restore", json={"layer": "working"}, headers=alice
    )
    assert restored.status_code == 200, restored.text
    assert (restored.json()["forgotten_at"], restored.json()["layer"]) == (None, "working")
    corrected = client.post(
        f"{API}/memories/{memory}/correct",
        json={"content": "Lives in Lisbon", "reason": "moved"},
        headers=alice,
    )
    assert corrected.status_code == 200, corrected.text
    new_id = corrected.json()["new_id"]
    page = client.get(f"{API}/memories/{new_id}/detail", headers=alice).json()
    assert [m["id"] for m in page["correction_chain"]] == [memory]
    assert page["provenance"]["kind"] == "correction"
    old = client.get(f"{API}/memories/{memory}/detail", headers=alice).json()
    assert old["memory"]["superseded_by"] == new_id
    assert [e["action"] for e in old["history"]][:3] == ["correct", "restore", "forget"]


def test_the_system_report_masks_secrets(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-should-never-show")
    settings = load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        api_token=TOKEN,
        embedding_api_key="emb-should-never-show",
    )
    with rest_client(settings, clock) as c:
        reply = c.get(f"{API}/system", params={"health": "false"}, headers=AUTH)
    assert reply.status_code == 200, reply.text
    text = reply.text
    assert TOKEN not in text and "should-never-show" not in text
    report = reply.json()
    assert report["settings"]["api_token"] == "**********"
    assert report["settings"]["provider_keys"]["OPENAI_API_KEY"] == "set"
    assert set(report["recall_latency_ms"]) == {"hour", "day"}
    assert report["storage"]["bytes"]["db"] > 0


# ---- the session ------------------------------------------------------------------------


def _signed_in(client: TestClient) -> TestClient:
    client.headers.pop("Authorization", None)
    reply = client.post("/ui/session", json={"token": TOKEN}, headers={"Origin": ORIGIN})
    assert reply.status_code == 200, reply.text
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    return client


def test_the_session_cookie_works_only_from_this_origins_page(client: TestClient) -> None:
    _signed_in(client)
    page = {CSRF_HEADER: "1", "Sec-Fetch-Site": "same-origin"}
    assert client.get(f"{API}/agents", headers=page).status_code == 200
    # the cookie without the dashboard's header (a form or <img> of another page): refused
    assert client.get(f"{API}/agents").status_code == 401
    # another origin on the same host (same site, so the browser sends the cookie): refused
    other = {CSRF_HEADER: "1", "Origin": "http://127.0.0.1:8080"}
    assert client.post(f"{API}/search/compare", json={}, headers=other).status_code in (401, 403)
    # (the cross-site guard in front refuses it first: 403)
    same_site = {CSRF_HEADER: "1", "Sec-Fetch-Site": "same-site"}
    assert client.get(f"{API}/agents", headers=same_site).status_code in (401, 403)
    # the page and its assets are public (they hold no data); the token is asked by the page
    anonymous = TestClient(client.app, base_url="http://127.0.0.1:21100")
    assert anonymous.get("/").status_code == 200
    assert anonymous.get("/ui/app.js").status_code == 200
    assert anonymous.get(f"{API}/agents", headers={CSRF_HEADER: "1"}).status_code == 401
    assert anonymous.get("/ui/auth").json() == {
        "token_required": True,
        "signed_in": False,
        "provider": False,
    }


def test_a_wrong_token_or_a_forged_cookie_starts_no_session(client: TestClient) -> None:
    client.headers.pop("Authorization", None)
    wrong = client.post("/ui/session", json={"token": "guess"}, headers={"Origin": ORIGIN})
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    foreign = client.post(
        "/ui/session", json={"token": TOKEN}, headers={"Origin": "http://evil.test"}
    )
    assert foreign.status_code == 403
    client.cookies.set("cortex_session", "cxt_0123456789ab_" + "A" * 43)  # no such session
    assert client.get(f"{API}/agents", headers={CSRF_HEADER: "1"}).status_code == 401
    client.cookies.clear()
    for raw in (
        'cortex_session="v1.1',
        "\x00=1; ;;",
        "cortex_session=v1.1.\xe9".encode("latin-1"),
        "cortex_session=" + "9" * 5000,
    ):
        reply = client.get(f"{API}/agents", headers={CSRF_HEADER: "1", "Cookie": raw})
        assert reply.status_code == 401, raw


def test_the_openapi_document_lists_the_dashboard_routes(client: TestClient) -> None:
    paths = client.get(f"{API}/openapi.json").json()["paths"]
    for path in ("/browse", "/agents", "/timeline", "/memories/{id}/detail", "/system"):
        assert f"{API}{path}" in paths
    assert "post" in paths[f"{API}/memories/{{id}}/restore"]


def test_recall_latency_percentiles_count_the_recalls_served(client: TestClient) -> None:
    remember(client, "The VPS runs on Oracle Cloud")
    for _ in range(5):
        reply = client.post(f"{API}/recall", json={"query": "which cloud?", "agent_id": "alice"})
        assert reply.status_code == 200
    latency = client.get(f"{API}/system", params={"health": "false"}).json()["recall_latency_ms"]
    assert latency["hour"]["count"] == 5 and latency["day"]["count"] == 5
    hour = latency["hour"]
    assert 0 <= hour["p50"] <= hour["p95"] <= hour["p99"] <= hour["max"]


def test_latency_windows_forget_samples_older_than_the_window() -> None:
    now = [0.0]
    window = LatencyWindow(clock=lambda: now[0])
    for ms in (10.0, 20.0, 30.0, 40.0):
        window.record(ms)
    now[0] = 2 * 3600  # two hours later
    window.record(5.0)
    summary = window.summary()
    assert summary["hour"] == {"count": 1, "p50": 5.0, "p95": 5.0, "p99": 5.0, "max": 5.0}
    assert summary["day"]["count"] == 5 and summary["day"]["p50"] == 20.0


def test_search_compare_reports_each_setting_side_by_side(client: TestClient) -> None:
    remember(client, "The VPS runs on Oracle Cloud ARM")
    remember(client, "Oracle support ticket opened")
    body = {
        "query": "oracle cloud",
        "variants": [{"mode": "text", "fusion": "rrf"}, {"mode": "hybrid", "mmr": True}],
    }
    reply = client.post(f"{API}/search/compare", json=body, headers={"X-Cortex-Agent": "alice"})
    assert reply.status_code == 200, reply.text
    first, second = reply.json()["variants"]
    assert (first["mode"], first["settings"]["fusion"]) == ("text", "rrf")
    assert (second["mode"], second["settings"]["mmr"]) == ("hybrid", True)
    stages = {"text", "vector", "fused", "layer_weight", "recency", "access", "decay", "final"}
    assert stages <= set(first["hits"][0])
    bad = client.post(f"{API}/search/compare", json={**body, "variants": [{"mode": "magic"}]})
    assert bad.status_code == 422 and bad.json()["error"]["field"].startswith("variants")


def test_profile_edits_and_the_extraction_log_act_for_the_chosen_agent(
    client: TestClient,
) -> None:
    alice, bob = {"X-Cortex-Agent": "alice"}, {"X-Cortex-Agent": "bob"}
    edit = {"summary": "Backend engineer in Lisbon", "domains": ["infra", "finance"]}
    assert client.patch(f"{API}/profile", json=edit, headers=alice).status_code == 200
    profile = client.get(f"{API}/profile", headers=alice).json()
    assert profile["summary"] == "Backend engineer in Lisbon"
    assert profile["manual"]["domains"] == ["infra", "finance"]
    assert client.get(f"{API}/profile", headers=bob).json().get("summary") in (None, "")
    wrong = client.patch(f"{API}/profile", json={"domains": "infra"}, headers=alice)
    assert wrong.status_code == 422
    turn = {"user_message": "I always deploy on Fridays", "assistant_message": "Noted."}
    assert client.post(f"{API}/ingest", json=turn, headers=alice).status_code == 202
    client.get(f"{API}/stats")  # the background extraction finishes with the drain
    turns = client.get(f"{API}/turns", headers=alice).json()["turns"]
    assert len(turns) == 1 and turns[0]["session_id"] is None
    assert client.get(f"{API}/turns", headers=bob).json()["turns"] == []
    past_any_row = client.get(f"{API}/turns", params={"before": 2**63}, headers=alice)
    assert past_any_row.status_code == 422 and past_any_row.json()["error"]["field"] == "before"


def test_lifecycle_runs_show_the_agents_share_of_each_run(
    client: TestClient, clock: FakeClock
) -> None:
    alice = {"X-Cortex-Agent": "alice"}
    remember(client, "Renew the TLS certificate", layer="working", importance=0.2)
    clock.advance(days=10)
    report = client.post(f"{API}/lifecycle/run", json={}, headers=alice).json()
    assert report["status"] == "done", report
    runs = client.get(f"{API}/lifecycle/runs", headers=alice).json()["runs"]
    assert runs[0]["id"] == report["run_id"] and runs[0]["scope"] == "alice"
    assert sum(runs[0]["agent_counts"].values()) == len(report["actions"]) > 0
    assert [a["ids"] for a in runs[0]["actions"]] == [a["ids"] for a in report["actions"]]
    assert client.get(f"{API}/lifecycle/runs", headers={"X-Cortex-Agent": "bob"}).json() == {
        "runs": []
    }


def timeline(client: TestClient, agent: str = "alice", **query: Any) -> dict[str, Any]:
    reply = client.get(f"{API}/timeline", params=query, headers={"X-Cortex-Agent": agent})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_the_timeline_places_memories_by_when_they_happened_with_an_axis_that_fits(
    client: TestClient, clock: FakeClock
) -> None:
    """The clock says 2026-11-01. A conversation of May to July 2023 stored today is charted
    over May to July 2023 (by week), not squeezed into today; one memory of 2015 is left off
    the chart and counted until fit=all; today's own memories are a second period, kept."""
    said = ["2023-05-03", "2023-05-03", "2023-05-20", "2023-06-14", "2023-07-02", "2023-07-28"]
    for n, day in enumerate(said):
        remember(client, f"conversation turn {n}", occurred_at=day)
    remember(client, "bob's 2020 note", agent="bob", occurred_at="2020-01-01")
    forgotten = remember(client, "said and retracted", occurred_at="2023-09-30")
    alice = {"X-Cortex-Agent": "alice"}
    assert client.delete(f"{API}/memories/{forgotten}", headers=alice).status_code == 200

    chart = timeline(client)
    assert (chart["by"], chart["granularity"]) == ("occurred_at", "week")
    assert (chart["start"], chart["end"]) == ("2023-05-03", "2023-07-28")
    assert chart["total"] == 6 and chart["off_chart"] == {"before": 0, "after": 0}
    starts = [b["start"] for b in chart["buckets"]]
    assert starts[0] == "2023-05-01" and starts[-1] == "2023-07-24"  # Mondays
    assert len(starts) == 13  # every week between, empty ones at zero
    assert [b["total"] for b in chart["buckets"]][:3] == [2, 0, 1]
    assert sum(b["core"] for b in chart["buckets"]) == 6

    remember(client, "a note dated long ago", occurred_at="2015-03-09")
    fitted = timeline(client)
    assert (fitted["start"], fitted["end"], fitted["granularity"]) == (
        "2023-05-03",
        "2023-07-28",
        "week",
    )
    assert fitted["off_chart"] == {"before": 1, "after": 0}
    assert (fitted["earliest"], fitted["total"]) == ("2015-03-09", 6)
    everything = timeline(client, fit="all")
    assert (everything["start"], everything["granularity"]) == ("2015-03-09", "year")
    assert [b["start"] for b in everything["buckets"]][:2] == ["2015-01-01", "2016-01-01"]
    assert everything["total"] == 7 and everything["off_chart"] == {"before": 0, "after": 0}

    for n in range(4):  # stored today, about today: a period of its own
        remember(client, f"today's note {n}")
    both = timeline(client)
    assert (both["start"], both["end"], both["granularity"]) == (
        "2023-05-03",
        "2026-11-01",
        "month",
    )
    assert both["buckets"][-1] == {"start": "2026-11-01", "total": 4, **_layers(core=4)}
    assert both["off_chart"]["before"] == 1

    recent = timeline(client, days=30)
    assert (recent["start"], recent["end"], recent["total"]) == ("2026-11-01", "2026-11-01", 4)
    assert recent["since"] == "2026-10-02"
    assert timeline(client, agent="bob")["start"] == "2020-01-01"
    assert timeline(client, agent="carol")["buckets"] == []

    for bad, field in (({"fit": "some"}, "fit"), ({"days": 0}, "days")):
        refused = client.get(f"{API}/timeline", params=bad)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == field


def _layers(**counts: int) -> dict[str, int]:
    return {"working": 0, "core": 0, "archive": 0, **counts}


def test_the_table_shows_and_sorts_by_when_a_memory_happened(client: TestClient) -> None:
    ids = {day: remember(client, f"said on {day}", occurred_at=day) for day in
           ("2024-02-29", "2021-07-04", "2025-12-31", "2023-01-15")}  # fmt: skip
    today = remember(client, "said today")
    seen: list[str] = []
    page = browse(client, sort="occurred_at", order="asc", limit=2)
    while True:
        seen += [m["id"] for m in page["memories"]]
        for m in page["memories"]:
            assert m["occurred_at"] and m["created_at"]
        if page["next_cursor"] is None:
            break
        page = browse(client, sort="occurred_at", order="asc", limit=2, cursor=page["next_cursor"])
    assert seen == [*(ids[d] for d in sorted(ids)), today]
    detail = client.get(
        f"{API}/memories/{ids['2021-07-04']}/detail", headers={"X-Cortex-Agent": "alice"}
    )
    memory = detail.json()["memory"]
    assert memory["occurred_at"].startswith("2021-07-04T00:00:00")
    assert memory["created_at"].startswith("2026-11-01")


def test_the_timeline_buckets_follow_the_span_and_only_few_far_outliers_leave_the_chart() -> None:
    from datetime import date, timedelta

    from cortex_mcp.engine.recall.timeline import granularity, timeline

    start = date(2024, 1, 1)
    for days, unit in ((1, "day"), (62, "day"), (63, "week"), (366, "week"), (367, "month"),
                       (6 * 366, "month"), (6 * 366 + 1, "year")):  # fmt: skip
        assert granularity(start, start + timedelta(days=days - 1)) == unit, days

    def rows(*counts: tuple[str, int]) -> list[dict[str, Any]]:
        return [{"day": day, "total": n, "core": n} for day, n in counts]

    december = timeline(rows(("2023-11-20", 3), ("2024-02-02", 3)), ["core"], fit=True)
    assert [b["start"] for b in december["buckets"]] == [
        "2023-11-20", "2023-11-27", "2023-12-04", "2023-12-11", "2023-12-18", "2023-12-25",
        "2024-01-01", "2024-01-08", "2024-01-15", "2024-01-22", "2024-01-29",
    ]  # fmt: skip
    month = timeline(rows(("2023-11-20", 3), ("2025-02-02", 3)), ["core"], fit=True)
    assert [b["start"] for b in month["buckets"]][1:3] == ["2023-12-01", "2024-01-01"]

    # one far outlier among 20 memories leaves; two do not (at most one under 100 memories)
    days = [(f"2024-03-{d:02d}", 2) for d in range(1, 11)]
    one = timeline(rows(("2019-06-01", 1), *days), ["core"], fit=True)
    assert (one["start"], one["off_chart"]["before"], one["granularity"]) == (
        "2024-03-01",
        1,
        "day",
    )
    two = timeline(rows(("2019-06-01", 2), *days), ["core"], fit=True)
    assert (two["start"], two["off_chart"]["before"]) == ("2019-06-01", 0)
    # nor is a memory a month before the rest an outlier (within 90 days), nor with fewer than 5
    near = timeline(rows(("2024-02-01", 1), *days), ["core"], fit=True)
    assert near["start"] == "2024-02-01"
    few = timeline(rows(("2019-06-01", 1), ("2024-03-01", 3)), ["core"], fit=True)
    assert few["start"] == "2019-06-01"
    assert timeline([], ["core"], fit=True)["buckets"] == []


def test_the_entities_page_reads_the_entities_and_each_ones_memories_over_rest(
    client: TestClient,
) -> None:
    """What pages/relations.js asks: GET /entities for the graph's nodes (name, kind, aliases,
    how many memories), then POST /search with an entity's name for its page, whose hits say
    which entities they are about (no access is counted)."""
    remember(client, "Tom: My sister Anna just moved to Lisbon.")
    remember(client, "Tom: Anna paints every weekend.")
    remember(client, "Tom: The weather was great for hiking.")
    listed: dict[str, Any] = {}
    for _ in range(100):  # linking runs just after each remember answers
        reply = client.get(
            f"{API}/entities", params={"limit": 200}, headers={"X-Cortex-Agent": "alice"}
        )
        assert reply.status_code == 200, reply.text
        listed = {e["name"]: e for e in reply.json()["entities"]}
        if listed.get("Anna", {}).get("mention_count") == 2:
            break
        time.sleep(0.05)
    anna = listed["Anna"]
    assert anna["kind"] == "person" and "my sister" in [a.casefold() for a in anna["aliases"]]
    reply = client.post(
        f"{API}/search", json={"query": "Anna", "limit": 20}, headers={"X-Cortex-Agent": "alice"}
    )
    assert reply.status_code == 200, reply.text
    about = {m["content"] for m in reply.json()["results"] if "Anna" in m["entities"]}
    assert about == {"Tom: Anna paints every weekend.", "Tom: My sister Anna just moved to Lisbon."}
    assert all(m["access_count"] == 0 for m in reply.json()["results"])
