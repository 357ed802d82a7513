"""A real PostgreSQL (with pgvector) for the tests: pgserver's embedded one, started once per
test session in a private temporary folder, and a fresh database for each test that asks.

As root (CI, containers) pgserver runs the server as an unprivileged `pgserver` user it creates,
because PostgreSQL refuses to run as root."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_names = itertools.count(1)


class PostgresServer:
    def __init__(self) -> None:
        import pgserver  # the dev extra brings it

        self._folder = Path(tempfile.mkdtemp(prefix="cortex-pg-"))
        self._server: Any = pgserver.get_server(self._folder / "data", cleanup_mode="delete")
        self._tune_for_tests()
        self._template = self._migrated_template()

    def _tune_for_tests(self) -> None:
        """A throwaway server: commits need not reach the disk."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as admin:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                admin.execute(f"ALTER SYSTEM SET {setting} = off")
            admin.execute("SELECT pg_reload_conf()")

    def _migrated_template(self) -> str:
        """A database with cortex-mcp's schema that each fresh one is copied from."""
        import asyncio

        import psycopg

        from cortex_mcp.store.postgres.database import PgDatabase

        name = "cortex_template"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")

        async def migrate() -> None:
            async with PgDatabase(self.url(name), pool_max=1):
                pass

        asyncio.run(migrate())
        return name

    def url(self, database: str = "postgres") -> str:
        return str(self._server.get_uri(database=database))

    @contextmanager
    def fresh_database(self) -> Iterator[str]:
        """The URL of a new database holding the current schema and no memories, dropped
        afterwards (connections and all). `empty_database` is one without the schema."""
        with self._database(f" TEMPLATE {self._template} STRATEGY FILE_COPY") as url:
            yield url

    @contextmanager
    def empty_database(self) -> Iterator[str]:
        with self._database("") as url:
            yield url

    @contextmanager
    def _database(self, options: str) -> Iterator[str]:
        """A new database (`CREATE DATABASE name` + `options`) dropped afterwards."""
        import psycopg

        name = f"cortex_test_{next(_names)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}{options}")
        try:
            yield self.url(name)
        finally:
            with psycopg.connect(self.url(), autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self._folder, ignore_errors=True)
