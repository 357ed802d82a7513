"""The PostgreSQL store classes: SQLite's, where their SQL is portable, else a subclass here
that overrides what is not (the backend-parametrised tests run every one on both). Both
backends' classes are held to the declared interfaces (`store.interfaces`) at the end."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex_mcp.errors import InvalidInput
from cortex_mcp.models import LifecycleAction
from cortex_mcp.store.backend import StoreClasses, sqlite_classes
from cortex_mcp.store.browse import BrowseStore, TablePage, TableQuery
from cortex_mcp.store.exports import ExportStore
from cortex_mcp.store.imports import InsertFresh
from cortex_mcp.store.interfaces import Connection
from cortex_mcp.store.lifecycle import LifecycleStore
from cortex_mcp.store.postgres.bulk import Stems, insert_indexed
from cortex_mcp.store.postgres.memories import PgMemoryStore, match_query
from cortex_mcp.store.postgres.vectors import PgVectorStore


class PgLifecycleStore(LifecycleStore):
    async def start_run(
        self, scope: str, run_at: str, plan: list[LifecycleAction], started_at: str
    ) -> int:
        def txn(conn: Connection) -> int:
            row = conn.execute(
                "INSERT INTO lifecycle_runs (scope, run_at, started_at, status, plan)"
                " VALUES (?, ?, ?, 'running', ?) RETURNING id",
                (scope, run_at, started_at, json.dumps([a.model_dump() for a in plan])),
            ).fetchone()
            return int(row[0])

        return await self.db.transact(txn)


class PgExportStore(ExportStore):
    ASSIGNS_SEQ = False  # seq is an identity column other writers draw from at the same time
    _stems = Stems()  # per process: the dictionary is fixed by the schema

    def fresh_memories_insert(self) -> InsertFresh:
        """Rows with their text index computed as remember computes it (`bulk`)."""
        return insert_indexed(self._stems)

    @asynccontextmanager
    async def roomy_cache(self) -> AsyncIterator[None]:
        """PostgreSQL keeps its own shared buffers: nothing to widen for an import."""
        yield

    async def backup(self, target: Path) -> None:
        raise InvalidInput(
            "format: a SQLite copy is made from a SQLite store; this store is PostgreSQL"
            " (export as json, or copy it with `cortex-mcp migrate`)",
            field="format",
        )


class PgBrowseStore(BrowseStore):
    async def page(self, q: TableQuery, *, count: bool) -> TablePage:
        """The text filter as a tsquery split in Python, as the text index is."""
        if q.match is not None:
            q = replace(q, match=await match_query(self.db, q.match))
        return await super().page(q, count=count)

    async def storage(self) -> dict[str, Any]:
        """The database's size as PostgreSQL counts it (no files of ours to measure)."""
        size = int(await self.db.scalar("SELECT pg_database_size(current_database())") or 0)
        return {
            "bytes": {"db": size},
            "page_size": 8192,
            "pages": size // 8192,
            "free_pages": 0,
            "total_bytes": size,
        }


SQLITE = sqlite_classes()
POSTGRES = StoreClasses(
    memories=PgMemoryStore,
    vectors=PgVectorStore,
    lifecycle=PgLifecycleStore,
    lease=SQLITE.lease,
    exports=PgExportStore,
    browse=PgBrowseStore,
    relations=SQLITE.relations,
    turns=SQLITE.turns,
    profiles=SQLITE.profiles,
    counters=SQLITE.counters,
    tokens=SQLITE.tokens,
    entities=SQLITE.entities,
    validity=SQLITE.validity,
    beliefs=SQLITE.beliefs,
    reflect=SQLITE.reflect,
)


if TYPE_CHECKING:  # mypy fails here when a class of either backend drifts from its interface
    import sqlite3

    from cortex_mcp.store.database import Database
    from cortex_mcp.store.entities import EntityStore
    from cortex_mcp.store.interfaces import (
        DatabaseHandle,
        EntityStorage,
        ExportStorage,
        LifecycleStorage,
        MemoryStorage,
        TextStorage,
        TokenStorage,
        VectorStorage,
    )
    from cortex_mcp.store.memories import MemoryStore
    from cortex_mcp.store.postgres.connection import SyncPgConnection
    from cortex_mcp.store.postgres.database import PgDatabase
    from cortex_mcp.store.text import TextReads
    from cortex_mcp.store.tokens import TokenStore
    from cortex_mcp.store.vectors import VectorStore

    _HANDLES: tuple[type[DatabaseHandle], ...] = (Database, PgDatabase)
    _CONNECTIONS: tuple[type[Connection], ...] = (sqlite3.Connection, SyncPgConnection)
    _MEMORIES: tuple[type[MemoryStorage], ...] = (MemoryStore, PgMemoryStore)
    _TEXT: tuple[type[TextStorage], ...] = (TextReads, MemoryStore, PgMemoryStore)
    _VECTORS: tuple[type[VectorStorage], ...] = (VectorStore, PgVectorStore)
    _LIFECYCLE: tuple[type[LifecycleStorage], ...] = (LifecycleStore, PgLifecycleStore)
    _EXPORTS: tuple[type[ExportStorage], ...] = (ExportStore, PgExportStore)
    _TOKENS: tuple[type[TokenStorage], ...] = (TokenStore,)  # the same SQL on both
    _ENTITIES: tuple[type[EntityStorage], ...] = (EntityStore,)  # the same SQL on both
