"""Token management over REST, for the admin only (SQLite and PostgreSQL): create (the token
answered once), list (never a token), revoke by id or name; an agent token gets 403."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings
from cortex_mcp.service import tokens as token_module
from tests.conftest import FakeClock
from tests.helpers.http_helpers import AUTH, authed_rest_client

API = "/api/v1"


@pytest.fixture
def client(
    backend_settings: Settings, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setattr(token_module, "CACHE_SECONDS", 0.0)  # a revoke is seen at once here
    url = backend_settings.database_url
    with authed_rest_client(
        tmp_path, clock, database_url=url.get_secret_value() if url else None
    ) as c:
        yield c


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_admin_creates_lists_and_revokes_tokens(client: TestClient) -> None:
    made = client.post(f"{API}/tokens", json={"agent": "alice", "name": "ci"})
    assert made.status_code == 201, made.text
    token = made.json()["token"]
    assert made.json()["name"] == "ci" and made.json()["agent"] == "alice"
    listed = client.get(f"{API}/tokens")
    assert [t["name"] for t in listed.json()["tokens"]] == ["ci"]
    assert token.split("_", 2)[2] not in listed.text
    own = client.get(f"{API}/stats", headers=_as(token))
    assert own.status_code == 200 and own.json()["agent_id"] == "alice"

    duplicate = client.post(f"{API}/tokens", json={"agent": "bob", "name": "ci"})
    assert duplicate.status_code == 409 and duplicate.json()["error"]["field"] == "name"
    for bad in ({"agent": "a\u0000b"}, {"agent": "bob", "name": "   "}, {"agent": ""}):
        assert client.post(f"{API}/tokens", json=bad).status_code == 422, bad

    revoked = client.post(f"{API}/tokens/revoke", json={"token": "ci"})
    assert revoked.status_code == 200 and revoked.json()["revoked"] is True
    assert client.get(f"{API}/stats", headers=_as(token)).status_code == 401
    again = client.post(f"{API}/tokens/revoke", json={"token": "ci"})
    assert again.status_code == 409 and "already revoked" in again.text, again.text
    unknown = client.post(f"{API}/tokens/revoke", json={"token": "no-such-token"})
    assert unknown.status_code == 404, unknown.text
    assert client.get(f"{API}/tokens").json() == {"tokens": []}


def test_an_agent_token_cannot_manage_tokens(client: TestClient) -> None:
    alice = client.post(f"{API}/tokens", json={"agent": "alice"}).json()
    bob = client.post(f"{API}/tokens", json={"agent": "bob"}).json()
    for method, path, body in (
        ("GET", "/tokens", None),
        ("POST", "/tokens", {"agent": "alice"}),
        ("POST", "/tokens", {"agent": "bob"}),
        ("POST", "/tokens/revoke", {"token": bob["id"]}),
        ("POST", "/tokens/revoke", {"token": alice["id"]}),
    ):
        reply = client.request(method, API + path, json=body, headers=_as(alice["token"]))
        assert reply.status_code == 403, (method, path, reply.text)
        assert "only the admin token" in reply.json()["error"]["message"]
    listed = client.get(f"{API}/tokens", headers=AUTH).json()["tokens"]
    assert sorted(t["name"] for t in listed) == ["alice", "bob"]  # nothing made or revoked
