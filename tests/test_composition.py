"""The house: one composition root builds every store, engine and service and hands each what it
uses; `CortexService` holds the services, one per noun, and inherits nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.cortex import CortexService, Services
from cortex_mcp.service.requests import RememberRequest
from cortex_mcp.store.backend import Stores, sqlite_classes

PACKAGE = Path(__file__).resolve().parent.parent / "cortex_mcp"
ROOT_MODULES = ("runtime.py", "reader.py")
STORE_CLASS_NAMES = {cls.__name__ for cls in vars(sqlite_classes()).values()} | {
    "PgMemoryStore",
    "PgVectorStore",
    "PgLifecycleStore",
    "PgExportStore",
    "PgBrowseStore",
}


def _trees(package: Path) -> dict[str, ast.Module]:
    return {
        str(path.relative_to(package)): ast.parse(path.read_text("utf-8"))
        for path in sorted(package.rglob("*.py"))
    }


def stores_built_outside_the_one_place(package: Path) -> list[str]:
    """Where a module other than store/backend.py builds a store: a call of a store class, or
    any use of `store_classes` (the classes a backend's stores are built from)."""
    found = []
    for name, tree in _trees(package).items():
        if name == "store/backend.py":
            continue
        for node in ast.walk(tree):
            called = node.func if isinstance(node, ast.Call) else None
            label = (
                called.id
                if isinstance(called, ast.Name)
                else called.attr
                if isinstance(called, ast.Attribute)
                else None
            )
            if label in STORE_CLASS_NAMES and not name.startswith("store/"):
                found.append(f"{name}:{node.lineno} builds {label}")
            if isinstance(node, ast.Name) and node.id == "store_classes":
                found.append(f"{name}:{node.lineno} uses store_classes")
    return found


def attributes_assigned_in_the_root(package: Path) -> list[str]:
    """`x.y = ...` in the composition root: a part changed after it was built."""
    found = []
    for name in ROOT_MODULES:
        tree = ast.parse((package / name).read_text("utf-8"))
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            targets = [t for t in targets if isinstance(t, ast.Attribute)]
            found += [f"{name}:{t.lineno} sets {ast.unparse(t)}" for t in targets]
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "setattr":
                found.append(f"{name}:{node.lineno} calls setattr")
    return found


def test_cortex_service_inherits_nothing_and_holds_one_service_per_noun() -> None:
    assert CortexService.__bases__ == (object,)
    nouns = {
        "memories",
        "reading",
        "conversation",
        "lifecycle",
        "exchange",
        "relations",
        "entities",
    }
    assert set(Services.__dataclass_fields__) == nouns | {"browse", "status", "tokens", "config"}


def test_stores_are_built_in_one_place() -> None:
    assert stores_built_outside_the_one_place(PACKAGE) == []


def test_the_composition_root_assigns_nothing_to_a_part_after_building_it() -> None:
    assert attributes_assigned_in_the_root(PACKAGE) == []


def test_the_checks_catch_a_second_place_and_a_late_assignment(tmp_path: Path) -> None:
    fake = tmp_path / "cortex_mcp"
    (fake / "service").mkdir(parents=True)
    (fake / "store").mkdir()
    (fake / "store" / "backend.py").write_text("x = store_classes(db).memories(db)\n")
    (fake / "service" / "browse.py").write_text(
        "from cortex_mcp.store.browse import BrowseStore\nb = BrowseStore(db)\n"
        "c = store_classes(db)\n"
    )
    (fake / "runtime.py").write_text("service = make()\nservice.lifecycle = engine\n")
    (fake / "reader.py").write_text("setattr(service, 'mirrors', writer)\n")
    assert stores_built_outside_the_one_place(fake) == [
        "service/browse.py:2 builds BrowseStore",
        "service/browse.py:3 uses store_classes",
    ]
    assert attributes_assigned_in_the_root(fake) == [
        "runtime.py:2 sets service.lifecycle",
        "reader.py:1 calls setattr",
    ]


@pytest.mark.anyio
async def test_every_service_shares_the_parts_the_root_built(tmp_path: Path) -> None:
    settings = load_settings(db_path=tmp_path / "m.db", embedding_provider="none")
    async with open_cortex(settings, background=False) as service:
        assert isinstance(service.stores, Stores)
        assert service.memories.memories is service.stores.memories
        assert service.browse.reading is service.reading
        assert service.browse.memories is service.memories
        assert service.lifecycle.engine is service.engines.lifecycle
        assert service.engines.lifecycle.store is service.stores.lifecycle
        remembered = await service.memories.remember(
            RememberRequest(content="The staging box runs Debian 12")
        )
        detail = await service.reading.memory_detail(remembered.id)
        assert detail["memory"]["content"] == "The staging box runs Debian 12"
