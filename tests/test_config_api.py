"""Settings seen and changed while running (issue 38), through served processes on the SQLite
file and PostgreSQL: a PATCH of the fusion weights changes the next recall's ranking (as
cortex_search_debug shows), an embedding endpoint change is used by the next recall and the
indexer, a second server on the same store follows both within 2 s, a restart keeps them, an
environment variable wins and the answer says so; every refusal changes nothing."""

from __future__ import annotations

import subprocess
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.reader import open_tokens
from cortex_mcp.service.requests import TokenRequest, build
from tests.helpers.embedding_stub import StubState, embedding_stub
from tests.helpers.http_helpers import TOKEN, ServeProcess
from tests.helpers.stdio_helpers import server_command, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

API = "/api/v1"
# for "pet": the text channel's only hit, and the vector channel's first (the stub's vectors
# count words and a few meaning classes: four animals are nearer "pet" than one pet in forms)
PET_SHOP = "pet insurance forms for the landlord and the tax office"
KITTEN = "kitten puppy cat dog"


def _env(settings: Settings, url: str) -> dict[str, str]:
    """The server's environment: the embedding endpoint in its config file (a change through
    the API wins over the file; the environment would win over the change)."""
    config = settings.db_path.parent / "cortex.toml"
    config.write_text(f'embedding_base_url = "{url}"\nembedding_timeout_s = 10.0\n')
    env = {
        "CORTEX_CONFIG": str(config),
        "CORTEX_EMBEDDING_PROVIDER": "openai",
        "CORTEX_EMBEDDING_MODEL": "stub-embed",
        "OPENAI_API_KEY": "sk-test",
    }
    if settings.database_url is not None:
        env["CORTEX_DATABASE_URL"] = settings.database_url.get_secret_value()
    return env


def _rest(server: ServeProcess, method: str, path: str, token: str = TOKEN, **kw: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx2.request(method, server.url + API + path, headers=headers, timeout=30, **kw)


def _settings(server: ServeProcess) -> dict[str, dict[str, Any]]:
    answer = _rest(server, "GET", "/config")
    assert answer.status_code == 200, answer.text
    return {row["name"]: row for row in answer.json()["settings"]}


@asynccontextmanager
async def _mcp(server: ServeProcess) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    async with http, Client(streamable_http_client(server.url + "/mcp", http_client=http)) as c:
        yield c


async def _debug(server: ServeProcess) -> dict[str, Any]:
    async with _mcp(server) as client:
        result = await client.call_tool("cortex_search_debug", {"query": "pet"})
    assert not result.is_error, result
    return dict(result.structured_content or {})


async def _indexed_debug(server: ServeProcess, expected: str) -> dict[str, Any]:
    """The debugger's report once the memory it should rank first has its vector saved: the
    stub answering is not yet the vector stored (a loaded machine saves it a moment later)."""
    started = time.monotonic()
    while True:
        report = await _debug(server)
        if _first(report) == expected or time.monotonic() - started > 20:
            return report
        await anyio.sleep(0.2)


def _first(debug: dict[str, Any]) -> str:
    return str(debug["hits"][0]["content"])


def _remember(server: ServeProcess, content: str) -> None:
    body = {"content": content, "category": "fact", "importance": 0.5}
    answer = _rest(server, "POST", "/memories", json=body)
    assert answer.status_code == 201, answer.text


def _embedded_here(state: StubState, text: str) -> bool:
    return any(text in inputs for inputs in state.served)


async def _until(check: Any, within_s: float, what: str) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < within_s, what
        await anyio.sleep(0.05)
    return time.monotonic() - started


async def test_a_change_reaches_the_next_recall_a_second_server_and_a_restart(
    backend_settings: Settings,
) -> None:
    db = backend_settings.db_path
    with (
        embedding_stub(StubState(meaning=True)) as (first_url, first_stub),
        embedding_stub(StubState(meaning=True)) as (second_url, second_stub),
    ):
        env = _env(backend_settings, first_url)
        with ServeProcess(db, **env) as one, ServeProcess(db, **env) as two:
            for content in (PET_SHOP, KITTEN):
                _remember(one, content)
            weights = {"search": {"fusion": "maxnorm", "vector_weight": 1, "text_weight": 0}}
            answer = _rest(one, "PATCH", "/config", json=weights)
            assert answer.status_code == 200, answer.text
            assert set(answer.json()["changed"]) == {"search.vector_weight", "search.text_weight"}
            await _until(lambda: _embedded_here(first_stub, KITTEN), 20, "never embedded")
            by_meaning = await _indexed_debug(one, KITTEN)
            assert by_meaning["settings"]["vector_weight"] == 1
            assert _first(by_meaning) == KITTEN

            changed_at = time.monotonic()
            answer = _rest(
                one, "PATCH", "/config", json={"search": {"vector_weight": 0, "text_weight": 1}}
            )
            assert answer.status_code == 200, answer.text
            assert _first(await _debug(one)) == PET_SHOP  # the next recall, no restart

            async def second_ranks_by_text() -> bool:
                return _first(await _debug(two)) == PET_SHOP

            while not await second_ranks_by_text():
                assert time.monotonic() - changed_at < 2.0, "the second server kept the weights"
                await anyio.sleep(0.05)

            answer = _rest(one, "PATCH", "/config", json={"embedding_base_url": second_url})
            assert answer.status_code == 200, answer.text
            assert answer.json()["changed"] == ["embedding_base_url"]
            changed_at = time.monotonic()
            asked = len(second_stub.served)
            recall = _rest(one, "POST", "/recall", json={"query": "kitten"})
            assert recall.status_code == 200 and not recall.json()["meta"]["degraded"]
            assert len(second_stub.served) > asked  # the next recall's query went there
            _remember(one, "a hamster naps in a shoebox")  # and the indexer's work
            await _until(
                lambda: _embedded_here(second_stub, "a hamster naps in a shoebox"),
                10,
                "the indexer kept the old endpoint",
            )
            await _until(lambda: _settings(two)["embedding_base_url"]["value"] == second_url, 2, "")
            asked = len(second_stub.served)
            assert _rest(two, "POST", "/recall", json={"query": "dog"}).status_code == 200
            assert len(second_stub.served) > asked
            assert time.monotonic() - changed_at < 10

        with ServeProcess(db, **env) as again:  # a restart keeps both changes
            shown = _settings(again)
            assert shown["embedding_base_url"] == {
                **shown["embedding_base_url"],
                "value": second_url,
                "source": "api",
            }
            assert shown["search.text_weight"]["value"] == 1
            assert _first(await _debug(again)) == PET_SHOP
            asked = len(second_stub.served)
            assert _rest(again, "POST", "/recall", json={"query": "cat"}).status_code == 200
            assert len(second_stub.served) > asked


async def _agent_token(settings: Settings) -> str:
    async with open_tokens(settings) as tokens:
        return str((await tokens.create(build(TokenRequest, agent="alice")))["token"])


async def test_refusals_change_nothing_and_the_environment_wins_and_says_so(
    backend_settings: Settings,
) -> None:
    db = backend_settings.db_path
    agent = await _agent_token(backend_settings)
    with embedding_stub() as (url, _):
        env = {**_env(backend_settings, url), "CORTEX_SEARCH__FUSION": "rrf"}
        with ServeProcess(db, **env) as server:
            before = _settings(server)
            refused = [
                ({"search": {"vector_weight": 2}}, 422, "search.vector_weight", "less than"),
                ({"search": {"vector_weigth": 0.2}}, 422, "search.vector_weigth", "did you mean"),
                ({"search.mmr": True}, 422, "search.mmr", "inside its group"),
                ({"port": 9999}, 422, "port", "restart"),
                ({"database_url": "postgresql://x@y/z"}, 422, "database_url", "restart"),
                ({"mmr": True, "search": {"mmr": False}}, 422, "mmr", "no such setting"),
                ({"search": {"mmr": True, "mmr_lambda": -1}}, 422, "search.mmr_lambda", ""),
                ({"log_level": "LOUD"}, 422, "log_level", "Input should be"),
                ({"lifecycle": {"schedule": "99 * * * *"}}, 422, "lifecycle.schedule", "0-59"),
            ]
            for body, status, field, rule in refused:
                answer = _rest(server, "PATCH", "/config", json=body)
                assert answer.status_code == status, (body, answer.text)
                error = answer.json()["error"]
                assert error["field"] == field and rule in error["message"], error
            for method, body in (("GET", None), ("PATCH", {"search": {"mmr": True}})):
                answer = _rest(server, method, "/config", token=agent, json=body)
                assert answer.status_code == 403, answer.text
            assert _settings(server) == before
            assert before["search.fusion"]["source"] == "environment"
            assert before["search.mmr"] == {**before["search.mmr"], "value": False}

            answer = _rest(server, "PATCH", "/config", json={"search": {"fusion": "minmax"}})
            assert answer.status_code == 200, answer.text
            assert answer.json()["overridden"] == [
                {"name": "search.fusion", "variable": "CORTEX_SEARCH__FUSION"}
            ]
            assert answer.json()["changed"] == []
            shown = _settings(server)["search.fusion"]
            assert (shown["value"], shown["source"], shown["api_value"]) == (
                "rrf",
                "environment",
                "minmax",
            )
            secret = _rest(server, "PATCH", "/config", json={"embedding_api_key": "sk-new-1"})
            assert secret.status_code == 200
            assert _settings(server)["embedding_api_key"]["value"] == "********"
        log = server.log.read_text()
        assert "sk-new-1" not in log
        assert "setting search.fusion changed by the admin: rrf -> minmax" in log


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [*server_command(), "config", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


async def test_the_config_command_changes_a_running_server_with_the_same_rules(
    backend_settings: Settings,
) -> None:
    db = backend_settings.db_path
    with embedding_stub() as (url, _):
        env = _env(backend_settings, url)
        with ServeProcess(db, **env) as server:
            cli_env = server_env(db, **env)
            done = _cli(cli_env, "set", "search.fusion", "rrf")
            assert done.returncode == 0 and "changed: search.fusion" in done.stdout, done
            await _until(lambda: _settings(server)["search.fusion"]["value"] == "rrf", 2, "")
            assert _settings(server)["search.fusion"]["source"] == "api"

            for args, rule in (
                (("set", "search.vector_weight", "3"), "less than or equal to 1"),
                (("set", "port", "8080"), "port: changes only at a restart"),
                (("set", "search.fusoin", "rrf"), "did you mean search.fusion?"),
                (("get", "nothing.here"), "nothing.here: no such setting"),
            ):
                refused = _cli(cli_env, *args)
                assert refused.returncode != 0 and rule in refused.stderr, refused
            shown = _cli(cli_env, "get", "search.fusion")
            assert shown.stdout.strip() == 'search.fusion = "rrf"  (api, live)'

            assert _cli(cli_env, "unset", "search.fusion").returncode == 0
            await _until(lambda: _settings(server)["search.fusion"]["value"] == "maxnorm", 2, "")
            assert _settings(server)["search.fusion"]["source"] == "default"
            assert _settings(server)["search.vector_weight"]["value"] == 0.5


async def test_a_recall_in_flight_finishes_on_the_old_endpoint_while_the_next_uses_the_new(
    tmp_path: Path,
) -> None:
    held = StubState(hold=lambda inputs: "held question" in inputs)
    with embedding_stub(held) as (old_url, _), embedding_stub() as (new_url, new_stub):
        settings = load_settings(db_path=tmp_path / "brain.db", embedding_provider="none")
        with ServeProcess(settings.db_path, **_env(settings, old_url)) as server:
            _remember(server, "the held question is about gardening")
            await _until(lambda: held.served, 20, "never embedded")
            with ThreadPoolExecutor(1) as pool:
                in_flight = pool.submit(
                    _rest, server, "POST", "/recall", json={"query": "held question"}
                )
                await _until(lambda: held.held == 1, 10, "the recall never reached the endpoint")
                answer = _rest(server, "PATCH", "/config", json={"embedding_base_url": new_url})
                assert answer.status_code == 200, answer.text
                fresh = _rest(server, "POST", "/recall", json={"query": "gardening tips"})
                assert fresh.status_code == 200 and not fresh.json()["meta"]["degraded"]
                assert any("gardening tips" in inputs for inputs in new_stub.served)
                assert not in_flight.done()
                held.release.set()
                finished = in_flight.result(timeout=30)
            assert finished.status_code == 200, finished.text
            assert not finished.json()["meta"]["degraded"]  # answered by the old endpoint
