from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from tests.helpers import datasets
from tests.helpers.embedding_stub import StubState, embedding_stub
from tests.helpers.llm_stub import StubLLM

# What steers the tests themselves (.ci/run's CORTEX_OPENCLAW_E2E=required, where Node and
# OpenClaw are, the CORTEX_TEST_* sizes, where the data files are) is read from here: it is no setting of cortex-mcp, so
# it leaves the environment the servers under test inherit, as the developer's settings do.
TEST_KNOBS = {
    name: os.environ.pop(name)
    for name in list(os.environ)
    if name in {"CORTEX_OPENCLAW_E2E", "CORTEX_OPENCLAW_HOST", "CORTEX_NODE_BIN", "CORTEX_MCPB_E2E"}
    or name in {"CORTEX_OIDC_E2E", "CORTEX_OIDC_PROVIDER_DIR"}
    or name in {data.variable for data in datasets.DATA_FILES.values()}
    or name.startswith("CORTEX_TEST_")
}
# Tests never use the developer's real keys, endpoints or config file.
for _name in list(os.environ):
    if _name.startswith("CORTEX_") or _name in {
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    }:
        del os.environ[_name]
# The machine's zone is CORTEX_TIMEZONE's default: tests read time in UTC unless they name a
# zone (a developer in Tokyo gets the same results as CI).
os.environ["TZ"] = "UTC"
time.tzset()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ---- data files that are not in the repository (tests/helpers/datasets.py) ------------------
# `@pytest.mark.needs_data("locomo_dev.json")`: without the file the test is skipped, and the
# run's summary says how many tests did not run for want of each file and how to provide it.

_NOT_FOUND = pytest.StashKey[dict[str, int]]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs_data"):
        (name,) = mark.args
        if datasets.find(name, TEST_KNOBS) is None:
            not_found = item.config.stash.setdefault(_NOT_FOUND, {})
            not_found[name] = not_found.get(name, 0) + 1
            variable = datasets.DATA_FILES[name].variable
            pytest.skip(f"{name} not found (set {variable}; see tests/helpers/datasets.py)")


@pytest.fixture
def data_file(request: pytest.FixtureRequest) -> Path:
    """The file the test's `needs_data` mark names (the mark has skipped the test without it)."""
    mark = request.node.get_closest_marker("needs_data")
    assert mark is not None, "data_file is for tests marked needs_data"
    path = datasets.find(mark.args[0], TEST_KNOBS)
    assert path is not None
    return path


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    not_found = config.stash.get(_NOT_FOUND, {})
    if not_found:
        terminalreporter.section("data files not found")
        for name, skipped in sorted(not_found.items()):
            terminalreporter.write_line(datasets.missing_line(name, skipped))


class FakeClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.moment = start or datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(db_path=tmp_path / "brain.db", embedding_provider="none")


@pytest.fixture
async def service(settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(settings, clock=clock) as svc:
        yield svc


# ---- what users install: the sdist and the wheel, built once per session ------------------


@pytest.fixture(scope="session")
def built_dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` of this checkout (with this environment's hatchling): the folder
    holding cortex_mcp-<version>.tar.gz and cortex_mcp-<version>-py3-none-any.whl."""
    outdir = tmp_path_factory.mktemp("dist")
    root = Path(__file__).resolve().parent.parent
    build = [sys.executable, "-m", "build", "--sdist", "--wheel", "--no-isolation"]
    subprocess.run(
        [*build, "--outdir", str(outdir), str(root)],
        check=True,
        capture_output=True,
    )
    return outdir


# ---- PostgreSQL (issue 17) ----------------------------------------------------------------
# `pg_url`: a fresh empty database on a real PostgreSQL with pgvector (pgserver, started once
# per session). `backend`: run a test on both stores; `backend_settings` are `settings` for it.


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    from tests.helpers.postgres_server import PostgresServer

    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    with pg_server.fresh_database() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend_settings(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    """`settings` on the backend under test (SQLite file, or a fresh PostgreSQL database)."""
    overrides: dict[str, Any] = {"db_path": tmp_path / "brain.db", "embedding_provider": "none"}
    if backend == "postgres":
        overrides["database_url"] = request.getfixturevalue("pg_url")
    return load_settings(**overrides)


@pytest.fixture
def on_both_stores(backend_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test runs on SQLite and on PostgreSQL: settings it loads itself read the URL from the
    environment (`pytest.mark.usefixtures("on_both_stores")` on a module)."""
    if backend_settings.database_url is not None:
        url = backend_settings.database_url.get_secret_value()
        monkeypatch.setenv("CORTEX_DATABASE_URL", url)


# ---- the embedding stub (tests/helpers/embedding_stub.py) for the vector tests --------------------
# `stub`: the stub on a free local port, as (base URL, its state), `embeddings_url` its URL;
# `stub_settings`: settings that embed through it with the real openai SDK. A module with
# another stub overrides `stub`.

# what the vector tests remember and then look for
FACTS = [
    "Harry invests in rental apartments in Shinagawa",
    "The VPS firewall blocks port 8080 by default",
    "Alice adopted a golden retriever named Max",
    "The quarterly budget review is scheduled for Friday",
    "Kubernetes cluster upgrades happen every second Tuesday",
]


@pytest.fixture
def stub() -> Iterator[tuple[str, StubState]]:
    with embedding_stub() as served:
        yield served


@pytest.fixture
def embeddings_url(stub: tuple[str, StubState]) -> str:
    return stub[0]


def stub_settings(db_path: Path, url: str, *, timeout_s: float = 10.0, **extra: Any) -> Settings:
    """A store at `db_path` embedded by the stub at `url`. The timeout is generous unless a
    test is about timeouts: a loaded machine must not turn a healthy stub into a degraded
    recall."""
    return load_settings(
        db_path=db_path,
        embedding_provider="openai",
        embedding_base_url=url,
        embedding_model="stub-embed",
        embedding_timeout_s=timeout_s,
        **extra,
    )


def llm_stub_settings(db_path: Path, stub: StubLLM, **extra: Any) -> Settings:
    """A store at `db_path` whose LLM is the stub (tests/helpers/llm_stub.py) through the openai SDK,
    with no embeddings."""
    return load_settings(
        db_path=db_path,
        embedding_provider="none",
        llm_provider="openai",
        llm_base_url=stub.openai_url,
        **extra,
    )
