"""cortex-mcp as an OAuth 2.1 resource server (issue 35): with CORTEX_OAUTH_ISSUER and
CORTEX_PUBLIC_URL it serves its protected resource metadata, points every 401 at it, accepts
the identity provider's JWT access tokens (keys from its JWKS, fetched over real HTTP from a
provider on loopback) for the agent their claims name, and refuses every bad one with the
status and WWW-Authenticate the MCP authorization specification asks for, writing nothing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.providers.issuer import REFRESH_GAP_S, IssuerKeys
from cortex_mcp.reader import open_stores
from cortex_mcp.service.identity import AccessTokenRules, AccessTokens
from tests.helpers.http_helpers import TOKEN, ServeProcess, free_port, rest_client
from tests.helpers.issuer import LocalIssuer, SigningKey

PUBLIC = "http://127.0.0.1:21100"  # the TestClient's origin, as CORTEX_PUBLIC_URL
METADATA = PUBLIC + "/.well-known/oauth-protected-resource"
API = "/api/v1"


@pytest.fixture
def issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer().serving() as served:
        yield served


@pytest.fixture
def oauth_settings(tmp_path: Path, issuer: LocalIssuer) -> Settings:
    return load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        api_token=TOKEN,
        oauth_issuer=issuer.url,
        public_url=PUBLIC,
    )


@pytest.fixture
def client(oauth_settings: Settings) -> Iterator[TestClient]:
    with rest_client(oauth_settings) as c:
        yield c


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _snapshot(settings: Settings) -> list[Any]:
    async def read() -> list[Any]:
        async with open_stores(settings, allow_vec=False) as stores:
            rows = []
            for table in ("memories", "lifecycle_log", "relations"):
                found = await stores.db.fetchall(f"SELECT * FROM {table}")
                rows.append(sorted(tuple(str(v) for v in r) for r in found))
            return rows

    return anyio.run(read)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _hs256_with_public_key(issuer: LocalIssuer) -> str:
    """The classic key-confusion forgery: HMAC-SHA256 keyed with the issuer's public key."""
    claims = jwt.decode(issuer.token(audience=PUBLIC), options={"verify_signature": False})
    header = {"alg": "HS256", "typ": "JWT", "kid": issuer.key.kid}
    public_pem = issuer.key.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def _alg_none(issuer: LocalIssuer) -> str:
    claims = jwt.decode(issuer.token(audience=PUBLIC), options={"verify_signature": False})
    return jwt.encode(claims, None, algorithm="none", headers={"kid": issuer.key.kid})


# ---- discovery ------------------------------------------------------------------------------


def test_the_protected_resource_metadata_names_the_issuer_at_both_addresses(
    client: TestClient, issuer: LocalIssuer
) -> None:
    whole = client.get("/.well-known/oauth-protected-resource")
    mcp = client.get("/.well-known/oauth-protected-resource/mcp")
    assert whole.status_code == 200 and mcp.status_code == 200
    assert whole.json()["resource"] == PUBLIC
    assert mcp.json()["resource"] == PUBLIC + "/mcp"
    for document in (whole.json(), mcp.json()):
        assert document["authorization_servers"] == [issuer.url]  # exactly: clients compare it
        assert document["scopes_supported"] == ["memories:read", "memories:write", "admin"]
        assert document["bearer_methods_supported"] == ["header"]


@pytest.mark.parametrize(
    ("method", "path", "metadata"),
    [
        ("POST", "/mcp", METADATA + "/mcp"),
        ("GET", "/sse", METADATA),
        ("POST", API + "/recall", METADATA),
        ("GET", API + "/memories", METADATA),
    ],
)
def test_a_request_without_a_token_gets_401_pointing_at_the_metadata(
    client: TestClient, method: str, path: str, metadata: str
) -> None:
    reply = client.request(method, path, json={"query": "x"} if method == "POST" else None)
    assert reply.status_code == 401, reply.text
    assert reply.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'


def test_without_the_issuer_nothing_is_advertised_and_401s_stay_as_they_were(
    tmp_path: Path,
) -> None:
    settings = load_settings(db_path=tmp_path / "b.db", embedding_provider="none", api_token=TOKEN)
    with rest_client(settings) as c:
        assert c.get("/.well-known/oauth-protected-resource").status_code in (401, 404)
        reply = c.post(API + "/recall", json={"query": "x"})
        assert reply.status_code == 401
        assert reply.headers["www-authenticate"] == 'Bearer realm="cortex"'


# ---- accepted -------------------------------------------------------------------------------


def test_an_access_token_acts_for_the_agent_its_subject_names(
    client: TestClient, issuer: LocalIssuer
) -> None:
    alice = _bearer(issuer.token(subject="alice", audience=PUBLIC + "/mcp"))
    bob = _bearer(issuer.token(subject="bob", audience=PUBLIC))
    made = client.post(API + "/memories", json={"content": "Alice keeps bees"}, headers=alice)
    assert made.status_code == 201, made.text
    listed = client.get(API + "/memories", params={"agent_id": "alice"}, headers=_bearer(TOKEN))
    assert [m["content"] for m in listed.json()["memories"]] == ["Alice keeps bees"]
    recalled = client.post(API + "/recall", json={"query": "bees"}, headers=alice)
    assert [r["content"] for r in recalled.json()["memories"]] == ["Alice keeps bees"]
    # bob's own recall finds nothing of alice's, and naming alice is refused
    assert (
        client.post(API + "/recall", json={"query": "bees"}, headers=bob).json()["memories"] == []
    )
    theirs = client.post(API + "/recall", json={"query": "bees", "agent_id": "alice"}, headers=bob)
    assert theirs.status_code == 403


def test_the_agent_claim_may_be_a_template_of_claims(tmp_path: Path, issuer: LocalIssuer) -> None:
    settings = load_settings(
        db_path=tmp_path / "b.db",
        embedding_provider="none",
        oauth_issuer=issuer.url,
        public_url=PUBLIC,
        oauth_agent_claim="team-{email}",
    )
    token = issuer.token(subject="u-17", audience=PUBLIC, email="ann@example.com")
    with rest_client(settings) as c:
        made = c.post(API + "/memories", json={"content": "Ann likes tea"}, headers=_bearer(token))
        assert made.status_code == 201, made.text
    assert "team-ann@example.com" in repr(_snapshot(settings)[0])


# ---- the refusal table (acceptance 2) -------------------------------------------------------

INVALID = 'Bearer error="invalid_token", error_description="the token was not accepted", '


def _refused_tokens(issuer: LocalIssuer) -> dict[str, str]:
    stranger = SigningKey("key-1")  # the issuer's kid, another key
    return {
        "expired": issuer.token(audience=PUBLIC, lifetime_s=-120),
        "wrong audience": issuer.token(audience="https://other.example.com"),
        "wrong issuer": issuer.token(audience=PUBLIC, issuer="https://evil.example.com"),
        "unknown kid after a refresh": issuer.token(audience=PUBLIC, kid="no-such-key"),
        "signed by another key": issuer.token(audience=PUBLIC, key=stranger),
        "alg none": _alg_none(issuer),
        "HS256 with the public key": _hs256_with_public_key(issuer),
        "not a token": "cxt_000000000000_nope",
    }


@pytest.mark.parametrize("path", ["/api/v1/memories", "/mcp"])
def test_every_bad_access_token_gets_401_invalid_token_and_writes_nothing(
    client: TestClient, issuer: LocalIssuer, oauth_settings: Settings, path: str
) -> None:
    before = _snapshot(oauth_settings)
    metadata = METADATA + ("/mcp" if path == "/mcp" else "")
    for why, token in _refused_tokens(issuer).items():
        body: dict[str, Any] = {"content": "Mallory was here"}
        if path == "/mcp":
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {**_bearer(token), "Accept": "application/json, text/event-stream"}
        reply = client.post(path, json=body, headers=headers)
        assert reply.status_code == 401, (why, reply.text)
        assert reply.headers["www-authenticate"] == INVALID + f'resource_metadata="{metadata}"', why
    assert _snapshot(oauth_settings) == before


def test_a_token_without_the_write_scope_gets_403_naming_it_and_writes_nothing(
    client: TestClient, issuer: LocalIssuer, oauth_settings: Settings
) -> None:
    reader = _bearer(issuer.token(audience=PUBLIC, scope="memories:read"))
    before = _snapshot(oauth_settings)
    reply = client.post(API + "/memories", json={"content": "Mallory was here"}, headers=reader)
    assert reply.status_code == 403, reply.text
    assert reply.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", error_description="needs memories:write",'
        f' scope="memories:write", resource_metadata="{METADATA}"'
    )
    assert reply.json()["error"]["code"] == "insufficient_scope"
    assert client.post(API + "/recall", json={"query": "x"}, headers=reader).status_code == 200
    assert _snapshot(oauth_settings) == before


def test_a_token_without_any_memories_scope_may_not_open_mcp(
    client: TestClient, issuer: LocalIssuer
) -> None:
    nothing = _bearer(issuer.token(audience=PUBLIC, scope="openid profile"))
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    reply = client.post("/mcp", json=body, headers=nothing)
    assert reply.status_code == 403
    assert 'error="insufficient_scope"' in reply.headers["www-authenticate"]
    assert 'scope="memories:read"' in reply.headers["www-authenticate"]


# ---- the provider's keys: rotation, outage --------------------------------------------------


def test_a_key_rotation_at_the_provider_is_picked_up_without_a_restart(
    client: TestClient, issuer: LocalIssuer
) -> None:
    first = _bearer(issuer.token(audience=PUBLIC))
    assert client.post(API + "/recall", json={"query": "x"}, headers=first).status_code == 200
    issuer.rotate()
    time.sleep(REFRESH_GAP_S)  # the keys are fetched again at most once a second
    second = _bearer(issuer.token(audience=PUBLIC))
    assert client.post(API + "/recall", json={"query": "x"}, headers=second).status_code == 200


def test_the_provider_down_answers_503_for_new_keys_while_known_keys_keep_working(
    client: TestClient, issuer: LocalIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    known = _bearer(issuer.token(audience=PUBLIC))
    assert client.post(API + "/recall", json={"query": "x"}, headers=known).status_code == 200
    issuer.down = True
    rotated = SigningKey("key-new")
    issuer.keys.append(rotated)
    fresh = _bearer(issuer.token(audience=PUBLIC, key=rotated))
    time.sleep(REFRESH_GAP_S)
    with caplog.at_level(logging.WARNING, logger="cortex_mcp.providers.issuer"):
        for _ in range(3):
            refused = client.post(API + "/recall", json={"query": "x"}, headers=fresh)
            assert refused.status_code == 503, refused.text
            assert refused.headers["retry-after"]
            assert (
                client.post(API + "/recall", json={"query": "x"}, headers=known).status_code == 200
            )
    said = [r for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(said) == 1 and "Traceback" not in caplog.text


def test_the_keys_are_fetched_once_for_many_requests(
    client: TestClient, issuer: LocalIssuer
) -> None:
    token = _bearer(issuer.token(audience=PUBLIC))
    for _ in range(20):
        assert client.post(API + "/recall", json={"query": "x"}, headers=token).status_code == 200
    assert issuer.fetches == 1


# ---- MCP over Streamable HTTP with an access token -------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_mcp_tools_follow_the_scopes_of_an_access_token(
    tmp_path: Path, issuer: LocalIssuer
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {"CORTEX_OAUTH_ISSUER": issuer.url, "CORTEX_PUBLIC_URL": url}
    with ServeProcess(tmp_path / "b.db", first_port=port, **env) as server:
        for scope, wrote in (("memories:read memories:write", True), ("memories:read", False)):
            token = issuer.token(audience=url + "/mcp", subject="carol", scope=scope)
            http = httpx2.AsyncClient(headers=_bearer(token), timeout=30)
            async with Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert {"cortex_recall", "cortex_remember"} <= names
                done = await c.call_tool("cortex_remember", {"content": f"Carol sails ({scope})"})
                assert done.is_error is not wrote
                if not wrote:
                    assert "memories:write" in done.content[0].text
                found = await c.call_tool("cortex_recall", {"query": "Carol sails"})
                assert not found.is_error
                assert "Carol sails (memories:read memories:write)" in found.content[0].text


# ---- the verified-token cache ---------------------------------------------------------------


def test_a_verified_token_is_trusted_for_a_minute_at_most_and_never_past_its_expiry(
    issuer: LocalIssuer,
) -> None:
    now = [time.time()]
    keys = IssuerKeys(issuer.url)
    looked_up: list[str | None] = []

    class CountedKeys:
        issuer = keys.issuer

        async def key(self, kid: str | None) -> Any:
            looked_up.append(kid)
            return await keys.key(kid)

    rules = AccessTokenRules(
        issuer=issuer.url, audiences=(PUBLIC,), algorithms=("RS256",), agent_claim="sub"
    )
    tokens = AccessTokens(CountedKeys(), rules, clock=lambda: now[0])
    long_lived = issuer.token(audience=PUBLIC, lifetime_s=3600)
    # expired 25 s ago: still within the 30 s leeway, trusted for 5 s more at most
    nearly_over = issuer.token(audience=PUBLIC, lifetime_s=-25)

    async def check() -> None:
        assert await tokens.identify(long_lived) is not None
        assert await tokens.identify(nearly_over) is not None
        assert len(looked_up) == 2
        now[0] += 50
        assert await tokens.identify(long_lived) is not None  # from the cache
        assert len(looked_up) == 2
        await tokens.identify(nearly_over)  # past its expiry and leeway: checked again
        assert len(looked_up) == 3
        now[0] += 20
        assert await tokens.identify(long_lived) is not None  # a minute passed: checked again
        assert len(looked_up) == 4

    anyio.run(check)


def test_a_group_claim_gives_a_list_of_agents_the_token_may_name(
    tmp_path: Path, issuer: LocalIssuer
) -> None:
    settings = load_settings(
        db_path=tmp_path / "b.db",
        embedding_provider="none",
        oauth_issuer=issuer.url,
        public_url=PUBLIC,
        oauth_agent_claim="team-{groups}",
    )
    token = _bearer(issuer.token(audience=PUBLIC, groups=["red", "blue"]))
    with rest_client(settings) as c:
        own = c.post(API + "/memories", json={"content": "Red ships Friday"}, headers=token)
        assert own.status_code == 201, own.text
        blue = {"content": "Blue ships Monday", "agent_id": "team-blue"}
        assert c.post(API + "/memories", json=blue, headers=token).status_code == 201
        green = {"content": "Green was here", "agent_id": "team-green"}
        refused = c.post(API + "/memories", json=green, headers=token)
        assert refused.status_code == 403
        assert "'team-red' or 'team-blue'" in refused.json()["error"]["message"]
    assert _snapshot(settings)[0] and {row[2] for row in _snapshot(settings)[0]} >= {
        "team-red",
        "team-blue",
    }
