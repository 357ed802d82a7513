"""Who acted (issue 35, attribution): every lifecycle-log entry a request writes records its
caller: an agent token's id, an identity provider's subject and issuer, the admin, or the local
user; the lifecycle log shows it, and a JSON export and import keep it. On SQLite and
PostgreSQL."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.service.requests import TokenRequest, build
from tests.helpers.http_helpers import AUTH, TOKEN, rest_client
from tests.helpers.issuer import LocalIssuer
from tests.helpers.stdio_helpers import server_command, server_env

PUBLIC = "http://127.0.0.1:21100"
API = "/api/v1"


@pytest.fixture
def issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer().serving() as served:
        yield served


@pytest.fixture
def settings(backend_settings: Settings, issuer: LocalIssuer) -> Settings:
    url = backend_settings.database_url
    return load_settings(
        db_path=backend_settings.db_path,
        embedding_provider="none",
        api_token=TOKEN,
        oauth_issuer=issuer.url,
        public_url=PUBLIC,
        database_url=url.get_secret_value() if url is not None else None,
    )


def _agent_token(settings: Settings) -> tuple[str, str]:
    async def create() -> tuple[str, str]:
        async with open_tokens(settings) as tokens:
            made = await tokens.create(build(TokenRequest, agent="ann"))
            return str(made["id"]), str(made["token"])

    return anyio.run(create)


def _forget(client: TestClient, headers: dict[str, str], content: str) -> str:
    made = client.post(API + "/memories", json={"content": content}, headers=headers)
    assert made.status_code == 201, made.text
    memory_id = made.json()["id"]
    gone = client.delete(f"{API}/memories/{memory_id}", headers=headers)
    assert gone.status_code == 200, gone.text
    return str(memory_id)


def _actor(log: list[dict[str, Any]], memory_id: str, action: str = "forget") -> dict[str, Any]:
    [entry] = [e for e in log if memory_id in e["memory_ids"] and e["action"] == action]
    return dict(entry["details"]["actor"])


def test_who_remembered_a_memory_is_in_the_log_show_and_an_export(
    settings: Settings, issuer: LocalIssuer, tmp_path: Any
) -> None:
    token_id, token = _agent_token(settings)
    jwt = issuer.token(subject="ann", audience=PUBLIC)
    with rest_client(settings) as client:
        made = {}
        for name, bearer in (("token", token), ("jwt", jwt)):
            answer = client.post(
                API + "/memories",
                json={"content": f"Ann keeps her {name} notes in the blue folder"},
                headers={"Authorization": f"Bearer {bearer}"},
            )
            assert answer.status_code == 201, answer.text
            made[name] = answer.json()["id"]
        log = client.get(API + "/lifecycle/log", params={"agent_id": "ann"}, headers=AUTH)
        entries = log.json()["entries"]
        assert _actor(entries, made["token"], "remember") == {
            "kind": "agent",
            "agent": "ann",
            "token_id": token_id,
        }
        assert _actor(entries, made["jwt"], "remember")["subject"] == "ann"
        document = client.post(API + "/export", json={"agent_id": "ann"}, headers=AUTH).json()[
            "document"
        ]
    env = server_env(settings.db_path, CORTEX_AGENT_ID="ann")
    if settings.database_url is not None:
        env["CORTEX_DATABASE_URL"] = settings.database_url.get_secret_value()
    shown = subprocess.run(
        [*server_command(), "show", made["token"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert shown.returncode == 0, shown.stderr
    assert re.search(rf"remember +token {token_id}", shown.stdout), shown.stdout
    elsewhere = load_settings(db_path=tmp_path / "other.db", embedding_provider="none")
    with rest_client(elsewhere) as other:
        done = other.post(API + "/import", json={"format": "json", "document": document})
        assert done.status_code == 200, done.text
        log = other.get(API + "/lifecycle/log", params={"agent_id": "ann"}).json()["entries"]
        assert _actor(log, made["token"], "remember")["token_id"] == token_id
        assert _actor(log, made["jwt"], "remember")["issuer"] == issuer.url


def test_each_log_entry_records_who_acted_and_an_export_keeps_it(
    settings: Settings, issuer: LocalIssuer, tmp_path: Any
) -> None:
    token_id, token = _agent_token(settings)
    with rest_client(settings) as client:
        by_token = _forget(client, {"Authorization": f"Bearer {token}"}, "Ann's first bike")
        jwt = issuer.token(subject="ann", audience=PUBLIC)
        by_jwt = _forget(client, {"Authorization": f"Bearer {jwt}"}, "Ann's old phone")
        by_admin = _forget(client, AUTH, "Ann's spare key")  # the admin, for the server's own agent
        log = client.get(API + "/lifecycle/log", params={"agent_id": "ann"}, headers=AUTH)
        entries = log.json()["entries"]
        assert _actor(entries, by_token) == {"kind": "agent", "agent": "ann", "token_id": token_id}
        assert _actor(entries, by_jwt) == {
            "kind": "agent",
            "agent": "ann",
            "subject": "ann",
            "issuer": issuer.url,
        }
        own = client.get(API + "/lifecycle/log", headers=AUTH).json()["entries"]
        assert _actor(own, by_admin) == {"kind": "admin"}
        exported = client.post(API + "/export", json={"agent_id": "ann"}, headers=AUTH)
        assert exported.status_code == 200, exported.text
        document = exported.json()["document"]

    elsewhere = load_settings(db_path=tmp_path / "other.db", embedding_provider="none")
    with rest_client(elsewhere) as other:
        done = other.post(API + "/import", json={"format": "json", "document": document})
        assert done.status_code == 200, done.text
        log = other.get(API + "/lifecycle/log", params={"agent_id": "ann"}).json()["entries"]
        assert _actor(log, by_token)["token_id"] == token_id
        assert _actor(log, by_jwt)["subject"] == "ann"


def test_show_and_a_memory_s_detail_say_who_acted_on_it(settings: Settings) -> None:
    token_id, token = _agent_token(settings)
    with rest_client(settings) as client:
        memory_id = _forget(client, {"Authorization": f"Bearer {token}"}, "Ann's red kayak")
        detail = client.get(f"{API}/memories/{memory_id}", params={"agent_id": "ann"}, headers=AUTH)
        [entry] = [e for e in detail.json()["history"] if e["action"] == "forget"]
        assert entry["details"]["actor"] == {"kind": "agent", "agent": "ann", "token_id": token_id}
    env = server_env(settings.db_path, CORTEX_AGENT_ID="ann")
    if settings.database_url is not None:
        env["CORTEX_DATABASE_URL"] = settings.database_url.get_secret_value()
    shown = subprocess.run(
        [*server_command(), "show", memory_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert shown.returncode == 0, shown.stderr
    assert "history (who acted):" in shown.stdout
    assert re.search(rf"forget +token {token_id}", shown.stdout), shown.stdout
