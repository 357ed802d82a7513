"""BM25's document counts on PostgreSQL, kept rather than counted per query (schema 6, 7).

How many memories hold a word, or two words next to each other, was counted over every row
holding them: GIN finds the rows, but each one's heap tuple is then visited (and for a
phrase, checked for the words' positions), about 7 microseconds a row. A common word matches
100K+ rows at 1M memories. Triggers on `memories` keep the counts in `text_terms` and
`text_pairs`, each spread over 64 slots by the memory's seq (as `text_stats` is), so two
concurrent writers rarely update one row; a bulk copy switches the triggers off and computes
the tables from the rows at the end (`store/postgres/target.py`).
"""

from __future__ import annotations

_TEXT = 'TEXT COLLATE "C"'

# the tables computed from every row's index (by the migrations, and after a bulk copy)
TEXT_TERMS_FROM_ROWS = (
    "INSERT INTO text_terms (lexeme, slot, docs) SELECT lexeme, seq % 64, COUNT(*)"
    " FROM memories, unnest(tsvector_to_array(tsv)) AS lexeme GROUP BY 1, 2"
)
TEXT_PAIRS_FROM_ROWS = (
    "INSERT INTO text_pairs (lexeme, following, slot, docs)"
    " SELECT p.lexeme, p.following, m.seq % 64, COUNT(*)"
    " FROM memories AS m, cortex_pairs(m.tsv) AS p GROUP BY 1, 2, 3"
)


# How many memories hold each lexeme
TEXT_TERMS = [
    f"CREATE TABLE text_terms (lexeme {_TEXT} NOT NULL, slot INTEGER NOT NULL,"
    " docs BIGINT NOT NULL, PRIMARY KEY (lexeme, slot))",
    """
    CREATE FUNCTION cortex_text_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.tsv = NEW.tsv THEN
            RETURN NULL;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE text_terms SET docs = docs - 1
            WHERE slot = OLD.seq % 64 AND lexeme = ANY(tsvector_to_array(OLD.tsv));
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO text_terms (lexeme, slot, docs)
            SELECT lexeme, NEW.seq % 64, 1 FROM unnest(tsvector_to_array(NEW.tsv)) AS lexeme
            ORDER BY lexeme
            ON CONFLICT (lexeme, slot) DO UPDATE SET docs = text_terms.docs + 1;
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER memories_text_terms AFTER INSERT OR DELETE OR UPDATE OF tsv"
    " ON memories FOR EACH ROW EXECUTE FUNCTION cortex_text_terms()",
    TEXT_TERMS_FROM_ROWS,
    "ANALYZE text_terms",
]

# How many memories hold each pair of lexemes next to each other: a two-word phrase ("video
# game", a CJK bigram). GIN keeps no positions: counting one checked every row holding both
# words (14,381 rows at 1M memories for a bigram found in none).
TEXT_PAIRS = [
    f"CREATE TABLE text_pairs (lexeme {_TEXT} NOT NULL, following {_TEXT} NOT NULL,"
    " slot INTEGER NOT NULL, docs BIGINT NOT NULL, PRIMARY KEY (lexeme, following, slot))",
    # the distinct pairs a `tsv @@ 'a <-> b'` finds in a row: positions one apart
    """
    CREATE FUNCTION cortex_pairs(tsv tsvector) RETURNS TABLE (lexeme text, following text)
    LANGUAGE sql IMMUTABLE AS $$
        WITH p AS (SELECT u.lexeme, pos FROM unnest(tsv) AS u, unnest(u.positions) AS pos)
        SELECT DISTINCT a.lexeme, b.lexeme FROM p AS a JOIN p AS b ON b.pos = a.pos + 1
    $$
    """,
    """
    CREATE FUNCTION cortex_text_pairs() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.tsv = NEW.tsv THEN
            RETURN NULL;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE text_pairs t SET docs = t.docs - 1 FROM cortex_pairs(OLD.tsv) AS p
            WHERE t.slot = OLD.seq % 64 AND t.lexeme = p.lexeme AND t.following = p.following;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO text_pairs (lexeme, following, slot, docs)
            SELECT p.lexeme, p.following, NEW.seq % 64, 1 FROM cortex_pairs(NEW.tsv) AS p
            ORDER BY 1, 2
            ON CONFLICT (lexeme, following, slot) DO UPDATE SET docs = text_pairs.docs + 1;
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER memories_text_pairs AFTER INSERT OR DELETE OR UPDATE OF tsv"
    " ON memories FOR EACH ROW EXECUTE FUNCTION cortex_text_pairs()",
    TEXT_PAIRS_FROM_ROWS,
    "ANALYZE text_pairs",
]
