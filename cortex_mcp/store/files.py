"""The database file before and around SQLite: create it privately, check that it is a
database this version can use, and turn SQLite's failures into one line a user can act on.

Every message names the path, the cause and what to do. Nothing here writes to a file that
already exists: a database that fails a check is left exactly as it was found.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cortex_mcp.errors import DiskFull, ReadOnlyStorage, StorageError
from cortex_mcp.folders import create_private_folders
from cortex_mcp.store.connection import RawConnection, sqlite_module
from cortex_mcp.store.schema import SCHEMA_VERSION

log = logging.getLogger(__name__)

OpenMode = Literal["rw", "ro", "immutable"]

FILE_MODE = 0o600  # SQLite gives the -wal and -shm files the mode of the database file
QUICK_CHECK_BUDGET_S = 0.5

_HEADER = b"SQLite format 3\x00"
_HEADER_SIZE = 100
_WHERE = "--db or CORTEX_DB_PATH"
_MOVE_AWAY = "restore it from a backup, or move it away and cortex-mcp starts a new one"

# SQLite primary result codes (extended codes keep them in the low byte)
_READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 8, 10, 11, 13, 14, 26
_BUSY, _LOCKED = 5, 6


@dataclass(frozen=True)
class FileAccess:
    """How the database can be opened: read-write, read-only, or (a read-only folder where
    SQLite cannot keep its shared-memory file) as an unchanging snapshot."""

    mode: OpenMode
    schema_version: int
    read_only_reason: str | None = None

    @property
    def writable(self) -> bool:
        return self.mode == "rw"


def check_database(path: Path, *, thorough: bool = False, create: bool = True) -> FileAccess:
    """Create the database (and its folder) if missing, then check it can be used.

    `thorough` adds SQLite's quick_check (reads the whole file: ~0.1 s per 100 MB from a
    warm cache), stopped after QUICK_CHECK_BUDGET_S.
    Raises StorageError with a one-line message; never changes an existing file."""
    if path.is_dir():
        raise StorageError(
            f"database {path} is a directory, not a file; point {_WHERE} at a file"
            f" (for example {path / 'brain.db'})"
        )
    if not path.exists():
        if not create:
            raise StorageError(f"database {path} does not exist yet; check {_WHERE}")
        _create(path)
    _refuse_newer(path, _check_header(path))  # before SQLite opens it, so it stays untouched
    access = _probe(path, thorough)
    _refuse_newer(path, access.schema_version)
    if not access.writable and access.schema_version < SCHEMA_VERSION:
        raise StorageError(
            f"database {path} is read-only ({access.read_only_reason}) and needs an upgrade"
            f" from schema {access.schema_version} to {SCHEMA_VERSION}; open it once with"
            " write access"
        )
    return access


def _refuse_newer(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"database {path} has schema version {version}, newer than this cortex-mcp"
            f" understands ({SCHEMA_VERSION}); upgrade cortex-mcp, or point {_WHERE} at another"
            " file (this one was left untouched)"
        )


def connect_uri(path: Path, mode: OpenMode) -> tuple[str, bool]:
    """What to pass to `connect()` (the target and whether it is a URI) for `mode`."""
    if mode == "rw":
        return str(path), False
    flag = "mode=ro" if mode == "ro" else "immutable=1"
    return f"{path.absolute().as_uri()}?{flag}", True


def storage_fault(exc: BaseException, path: Path) -> StorageError | None:
    """The one-line StorageError for a SQLite failure on `path`, or None when it is not a
    storage fault (a bug, a constraint) and should propagate as it is."""
    module = sqlite_module()
    if not isinstance(exc, module.DatabaseError):
        return None
    code = _primary_code(exc)
    detail = str(exc)
    if code == _FULL or "full" in detail:
        return DiskFull(
            f"disk full: database {path} could not be written ({detail}); nothing was changed."
            " Free space on that disk, then retry"
        )
    if code == _READONLY or "readonly" in detail:
        return ReadOnlyStorage(
            f"read-only: database {path} cannot be written ({detail}); nothing was changed."
            " Recall still works; give this process write access to change memories"
        )
    if code in (_CORRUPT, _NOTADB) or "malformed" in detail:
        return StorageError(f"database {path} is corrupt ({detail}); {_MOVE_AWAY}")
    if code == _IOERR:
        return StorageError(f"disk error on database {path} ({detail}); check the disk, then retry")
    if code in (_BUSY, _LOCKED) or "locked" in detail:
        return StorageError(
            f"database {path} is busy: another process held it too long ({detail});"
            " nothing was changed, retry"
        )
    if code == _CANTOPEN:
        return StorageError(f"cannot open database {path} ({detail}); check {_WHERE}")
    return None


def read_only_error(path: Path, reason: str | None) -> ReadOnlyStorage:
    return ReadOnlyStorage(
        f"read-only: database {path} can only be read by this process ({reason});"
        " memories cannot be stored, changed or forgotten, recall still works."
        f" Give this process write access, or point {_WHERE} at a writable file"
    )


# ---- creation ----------------------------------------------------------------------------


def _create(path: Path) -> None:
    """The missing folders (0700) and an empty database file (0600): memories are private."""
    try:
        create_private_folders(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        os.close(fd)
    except FileExistsError:
        return  # another process created it first
    except OSError as exc:
        raise StorageError(
            f"cannot create database {path}: {_os_reason(exc)}; choose a writable location"
            f" with {_WHERE}"
        ) from None
    log.info("created database %s (mode 0600)", path)


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a file, not a folder"
    return exc.strerror or str(exc)


# ---- checks ------------------------------------------------------------------------------


def _check_header(path: Path) -> int:
    """Cheap checks on the first 100 bytes, before SQLite opens the file: SQLite's magic
    string, and a file that ends inside a page (a copy cut short). Returns the header's
    user_version (a write still in the WAL may have changed it since: the caller asks SQLite
    too).

    A file shorter than the page count its header records is not refused here: another
    process's checkpoint writes page 1 (the new count) before the pages that extend the file,
    and a checkpoint stopped midway (a full disk, a kill) leaves it so, with the pages in the
    WAL. Only SQLite, under its locks, can tell that from a copy cut short (`_probe`)."""
    size, header = _read_header(path)
    if size == 0:
        return 0  # a new database
    if not header.startswith(_HEADER[: min(len(header), len(_HEADER))]):
        raise StorageError(
            f"database {path} is not a SQLite database (it holds other data); point {_WHERE}"
            " at another file, or move this one away"
        )
    if size < _HEADER_SIZE or size % _write_grain(header):
        raise _truncated(path, size, _recorded_bytes(header) if size >= _HEADER_SIZE else 0)
    return int.from_bytes(header[60:64], "big")


# SQLite writes and truncates its file in whole pages, and a page of up to 4 KiB lands at
# once (the kernel grows a file one memory page at a time): a size that is not a multiple
# of this is a file cut short, never a write seen halfway.
_ATOMIC_WRITE = 4096


def _write_grain(header: bytes) -> int:
    page_size = _page_size(header)
    if page_size & (page_size - 1) or not 512 <= page_size <= 65536:
        return 1  # not a page size: SQLite calls the file corrupt when it opens it
    return min(page_size, _ATOMIC_WRITE)


def _page_size(header: bytes) -> int:
    page_size = int.from_bytes(header[16:18], "big")
    return 65536 if page_size == 1 else page_size


def _read_header(path: Path) -> tuple[int, bytes]:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            return size, handle.read(_HEADER_SIZE)
    except OSError as exc:
        raise StorageError(
            f"cannot read database {path}: {_os_reason(exc)}; check its permissions"
        ) from None


def _recorded_bytes(header: bytes) -> int:
    """The file size the header's page count implies (0 when the count is not in step with
    the change counter, which older writers leave stale)."""
    if header[24:28] != header[92:96]:
        return 0
    return int.from_bytes(header[28:32], "big") * _page_size(header)


def _truncation(path: Path) -> StorageError | None:
    """The "truncated" line for a file SQLite has just called corrupt, when the file holds
    fewer bytes than its header records (else SQLite's own word, "corrupt", stands)."""
    size, header = _read_header(path)
    if len(header) < _HEADER_SIZE or not header.startswith(_HEADER):
        return None
    recorded = _recorded_bytes(header)
    return _truncated(path, size, recorded) if size < recorded else None


def _truncated(path: Path, size: int, recorded: int) -> StorageError:
    held = f"{size} of {recorded} bytes" if size < recorded else f"{size} bytes"
    return StorageError(f"database {path} is truncated ({held}); {_MOVE_AWAY}")


def _probe(path: Path, thorough: bool) -> FileAccess:
    """Open with the most access the process has and read the schema version."""
    reason = _read_only_reason(path)
    modes: list[OpenMode] = ["ro", "immutable"] if reason else ["rw", "ro", "immutable"]
    last: BaseException | None = None
    for mode in modes:
        try:
            version = _read_version(path, mode, thorough)
        except sqlite_module().DatabaseError as exc:
            code = _primary_code(exc)
            if code in (_READONLY, _CANTOPEN) and mode != "immutable":
                reason = reason or _describe_read_only(exc)
                last = exc
                continue  # not allowed to write beside it: try reading only
            fault = storage_fault(exc, path)
            if code in (_CORRUPT, _NOTADB):
                fault = _truncation(path) or fault
            raise fault or StorageError(f"cannot use database {path} ({exc})") from None
        return FileAccess(mode, version, reason if mode != "rw" else None)
    raise StorageError(f"cannot open database {path} ({last}); check {_WHERE}")


def _read_version(path: Path, mode: OpenMode, thorough: bool) -> int:
    module = sqlite_module()
    target, uri = connect_uri(path, mode)
    conn = module.connect(target, uri=uri, isolation_level=None)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if thorough:
            _quick_check(conn, path)
        return version
    finally:
        conn.close()


def _quick_check(conn: RawConnection, path: Path) -> None:
    """SQLite's quick_check within a time budget: a large file on a slow disk must not hold
    up `initialize`; corruption it had no time to reach is reported when a query meets it."""
    deadline = time.monotonic() + QUICK_CHECK_BUDGET_S
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        verdict = str(conn.execute("PRAGMA quick_check(1)").fetchone()[0])
    except sqlite_module().OperationalError as exc:
        if "interrupt" not in str(exc):
            raise
        log.info("quick_check of %s stopped after %.1f s (large file)", path, QUICK_CHECK_BUDGET_S)
        return
    finally:
        conn.set_progress_handler(None, 0)
    verdict = " ".join(verdict.replace("*** in database main ***", "").split())
    if verdict != "ok":
        raise StorageError(f"database {path} is corrupt ({verdict}); {_MOVE_AWAY}")


def _read_only_reason(path: Path) -> str | None:
    try:
        flags = os.statvfs(path).f_flag
    except OSError:
        flags = 0
    if flags & os.ST_RDONLY:
        return "read-only file system"
    if not os.access(path, os.W_OK):
        return "no write permission on the file"
    return None


def _describe_read_only(exc: BaseException) -> str:
    if _primary_code(exc) == _READONLY:
        return "no write permission in its folder"
    return "its folder cannot be written"


def warn_if_exposed(path: Path, access: FileAccess) -> None:
    """One warning line each for a read-only database and one other users can read."""
    if not access.writable:
        log.warning(
            "database %s is read-only (%s): recall works, remember and forget are refused",
            path,
            access.read_only_reason,
        )
    try:
        info = path.stat()
    except OSError:
        return
    if info.st_uid == os.geteuid() and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning(
            "database %s can be read by other users (mode %o); run `chmod 600 %s` to keep"
            " memories private",
            path,
            stat.S_IMODE(info.st_mode),
            path,
        )


def _primary_code(exc: Any) -> int:
    code = getattr(exc, "sqlite_errorcode", None)
    return int(code) & 0xFF if isinstance(code, int) else -1
