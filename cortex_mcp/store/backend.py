"""Which store serves: the SQLite file (the default) or PostgreSQL (CORTEX_DATABASE_URL).

The composition root asks once; the service builds its stores from the classes returned here,
so nothing above the store knows which database it talks to. The PostgreSQL classes are
imported only when asked for (the driver is an optional extra), and so are the SQLite stores
the commands that only read (`list`, `show`, `token`, `config`) do not use: those build
`ReadStores` alone."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Any

from cortex_mcp.config import Settings
from cortex_mcp.store.browse import BrowseStore
from cortex_mcp.store.database import Database
from cortex_mcp.store.entities import EntityStore
from cortex_mcp.store.exports import ExportStore
from cortex_mcp.store.interfaces import (
    DatabaseHandle,
    EntityStorage,
    ExportStorage,
    LifecycleStorage,
    MemoryStorage,
    TokenStorage,
    VectorStorage,
)
from cortex_mcp.store.memories import LayerTtl, MemoryStore
from cortex_mcp.store.relations import RelationStore
from cortex_mcp.store.settings import SettingsStore
from cortex_mcp.store.tokens import TokenStore

if TYPE_CHECKING:  # imported in `sqlite_classes`: the reading commands use none of them
    from cortex_mcp.store.beliefs import BeliefStore
    from cortex_mcp.store.counters import Counters
    from cortex_mcp.store.lease import LeaseStore
    from cortex_mcp.store.lifecycle import LifecycleStore
    from cortex_mcp.store.profiles import ProfileStore
    from cortex_mcp.store.reflect import ReflectStore
    from cortex_mcp.store.turns import TurnStore
    from cortex_mcp.store.validity import ValidityStore
    from cortex_mcp.store.vectors import VectorStore


@dataclass(frozen=True)
class ReadClasses:
    """The classes of the stores the reading commands use."""

    memories: type[MemoryStore]
    exports: type[ExportStore]
    browse: type[BrowseStore]
    relations: type[RelationStore]
    tokens: type[TokenStore]
    entities: type[EntityStore]


@dataclass(frozen=True)
class StoreClasses(ReadClasses):
    vectors: type[VectorStore]
    lifecycle: type[LifecycleStore]
    lease: type[LeaseStore]
    turns: type[TurnStore]
    profiles: type[ProfileStore]
    counters: type[Counters]
    validity: type[ValidityStore]
    beliefs: type[BeliefStore]
    reflect: type[ReflectStore]


SQLITE_READ = ReadClasses(
    memories=MemoryStore,
    exports=ExportStore,
    browse=BrowseStore,
    relations=RelationStore,
    tokens=TokenStore,
    entities=EntityStore,
)


@cache
def sqlite_classes() -> StoreClasses:
    """Every SQLite store class (the PostgreSQL ones are these, some overridden)."""
    from cortex_mcp.store.beliefs import BeliefStore
    from cortex_mcp.store.counters import Counters
    from cortex_mcp.store.lease import LeaseStore
    from cortex_mcp.store.lifecycle import LifecycleStore
    from cortex_mcp.store.profiles import ProfileStore
    from cortex_mcp.store.reflect import ReflectStore
    from cortex_mcp.store.turns import TurnStore
    from cortex_mcp.store.validity import ValidityStore
    from cortex_mcp.store.vectors import VectorStore

    return StoreClasses(
        **_fields_of(SQLITE_READ),
        vectors=VectorStore,
        lifecycle=LifecycleStore,
        lease=LeaseStore,
        turns=TurnStore,
        profiles=ProfileStore,
        counters=Counters,
        validity=ValidityStore,
        beliefs=BeliefStore,
        reflect=ReflectStore,
    )


def _fields_of(instance: ReadClasses | ReadStores) -> dict[str, Any]:
    """`instance`'s fields by name, to build the larger dataclass from it."""
    return {f.name: getattr(instance, f.name) for f in fields(instance)}


def uses_postgres(settings: Settings) -> bool:
    return settings.database_url is not None


def open_database(
    settings: Settings, *, allow_vec: bool = True, reading: bool = False
) -> DatabaseHandle:
    """The unopened handle (`async with` opens it): PostgreSQL when the URL is set.
    `reading`: for a command that only reads, one query at a time (one SQLite connection)."""
    if settings.database_url is None and reading:
        return Database(settings.db_path, allow_vec=allow_vec, readers=0)
    if settings.database_url is None:
        return Database(settings.db_path, allow_vec=allow_vec)
    from cortex_mcp.store.postgres.database import PgDatabase
    from cortex_mcp.store.postgres.driver import import_driver

    import_driver()  # the one-line ConfigError when the extra is missing, before anything
    return PgDatabase(settings.database_url.get_secret_value(), pool_max=settings.pool_max)


def store_classes(db: DatabaseHandle) -> StoreClasses:
    """The store classes that work on `db`'s backend."""
    if isinstance(db, Database):
        return sqlite_classes()
    from cortex_mcp.store.postgres.stores import POSTGRES

    return POSTGRES


def read_classes(db: DatabaseHandle) -> ReadClasses:
    """The classes of the reading commands' stores on `db`'s backend, importing no other."""
    return SQLITE_READ if isinstance(db, Database) else store_classes(db)


@dataclass(frozen=True)
class ReadStores:
    """The stores of the commands that only read memories, tokens or settings, built by
    `build_read_stores`."""

    db: DatabaseHandle
    memories: MemoryStorage
    exports: ExportStorage
    browse: BrowseStore
    relations: RelationStore
    tokens: TokenStorage
    entities: EntityStorage
    settings: SettingsStore


@dataclass(frozen=True)
class Stores(ReadStores):
    """Every store over one open database, built together by `build_stores`."""

    vectors: VectorStorage
    lifecycle: LifecycleStorage
    lease: LeaseStore
    turns: TurnStore
    profiles: ProfileStore
    counters: Counters
    validity: ValidityStore
    beliefs: BeliefStore
    reflect: ReflectStore


def build_read_stores(db: DatabaseHandle, ttl: LayerTtl) -> ReadStores:
    """The reading commands' stores, each of `db`'s backend, the memory store with the
    layers' lifetimes."""
    classes = read_classes(db)
    return _read_stores(db, classes, classes.memories(db, ttl))


def _read_stores(db: DatabaseHandle, classes: ReadClasses, memories: MemoryStore) -> ReadStores:
    return ReadStores(
        db=db,
        memories=memories,
        exports=classes.exports(db),
        browse=classes.browse(db),
        relations=classes.relations(db),
        tokens=classes.tokens(db),
        entities=classes.entities(db),
        settings=SettingsStore(db),  # portable SQL: one class for both backends
    )


def build_stores(db: DatabaseHandle, ttl: LayerTtl) -> Stores:
    """The one place a store is built (tests/test_architecture.py holds it so): each of
    `db`'s backend, the memory store with the layers' lifetimes."""
    classes = store_classes(db)
    memories = classes.memories(db, ttl)
    return Stores(
        **_fields_of(_read_stores(db, classes, memories)),
        vectors=classes.vectors(db),
        lifecycle=classes.lifecycle(db, memories),
        lease=classes.lease(db),
        turns=classes.turns(db, memories),
        profiles=classes.profiles(db),
        counters=classes.counters(db),
        validity=classes.validity(db),
        beliefs=classes.beliefs(db),
        reflect=classes.reflect(db),
    )
