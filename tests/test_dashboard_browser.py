"""The dashboard in a real headless browser (Debian's chromium driven by Playwright's Python
API) against `cortex-mcp serve` on a free loopback port over a seeded database: every page
loads without a console error and passes axe-core (no serious or critical violation); edits,
forget/restore, the search debugger, the graph and the lifecycle preview agree with REST and
the CLI; with a token, nothing is served to a request without the session.

Skipped, with the reason, only when chromium is not installed (.ci/run installs it; Playwright
comes with the dev extra)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from cortex_mcp.config import load_settings
from cortex_mcp.models import Category, Layer
from cortex_mcp.reader import open_tokens
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import RememberRequest, TokenRequest, build
from tests.helpers.dashboard_seed import AGENT, KNOWN_QUERY, OTHER, RELATIONS, Seeded, seed_database
from tests.helpers.embedding_stub import embedding_stub
from tests.helpers.http_helpers import TOKEN, ServeProcess
from tests.helpers.stdio_helpers import HANG_S, server_command, server_env

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent
AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
SCREENSHOT = ROOT / "docs" / "dashboard.png"
IMAGES = ROOT / "docs" / "images"  # the fixed views docs/dashboard.md shows

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="chromium is not installed (apt-get install chromium chromium-driver; .ci/run does)",
    ),
]

LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAGES = [
    "#/memories",
    "#/memories?view=timeline",
    "#/memories?view=layers",
    "#/memory/{vps}",
    "#/search?q=Oracle+Cloud+VPS&a_mode=text&b_mode=hybrid",
    "#/relations",
    "#/lifecycle",
    "#/extraction",
    "#/profile",
    "#/system",
]


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    with embedding_stub() as (url, _state):
        yield url


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory, stub_url: str) -> tuple[Path, Seeded]:
    db = tmp_path_factory.mktemp("dashboard") / "brain.db"
    settings = load_settings(db_path=db, **_embedding_settings(stub_url))
    return db, seed_database(settings)


def _embedding_settings(url: str) -> dict[str, Any]:
    return {
        "embedding_provider": "openai",
        "embedding_base_url": url,
        "embedding_model": "stub-embed",
        "embedding_timeout_s": 20,
    }


def _server_env(url: str) -> dict[str, str]:
    return {
        "CORTEX_EMBEDDING_PROVIDER": "openai",
        "CORTEX_EMBEDDING_BASE_URL": url,
        "CORTEX_EMBEDDING_MODEL": "stub-embed",
        "CORTEX_EMBEDDING_TIMEOUT_S": "20",
        "CORTEX_LIFECYCLE__SCHEDULE": "off",
    }


@pytest.fixture(scope="module")
def server(seeded: tuple[Path, Seeded], stub_url: str) -> Iterator[ServeProcess]:
    with ServeProcess(seeded[0], token=None, **_server_env(stub_url)) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield launched
        launched.close()


class Tab:
    """One page of the dashboard as the agent `alice`, collecting console errors."""

    def __init__(self, browser: Browser, base: str, agent: str = AGENT) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.set_default_timeout(HANG_S * 1000)  # a hang bound, not 30 s
        self.context.add_init_script(f"sessionStorage.setItem('cortex.agent', {json.dumps(agent)})")
        self.page: Page = self.context.new_page()
        self.base = base
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def open(self, hash_: str, ready: str = "main h1") -> Page:
        self.page.goto(f"{self.base}/{hash_}")
        self.page.wait_for_selector(ready)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def axe_violations(self) -> list[dict[str, Any]]:
        self.page.evaluate(AXE.read_text("utf-8"))
        result = self.page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
            " nodes: v.nodes.slice(0, 3).map(n => n.html)}))"
        )
        return [v for v in result if v["impact"] in ("serious", "critical")]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser: Browser, server: ServeProcess) -> Iterator[Tab]:
    opened = Tab(browser, server.url)
    yield opened
    opened.close()


@contextlib.contextmanager
def other_origin() -> Iterator[str]:
    """A page served from another port of 127.0.0.1: another origin, the same site."""
    page = b"<!doctype html><html lang='en'><title>another origin</title><h1>other</h1></html>"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _count(server: ServeProcess) -> int:
    """Memories of every agent, from the server's database file (no route counts others')."""
    db = server.log.parent / "brain.db"
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])


def _rest(server: ServeProcess, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"X-Cortex-Agent": AGENT}
    reply = httpx2.request(
        method, f"{server.url}/api/v1{path}", headers=headers, timeout=30, **kwargs
    )
    assert reply.status_code < 400, reply.text
    return reply.json()


def test_every_page_loads_without_a_console_error_and_passes_axe(
    tab: Tab, seeded: tuple[Path, Seeded], tmp_path: Path
) -> None:
    """Also takes the README's screenshot: into the test's folder, or over docs/dashboard.png
    with UPDATE_DASHBOARD_SCREENSHOT=1 (so a test run leaves the checkout as it was)."""
    update = os.environ.get("UPDATE_DASHBOARD_SCREENSHOT") == "1"
    screenshot_path = SCREENSHOT if update else tmp_path / "dashboard.png"
    ids = seeded[1].ids
    for hash_ in PAGES:
        page = tab.open(hash_.format(**ids))
        assert page.locator("main h1").count() == 1, hash_
        assert "Something went wrong" not in page.inner_text("main"), hash_
        assert tab.axe_violations() == [], hash_
        assert tab.errors == [], (hash_, tab.errors)
        if hash_ == "#/memories":
            page.screenshot(path=str(screenshot_path))


def test_the_table_shows_only_the_selected_agents_memories(
    tab: Tab, seeded: tuple[Path, Seeded]
) -> None:
    page = tab.open("#/memories", ready="#memory-table tbody tr[data-id]")
    shown = set(
        page.locator("#memory-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    )
    assert seeded[1].ids["vps"] in shown
    assert not shown & set(seeded[1].other_ids)
    page.select_option("#agent", OTHER)
    page.wait_for_function(
        "ids => [...document.querySelectorAll('#memory-table tbody tr[data-id]')]"
        ".map(r => r.dataset.id).sort().join() === ids.slice().sort().join()",
        arg=seeded[1].other_ids,
    )
    assert tab.errors == []


def test_editing_a_memory_in_the_browser_shows_through_rest(
    tab: Tab, server: ServeProcess, seeded: tuple[Path, Seeded]
) -> None:
    memory_id = seeded[1].ids["editor"]
    page = tab.open(f"#/memory/{memory_id}", ready="#edit-form")
    page.select_option("#edit-category", "skill")
    page.fill("#edit-importance", "0.35")
    page.select_option("#edit-layer", "working")
    page.click("#edit-form button[type=submit]")
    page.wait_for_selector("#memory-meta dd[data-key='Category'] >> text=skill")
    memory = _rest(server, "GET", f"/memories/{memory_id}")["memory"]
    assert (memory["category"], memory["importance"], memory["layer"]) == ("skill", 0.35, "working")
    assert tab.errors == []


def test_forget_and_restore_round_trip(
    tab: Tab, server: ServeProcess, seeded: tuple[Path, Seeded]
) -> None:
    memory_id = seeded[1].ids["todo"]
    page = tab.open(f"#/memory/{memory_id}", ready="#forget")
    page.click("#forget")
    page.wait_for_selector("#restore")
    assert _rest(server, "GET", f"/memories/{memory_id}")["memory"]["forgotten_at"]
    recalled = _rest(server, "POST", "/recall", json={"query": "TLS certificate renew"})
    assert memory_id not in [m["id"] for m in recalled["memories"]]
    page.select_option("#restore-layer", "working")
    page.click("#restore")
    page.wait_for_selector("#forget")
    memory = _rest(server, "GET", f"/memories/{memory_id}")["memory"]
    assert memory["forgotten_at"] is None and memory["layer"] == "working"
    recalled = _rest(server, "POST", "/recall", json={"query": "TLS certificate renew"})
    assert memory_id in [m["id"] for m in recalled["memories"]]
    # the audit log says who acted (a server without a token: every caller is the admin)
    page = tab.open(f"#/memory/{memory_id}", ready="#forget")
    audit = page.locator("table:has(caption:text('Audit log')) tbody tr")
    rows = [audit.nth(i).locator("td").all_inner_texts() for i in range(audit.count())]
    assert {row[1] for row in rows} >= {"forget", "restore"}
    assert all(row[2] == "admin" and "actor" not in row[3] for row in rows)
    assert tab.errors == []


@pytest.fixture(scope="module")
def token_server(seeded: tuple[Path, Seeded], stub_url: str) -> Iterator[ServeProcess]:
    with ServeProcess(seeded[0], token=TOKEN, **_server_env(stub_url)) as served:
        yield served


def test_with_a_token_the_page_asks_once_and_nothing_is_served_without_the_session(
    browser: Browser, token_server: ServeProcess
) -> None:
    tab = Tab(browser, token_server.url)
    try:
        page = tab.open("#/memories", ready="#token")
        # the browser's own request without the session cookie is refused
        refused = page.request.get(
            f"{token_server.url}/api/v1/agents", headers={"X-Cortex-Dashboard": "1"}
        )
        assert refused.status == 401
        assert tab.axe_violations() == []
        page.fill("#token", TOKEN)
        page.click("form button[type=submit]")
        page.wait_for_selector("#memory-table tbody tr[data-id]")
        assert tab.errors == []
        cookie = next(c for c in tab.context.cookies() if c["name"] == "cortex_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""  # scripts cannot read it
        # with the cookie, the dashboard's own fetch works; a reload keeps the session
        page.reload()
        page.wait_for_selector("#memory-table tbody tr[data-id]")
        # a page of another origin on the same host and so the same site (another port):
        # the browser sends the cookie with its requests, and the server still refuses them
        with other_origin() as other_url:
            other = tab.context.new_page()
            other.goto(other_url)
            before = _count(token_server)
            blocked = other.evaluate(
                "async url => { try { await fetch(url, {credentials: 'include'}); return 'read' }"
                " catch (e) { return 'blocked' } }",
                f"{token_server.url}/api/v1/agents",
            )
            assert blocked == "blocked"  # no CORS for it: it cannot read an answer
            # a CSRF attempt: a "simple" cross-origin POST that needs no preflight
            other.evaluate(
                "async url => fetch(url, {method: 'POST', mode: 'no-cors', credentials: 'include',"
                " headers: {'Content-Type': 'text/plain'},"
                " body: JSON.stringify({content: 'planted by another page'})})",
                f"{token_server.url}/api/v1/memories",
            )
            preflighted = other.evaluate(
                "async url => { try { await fetch(url, {credentials: 'include',"
                " headers: {'X-Cortex-Dashboard': '1'}}); return 'read' }"
                " catch (e) { return 'blocked' } }",
                f"{token_server.url}/api/v1/agents",
            )
            assert preflighted == "blocked"  # the preflight for the header is refused
            assert _count(token_server) == before
        no_cookie = httpx2.get(
            f"{token_server.url}/api/v1/agents", headers={"X-Cortex-Dashboard": "1"}
        )
        assert no_cookie.status_code == 401
    finally:
        tab.close()


def test_signed_in_with_an_agent_token_every_page_shows_that_agent_only(
    browser: Browser, token_server: ServeProcess, seeded: tuple[Path, Seeded]
) -> None:
    async def issue() -> str:
        async with open_tokens(load_settings(db_path=seeded[0])) as tokens:
            return str((await tokens.create(build(TokenRequest, agent=AGENT)))["token"])

    with ThreadPoolExecutor(1) as pool:  # playwright's loop runs in this thread
        token = pool.submit(asyncio.run, issue()).result()
    tab = Tab(browser, token_server.url)
    try:
        page = tab.open("#/memories", ready="#token")
        page.fill("#token", token)
        page.click("form button[type=submit]")
        page.wait_for_selector("#memory-table tbody tr[data-id]")
        ids = seeded[1].ids
        for hash_ in PAGES:
            page = tab.open(hash_.format(**ids))
            assert "Something went wrong" not in page.inner_text("main"), hash_
            assert tab.errors == [], (hash_, tab.errors)
            assert not any(other in page.inner_text("main") for other in seeded[1].other_ids)
        page = tab.open("#/system", ready="#agents-h")
        options = page.locator("#agent option").all_inner_texts()
        assert [o.split(" (")[0] for o in options] == [AGENT]
        agents = page.locator("section[aria-labelledby=agents-h] tbody tr").all_inner_texts()
        assert [row.split()[0] for row in agents] == [AGENT]
        assert page.locator("#settings").count() == 0  # the admin's
    finally:
        tab.close()


STAGE_NAMES = ["text", "vector", "fused", "layer_weight", "recency", "access", "decay", "final"]


def test_the_search_debugger_shows_every_stage_for_a_known_query(
    tab: Tab, server: ServeProcess, seeded: tuple[Path, Seeded]
) -> None:
    page = tab.open("#/search", ready="#q")
    page.fill("#q", KNOWN_QUERY)
    page.select_option("#a_mode", "text")
    page.select_option("#b_mode", "hybrid")
    page.click("form[role=search] button[type=submit]")
    page.wait_for_selector("[data-variant=b] table.stages tbody tr[data-id]")
    expected = _rest(server, "POST", "/search", json={"query": KNOWN_QUERY, "debug": True})
    top = expected["debug"]["hits"][0]
    assert top["id"] == seeded[1].ids["vps"]
    # each variant's scores are its mode's (the entity stage weighs a link more with text alone)
    compared = _rest(
        server,
        "POST",
        "/search/compare",
        json={"query": KNOWN_QUERY, "variants": [{"mode": "text"}, {"mode": "hybrid"}]},
    )
    for variant, report in zip(("a", "b"), compared["variants"], strict=True):
        row = page.locator(f"[data-variant={variant}] table.stages tbody tr[data-id]").first
        assert row.get_attribute("data-id") == top["id"] == report["hits"][0]["id"]
        stages = row.locator("td[data-stage]").evaluate_all(
            "cells => cells.map(c => c.dataset.stage)"
        )
        assert stages == STAGE_NAMES
        final = row.locator("td[data-stage=final]").inner_text()
        assert f"{report['hits'][0]['final']:.3f}" in final
    hybrid = page.locator("[data-variant=b]").inner_text()
    assert "channels: text + vector" in hybrid
    vector_cell = page.locator("[data-variant=b] tbody tr[data-id] td[data-stage=vector]").first
    assert float(vector_cell.inner_text()) > 0  # the stub embedder scored it
    assert "channels: text ·" in page.locator("[data-variant=a]").inner_text()
    assert tab.errors == []


def test_the_search_debugger_shows_the_window_a_query_names_and_each_hits_time_boost(
    tab: Tab, seeded: tuple[Path, Seeded]
) -> None:
    page = tab.open("#/search", ready="#q")
    page.fill("#q", "Oracle VPS in the past 7 days")  # the VPS note was remembered 3 days ago
    page.select_option("#a_mode", "text")
    page.click("form[role=search] button[type=submit]")
    page.wait_for_selector("[data-variant=a] table.stages tbody tr[data-id]")
    card = page.locator("[data-variant=a]")
    assert "“in the past 7 days”" in card.locator("p[data-window]").inner_text()
    row = card.locator("table.stages tbody tr[data-id]").first
    assert row.get_attribute("data-id") == seeded[1].ids["vps"]
    stages = row.locator("td[data-stage]").evaluate_all("cells => cells.map(c => c.dataset.stage)")
    assert stages == [*STAGE_NAMES[:-1], "time", "final"]
    assert row.locator("td[data-stage=time]").inner_text() == "1.00"
    assert tab.errors == []


def test_the_graph_draws_the_seeded_relations_and_an_entity_opens_its_memories(
    tab: Tab, seeded: tuple[Path, Seeded]
) -> None:
    page = tab.open("#/relations", ready="svg.graph .node")
    entities = set(
        page.locator("svg.graph .node").evaluate_all("ns => ns.map(n => n.dataset.entity)")
    )
    # every relation's ends, and the entities linking found in the memories
    assert entities >= {name for triple in RELATIONS for name in (triple[0], triple[2])}
    assert page.locator("svg.graph line").count() == len(RELATIONS)
    positions = page.locator("svg.graph .node").evaluate_all(
        "ns => ns.map(n => n.getAttribute('transform'))"
    )
    assert len(set(positions)) == len(positions)  # laid out, not piled up
    page.focus("svg.graph .node[data-entity=Lisbon]")
    page.keyboard.press("Enter")
    page.wait_for_selector("#entity-panel a")
    panel = page.inner_text("#entity-panel")
    assert "Alice — lives_in → Lisbon" in panel
    assert "Lives in Lisbon" in panel  # the memory that mentions it
    assert tab.errors == []


def test_the_lifecycle_preview_lists_what_the_cli_preview_lists(
    tab: Tab, seeded: tuple[Path, Seeded], server: ServeProcess, stub_url: str
) -> None:
    page = tab.open("#/lifecycle", ready="#preview-actions")
    shown = page.locator("#preview-actions tbody tr[data-kind]").evaluate_all(
        "rows => rows.map(r => [r.dataset.kind, r.dataset.ids])"
    )
    cli = subprocess.run(
        [*server_command(), "lifecycle", "preview", "--agent", AGENT, "--json"],
        capture_output=True,
        text=True,
        env=server_env(seeded[0], **_server_env(stub_url)),
        timeout=120,
        check=True,
    )
    planned = json.loads(cli.stdout)
    listed = [[a["kind"], ",".join(a["ids"])] for a in planned["actions"]]
    assert listed, "the seed gives the lifecycle work to preview"
    assert sorted(shown) == sorted(listed)
    # and what its reflect step would change: each entity page and each proposal to core
    reflected = page.locator("#preview-reflect tbody tr[data-reflect]").evaluate_all(
        "rows => rows.map(r => [r.dataset.reflect, r.dataset.id])"
    )
    expected = [["page", e["id"]] for r in planned["reflect"] for e in r["entities"]]
    expected += [[p["action"], p["memory_id"]] for r in planned["reflect"] for p in r["proposals"]]
    assert planned["counts"]["reflect_memories"] > 0, "the seed is new to reflect"
    assert sorted(reflected) == sorted(expected)
    assert tab.errors == []


def test_purge_asks_first_and_says_what_it_erases(
    tab: Tab, server: ServeProcess, seeded: tuple[Path, Seeded]
) -> None:
    memory_id = seeded[1].ids["archived"]
    page = tab.open(f"#/memory/{memory_id}", ready="#purge")
    page.click("#purge")
    dialog = page.locator("#purge-dialog")
    assert "erases" in dialog.inner_text() and "cannot be undone" in dialog.inner_text()
    page.keyboard.press("Escape")  # cancel: nothing happens
    assert _rest(server, "GET", f"/memories/{memory_id}")["memory"]["id"] == memory_id
    page.click("#purge")
    page.click("#purge-confirm")
    page.wait_for_selector("#memory-table")
    gone = httpx2.get(
        f"{server.url}/api/v1/memories/{memory_id}", headers={"X-Cortex-Agent": AGENT}, timeout=30
    )
    assert gone.status_code == 404
    assert tab.errors == []


def test_the_keyboard_reaches_the_navigation_the_agent_selector_and_a_memory(
    tab: Tab, seeded: tuple[Path, Seeded]
) -> None:
    page = tab.open("#/memories", ready="#memory-table tbody tr[data-id]")
    assert page.evaluate("document.activeElement.id") == "main"  # a page change lands in it
    page.focus(".skip")
    page.keyboard.press("Enter")  # the skip link lands in the content, the page stays
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.url.endswith("#/memories")
    page.focus(".skip")
    reached = []
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate("document.activeElement.id || document.activeElement.textContent")
        )
    assert "Search debugger" in reached and "System" in reached and "agent" in reached
    # into the table: Tab until a memory link has focus, Enter opens it
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('#memory-table')"):
            break
    target = page.evaluate("document.activeElement.getAttribute('href')")
    assert target.startswith("#/memory/")
    page.keyboard.press("Enter")
    page.wait_for_selector("#memory-content")
    assert page.url.endswith(target)
    assert tab.errors == []


def test_the_run_button_runs_the_lifecycle_and_the_run_is_listed(
    tab: Tab, server: ServeProcess
) -> None:
    page = tab.open("#/lifecycle", ready="#run-lifecycle")
    planned = page.locator("#preview-actions tbody tr[data-kind]").count()
    page.click("#run-lifecycle")
    assert "audit log" in page.locator("#run-dialog").inner_text()
    page.click("#run-confirm")
    page.wait_for_selector("details[id^=run-]")
    runs = _rest(server, "GET", "/lifecycle/runs")["runs"]
    assert runs[0]["status"] == "done" and len(runs[0]["actions"]) == planned
    summary = page.locator(f"#run-{runs[0]['id']} summary").inner_text()
    assert f"{planned} planned step" in summary
    assert tab.errors == []


def _screenshot(page: Page, name: str, tmp_path: Path) -> None:
    """A picture for docs/dashboard.md: into docs/images/ with UPDATE_DASHBOARD_SCREENSHOT=1,
    else into the test's folder (a test run leaves the checkout as it was)."""
    update = os.environ.get("UPDATE_DASHBOARD_SCREENSHOT") == "1"
    page.screenshot(path=str((IMAGES if update else tmp_path) / name))


@pytest.fixture(scope="module")
def one_day_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """A database whose memories were all written today, as on a new user's first day."""
    db = tmp_path_factory.mktemp("one-day") / "brain.db"

    async def seed() -> None:
        async with open_cortex(load_settings(db_path=db, embedding_provider="none")) as service:
            for content in ("Deploys on Fridays", "Uses Neovim", "Lives in Lisbon"):
                await service.memories.remember(RememberRequest(content=content, agent_id=AGENT))

    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API keeps a loop on this thread
        pool.submit(asyncio.run, seed()).result()
    with ServeProcess(db, token=None, CORTEX_LIFECYCLE__SCHEDULE="off") as served:
        yield served


def test_the_timeline_axis_fits_memories_that_are_all_from_one_day(
    browser: Browser, one_day_server: ServeProcess
) -> None:
    """drawDays gave uPlot the days with data and no range: one day's memories sat at the
    left edge of an axis running from 2026 to 2029. The chart's label says the range uPlot
    drew."""
    tab = Tab(browser, one_day_server.url)
    try:
        chart = "[role=img][aria-label^='Chart'][aria-label*=' from ']"  # once it is drawn
        page = tab.open("#/memories?view=timeline", ready=chart)
        label = page.get_attribute(chart, "aria-label") or ""
        assert "3 in all" in label, label
        first, last = (date.fromisoformat(d) for d in label.split(" from ")[1][:24].split(" to "))
        today = datetime.now(UTC).date()
        assert first <= today <= last and last - first <= timedelta(days=2), label
        assert tab.errors == []
    finally:
        tab.close()


CONVERSATION_DAYS = ["2023-05-03", "2023-05-20", "2023-06-14", "2023-07-02", "2023-07-28"]
SUMMARY_PERIOD = {"start": "2023-05-03T09:00:00.000000Z", "end": "2023-05-29T18:30:00.000000Z"}


@pytest.fixture(scope="module")
def dated_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServeProcess, str, str]]:
    """A conversation of May to July 2023 imported today, one note dated 2015, two notes of
    today's and a summary of May 2023; the ids of the 2023-06-14 memory and the summary."""
    db = tmp_path_factory.mktemp("dated") / "brain.db"

    async def seed() -> tuple[str, str]:
        async with open_cortex(load_settings(db_path=db, embedding_provider="none")) as service:
            ids = {}
            for n, day in enumerate([*CONVERSATION_DAYS, "2015-03-09"]):
                request = RememberRequest(content=f"Said on {day} ({n})", occurred_at=day)
                ids[day] = (await service.memories.remember(request)).id
            for content in ("Deploys on Fridays", "Uses Neovim"):
                await service.memories.remember(RememberRequest(content=content))
            summary = RememberRequest(
                content="[2023-05] a museum, a pottery class",
                category=Category.summary,
                layer=Layer.archive,
                occurred_at=SUMMARY_PERIOD["start"],
            )
            ids["summary"] = (
                await service.memories.remember(
                    summary, metadata={"period": "2023-05", "period_range": SUMMARY_PERIOD}
                )
            ).id
            return ids["2023-06-14"], ids["summary"]

    with ThreadPoolExecutor(1) as pool:
        memory_id, summary_id = pool.submit(asyncio.run, seed()).result()
    with ServeProcess(db, token=None, CORTEX_LIFECYCLE__SCHEDULE="off") as served:
        yield served, memory_id, summary_id


def _chart_range(page: Page, chart: str) -> tuple[date, date]:
    label = page.get_attribute(chart, "aria-label") or ""
    first, last = label.split(" from ")[1][:24].split(" to ")
    return date.fromisoformat(first), date.fromisoformat(last)


def test_the_timeline_axis_spans_when_dated_memories_happened(
    browser: Browser, dated_server: tuple[ServeProcess, str, str], tmp_path: Path
) -> None:
    """Memories of 2023 stored today are charted over 2023 by month, the 2015 note is left off
    and counted (with a button that shows it too), and the list runs by when they happened."""
    tab = Tab(browser, dated_server[0].url)
    try:
        chart = "[role=img][aria-label^='Chart'][aria-label*=' from ']"
        page = tab.open("#/memories?view=timeline", ready=chart)
        first, last = _chart_range(page, chart)
        today = datetime.now(UTC).date()
        # 2023-05-03 to today, by month, one month of margin each side
        assert date(2023, 3, 31) <= first <= date(2023, 5, 1), (first, last)
        assert today <= last <= today + timedelta(days=62), (first, last)
        assert page.get_attribute(chart, "data-granularity") == "month"
        assert "8 in all" in (page.get_attribute(chart, "aria-label") or "")  # the summary too
        _screenshot(page, "dashboard-timeline.png", tmp_path)
        ticks = (page.get_attribute(chart, "data-ticks") or "").split()
        assert ticks[0] == "2023-05" and ticks[-1][:4] == str(today.year), ticks
        note = page.inner_text("#off-chart")
        assert "1 earlier memory (from 2015-03-09)" in note, note
        days = page.locator("#timeline section.day h2").all_inner_texts()
        assert days[-2:] == ["2023-05-03", "2015-03-09"] and days[0] == today.isoformat(), days
        assert tab.errors == []

        page.click("#show-all")
        page.wait_for_selector(f"{chart}[data-granularity=year]")
        first, last = _chart_range(page, chart)
        assert first <= date(2015, 1, 1) and last >= date(today.year, 1, 1), (first, last)
        assert "9 in all" in (page.get_attribute(chart, "aria-label") or "")
        assert tab.errors == []
    finally:
        tab.close()


def test_the_memory_page_shows_when_it_happened_beside_when_it_was_stored(
    browser: Browser, dated_server: tuple[ServeProcess, str, str]
) -> None:
    server, memory_id, summary_id = dated_server
    tab = Tab(browser, server.url)
    try:
        page = tab.open(f"#/memory/{memory_id}", ready="#memory-meta")
        occurred = page.inner_text("#memory-meta dd[data-key='Occurred (UTC)']")
        stored = page.inner_text("#memory-meta dd[data-key='Stored (UTC)']")
        assert occurred == "2023-06-14", occurred  # given as a day: no time that was never said
        assert stored.startswith(datetime.now(UTC).date().isoformat()[:4]), stored
        assert not page.locator("#memory-meta dd[data-key^='Period']").count()
        page = tab.open(f"#/memory/{summary_id}", ready="#memory-meta")
        covered = page.inner_text("#memory-meta dd[data-key='Period covered (UTC)']")
        assert covered == "2023-05-03 09:00:00 to 2023-05-29 18:30:00", covered
        assert page.inner_text("#memory-meta dd[data-key='Occurred (UTC)']") == covered[:19]
        table = tab.open("#/memories?sort=occurred_at&order=asc", ready="#memory-table tbody tr")
        first_row = table.locator("#memory-table tbody tr").first.locator("td")
        assert first_row.nth(0).inner_text().startswith("2015-03-09")
        assert tab.axe_violations() == []
        assert tab.errors == []
    finally:
        tab.close()


def test_the_sign_in_page_shows_neither_sign_out_nor_the_agent_selector(
    browser: Browser, token_server: ServeProcess, tmp_path: Path
) -> None:
    tab = Tab(browser, token_server.url)
    try:
        page = tab.open("#/memories", ready="#token")
        assert not page.is_visible("#sign-out")
        assert not page.is_visible("#agent") and not page.is_visible("label[for=agent]")
        _screenshot(page, "dashboard-sign-in.png", tmp_path)
        page.fill("#token", TOKEN)
        page.click("form button[type=submit]")
        page.wait_for_selector("#memory-table tbody tr[data-id]")
        assert page.is_visible("#sign-out") and page.is_visible("#agent")
        assert page.locator("#agent option").count() >= 1
        page.click("#sign-out")
        page.wait_for_selector("#token")
        assert not page.is_visible("#sign-out") and not page.is_visible("#agent")
        assert tab.errors == []
    finally:
        tab.close()


def test_the_comparison_cards_show_the_final_score_without_scrolling(
    tab: Tab, tmp_path: Path
) -> None:
    page = tab.open("#/search", ready="#q")
    page.fill("#q", KNOWN_QUERY)
    page.select_option("#a_mode", "text")
    page.select_option("#b_mode", "hybrid")
    page.click("form[role=search] button[type=submit]")
    page.wait_for_selector("[data-variant=b] table.stages tbody tr[data-id]")
    for variant in ("a", "b"):
        card = page.locator(f"[data-variant={variant}]")
        overflow = card.evaluate("c => c.scrollWidth - c.clientWidth")
        assert overflow <= 0, (variant, overflow)
        box = card.bounding_box()
        final = card.locator("tbody tr[data-id] td[data-stage=final]").first.bounding_box()
        assert box is not None and final is not None
        assert final["x"] + final["width"] <= box["x"] + box["width"], variant
    assert tab.errors == []
    _screenshot(page, "dashboard-search.png", tmp_path)


def test_the_extraction_log_names_the_rules_when_no_llm_extracted(tab: Tab, tmp_path: Path) -> None:
    """The seeded turn was ingested with no LLM configured: what came of it is the rules'
    (the sieve, and the user's message kept as a note), not an LLM's."""
    page = tab.open("#/extraction", ready="#turns article")
    headings = page.locator("#turns article h3").all_inner_texts()
    assert headings and not [h for h in headings if "LLM (extracted" in h], headings
    assert any(h.startswith("No LLM") for h in headings), headings
    assert tab.errors == []
    _screenshot(page, "dashboard-extraction.png", tmp_path)


def test_a_page_of_another_origin_cannot_frame_the_dashboard(
    browser: Browser, server: ServeProcess
) -> None:
    """On a tokenless loopback server, the live dashboard in another origin's iframe would be a
    clickjacking target: the browser must refuse to show it there (the page's own frame of its
    own origin loads, so the check can tell a refused frame from one that did not load)."""
    context = browser.new_context()
    try:
        with other_origin() as other_url:
            page = context.new_page()
            page.goto(other_url)
            sources = [other_url, f"{server.url}/", f"{server.url}/ui/index.html"]
            page.evaluate(
                "async sources => { await Promise.all(sources.map(src => new Promise(done => {"
                " const frame = document.createElement('iframe'); frame.src = src;"
                " frame.onload = done; frame.onerror = done; document.body.append(frame);"
                " setTimeout(done, 5000) }))) }",
                sources,
            )
            shown = {
                frame.url: frame.evaluate("document.title")
                for frame in page.frames
                if frame is not page.main_frame
            }
            assert shown.get(other_url) == "another origin", shown  # a frame of its own loads
            assert "cortex-mcp dashboard" not in shown.values(), shown
            assert not any(url.startswith(server.url) for url in shown), shown
    finally:
        context.close()


def test_an_agent_named_beyond_latin1_is_shown_and_edited_in_the_browser(
    browser: Browser, tmp_path: Path
) -> None:
    """The page names its agent in X-Cortex-Agent as UTF-8 bytes (fetch sends no character over
    U+00FF), and the server reads the header as UTF-8: the same agent as in a body."""
    agent = "José-田中"
    with ServeProcess(
        tmp_path / "brain.db", token=None, CORTEX_LIFECYCLE__SCHEDULE="off"
    ) as served:
        stored = httpx2.post(
            f"{served.url}/api/v1/memories",
            json={"content": "José's build runs on Fridays", "agent_id": agent},
            timeout=30,
        )
        assert stored.status_code == 201, stored.text
        tab = Tab(browser, served.url, agent=agent)
        try:
            page = tab.open("#/memories", ready="#memory-table tbody tr[data-id]")
            rows = page.locator("#memory-table tbody tr[data-id]").evaluate_all(
                "rows => rows.map(r => r.dataset.id)"
            )
            assert rows == [stored.json()["id"]]
            assert tab.errors == []
        finally:
            tab.close()


def test_the_settings_form_shows_a_refusal_beside_its_field_and_saves_for_the_next_recall(
    tab: Tab, server: ServeProcess
) -> None:
    weight, other = "#set-search-vector_weight", "#set-search-text_weight"
    try:
        page = tab.open("#/system", ready="#settings-form")
        page.fill(weight, "2")
        page.click("#settings-form button[type=submit]")
        page.wait_for_selector(f"{weight}-error >> text=less than or equal to 1")
        assert "Not saved, nothing changed" in page.inner_text("#settings-status")
        before = {s["name"]: s for s in _rest(server, "GET", "/config")["settings"]}
        assert before["search.vector_weight"]["value"] == 0.5

        page.fill(weight, "0.8")
        page.fill(other, "0.2")
        page.click("#settings-form button[type=submit]")
        page.wait_for_selector("#settings-status >> text=Saved: search.vector_weight")
        assert page.input_value(weight) == "0.8"  # drawn again from the server's answer
        after = {s["name"]: s for s in _rest(server, "GET", "/config")["settings"]}
        assert (
            after["search.vector_weight"]["value"],
            after["search.vector_weight"]["source"],
        ) == (
            0.8,
            "api",
        )
        found = _rest(server, "POST", "/search", json={"query": KNOWN_QUERY, "debug": True})
        assert found["debug"]["settings"]["vector_weight"] == 0.8  # the next search reads it
        refused = "the server responded with a status of 422"  # the refusal asked for above
        assert [e for e in tab.errors if refused not in e] == []
    finally:  # the module's server is shared: its weights back to their defaults
        back = {"search": {"vector_weight": None, "text_weight": None}}
        _rest(server, "PATCH", "/config", json=back)


def _remember(server: ServeProcess, content: str, when: str) -> str:
    body = {"content": content, "category": "fact", "layer": "core", "occurred_at": when}
    return str(_rest(server, "POST", "/memories", json=body)["id"])


def _log(server: ServeProcess, action: str, memory_id: str) -> list[dict[str, Any]]:
    entries = _rest(server, "GET", "/lifecycle/log", params={"limit": 500})["entries"]
    return [e for e in entries if e["action"] == action and memory_id in e["memory_ids"]]


def test_reflects_proposals_are_accepted_or_rejected_in_the_browser_and_each_is_logged(
    tab: Tab, server: ServeProcess
) -> None:
    turin = _remember(server, "Zora lives in Turin", "2025-01-10T09:00:00Z")
    milan = _remember(server, "Zora moved to Milan", "2025-06-01T09:00:00Z")
    _remember(server, "Zora relocated to Rome", "2025-09-01T09:00:00Z")
    _rest(server, "POST", "/reflect", json={})
    pending = _rest(server, "GET", "/reflect/proposals")["proposals"]
    proposal = {p["memory_id"]: p["id"] for p in pending if p["action"] == "archive"}
    assert {turin, milan} <= set(proposal)
    page = tab.open("#/lifecycle", ready="#proposals")
    assert page.locator("#proposals tbody tr[data-proposal]").count() == len(pending)
    for memory_id, button in ((turin, "Accept"), (milan, "Reject")):
        row = f"#proposals tr[data-proposal='{proposal[memory_id]}']"
        page.locator(row).get_by_role("button", name=button).click()
        page.wait_for_selector(row, state="detached")
    assert _rest(server, "GET", f"/memories/{turin}")["memory"]["layer"] == "archive"
    assert _rest(server, "GET", f"/memories/{milan}")["memory"]["layer"] == "core"
    decided = _rest(server, "GET", "/reflect/proposals", params={"status": "all"})["proposals"]
    status = {p["id"]: p["status"] for p in decided}
    assert (status[proposal[turin]], status[proposal[milan]]) == ("accepted", "rejected")
    rules = {
        m: [e["details"].get("rule") for e in _log(server, "reflect", m)] for m in (turin, milan)
    }
    assert "accepted" in rules[turin] and "rejected" in rules[milan]
    assert tab.errors == [] and tab.axe_violations() == []


def test_a_wrong_update_forgotten_in_the_browser_reopens_the_fact_it_closed_and_is_logged(
    tab: Tab, server: ServeProcess
) -> None:
    old = _remember(server, "Quinn works at Initech", "2024-01-15T09:00:00Z")
    wrong = _remember(server, "Quinn joined Globex", "2025-02-01T09:00:00Z")
    _rest(server, "POST", "/recall", json={"query": "Where does Quinn work now?"})  # settles
    closed = _rest(server, "GET", f"/memories/{old}")["memory"]
    assert closed["status"] == "superseded" and closed["valid_to"]
    page = tab.open(f"#/memory/{wrong}", ready="#forget")
    page.click("#forget")
    page.wait_for_selector("#restore")
    reopened = _rest(server, "GET", f"/memories/{old}")["memory"]
    assert reopened["status"] == "current" and reopened["valid_to"] is None
    assert [e["details"]["status"] for e in _log(server, "validity", old)][:2] == [
        "current",
        "superseded",
    ]  # newest first: closed by the wrong update, reopened when it was forgotten
    assert tab.errors == []


def test_the_timeline_counts_whole_memories_names_its_lines_and_draws_no_line_at_zero(
    browser: Browser, dated_server: tuple[ServeProcess, str, str]
) -> None:
    tab = Tab(browser, dated_server[0].url)
    try:
        chart = "[role=img][aria-label^='Chart'][aria-label*=' from ']"
        page = tab.open("#/memories?view=timeline", ready=chart)
        ticks = (page.get_attribute(chart, "data-yticks") or "").split()
        assert ticks and ticks[0] == "0" and all(t.isdigit() for t in ticks), ticks
        legend = page.locator("ul.legend li").all_inner_texts()
        assert legend == ["working: 0", "core: 7", "archive: 1"], legend
        colours = page.eval_on_selector_all(
            "ul.legend .swatch", "els => els.map(e => getComputedStyle(e).borderTopStyle)"
        )
        assert colours == ["dashed", "solid", "dotted"], colours
        drawn = page.eval_on_selector(chart, "el => el.plot.data.slice(1)")
        assert all(0 not in counts for counts in drawn), drawn  # an empty bucket: no point
        assert None in drawn[0] and sum(n or 0 for n in drawn[1]) == 7, drawn
        assert tab.errors == []
    finally:
        tab.close()


def test_the_sign_in_field_says_an_agent_token_works_too(
    browser: Browser, token_server: ServeProcess
) -> None:
    tab = Tab(browser, token_server.url)
    try:
        page = tab.open("#/memories", ready="#token")
        label = page.inner_text("label[for=token]")
        assert "CORTEX_API_TOKEN" in label and "agent token" in label, label
        assert tab.errors == []
    finally:
        tab.close()
