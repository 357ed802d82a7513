"""What the HTTP server does against hostile clients and pages (issue 26's probe): no page of
another origin can frame the dashboard or the API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import load_settings
from cortex_mcp.transports.dashboard import CSP
from cortex_mcp.transports.framing import without_framing
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client

API = "/api/v1"


@pytest.fixture(params=["no token", "token"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    token = TOKEN if request.param == "token" else None
    settings = load_settings(
        db_path=tmp_path / "brain.db", embedding_provider="none", api_token=token
    )
    with rest_client(settings) as c:
        yield c


FRAMED_PATHS = [
    ("GET", "/"),
    ("GET", "/ui/index.html"),
    ("GET", "/ui/app.js"),
    ("GET", "/ui/app.css"),
    ("GET", "/ui/auth"),
    ("GET", "/ui/no-such-file.html"),
    ("GET", f"{API}/health"),
    ("GET", f"{API}/agents"),
    ("GET", f"{API}/openapi.json"),
    ("GET", "/no/such/route"),
    ("POST", f"{API}/recall"),
]


def _frame_ancestors(csp: str) -> list[str]:
    return [d.strip() for d in csp.split(";") if d.strip().startswith("frame-ancestors")]


@pytest.mark.parametrize(("method", "path"), FRAMED_PATHS)
def test_every_response_forbids_framing(client: TestClient, method: str, path: str) -> None:
    for headers in ({}, AUTH):  # refused (401 with a token) and answered
        reply = client.request(method, path, headers=headers, json={} if method == "POST" else None)
        said = f"{method} {path} -> {reply.status_code} {dict(reply.headers)}"
        assert reply.headers.get("x-frame-options") == "DENY", said
        assert _frame_ancestors(reply.headers.get("content-security-policy", "")) == [
            "frame-ancestors 'none'"
        ], said


@pytest.mark.parametrize("path", ["/", "/ui/index.html"])
def test_the_dashboard_page_keeps_its_whole_policy_at_either_address(
    client: TestClient, path: str
) -> None:
    reply = client.get(path, headers=AUTH)
    assert reply.status_code == 200 and "<html" in reply.text
    assert reply.headers["content-security-policy"] == CSP
    assert reply.headers["x-content-type-options"] == "nosniff"


def test_a_policy_of_a_route_is_kept_and_its_framing_set_to_none() -> None:
    assert without_framing("") == "frame-ancestors 'none'"
    assert without_framing("default-src 'self'; frame-ancestors *; base-uri 'none'") == (
        "default-src 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    assert without_framing("default-src 'self';") == "default-src 'self'; frame-ancestors 'none'"
