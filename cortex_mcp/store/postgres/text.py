"""Text search on PostgreSQL with SQLite's behaviour: the same terms, the same BM25.

Indexing: a memory's text is split as SQLite's FTS5 index splits it (`tokenize.index_text`
puts CJK characters one per term; unicode61 then splits on anything that is not a letter or a
digit, folds case and drops diacritics); PostgreSQL stems each term (English Snowball, no stop
words dropped) and stores the terms with their positions in `memories.tsv`, their count in
`doc_len`.

Querying: the search layer's FTS5 expression (quoted phrases joined by OR, built from user text
by `search.text`) is read back into its phrases; each phrase is split the same way and its
lexemes become a `tsquery` of quoted lexemes joined by `<->` and `|`. No user text is ever
parsed as tsquery syntax: every lexeme is a run of letters and digits, quoted and escaped.

Ranking is FTS5's BM25 (k1 = 1.2, b = 0.75, idf floored at 1e-6), computed here from term
positions, each phrase's document frequency and the corpus totals in `text_stats`, so both
stores rank the same data the same way. The candidates are the memories the filters allow;
past `CANDIDATES` matches the cheaper `ts_rank` picks which ones BM25 scores.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

from cortex_mcp.tokenize import index_text

K1 = 1.2
B = 0.75
CANDIDATES = 2000  # matches scored by BM25 per query; more are pre-ranked by ts_rank
MAX_TOKEN_CHARS = 500  # longer runs are not indexed (FTS5 keeps them; nobody searches them)

_TOKEN = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')


def fts_tokens(text: str) -> list[str]:
    """Terms as FTS5's unicode61 tokenizer (remove_diacritics 2) yields them, in order."""
    decomposed = unicodedata.normalize("NFKD", index_text(text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return [token.lower() for token in _TOKEN.findall(plain)]


def indexable(tokens: list[str]) -> list[str]:
    return [token for token in tokens if len(token) <= MAX_TOKEN_CHARS]


def match_phrases(match: str) -> list[list[str]]:
    """The phrases of a `search.text` FTS5 expression ("a" OR "b c"), each as its tokens."""
    phrases = []
    for quoted in _PHRASE.findall(match):
        tokens = indexable(fts_tokens(quoted.replace('""', '"')))
        if tokens:
            phrases.append(tokens)
    return phrases


def tsquery_literal(phrases: list[list[str]]) -> str:
    """`'a' <-> 'b' | 'c'` from lexemes: each quoted and escaped, never interpreted."""
    return " | ".join(
        "(" + " <-> ".join(_quote(lexeme) for lexeme in phrase) + ")" for phrase in phrases
    )


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


@lru_cache(maxsize=4096)
def parse_positions(text: str) -> tuple[int, ...]:
    """PostgreSQL's text form of a positions array ('{1,5}') as numbers."""
    return tuple(int(p) for p in text.strip("{}").split(",") if p)


def phrase_frequency(phrase: list[str], positions: dict[str, tuple[int, ...]]) -> int:
    """How often the lexemes of `phrase` stand next to each other, in order."""
    first = positions.get(phrase[0], ())
    if len(phrase) == 1:
        return len(first)
    rest = [set(positions.get(lexeme, ())) for lexeme in phrase[1:]]
    return sum(1 for p in first if all(p + i + 1 in rest[i] for i in range(len(rest))))


def idf(docs: int, with_term: int) -> float:
    value = math.log((docs - with_term + 0.5) / (with_term + 0.5))
    return value if value > 0 else 1e-6


def bm25(
    phrases: list[list[str]],
    frequencies: list[int],
    positions: dict[str, tuple[int, ...]],
    doc_len: int,
    docs: int,
    avg_len: float,
) -> float:
    """FTS5's bm25(): negative, lower is better."""
    score = 0.0
    norm = K1 * (1 - B + B * doc_len / avg_len) if avg_len > 0 else K1
    for phrase, with_term in zip(phrases, frequencies, strict=True):
        tf = phrase_frequency(phrase, positions)
        if tf:
            score += idf(docs, with_term) * tf * (K1 + 1) / (tf + norm)
    return -score
