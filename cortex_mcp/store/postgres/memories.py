"""Memory rows on PostgreSQL: the SQLite store's methods, with PostgreSQL's text index.

Only what differs is here; portable statements are inherited. Remember is idempotent across
processes: the insert is `ON CONFLICT (agent_id, content_hash) DO NOTHING`, and the loser of a
race bumps the winner's row, so the same content from two servers stores one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cortex_mcp.models import Memory, NewMemory, SearchFilters, new_id
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.entities import drop_links_in
from cortex_mcp.store.interfaces import Connection, Read
from cortex_mcp.store.memories import (
    INSERT_COLUMNS,
    INSERT_PLACEHOLDERS,
    LAYER_RANK,
    MEMORY_COLUMNS,
    MemoryStore,
    WriteOutcome,
    add_log_row,
    bump_values,
    erase_row,
    insert_values,
    require_owned,
    row_to_memory,
    written,
)
from cortex_mcp.store.postgres import text
from cortex_mcp.store.text import filter_sql, like_pattern
from cortex_mcp.tokenize import content_hash

# token -> PostgreSQL's stem of it (the dictionary is fixed by the schema): a query's terms are
# stemmed once per process, not once per recall
_STEMS: dict[str, str] = {}
_STEMS_MAX = 50_000
_TSVECTOR = "cortex_tsvector(?::text[])"  # a memory's index from its terms (`index_columns`)


def index_columns(content: str) -> tuple[list[str], int]:
    """(the terms to index, the document length BM25 counts) of a memory's content."""
    tokens = text.fts_tokens(content)
    return text.indexable(tokens), len(tokens)


class PgMemoryStore(MemoryStore):
    def _insert_or_bump(
        self, conn: Connection, new: NewMemory, now: str, *, audit: bool = True
    ) -> WriteOutcome:
        digest = content_hash(new.content)
        memory_id = self._insert_new(conn, new_id(), digest, new, now)
        deduplicated = memory_id is None
        if memory_id is None:  # the same content is stored (maybe by another server just now)
            existing = conn.execute(
                "SELECT id FROM memories WHERE agent_id = ? AND content_hash = ?",
                (new.agent_id, digest),
            ).fetchone()
            assert existing is not None
            memory_id = str(existing["id"])
            self._bump(conn, memory_id, new, now)
        return written(conn, new, memory_id, deduplicated, now, audit=audit)

    def reindex_in(self, conn: Connection, seq: int, content: str) -> None:
        """The row's text index for its new content, built exactly as remember builds it
        (terms split in Python; never through the `memories_fts` view's SQL split)."""
        terms, doc_len = index_columns(content)
        conn.execute(
            f"UPDATE memories SET tsv = {_TSVECTOR}, doc_len = ? WHERE seq = ?",
            (terms, doc_len, seq),
        )

    def _insert_new(
        self, conn: Connection, memory_id: str, digest: str, new: NewMemory, now: str
    ) -> str | None:
        """Insert the row with its text index; None when the agent has this content."""
        terms, doc_len = index_columns(new.content)
        row = conn.execute(
            f"INSERT INTO memories ({INSERT_COLUMNS}, tsv, doc_len)"
            f" VALUES ({INSERT_PLACEHOLDERS}, {_TSVECTOR}, ?)"
            " ON CONFLICT (agent_id, content_hash) DO NOTHING RETURNING id",
            (*insert_values(memory_id, digest, new, now, self.ttl), terms, doc_len),
        ).fetchone()
        return str(row[0]) if row is not None else None

    def _bump(self, conn: Connection, memory_id: str, new: NewMemory, now: str) -> None:
        """`memories.bump_row` with PostgreSQL's GREATEST for SQLite's two-argument MAX."""
        conn.execute(
            f"UPDATE memories SET importance = GREATEST(importance, ?), updated_at = ?,"
            f" access_count = access_count + 1, last_accessed = ?, forgotten_at = NULL,"
            f" shared = GREATEST(shared, ?), superseded_by = NULL,"
            f" metadata = json_remove(metadata, '$.compressed_into'),"
            f" expires_at = CASE WHEN {LAYER_RANK} < ? OR forgotten_at IS NOT NULL THEN ?"
            f" ELSE expires_at END,"
            f" layer = CASE WHEN {LAYER_RANK} < ? OR forgotten_at IS NOT NULL THEN ? ELSE layer END"
            f" WHERE id = ?",
            bump_values(memory_id, new, now, self.ttl),
        )

    async def purge(self, memory_id: str, agent_id: str, now: str) -> None:
        """Erase the content everywhere (the text index is a column of the row)."""

        def txn(conn: Connection) -> None:
            row = require_owned(conn, memory_id, agent_id)
            seq, digest = row["seq"], row["content_hash"]
            conn.execute("DELETE FROM relations WHERE source_memory_id = ?", (memory_id,))
            drop_links_in(conn, [memory_id], erase=True)
            conn.execute(
                "UPDATE lifecycle_log SET details = json_build_object('agent_id', ?::text)::text"
                " WHERE memory_ids LIKE ?",
                (agent_id, f'%"{memory_id}"%'),
            )
            erase_row(conn, seq, digest)
            add_log_row(conn, "purge", [memory_id], {"agent_id": agent_id}, now)

        await self.db.transact(txn)

    # ---- reads --------------------------------------------------------------------------

    async def eligible(self, ids: list[str], filters: SearchFilters) -> set[str]:
        if not ids:
            return set()
        where, params = filter_sql(filters)
        rows = await self.db.fetchall(
            f"SELECT m.id FROM memories m WHERE m.id IN ({placeholders(ids)}) AND {where}",
            [*ids, *params],
        )
        return {str(row[0]) for row in rows}

    async def term_counts(self, phrases: list[str], cap: int) -> tuple[int, dict[str, int]]:
        """(highest memory seq, memories matching each quoted phrase up to `cap`): one trip
        (two the first time a term is seen: PostgreSQL stems it once per process)."""
        lexemes = {}
        for phrase in phrases:
            found = await self._lexemes(text.match_phrases(phrase))
            if found:
                lexemes[phrase] = found
        counts, params = [], []
        for found in lexemes.values():
            sql, values = _documents_with(found, cap)
            counts.append(f", {sql}")
            params.extend(values)
        row = await self.db.fetchone(
            f"SELECT (SELECT COALESCE(MAX(seq), 0) FROM memories){''.join(counts)}", params
        )
        assert row is not None
        found_counts = dict(zip(lexemes, (int(n) for n in row[1:]), strict=True))
        return int(row[0]), {phrase: found_counts.get(phrase, 0) for phrase in phrases}

    async def text_search(
        self,
        match: str,
        filters: SearchFilters,
        limit: int,
        *,
        newest: int | None = None,
        rest: str = "",
    ) -> list[tuple[str, float]]:
        """BM25 hits as (id, bm25), lower is better, as SQLite's FTS5 gives them; with
        `newest`, only the newest that many matching memories are scored. One statement
        reads the candidates' term positions and the corpus figures BM25 needs. The phrases
        of `rest` add to the candidates' scores without adding candidates."""
        candidates = await self._lexemes(text.match_phrases(match))
        if not candidates:
            return []
        query = text.tsquery_literal(candidates)
        phrases = candidates + (await self._lexemes(text.match_phrases(rest)) if rest else [])
        where, params = filter_sql(filters)
        order = "m.seq DESC" if newest is not None else "ts_rank(m.tsv, ?::tsquery) DESC, m.seq"
        order_params = [] if newest is not None else [query]
        counts = [_documents_with([phrase]) for phrase in phrases]  # rest's phrases too
        frequencies = "".join(f", {sql}" for sql, _ in counts)
        rows = await self.db.fetchall(
            "WITH hits AS (SELECT m.id, m.seq, m.doc_len, m.tsv FROM memories m"
            f" WHERE m.tsv @@ ?::tsquery AND {where} ORDER BY {order} LIMIT ?)"
            " SELECT h.id, h.seq, h.doc_len, h.tsv::text FROM hits h"
            " UNION ALL SELECT NULL, NULL, NULL, ARRAY[(SELECT SUM(docs) FROM text_stats),"
            f" (SELECT SUM(tokens) FROM text_stats){frequencies}]::text",
            [
                query,
                *params,
                *order_params,
                newest if newest is not None else text.CANDIDATES,
                *(value for _, values in counts for value in values),
            ],
        )
        return text.rank(phrases, rows)[:limit]

    async def own_text_search(
        self, match: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        """The candidates of `text_search` are already the agent's own rows here."""
        return await self.text_search(match, filters, limit)

    async def _lexemes(self, phrases: list[list[str]]) -> list[list[str]]:
        return await lexemes(self.db, phrases)

    async def like_search(
        self, patterns: list[str], filters: SearchFilters, limit: int, *, newest: int | None = None
    ) -> list[str]:
        """Substring matches, case-insensitive for ASCII as SQLite's LIKE is; with `newest`,
        only among the newest that many memories."""
        if not patterns:
            return []
        where, params = filter_sql(filters)
        window = ""
        if newest is not None:
            window = " AND m.seq > (SELECT COALESCE(MAX(seq), 0) FROM memories) - ?"
            params = [*params, newest]
        likes = " OR ".join("m.content ILIKE ? ESCAPE '\\'" for _ in patterns)
        rows = await self.db.fetchall(
            f"SELECT m.id FROM memories m WHERE ({likes}) AND {where}{window}"
            " ORDER BY m.seq DESC LIMIT ?",
            [*(like_pattern(p) for p in patterns), *params, limit],
        )
        return [str(row["id"]) for row in rows]

    async def _fts_rows(self) -> int:
        return int(await self.db.scalar("SELECT SUM(docs) FROM text_stats") or 0)

    async def get_many(  # type: ignore[override]
        self, ids: Sequence[str], *, agent_id: str | None = None, reuse: bool = False
    ) -> dict[str, Memory]:
        if not ids:
            return {}
        owner, params = (" AND agent_id = ?", [agent_id]) if agent_id else ("", [])
        rows = await self.db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ANY(?::text[]){owner}",
            (list(ids), *params),
        )
        build = self.reused.memory if reuse else row_to_memory
        return {str(row[0]): build(row) for row in rows}

    def reused_read(self, ids: Sequence[str]) -> Read[dict[str, Memory]]:
        build = self.reused.memory
        return Read(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ANY(?::text[])",
            (list(ids),),
            lambda rows: {str(row[0]): build(row) for row in rows},
        )


def _documents_with(phrases: list[list[str]], cap: int | None = None) -> tuple[str, list[Any]]:
    """A scalar subquery counting the memories that hold any of these phrases (lexemes), up
    to `cap`: a word's count is read from `text_terms`, a two-word phrase's from
    `text_pairs`; a longer phrase is counted over the rows holding all its words (GIN
    intersects their lists; each row in the intersection is checked for the phrase)."""
    if len(phrases) == 1 and len(phrases[0]) <= 2:
        if len(phrases[0]) == 1:
            kept = "(SELECT COALESCE(SUM(docs), 0) FROM text_terms WHERE lexeme = ?)"
        else:
            kept = (
                "(SELECT COALESCE(SUM(docs), 0) FROM text_pairs WHERE lexeme = ? AND following = ?)"
            )
        if cap is None:
            return kept, list(phrases[0])
        return f"LEAST({kept}, ?)", [*phrases[0], cap]
    query = text.tsquery_literal(phrases)
    if cap is None:
        return "(SELECT COUNT(*) FROM memories WHERE tsv @@ ?::tsquery)", [query]
    return (
        "(SELECT COUNT(*) FROM (SELECT 1 FROM memories WHERE tsv @@ ?::tsquery LIMIT ?) AS c)",
        [query, cap],
    )


async def lexemes(db: Any, phrases: list[list[str]]) -> list[list[str]]:
    """Each phrase's tokens stemmed by PostgreSQL (the same dictionary as the index)."""
    tokens = sorted({token for phrase in phrases for token in phrase})
    unknown = [token for token in tokens if token not in _STEMS]
    if unknown:
        row = await db.fetchone("SELECT cortex_lexemes(?::text[])", (unknown,))
        assert row is not None
        if len(_STEMS) > _STEMS_MAX:
            _STEMS.clear()
        _STEMS.update(zip(unknown, row[0], strict=True))
    return [[_STEMS[token] for token in phrase] for phrase in phrases]


async def match_query(db: Any, match: str) -> str:
    """A `search.text` FTS5 expression ("a" AND "b c", or OR) as a tsquery literal, split in
    Python as the index is; a phrase with no indexable term is left out, as FTS5 leaves it."""
    literals = [
        text.tsquery_literal([phrase]) for phrase in await lexemes(db, text.match_phrases(match))
    ]
    return (" & " if '" AND "' in match else " | ").join(literals)
