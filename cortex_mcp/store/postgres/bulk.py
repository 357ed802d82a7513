"""Rows into PostgreSQL by COPY, for a bulk copy between stores (`migrate`).

A memory's text index is computed here rather than by `cortex_tsvector()` per row (about a
millisecond a row, most of it the SQL function's own overhead): the terms are split in Python
exactly as the remember path splits them (`memories.index_columns`), each distinct term is
stemmed once by PostgreSQL's own dictionary (`cortex_lexemes`, asked for the terms a batch
brings that were not seen before), and the `tsvector` is written as the same text
`cortex_tsvector` builds and casts. The stored value is therefore the one the per-row path
stores, byte for byte (`tests/test_migrate_bulk.py` compares them).

Vectors travel in pgvector's binary form (a text form of 384 floats costs more than the row);
every other table goes through COPY's text form, each value as psycopg dumps it.

An import (`cortex-mcp import` on PostgreSQL) inserts its memories with the same text index
(`insert_indexed`) rather than through the `memories_fts` view, whose trigger splits text in
SQL: slower, and not quite as remember splits it (Cyrillic, Greek and Vietnamese accents)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from cortex_mcp.store.database import placeholders
from cortex_mcp.store.imports import MEMORY_FIELDS, ROW_FIELDS, InsertFresh, NewMemory
from cortex_mcp.store.interfaces import Connection
from cortex_mcp.store.postgres.driver import scalar
from cortex_mcp.store.postgres.memories import index_columns
from cortex_mcp.store.postgres.vectors import VectorValue
from cortex_mcp.store.tables import Row, Table

if TYPE_CHECKING:
    from cortex_mcp.store.postgres.driver import AsyncConnection

MAX_POSITION = 16383  # tsvector positions stop there (as LEAST(i, 16383) in cortex_tsvector)
MAX_LEXEME_BYTES = 2000  # longer lexemes are left out, as cortex_tsvector leaves them out
_STEMS_MAX = 2_000_000  # distinct terms remembered by one copy (a few hundred MB at most)


class Stems:
    """Term -> PostgreSQL's stem of it (the schema's fixed dictionary), asked once per term."""

    def __init__(self) -> None:
        self._stems: dict[str, str] = {}

    async def learn(self, conn: AsyncConnection, terms: Iterable[str]) -> None:
        """Ask for the terms not known yet (`conn`: an async psycopg connection)."""
        if unknown := self._unknown(terms):
            stems = await scalar(conn, _STEM, [unknown])
            self._stems.update(zip(unknown, stems, strict=True))

    def learn_in(self, conn: Connection, terms: Iterable[str]) -> None:
        """The same inside a store transaction (`conn`: a `SyncPgConnection`)."""
        if unknown := self._unknown(terms):
            row = conn.execute(_STEM.replace("%s", "?"), (unknown,)).fetchone()
            self._stems.update(zip(unknown, row[0], strict=True))

    def _unknown(self, terms: Iterable[str]) -> list[str]:
        unknown = sorted({term for term in terms if term not in self._stems})
        if len(self._stems) + len(unknown) > _STEMS_MAX:
            self._stems.clear()
        return unknown

    def of(self, terms: list[str]) -> list[str]:
        return [self._stems[term] for term in terms]


_STEM = "SELECT cortex_lexemes(%s::text[])"


def tsvector_text(lexemes: Sequence[str]) -> str:
    """The text `cortex_tsvector` builds from a memory's lexemes before its cast: each lexeme
    quoted once with the positions (1, 2, ...) it stands at."""
    positions: dict[str, list[str]] = {}
    for i, lexeme in enumerate(lexemes, 1):
        if lexeme and (len(lexeme) * 4 <= MAX_LEXEME_BYTES or _fits(lexeme)):
            positions.setdefault(lexeme, []).append(str(i) if i < MAX_POSITION else _LAST)
    return " ".join(f"{_quote(lexeme)}:{','.join(at)}" for lexeme, at in positions.items())


_LAST = str(MAX_POSITION)


def _fits(lexeme: str) -> bool:
    return len(lexeme.encode("utf-8")) <= MAX_LEXEME_BYTES


def _quote(lexeme: str) -> str:
    if "'" not in lexeme and "\\" not in lexeme:
        return f"'{lexeme}'"
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


async def memory_rows(
    conn: AsyncConnection, stems: Stems, spec: Table, rows: list[Row]
) -> list[Row]:
    """Memory rows with their text index (`tsv` as text, `doc_len`) appended."""
    content = spec.names.index("content")
    indexed = [index_columns(row[content]) for row in rows]
    await stems.learn(conn, (term for terms, _ in indexed for term in terms))
    return [
        (*row, tsvector_text(stems.of(terms)), doc_len)
        for row, (terms, doc_len) in zip(rows, indexed, strict=True)
    ]


def insert_indexed(stems: Stems) -> InsertFresh:
    """An import's insert of new memories with their text index in the row (`tsv`, `doc_len`,
    as remember stores them), instead of one `memories_fts` trigger call per row."""

    def insert(conn: Connection, fresh: list[NewMemory]) -> None:
        indexed = [index_columns(memory.row[_CONTENT]) for memory in fresh]
        stems.learn_in(conn, (term for terms, _ in indexed for term in terms))
        conn.executemany(
            _INSERT_INDEXED,
            [
                [*memory.row[1:], tsvector_text(stems.of(terms)), doc_len]
                for memory, (terms, doc_len) in zip(fresh, indexed, strict=True)
            ],
        )

    return insert


_CONTENT = 1 + MEMORY_FIELDS.index("content")  # in `NewMemory.row` (seq first)
_INSERT_INDEXED = (
    f"INSERT INTO memories ({', '.join(ROW_FIELDS[1:])}, tsv, doc_len)"
    f" VALUES ({placeholders(ROW_FIELDS[1:])}, ?::tsvector, ?)"
)


def copy_statement(spec: Table) -> tuple[str, list[str] | None]:
    """(the COPY statement for a table's rows, the column types of a binary COPY or None)."""
    names = list(spec.names)
    if spec.name == "memories":
        names += ["tsv", "doc_len"]
    columns = f"COPY {spec.name} ({', '.join(names)}) FROM STDIN"
    if spec.name == "memory_vectors":  # memory_id, model, dim, vector, updated_at
        return f"{columns} (FORMAT BINARY)", ["text", "text", "int4", "vector", "text"]
    return columns, None


async def copy_rows(conn: AsyncConnection, spec: Table, rows: list[Row]) -> None:
    """COPY the rows into their table (inside the caller's transaction)."""
    statement, types = copy_statement(spec)
    if types is not None:
        vector = spec.names.index("vector")
        rows = [(*row[:vector], VectorValue(row[vector]), *row[vector + 1 :]) for row in rows]
    async with conn.cursor() as cursor, cursor.copy(statement) as copy:
        if types is not None:
            copy.set_types(types)
        for row in rows:
            await copy.write_row(row)
