"""The text channel: BM25 over the full-text index, within budgets that keep a query on a
large index fast, then identifier substrings (LIKE) when BM25 finds too few."""

from __future__ import annotations

import time

from cortex_mcp.models import SearchFilters
from cortex_mcp.search.text import TextQuery, term_costs, within_budget, words_of
from cortex_mcp.store.interfaces import MemoryStorage

# FTS5 computes bm25 for every row a query matches before it can sort (microseconds each):
# past this many, a query's candidates are the memories matching its rarest terms only
# (search/text.py within_budget). An index this small is always searched exactly, so
# rankings on small data never change.
FTS_ROW_BUDGET = 4000
# The other terms still score every candidate while the index entries FTS5 reads for them fit
# this (bm25 counts each term's documents once per statement, ~0.2 us an entry: ~12 ms here).
FTS_SCAN_BUDGET = 60_000
LIKE_SCAN_ROWS = 50_000  # an identifier's substring scan reads at most the newest rows
# An index seen within the row budget is searched exactly without counting its terms again
# for this long. The size only grows, and an exact search is right at any size: if another
# process grew the index past the budget meanwhile, a search costs more, never ranks worse.
SIZE_RECHECK_S = 1.0

TextHits = list[tuple[str, float | None]]  # (memory id, bm25; None for a LIKE-only hit)


class TextChannel:
    def __init__(self, memories: MemoryStorage) -> None:
        self.memories = memories
        self.row_budget = FTS_ROW_BUDGET
        self.scan_budget = FTS_SCAN_BUDGET
        self._size_seen: tuple[int, float] = (0, -SIZE_RECHECK_S)  # (index size, when)

    async def hits(
        self, query: TextQuery, filters: SearchFilters, pool: int, limit: int
    ) -> TextHits:
        hits: TextHits = []
        if not query.empty and self._known_small():
            hits.extend(await self.memories.text_search(query.match, filters, pool))
        elif not query.empty:
            quoted = query.quoted
            budget, scan = self.row_budget, self.scan_budget
            size, rows, costs = await self._term_counts(quoted, max(budget, scan) + 1)
            self._size_seen = (size, time.monotonic())
            if size <= budget:  # a small index: every term, every row, exactly
                hits.extend(await self.memories.text_search(query.match, filters, pool))
            elif await self.memories.own_rows(filters, budget + 1) <= budget:
                # an agent with few memories in a large file: all of them, exactly
                hits.extend(await self.memories.own_text_search(query.match, filters, pool))
            elif held := {term: n for term, n in rows.items() if n}:
                # a term no memory holds adds nothing to any score, and finding that out again
                # costs (PostgreSQL rechecks every row holding a phrase's words)
                bounded = within_budget(held, budget, costs, scan)
                hits.extend(
                    await self.memories.text_search(
                        bounded.match, filters, pool, newest=bounded.newest, rest=bounded.rest
                    )
                )
        if len(hits) < limit and query.like_patterns:
            seen = {memory_id for memory_id, _ in hits}
            found = await self.memories.like_search(
                query.like_patterns, filters, pool, newest=LIKE_SCAN_ROWS
            )
            for memory_id in found:
                if memory_id not in seen:
                    hits.append((memory_id, None))
        return hits

    def _known_small(self) -> bool:
        size, seen = self._size_seen
        return size <= self.row_budget and time.monotonic() - seen < SIZE_RECHECK_S

    async def _term_counts(
        self, quoted: list[str], cap: int
    ) -> tuple[int, dict[str, int], dict[str, int]]:
        """(index size, rows each term matches, index entries FTS5 reads to count it). A phrase
        ("video game", a CJK bigram) matches far fewer rows than its words, but reading it
        reads both words' lists: its rows are counted only up to what the row budget needs."""
        words = list(dict.fromkeys(w for term in quoted for w in words_of(term)))
        size, word_counts = await self.memories.term_counts(words, cap)
        phrases = [term for term in quoted if term not in word_counts]
        rows = dict(word_counts)
        if phrases and size > self.row_budget:
            _, phrase_counts = await self.memories.term_counts(phrases, self.row_budget + 1)
            rows.update(phrase_counts)
        costs = term_costs(quoted, word_counts)
        return size, {term: rows.get(term, 0) for term in quoted}, costs
