"""What the SQLite and PostgreSQL database handles share above their drivers (the interface
both implement is `interfaces.DatabaseHandle`): `async with` opening and closing, and the
one-row, one-value and meta reads built on `fetchall`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Self, TypeVar

from cortex_mcp.store.interfaces import Read

T = TypeVar("T")
U = TypeVar("U")


class BaseHandle(ABC):
    """A handle answers `fetchall` its own way (a least-busy SQLite reader, a pooled
    PostgreSQL connection); every smaller read is one `fetchall`."""

    @abstractmethod
    async def open(self) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def fetch_small(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """A read of a few rows (a few ids, a small LIMIT); a handle that can read it more
        cheaply than `fetchall` (SQLite: on the event loop's own connection) does."""
        return await self.fetchall(sql, params)

    def inline_version(self) -> int | None:
        """A value that stays the same while no connection commits, read without a trip;
        None when the handle has none (a cache of reads then reads again)."""
        return None

    async def fetch_each(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """The rows of each statement; a handle whose trips cost runs them all in one."""
        return [await self.fetchall(sql, params) for sql, params in statements]

    async def read_both(self, first: Read[T], second: Read[U]) -> tuple[T, U]:
        one, two = await self.fetch_each([(first.sql, first.params), (second.sql, second.params)])
        return first.decode(one), second.decode(two)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Any | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return row[0] if row is not None else None

    async def get_meta(self, key: str) -> str | None:
        value = await self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return str(value) if value is not None else None
