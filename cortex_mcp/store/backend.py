"""Which store serves: the SQLite file (the default) or PostgreSQL (CORTEX_DATABASE_URL).

The composition root asks once; the service builds its stores from the classes returned here,
so nothing above the store knows which database it talks to. The PostgreSQL classes are
imported only when asked for (the driver is an optional extra)."""

from __future__ import annotations

from dataclasses import dataclass

from cortex_mcp.config import Settings
from cortex_mcp.store.beliefs import BeliefStore
from cortex_mcp.store.browse import BrowseStore
from cortex_mcp.store.counters import Counters
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
from cortex_mcp.store.lease import LeaseStore
from cortex_mcp.store.lifecycle import LifecycleStore
from cortex_mcp.store.memories import LayerTtl, MemoryStore
from cortex_mcp.store.profiles import ProfileStore
from cortex_mcp.store.reflect import ReflectStore
from cortex_mcp.store.relations import RelationStore
from cortex_mcp.store.settings import SettingsStore
from cortex_mcp.store.tokens import TokenStore
from cortex_mcp.store.turns import TurnStore
from cortex_mcp.store.validity import ValidityStore
from cortex_mcp.store.vectors import VectorStore


@dataclass(frozen=True)
class StoreClasses:
    memories: type[MemoryStore]
    vectors: type[VectorStore]
    lifecycle: type[LifecycleStore]
    lease: type[LeaseStore]
    exports: type[ExportStore]
    browse: type[BrowseStore]
    relations: type[RelationStore]
    turns: type[TurnStore]
    profiles: type[ProfileStore]
    counters: type[Counters]
    tokens: type[TokenStore]
    entities: type[EntityStore]
    validity: type[ValidityStore]
    beliefs: type[BeliefStore]
    reflect: type[ReflectStore]


SQLITE = StoreClasses(
    memories=MemoryStore,
    vectors=VectorStore,
    lifecycle=LifecycleStore,
    lease=LeaseStore,
    exports=ExportStore,
    browse=BrowseStore,
    relations=RelationStore,
    turns=TurnStore,
    profiles=ProfileStore,
    counters=Counters,
    tokens=TokenStore,
    entities=EntityStore,
    validity=ValidityStore,
    beliefs=BeliefStore,
    reflect=ReflectStore,
)


def uses_postgres(settings: Settings) -> bool:
    return settings.database_url is not None


def open_database(settings: Settings, *, allow_vec: bool = True) -> DatabaseHandle:
    """The unopened handle (`async with` opens it): PostgreSQL when the URL is set."""
    if settings.database_url is None:
        return Database(settings.db_path, allow_vec=allow_vec)
    from cortex_mcp.store.postgres.database import PgDatabase
    from cortex_mcp.store.postgres.driver import import_driver

    import_driver()  # the one-line ConfigError when the extra is missing, before anything
    return PgDatabase(settings.database_url.get_secret_value(), pool_max=settings.pool_max)


def store_classes(db: DatabaseHandle) -> StoreClasses:
    """The store classes that work on `db`'s backend."""
    if isinstance(db, Database):
        return SQLITE
    from cortex_mcp.store.postgres.stores import POSTGRES

    return POSTGRES


@dataclass(frozen=True)
class Stores:
    """Every store over one open database, built together by `build_stores`."""

    db: DatabaseHandle
    memories: MemoryStorage
    vectors: VectorStorage
    lifecycle: LifecycleStorage
    lease: LeaseStore
    exports: ExportStorage
    browse: BrowseStore
    relations: RelationStore
    turns: TurnStore
    profiles: ProfileStore
    counters: Counters
    tokens: TokenStorage
    entities: EntityStorage
    validity: ValidityStore
    beliefs: BeliefStore
    settings: SettingsStore
    reflect: ReflectStore


def build_stores(db: DatabaseHandle, ttl: LayerTtl) -> Stores:
    """The one place a store is built (tests/test_architecture.py holds it so): each of
    `db`'s backend, the memory store with the layers' lifetimes."""
    classes = store_classes(db)
    memories = classes.memories(db, ttl)
    return Stores(
        db=db,
        memories=memories,
        vectors=classes.vectors(db),
        lifecycle=classes.lifecycle(db, memories),
        lease=classes.lease(db),
        exports=classes.exports(db),
        browse=classes.browse(db),
        relations=classes.relations(db),
        turns=classes.turns(db, memories),
        profiles=classes.profiles(db),
        counters=classes.counters(db),
        tokens=classes.tokens(db),
        entities=classes.entities(db),
        validity=classes.validity(db),
        beliefs=classes.beliefs(db),
        settings=SettingsStore(db),  # portable SQL: one class for both backends
        reflect=classes.reflect(db),
    )
