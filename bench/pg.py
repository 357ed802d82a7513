"""A PostgreSQL for the benches: the server of a URL given, or an embedded one (pgserver, the
dev extra brings it), and a fresh database on it per name."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def postgres_databases(url: str | None) -> Iterator[Callable[[str], str]]:
    """Yields `fresh(name)`: the URL of an empty database called `name` (dropped first if it
    exists). Without `url`, an embedded PostgreSQL 16 with pgvector runs for the duration."""
    import psycopg

    server, folder = None, None
    if url is None:
        import pgserver

        folder = Path(tempfile.mkdtemp(prefix="cortex-bench-pg-"))
        server = pgserver.get_server(folder / "data", cleanup_mode="delete")
        url = str(server.get_uri())
    admin_url = url

    def fresh(name: str) -> str:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {name}")
        base, _, query = admin_url.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")

    try:
        yield fresh
    finally:
        if server is not None:
            server.cleanup()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
