"""Imports point downwards only, SQL lives only in the store, and no module reaches for another
module's private names."""

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
    "cortex_mcp.folders",
    "cortex_mcp.config",
    "cortex_mcp.config_groups",
    "cortex_mcp.config_help",
    "cortex_mcp.tokenize",
    "cortex_mcp.zones",
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


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_module(package: Path, dotted: str) -> bool:
    path = package.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def private_imports(package: Path) -> list[str]:
    """`from x import _y`, `import x._y`, and `module._y` on a project module bound by an
    import: a helper two modules share is public and named for what it does."""
    problems = []
    for path in sorted(package.rglob("*.py")):
        module = _module_name(path, package)
        tree = ast.parse(path.read_text("utf-8"))
        modules: dict[str, str] = {}  # local name -> the project module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = module.split(".")
                    if path.name != "__init__.py":
                        parent = parent[:-1]
                    parent = parent[: len(parent) - node.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                if base != package.name and not base.startswith(package.name + "."):
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if _private(alias.name) or any(_private(p) for p in base.split(".")):
                        problems.append(f"{module}:{node.lineno} imports {full}")
                    elif _is_module(package, full):
                        modules[alias.asname or alias.name] = full
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] != package.name:
                        continue
                    if any(_private(p) for p in alias.name.split(".")):
                        problems.append(f"{module}:{node.lineno} imports {alias.name}")
                    if alias.asname:
                        modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and _private(node.attr)
            ):
                problems.append(
                    f"{module}:{node.lineno} reads {modules[node.value.id]}.{node.attr}"
                )
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


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(PACKAGE) == []


def test_the_private_name_check_catches_each_form(tmp_path: Path) -> None:
    fake = tmp_path / "cortex_mcp"
    (fake / "store").mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "1"\n')
    (fake / "store" / "__init__.py").write_text("")
    (fake / "store" / "rows.py").write_text("_COLUMNS = 'id'\nCOLUMNS = _COLUMNS\n")
    (fake / "store" / "a.py").write_text(
        "from cortex_mcp import __version__\n"
        "from cortex_mcp.store.rows import COLUMNS, _COLUMNS\n"
        "from .rows import (\n    COLUMNS as C,\n    _COLUMNS as P,\n)\n"
    )
    (fake / "store" / "b.py").write_text(
        "from cortex_mcp.store import rows\nimport cortex_mcp.store.rows as r\n"
        "X = rows._COLUMNS + r._COLUMNS + rows.COLUMNS\n"
    )
    assert private_imports(fake) == [
        "cortex_mcp.store.a:2 imports cortex_mcp.store.rows._COLUMNS",
        "cortex_mcp.store.a:3 imports cortex_mcp.store.rows._COLUMNS",
        "cortex_mcp.store.b:3 reads cortex_mcp.store.rows._COLUMNS",
        "cortex_mcp.store.b:3 reads cortex_mcp.store.rows._COLUMNS",
    ]


def test_the_service_package_holds_one_module_per_noun() -> None:
    modules = {path.stem for path in (PACKAGE / "service").glob("*.py")}
    nouns = {
        "memories",
        "reading",
        "conversation",
        "lifecycle",
        "exchange",
        "relations",
        "entities",
    }
    assert (
        nouns
        | {"browse", "status", "tokens", "identity", "config", "cortex", "effects", "requests"}
        | {"__init__"}
        == modules
    )


ENGINE_CAPABILITIES = {"recall", "ingest", "lifecycle", "exchange", "beliefs", "entities"}
ENGINE_SHARED = {"__init__.py", "validate.py", "health.py"}
ENGINE_SHARED_PACKAGES = {"redaction"}  # used by every capability


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


def test_no_code_cites_a_design_document_outside_the_repository() -> None:
    """The map the docstrings cite is docs/architecture.md, in the repository."""
    citing = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "DESIGN.md" in path.read_text("utf-8")
    ]
    assert citing == []
