"""The reads of the text channel: FTS5 BM25 search, term counts, and the identifier LIKE scan.

BM25 over an OR of phrases is a sum of one part per phrase, and a phrase adds nothing to a
memory that lacks it. So a memory's full score can be computed by a statement whose candidates
are only the memories matching some of the phrases (`match`), as long as the other phrases
(`rest`) are in the expression too: `(match) AND (rest)` scores the candidates that also hold
a phrase of `rest` with every phrase once, and `match` alone scores the others.
FTS5 counts every phrase of a statement's expression over the whole index once per statement
(its document frequency), which is cheap for a word and not for a phrase of common words: the
caller decides which phrases are worth adding (search/text.py).
"""

from __future__ import annotations

from typing import Any

from cortex_mcp.models import SearchFilters
from cortex_mcp.store.database import placeholders
from cortex_mcp.store.interfaces import DatabaseHandle


def filter_sql(filters: SearchFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """WHERE clause for what a search may return: every live memory, whatever its age (an
    expired working note is found, at archive weight, until the lifecycle archives it)."""
    owner = f"{alias}.agent_id = ?"
    if filters.include_shared:
        owner = f"({owner} OR {alias}.shared = 1)"
    clauses = [owner, f"{alias}.forgotten_at IS NULL"]
    params: list[Any] = [filters.agent_id]
    if not filters.include_superseded:
        clauses.append(f"{alias}.superseded_by IS NULL")
    if filters.layers:
        # a working note past its TTL is an archive memory until the lifecycle moves it
        clauses.append(
            f"(CASE WHEN {alias}.layer = 'working' AND {alias}.expires_at <= ? THEN 'archive'"
            f" ELSE {alias}.layer END) IN ({placeholders(filters.layers)})"
        )
        params.extend([filters.now, *(layer.value for layer in filters.layers)])
    if filters.categories:
        clauses.append(f"{alias}.category IN ({placeholders(filters.categories)})")
        params.extend(category.value for category in filters.categories)
    if filters.since is not None:
        clauses.append(f"{alias}.occurred_at >= ?")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append(f"{alias}.occurred_at < ?")
        params.append(filters.until)
    return " AND ".join(clauses), params


class TextReads:
    """Mixed into the memory store: the statements the text channel runs."""

    db: DatabaseHandle

    async def term_counts(self, phrases: list[str], cap: int) -> tuple[int, dict[str, int]]:
        """(highest memory seq, memories matching each FTS phrase, counted up to `cap`): one
        trip, and each count stops at `cap` so a common word costs no more than a rare one."""
        counts = ", ".join(
            "(SELECT COUNT(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?))"
            for _ in phrases
        )
        params: list[Any] = [value for phrase in phrases for value in (phrase, cap)]
        row = await self.db.fetchone(
            f"SELECT (SELECT COALESCE(MAX(seq), 0) FROM memories){', ' if counts else ''}{counts}",
            params,
        )
        assert row is not None
        return int(row[0]), {phrase: int(row[i + 1]) for i, phrase in enumerate(phrases)}

    async def own_rows(self, filters: SearchFilters, cap: int) -> int:
        """How many rows the agent owns (plus the shared ones when the filters take them),
        counted up to `cap` on the agent index: a bound on the rows a search of its own scores."""
        counts = ["(SELECT COUNT(*) FROM (SELECT 1 FROM memories WHERE agent_id = ? LIMIT ?) AS a)"]
        params: list[Any] = [filters.agent_id, cap]
        if filters.include_shared:
            counts.append(
                "(SELECT COUNT(*) FROM (SELECT 1 FROM memories WHERE shared = 1 LIMIT ?) AS s)"
            )
            params.append(cap)
        return int(await self.db.scalar(f"SELECT {' + '.join(counts)}", params) or 0)

    async def own_text_search(
        self, match: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        """Exact BM25 hits among the agent's own rows (and the shared ones when asked for), for
        an agent with few of them: FTS5 walks the matches and checks each rowid against the
        agent's set (the unary + keeps that a filter, not one FTS lookup per rowid, which
        would recount every phrase each time), and bm25 runs on the rows that pass."""
        where, params = filter_sql(filters)
        owned = "SELECT seq FROM memories WHERE agent_id = ?"
        owned_params: list[Any] = [filters.agent_id]
        if filters.include_shared:
            owned += " UNION ALL SELECT seq FROM memories WHERE shared = 1"
        rows = await self.db.fetchall(
            "SELECT m.id, r.score FROM (SELECT rowid, bm25(memories_fts) AS score"
            f" FROM memories_fts WHERE memories_fts MATCH ? AND +rowid IN ({owned})) AS r"
            f" CROSS JOIN memories m ON m.seq = r.rowid WHERE {where}"
            " ORDER BY r.score, m.seq DESC LIMIT ?",
            [match, *owned_params, *params, limit],
        )
        return [(str(row[0]), float(row[1])) for row in rows]

    async def text_search(
        self,
        match: str,
        filters: SearchFilters,
        limit: int,
        *,
        newest: int | None = None,
        rest: str = "",
    ) -> list[tuple[str, float]]:
        """FTS5 BM25 hits as (id, bm25); bm25 is lower-is-better.

        Candidates are the memories matching `match`; with `newest`, only the newest that
        many of them (the caller's bound on the work: bm25 costs microseconds per row). The
        phrases of `rest` add to every candidate's score, as in `match OR rest`, without
        adding candidates. Without either, the FTS index alone ranks its top rows first (a
        join per match dominated at 100K memories) and only those are joined and filtered,
        the first `limit` that pass returned by the statement (not all of them, each a row
        built in Python); when too few of them pass (another agent's memories), every match
        is joined."""
        if newest is not None or rest:
            return await self._scored_candidates(match, filters, limit, newest, rest)
        fetch = limit * 4
        where, params = filter_sql(filters)
        # the first row (id NULL) says how many the index ranked; then the allowed ones
        rows = await self.db.fetchall(
            "WITH r AS MATERIALIZED (SELECT rowid, bm25(memories_fts) AS score"
            " FROM memories_fts WHERE memories_fts MATCH ? ORDER BY score LIMIT ?)"
            " SELECT NULL, (SELECT COUNT(*) FROM r) UNION ALL SELECT * FROM (SELECT m.id,"
            f" r.score FROM r CROSS JOIN memories m ON m.seq = r.rowid WHERE {where}"
            " ORDER BY r.score LIMIT ?)",
            [match, fetch, *params, limit],
        )
        ranked = next(int(row[1]) for row in rows if row[0] is None)
        hits = [(str(row[0]), float(row[1])) for row in rows if row[0] is not None]
        if len(hits) >= limit or ranked < fetch:
            return hits
        if filters.since is not None or filters.until is not None:
            return await self._within_period(match, filters, limit)
        rows = await self.db.fetchall(
            "SELECT m.id, bm25(memories_fts) AS score FROM memories_fts"
            " CROSS JOIN memories m ON m.seq = memories_fts.rowid"  # FTS drives the join
            f" WHERE memories_fts MATCH ? AND {where} ORDER BY score LIMIT ?",
            [match, *params, limit],
        )
        return [(str(row["id"]), float(row["score"])) for row in rows]

    async def _within_period(
        self, match: str, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        """BM25 hits among the memories of a period (`since`/`until`): FTS5 walks the matches
        and keeps the rowids the period's index range holds, so bm25 is computed for those
        only, not for every match of a common word."""
        where, params = filter_sql(filters)
        period, period_params = _period_rows(filters)
        rows = await self.db.fetchall(
            "SELECT m.id, r.score FROM (SELECT rowid, bm25(memories_fts) AS score"
            f" FROM memories_fts WHERE memories_fts MATCH ? AND +rowid IN ({period})) AS r"
            f" CROSS JOIN memories m ON m.seq = r.rowid WHERE {where}"
            " ORDER BY r.score, m.seq DESC LIMIT ?",
            [match, *period_params, *params, limit],
        )
        return [(str(row[0]), float(row[1])) for row in rows]

    async def _scored_candidates(
        self, match: str, filters: SearchFilters, limit: int, newest: int | None, rest: str
    ) -> list[tuple[str, float]]:
        where, params = filter_sql(filters)
        window, window_params = "", []
        if newest is not None:  # from the rowid of the newest-th newest candidate on
            window = (
                " AND rowid >= (SELECT COALESCE((SELECT rowid FROM memories_fts"
                " WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?), 0))"
            )
            window_params = [match, newest - 1]
        # every candidate scored by `match`; those holding a phrase of `rest` scored again by
        # `(match) AND (rest)`, which adds the rest's part: the lower bm25 is the full score
        scored = (
            "SELECT rowid, bm25(memories_fts) AS score FROM memories_fts"
            f" WHERE memories_fts MATCH ?{window}"
        )
        expressions = [match]
        if rest:  # (bm25 in a GROUP BY of one statement alone is refused: only with a union)
            expressions.append(f"({match}) AND ({rest})")
            scored = (
                f"SELECT rowid, MIN(score) AS score FROM ({scored} UNION ALL {scored})"
                " GROUP BY rowid"
            )
        rows = await self.db.fetchall(
            f"SELECT m.id, r.score FROM ({scored}) AS r CROSS JOIN memories m ON m.seq = r.rowid"
            f" WHERE {where} ORDER BY r.score, m.seq DESC LIMIT ?",
            [*(v for e in expressions for v in (e, *window_params)), *params, limit],
        )
        return [(str(row[0]), float(row[1])) for row in rows]

    async def like_search(
        self, patterns: list[str], filters: SearchFilters, limit: int, *, newest: int | None = None
    ) -> list[str]:
        """Substring matches for what the FTS tokenizer cannot split (newest first); with
        `newest`, only among the newest that many memories of the file (a bound on the scan)."""
        if not patterns:
            return []
        where, params = filter_sql(filters)
        likes = " OR ".join("m.content LIKE ? ESCAPE '\\'" for _ in patterns)
        window = ""
        if newest is not None:
            window = " AND m.seq > (SELECT COALESCE(MAX(seq), 0) FROM memories) - ?"
            params = [*params, newest]
        rows = await self.db.fetchall(
            f"SELECT m.id FROM memories m WHERE ({likes}) AND {where}{window}"
            " ORDER BY m.seq DESC LIMIT ?",
            [*(like_pattern(p) for p in patterns), *params, limit],
        )
        return [str(row[0]) for row in rows]


def _period_rows(filters: SearchFilters) -> tuple[str, list[Any]]:
    """The seqs of the agent's memories (and the shared ones when the filters take them)
    whose own time is in the filters' period: a range on (agent_id, occurred_at)."""
    bounds, values = [], []
    if filters.since is not None:
        bounds.append(" AND occurred_at >= ?")
        values.append(filters.since)
    if filters.until is not None:
        bounds.append(" AND occurred_at < ?")
        values.append(filters.until)
    within = "".join(bounds)
    sql = f"SELECT seq FROM memories WHERE agent_id = ?{within}"
    params: list[Any] = [filters.agent_id, *values]
    if filters.include_shared:
        sql += f" UNION ALL SELECT seq FROM memories WHERE shared = 1{within}"
        params += values
    return sql, params


def on_primary_key(where: str) -> str:
    """Unary + keeps the planner on the key lookup instead of scanning an agent's rows."""
    return where.replace("m.agent_id =", "+m.agent_id =")


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
