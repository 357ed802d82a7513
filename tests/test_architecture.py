"""Imports point downwards only, and SQL lives only in the store."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "cortex_mcp"

# module prefix -> project modules it must never import
FORBIDDEN = {
    "cortex_mcp.store": [
        "cortex_mcp.service",
        "cortex_mcp.transports",
        "cortex_mcp.runtime",
        "cortex_mcp.engine",
        "cortex_mcp.search",
        "cortex_mcp.providers",
    ],
    "cortex_mcp.providers": [
        "cortex_mcp.store",
        "cortex_mcp.service",
        "cortex_mcp.transports",
        "cortex_mcp.engine",
        "cortex_mcp.search",
        "cortex_mcp.runtime",
    ],
    "cortex_mcp.search": [
        "cortex_mcp.service",
        "cortex_mcp.transports",
        "cortex_mcp.runtime",
        "cortex_mcp.engine",
    ],
    "cortex_mcp.engine": ["cortex_mcp.service", "cortex_mcp.transports", "cortex_mcp.runtime"],
    "cortex_mcp.service": ["cortex_mcp.transports", "cortex_mcp.runtime"],
    "cortex_mcp.transports": ["cortex_mcp.store", "cortex_mcp.search", "cortex_mcp.providers"],
    "cortex_mcp.commands": ["cortex_mcp.store", "cortex_mcp.search", "cortex_mcp.providers"],
}
LEAVES = [
    "cortex_mcp.models",
    "cortex_mcp.errors",
    "cortex_mcp.config",
    "cortex_mcp.config_groups",
    "cortex_mcp.config_help",
    "cortex_mcp.tokenize",
]
SQL = re.compile(
    r"\b(SELECT\s+.+\s+FROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|"
    r"VIRTUAL)|DROP\s+TABLE|PRAGMA\s+\w+)\b",
    re.IGNORECASE | re.DOTALL,
)


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {name for name in found if name.startswith("cortex_mcp")}


def upward_edges(package: Path) -> list[str]:
    problems = []
    for path in package.rglob("*.py"):
        module = _module_name(path, package)
        imported = _imports(path)
        for prefix, banned in FORBIDDEN.items():
            if module == prefix or module.startswith(prefix + "."):
                problems += [
                    f"{module} -> {i}" for i in imported for b in banned if i.startswith(b)
                ]
        if module in LEAVES:
            problems += [f"{module} (leaf) -> {i}" for i in imported if i not in LEAVES]
    return problems


def sql_outside_store(package: Path) -> list[str]:
    problems = []
    for path in package.rglob("*.py"):
        module = _module_name(path, package)
        if module.startswith("cortex_mcp.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and SQL.search(node.value):
                problems.append(f"{module}:{node.lineno}")
    return problems


def test_no_module_imports_upwards() -> None:
    assert upward_edges(PACKAGE) == []


def test_sql_lives_only_in_the_store() -> None:
    assert sql_outside_store(PACKAGE) == []


def test_the_checks_catch_violations(tmp_path: Path) -> None:
    fake = tmp_path / "cortex_mcp"
    (fake / "store").mkdir(parents=True)
    (fake / "transports").mkdir()
    (fake / "store" / "bad.py").write_text("from cortex_mcp.service import CortexService\n")
    (fake / "transports" / "bad.py").write_text(
        "import cortex_mcp.store.database\nQ = 'SELECT id FROM memories WHERE 1'\n"
    )
    edges = upward_edges(fake)
    assert "cortex_mcp.store.bad -> cortex_mcp.service" in edges
    assert "cortex_mcp.transports.bad -> cortex_mcp.store.database" in edges
    assert sql_outside_store(fake) == ["cortex_mcp.transports.bad:2"]


def test_the_facade_package_keeps_each_capability_group_small() -> None:
    sizes = {
        path.name: len(path.read_text("utf-8").splitlines())
        for path in (PACKAGE / "service").glob("*.py")
    }
    assert {"core.py", "memories.py", "conversation.py", "exchange.py", "status.py"} <= set(sizes)
    assert {name: n for name, n in sizes.items() if n > 400} == {}


ENGINE_CAPABILITIES = {"recall", "ingest", "lifecycle", "exchange"}
ENGINE_SHARED = {"__init__.py", "validate.py", "redact.py", "health.py"}
ENGINE_SHARED_PACKAGES = {"redaction"}  # used by every capability; `redact.py` is its facade


def test_the_engine_is_grouped_by_capability() -> None:
    engine = PACKAGE / "engine"
    packages = {p.name for p in engine.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    loose = {p.name for p in engine.glob("*.py")}
    assert packages == ENGINE_CAPABILITIES | ENGINE_SHARED_PACKAGES
    assert loose == ENGINE_SHARED, "a new engine module belongs in its capability's package"


def test_capabilities_do_not_reach_into_each_other_sideways() -> None:
    # exchange and lifecycle read and write memories through the store; neither drives ingest
    edges = []
    for capability in ("exchange", "lifecycle", "recall"):
        for path in (PACKAGE / "engine" / capability).glob("*.py"):
            edges += [
                f"{capability}/{path.name} -> {i}"
                for i in _imports(path)
                if i.startswith("cortex_mcp.engine.ingest")
            ]
    assert edges == []
