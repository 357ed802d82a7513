"""Raw rows in and out of a SQLite memory file, for a copy between stores (`migrate`).

The source is read inside one read transaction, so a server writing to it meanwhile cannot
tear the copy: every table comes from the same moment. The target is a new file beside the
one it replaces; it takes the final name only once the engine has verified it (`commit`), so
a copy that fails or is interrupted leaves the target as it was."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from cortex_mcp.errors import StorageError
from cortex_mcp.store.connection import sqlite_module
from cortex_mcp.store.database import Database, placeholders
from cortex_mcp.store.files import FILE_MODE, connect_uri
from cortex_mcp.store.interfaces import Connection
from cortex_mcp.store.tables import DERIVED_META, TABLES, Row, Table
from cortex_mcp.tokenize import index_text


def _select(spec: Table) -> str:
    where = f" WHERE key NOT IN ({placeholders(DERIVED_META)})" if spec.name == "meta" else ""
    return f"SELECT {', '.join(spec.names)} FROM {spec.name}{where} ORDER BY {', '.join(spec.key)}"


def _params(spec: Table) -> list[str]:
    return sorted(DERIVED_META) if spec.name == "meta" else []


class SqliteRows:
    """Reads every copied table of one SQLite file in one snapshot."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: Any = None

    @property
    def label(self) -> str:
        return str(self.path.resolve())

    async def open(self) -> None:
        if not self.path.is_file():
            raise StorageError(f"{self.path} does not exist: nothing to copy from")
        async with Database(self.path):  # brings an older file to the current schema
            pass
        self._conn = await asyncio.to_thread(self._connect)

    def _connect(self) -> Any:
        target, _ = connect_uri(self.path, "ro")
        conn = sqlite_module().connect(
            target, uri=True, isolation_level=None, check_same_thread=False
        )
        conn.execute("BEGIN")  # one snapshot for every table
        conn.execute("SELECT 1 FROM memories LIMIT 1").fetchall()
        return conn

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await asyncio.to_thread(conn.close)

    async def count(self, spec: Table) -> int:
        sql = f"SELECT COUNT(*) FROM ({_select(spec)})"
        row = await asyncio.to_thread(lambda: self._conn.execute(sql, _params(spec)).fetchone())
        return int(row[0])

    async def pages(self, spec: Table, size: int) -> AsyncGenerator[list[Row], None]:
        cursor = await asyncio.to_thread(self._conn.execute, _select(spec), _params(spec))
        try:
            while rows := await asyncio.to_thread(cursor.fetchmany, size):
                yield [tuple(row) for row in rows]
        finally:
            cursor.close()


class SqliteTarget:
    """A new SQLite memory file written table by table, replacing `path` only at `commit`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._temp: Path | None = None
        self._db: Database | None = None

    @property
    def label(self) -> str:
        return str(self.path)

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".migrating", dir=self.path.parent
        )
        os.close(fd)
        os.unlink(name)  # Database creates it privately, with the schema
        self._temp = Path(name)
        self._db = Database(self._temp, allow_vec=False)
        await self._db.open()

    async def unfinished(self) -> None:
        """Never: an interrupted copy leaves no file behind (it only had a temporary name)."""

    async def existing_rows(self) -> int:
        """Rows already in the file this copy would replace (0 when there is none)."""
        if not self.path.exists():
            return 0
        return await asyncio.to_thread(_count_rows, self.path)

    async def clear(self) -> None:
        """Nothing to clear: the copy is a new file and `commit` replaces the old one whole."""

    async def start(self, source: str) -> None:
        """Nothing to prepare: the new file has its schema and indexes already."""

    async def resume_after(self, spec: Table) -> None:
        """Nothing to resume: every copy into SQLite starts over."""

    async def write(self, spec: Table, rows: list[Row]) -> None:
        assert self._db is not None
        insert = (
            f"INSERT INTO {spec.name} ({', '.join(spec.names)}) VALUES ({placeholders(spec.names)})"
        )

        def txn(conn: Connection) -> None:
            conn.executemany(insert, rows)
            if spec.name == "memories":
                seq, content = spec.names.index("seq"), spec.names.index("content")
                conn.executemany(
                    "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)",
                    [(row[seq], index_text(row[content])) for row in rows],
                )

        await self._db.transact(txn)

    async def finish(self) -> None:
        """Nothing to derive: SQLite keeps AUTOINCREMENT counters past explicit ids itself,
        and the vec0 index is built from the vectors when a server first opens the file."""

    def reader(self) -> SqliteRows:
        """The rows written so far, read back for verification."""
        assert self._temp is not None
        reader = SqliteRows(self._temp)
        return reader

    async def commit(self) -> None:
        assert self._db is not None and self._temp is not None
        await self._db.close()  # the last connection folds the WAL into the file
        temp = self._temp
        await asyncio.to_thread(_seal, temp, self.path)
        self._temp = None

    async def abort(self) -> None:
        if self._db is not None:
            await self._db.close()
        if self._temp is not None:
            await asyncio.to_thread(_remove, self._temp)
            self._temp = None


def _count_rows(path: Path) -> int:
    conn = sqlite_module().connect(connect_uri(path, "ro")[0], uri=True)
    try:
        total = 0
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        for spec in TABLES:
            if spec.name in names:
                sql = f"SELECT COUNT(*) FROM ({_select(spec)})"
                total += int(conn.execute(sql, _params(spec)).fetchone()[0])
        return total
    except sqlite_module().DatabaseError as exc:
        raise StorageError(f"{path} is not a cortex-mcp database ({exc}); move it away") from exc
    finally:
        conn.close()


def _remove(temp: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{temp}{suffix}").unlink(missing_ok=True)


def _seal(temp: Path, target: Path) -> None:
    """Make the verified copy self-contained, durable and private, then give it the name."""
    conn = sqlite_module().connect(str(temp))
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
    finally:
        conn.close()
    os.chmod(temp, FILE_MODE)
    with open(temp, "rb+") as handle:
        os.fsync(handle.fileno())
    for suffix in ("-wal", "-shm"):  # a replaced file's leftovers would be read as its WAL
        with contextlib.suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    os.replace(temp, target)
