"""Copy a whole memory store into another backend (SQLite <-> PostgreSQL), row for row.

Every table of `store.tables` is read from one snapshot of the source in pages of a few
thousand rows, in key order, and written as it is: ids, sequence numbers, timestamps, vectors,
the embedding cache, relations, the access and lifecycle logs, turns, profiles and counters.
Only the indexes are derived again by the target (its text index and vector index).

While it copies, each table gets a count and an order-free checksum (`TableDigest`); the
target is then read back and must give the same count and checksum for every table before the
copy is declared whole (`commit`).

How a copy that fails or is interrupted ends depends on the target:
- a SQLite file is new and takes its name only at `commit`: the old target is left as it was,
  and running the copy again starts over;
- PostgreSQL commits each page (COPY, one transaction) and marks the store unfinished until
  `commit`: running the same copy again goes on after the last row each table holds (the
  whole source is still read for its checksums), and servers should not use the store before.

A target that already holds rows is refused unless `replace` is given; so is a PostgreSQL
store a copy from another source left unfinished."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from cortex_mcp.errors import Conflict, InvalidInput, StorageError
from cortex_mcp.store.tables import TABLES, Row, Table, TableDigest

BATCH = 5000  # rows per page read and per write
DRIVER_MODULES = ("psycopg", "psycopg_pool", "pgvector")  # what the postgres extra installs


class Progress(Protocol):
    def __call__(self, phase: str, done: int, total: int | None) -> Any: ...


class RowSource(Protocol):
    @property
    def label(self) -> str: ...

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def count(self, spec: Table) -> int: ...
    def pages(self, spec: Table, size: int) -> AsyncGenerator[list[Row], None]: ...


class RowTarget(Protocol):
    @property
    def label(self) -> str: ...

    async def open(self) -> None: ...
    async def unfinished(self) -> str | None: ...
    async def existing_rows(self) -> int: ...
    async def clear(self) -> None: ...
    async def start(self, source: str) -> None: ...
    async def resume_after(self, spec: Table) -> Row | None: ...
    async def write(self, spec: Table, rows: list[Row]) -> None: ...
    async def finish(self) -> None: ...
    def reader(self) -> RowSource: ...
    async def commit(self) -> None: ...
    async def abort(self) -> None: ...


@dataclass
class TableCopy:
    table: str
    rows: int
    checksum: str


@dataclass
class MigrationReport:
    source: str
    target: str
    tables: list[TableCopy] = field(default_factory=list)
    seconds: float = 0.0
    replaced: int = 0  # rows the target held before (only with `replace`)
    resumed: int = 0  # rows an unfinished copy of the same source had written already

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows": self.rows, "verified": True}


def is_database_url(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def sqlite_path(location: str) -> Path:
    """`sqlite:///abs/path`, `sqlite:relative/path` or a plain path -> the path."""
    for prefix in ("sqlite:///", "sqlite://", "sqlite:"):
        if location.startswith(prefix):
            rest = location[len(prefix) :]
            absolute = prefix == "sqlite:///"
            return Path("/" + rest.lstrip("/") if absolute else rest).expanduser()
    return Path(location).expanduser()


def describe(location: str) -> str:
    """A location fit for output: a database URL without its password."""
    if not is_database_url(location):
        return str(sqlite_path(location))
    scheme, _, rest = location.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return location
    user = credentials.partition(":")[0]
    return f"{scheme}://{user}@{host}" if user else f"{scheme}://{host}"


def open_source(location: str) -> RowSource:
    if is_database_url(location):
        return _postgres().copy.PostgresRows(location)
    from cortex_mcp.store.copy import SqliteRows

    return SqliteRows(sqlite_path(location))


def open_target(location: str) -> RowTarget:
    if is_database_url(location):
        return _postgres().target.PostgresTarget(location)
    from cortex_mcp.store.copy import SqliteTarget

    return SqliteTarget(sqlite_path(location))


def _postgres() -> Any:
    """The `cortex_mcp.store.postgres` package with its copy modules loaded."""
    try:
        from cortex_mcp.store import postgres
        from cortex_mcp.store.postgres import copy, target  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name not in DRIVER_MODULES:
            raise
        raise StorageError(
            f"PostgreSQL needs the postgres extra ({exc.name} is missing): install"
            " cortex-mcp with `pip install '/path/to/cortex-mcp[postgres]'` from your checkout"
        ) from exc
    return postgres


def _same_store(source: str, target: str) -> bool:
    if is_database_url(source) or is_database_url(target):
        return source.rstrip("/") == target.rstrip("/")
    return sqlite_path(source).resolve() == sqlite_path(target).resolve()


async def migrate(
    source_location: str,
    target_location: str,
    *,
    replace: bool = False,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy every row of the source store into the target store, verify, then commit."""
    if _same_store(source_location, target_location):
        raise InvalidInput(
            f"--to names the store being copied ({describe(target_location)}); name another one",
            field="to",
        )
    started = time.monotonic()
    report = MigrationReport(describe(source_location), describe(target_location))
    source, target = open_source(source_location), open_target(target_location)
    await source.open()
    try:
        await target.open()
        try:
            resuming = await _make_room(target, source.label, report, replace=replace)
            digests = await _copy_tables(source, target, batch, progress, resuming=resuming)
            report.resumed = sum(d.skipped for d in digests)
            _step(progress, "deriving", 0, None)
            await target.finish()
            await _verify(target.reader(), digests, batch, progress)
            _step(progress, "indexing", 0, None)
            await target.commit()
        except BaseException:
            await target.abort()
            raise
    finally:
        await source.close()
    report.tables = [TableCopy(d.spec.name, d.count, d.checksum) for d in digests]
    report.seconds = round(time.monotonic() - started, 3)
    return report


async def _make_room(
    target: RowTarget, source: str, report: MigrationReport, *, replace: bool
) -> bool:
    """Clear or refuse what the target holds; True when an unfinished copy of the same
    source goes on where it stopped."""
    unfinished = await target.unfinished()
    if unfinished == source and not replace:
        return True
    if unfinished is not None and not replace:
        raise Conflict(
            f"{target.label} holds an unfinished copy of {unfinished}; run migrate from that"
            " store again to finish it, or pass --force to replace everything in it"
        )
    existing = await target.existing_rows()
    if existing and unfinished is None and not replace:
        raise Conflict(
            f"{target.label} already holds {existing} rows; copy into an empty store, or pass"
            " --force to replace everything in it"
        )
    if existing:
        await target.clear()
    report.replaced = existing
    await target.start(source)
    return False


def _step(progress: Progress | None, phase: str, done: int, total: int | None) -> None:
    if progress is not None:
        progress(phase, done, total)


async def _copy_tables(
    source: RowSource,
    target: RowTarget,
    batch: int,
    progress: Progress | None,
    *,
    resuming: bool,
) -> list[_Digest]:
    digests = []
    for spec in TABLES:
        total = await source.count(spec)
        digest = _Digest(spec)
        after = await target.resume_after(spec) if resuming else None
        _step(progress, spec.name, 0, total)
        key = itemgetter(*[spec.names.index(name) for name in spec.key])
        async with aclosing(source.pages(spec, batch)) as pages:
            async for rows in pages:
                digest.add(rows)
                if after is not None:  # the unfinished copy wrote the keys up to `after`
                    new = [row for row in rows if _key(key, row) > after]
                    digest.skipped += len(rows) - len(new)
                    rows = new
                if rows:
                    await target.write(spec, rows)
                _step(progress, spec.name, digest.count, total)
        if digest.count != total:  # the snapshot moved: should never happen
            raise StorageError(
                f"{source.label} changed during the copy ({spec.name}: {total} rows counted,"
                f" {digest.count} read); run migrate again"
            )
        digests.append(digest)
    return digests


class _Digest(TableDigest):
    skipped = 0  # rows an unfinished copy had written already


def _key(key: Callable[[Row], Any], row: Row) -> Row:
    value = key(row)
    return value if isinstance(value, tuple) else (value,)


async def _verify(
    copy: RowSource, expected: Sequence[TableDigest], batch: int, progress: Progress | None
) -> None:
    """Read the target back; every table must give the source's count and checksum."""
    await copy.open()
    try:
        for wanted in expected:
            found = TableDigest(wanted.spec)
            async with aclosing(copy.pages(wanted.spec, batch)) as pages:
                async for rows in pages:
                    found.add(rows)
                    _step(progress, f"verify {wanted.spec.name}", found.count, wanted.count)
            if (found.count, found.checksum) != (wanted.count, wanted.checksum):
                raise StorageError(
                    f"the copy of {wanted.spec.name} does not match its source ({wanted.count}"
                    f" rows, {found.count} read back, checksums {wanted.checksum[:12]} and"
                    f" {found.checksum[:12]}); the copy is not finished: run migrate again"
                    " with --force to start it over"
                )
    finally:
        await copy.close()
