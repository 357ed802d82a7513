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
from collections.abc import Iterable, Sequence
from typing import Any

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


def idf(docs: int, with_term: int) -> float:
    value = math.log((docs - with_term + 0.5) / (with_term + 0.5))
    return value if value > 0 else 1e-6


def rank(phrases: list[list[str]], rows: Iterable[Sequence[Any]]) -> list[tuple[str, float]]:
    """(id, bm25) of the memories matching, best (lowest) first and equal scores oldest first
    (as FTS5 gives them), from the rows of the text query: per candidate (id, seq, doc_len,
    its tsvector as text), and one row (NULL, NULL, NULL, '{documents, tokens, documents
    holding each phrase}').

    FTS5's bm25() with its arithmetic in its order, computed phrase by phrase over the
    candidates holding the phrase's first lexeme (a recall scores hundreds of candidates)."""
    lexemes = sorted({lexeme for phrase in phrases for lexeme in phrase})
    lengths: dict[str, int] = {}
    order: dict[str, int] = {}
    holders: dict[str, dict[str, list[int]]] = {lexeme: {} for lexeme in lexemes}
    corpus: list[int] = []
    for memory_id, seq, doc_len, vector in rows:
        if memory_id is None:
            corpus = [int(n) if n.isdigit() else 0 for n in vector.strip("{}").split(",")]
            continue
        lengths[memory_id] = doc_len
        order[memory_id] = seq
        for lexeme, positions in lexeme_positions(vector, lexemes).items():
            holders[lexeme][memory_id] = positions
    if not lengths or not corpus:
        return []
    docs, tokens, frequencies = corpus[0], corpus[1], corpus[2:]
    avg_len = tokens / docs if docs else 0.0
    norms = {
        memory_id: K1 * (1 - B + B * doc_len / avg_len) if avg_len > 0 else K1
        for memory_id, doc_len in lengths.items()
    }
    scores = dict.fromkeys(lengths, 0.0)
    for phrase, with_term in zip(phrases, frequencies, strict=True):
        weight = idf(docs, with_term)
        for memory_id, tf in phrase_frequencies(phrase, holders).items():
            scores[memory_id] += weight * ((tf * (K1 + 1)) / (tf + norms[memory_id]))
    ranked = [(memory_id, -score) for memory_id, score in scores.items() if score > 0]
    ranked.sort(key=lambda hit: (hit[1], order[hit[0]]))
    return [(str(memory_id), score) for memory_id, score in ranked]


def lexeme_positions(vector: str, lexemes: list[str]) -> dict[str, list[int]]:
    """The positions of these lexemes in a tsvector's text form (`'a':1,4 'b':2`). Lexemes
    are runs of letters and digits, so each is written quoted as it is, never escaped."""
    found = {}
    text = " " + vector
    for lexeme in lexemes:
        key = f" '{lexeme}':"
        start = text.find(key)
        if start < 0:
            continue
        start += len(key)
        end = text.find(" ", start)
        found[lexeme] = [int(p) for p in text[start : end if end >= 0 else None].split(",")]
    return found


def phrase_frequencies(
    phrase: list[str], holders: dict[str, dict[str, list[int]]]
) -> dict[str, int]:
    """memory id -> how often the lexemes of `phrase` stand next to each other, in order."""
    first = holders.get(phrase[0], {})
    if len(phrase) == 1:
        return {memory_id: len(positions) for memory_id, positions in first.items()}
    rest = [holders.get(lexeme, {}) for lexeme in phrase[1:]]
    found = {}
    for memory_id, positions in first.items():
        following = [set(other.get(memory_id, ())) for other in rest]
        if all(following):
            tf = sum(
                1 for p in positions if all(p + i + 1 in following[i] for i in range(len(rest)))
            )
            if tf:
                found[memory_id] = tf
    return found
