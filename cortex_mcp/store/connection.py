"""Opening SQLite: which driver can load sqlite-vec, and the pragmas every connection needs."""

from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import aiosqlite

from cortex_mcp.tokenize import query_key

log = logging.getLogger(__name__)
sql_log = logging.getLogger("cortex_mcp.sql")  # statements with their values: content

BUSY_TIMEOUT_MS = 10_000
RawConnection = sqlite3.Connection  # or pysqlite3's, which has the same interface


@dataclass(frozen=True)
class ConnectorInfo:
    """What `doctor` and `cortex://stats` report about the SQLite in use."""

    module: str  # "sqlite3" or "pysqlite3"
    sqlite_version: str
    vec_available: bool
    vec_version: str | None
    fts5: bool


def _stdlib_can_load_extensions() -> bool:
    return hasattr(sqlite3.Connection, "enable_load_extension")


def _try_pysqlite3() -> ModuleType | None:
    try:
        import pysqlite3.dbapi2 as module  # type: ignore[import-not-found]
    except ImportError:
        return None
    return module  # type: ignore[no-any-return]


@cache
def sqlite_module() -> ModuleType:
    """stdlib sqlite3 if it can load extensions, else pysqlite3, else stdlib without vectors.

    Chosen once per process: two SQLite copies in one process do not share POSIX lock state.
    """
    module = sqlite3 if _stdlib_can_load_extensions() else _try_pysqlite3() or sqlite3
    # None has no adapter of its own, so binding it looks for __adapt__ and __conform__
    # first: about 1 µs a value with pysqlite3 (0.2 µs with this one), and an imported
    # memory's row binds seven. Still bound as NULL.
    module.register_adapter(type(None), _none)
    return module


def _none(value: None) -> None:
    return value


def _load_vec(conn: Any) -> str | None:
    """Load sqlite-vec into a connection; return its version, or None when it cannot load."""
    if not hasattr(conn, "enable_load_extension"):
        return None
    try:
        import sqlite_vec
    except ImportError:
        return None
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        row = conn.execute("SELECT vec_version()").fetchone()
    except Exception as exc:  # any driver's error class: the extension is optional
        log.warning("sqlite-vec did not load: %s", exc)
        return None
    return str(row[0])


@cache
def connector_info(allow_vec: bool = True) -> ConnectorInfo:
    module = sqlite_module()
    conn = module.connect(":memory:")
    try:
        vec_version = _load_vec(conn) if allow_vec else None
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            fts5 = True
        except module.OperationalError:
            fts5 = False
        return ConnectorInfo(
            module=module.__name__.split(".")[0],
            sqlite_version=module.sqlite_version,
            vec_available=vec_version is not None,
            vec_version=vec_version,
            fts5=fts5,
        )
    finally:
        conn.close()


def operational_error() -> type[Exception]:
    """The OperationalError class of the driver in use (pysqlite3's is not stdlib's)."""
    return sqlite_module().OperationalError  # type: ignore[no-any-return]


def integrity_error() -> type[Exception]:
    return sqlite_module().IntegrityError  # type: ignore[no-any-return]


def _sql_query_key(text: str | None) -> str | None:
    return query_key(text) if text is not None else None


def _apply_pragmas(conn: Any, pragmas: list[str], operational: type[Exception]) -> None:
    """Run the pragmas, waiting while another process creates or converts the same file.

    Switching a new file to WAL takes an exclusive lock, and SQLite answers a second process
    that asks meanwhile with SQLITE_BUSY without calling its busy handler; so the wait is ours."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    for pragma in pragmas:
        while True:
            try:
                conn.execute(f"PRAGMA {pragma}")
                break
            except operational as exc:
                if not is_busy(exc) or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)


def is_busy(exc: Exception) -> bool:
    """SQLite answered that another connection holds a lock it needs."""
    text = str(exc)
    return "locked" in text or "busy" in text


def open_connection(
    path: Path, *, allow_vec: bool = True, read_only: bool = False, uri: str | None = None
) -> tuple[aiosqlite.Connection, bool]:
    """An aiosqlite connection (not yet started) and whether sqlite-vec will be loaded in it.

    `uri` (a `file:` URI) replaces the path, for read-only and snapshot opens; `read_only`
    skips the pragmas that would write."""
    module = sqlite_module()
    use_vec = allow_vec and connector_info(allow_vec).vec_available
    pragmas = [
        f"busy_timeout={BUSY_TIMEOUT_MS}",
        "foreign_keys=ON",
        "temp_store=MEMORY",
        "secure_delete=ON",  # a purge must not leave content in free pages
    ]
    if not read_only:
        pragmas[:0] = ["journal_mode=WAL", "synchronous=NORMAL"]

    def connector() -> Any:  # runs in aiosqlite's worker thread
        conn = module.connect(
            uri or str(path),
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
            uri=uri is not None,
        )
        if use_vec:
            _load_vec(conn)
        conn.create_function("cortex_query_key", 1, _sql_query_key, deterministic=True)
        if sql_log.isEnabledFor(logging.DEBUG):  # statements run as one trip log nothing else
            conn.set_trace_callback(sql_log.debug)
        _apply_pragmas(conn, pragmas, module.OperationalError)
        conn.row_factory = module.Row
        return conn

    return aiosqlite.Connection(connector, iter_chunk_size=256), use_vec
