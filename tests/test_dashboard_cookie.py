"""The dashboard's session cookie is `Secure` whenever the browser reached the server over
https (issue 32, item 13): directly, or through a reverse proxy listed in
CORTEX_TRUSTED_PROXIES that says `X-Forwarded-Proto: https`; the same header from any other
address changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.errors import ConfigError
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.http import create_app
from tests.helpers.http_helpers import TOKEN

HOST = "127.0.0.1:21100"
PROXY = ("10.1.2.3", 40000)
STRANGER = ("192.168.7.9", 40000)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(
        db_path=tmp_path / "brain.db",
        embedding_provider="none",
        api_token=TOKEN,
        trusted_proxies="10.0.0.0/8, ::1",
    )


@contextmanager
def _browser(settings: Settings, scheme: str, client: tuple[str, int]) -> Iterator[TestClient]:
    app = create_app(settings, lambda: open_cortex(settings))
    with TestClient(app, base_url=f"{scheme}://{HOST}", client=client) as browser:
        yield browser


def _cookie(browser: TestClient, origin: str, **headers: str) -> str:
    reply = browser.post(
        "/ui/session", json={"token": TOKEN}, headers={"Origin": origin, **headers}
    )
    assert reply.status_code == 200, reply.text
    return str(reply.headers["set-cookie"])


def test_the_cookie_is_secure_over_https_and_behind_a_trusted_proxy_that_says_https(
    settings: Settings,
) -> None:
    with _browser(settings, "https", STRANGER) as direct:
        assert "Secure" in _cookie(direct, f"https://{HOST}")
    with _browser(settings, "http", PROXY) as proxied:
        # the browser's page is https://...: its Origin matches what the proxy says
        forwarded = _cookie(proxied, f"https://{HOST}", **{"X-Forwarded-Proto": "https"})
        assert "Secure" in forwarded and "HttpOnly" in forwarded
        assert "Secure" in _cookie(
            proxied, f"https://{HOST}", **{"X-Forwarded-Proto": "HTTPS, http"}
        )
        assert "Secure" not in _cookie(proxied, f"http://{HOST}", **{"X-Forwarded-Proto": "http"})
        assert "Secure" not in _cookie(proxied, f"http://{HOST}")


def test_x_forwarded_proto_from_an_address_that_is_no_trusted_proxy_changes_nothing(
    settings: Settings,
) -> None:
    with _browser(settings, "http", STRANGER) as browser:
        cookie = _cookie(browser, f"http://{HOST}", **{"X-Forwarded-Proto": "https"})
        assert "Secure" not in cookie
        claimed = browser.post(
            "/ui/session",
            json={"token": TOKEN},
            headers={"Origin": f"https://{HOST}", "X-Forwarded-Proto": "https"},
        )
        assert claimed.status_code == 403  # not the origin it is served as


def test_a_trusted_proxy_that_is_not_an_address_is_refused_naming_the_setting(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(db_path=tmp_path / "b.db", trusted_proxies="10.0.0.0/8, proxy.local")
    assert "trusted_proxies" in str(refused.value).lower() and "proxy.local" in str(refused.value)
