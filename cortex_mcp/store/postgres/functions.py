"""The SQL functions of the PostgreSQL schema (its first migration creates them): text
search with SQLite's FTS5 behaviour, and a few of SQLite's own functions with SQLite's meaning,
so SQL the two stores share runs on both."""

from __future__ import annotations

import unicodedata


def _accent_table() -> tuple[str, str]:
    """Latin letters with diacritics and their plain letter, as FTS5's remove_diacritics
    folds them (PostgreSQL's unaccent is an extension a server may not have)."""
    accented, plain = [], []
    for code in range(0xC0, 0x250):
        char = chr(code).lower()
        base = unicodedata.normalize("NFKD", char)[:1]
        if char not in accented and base.isascii() and base.isalpha() and base != char:
            accented.append(char)
            plain.append(base)
    return "".join(accented), "".join(plain)


_ACCENTED, _PLAIN = _accent_table()


# Text search: English stemming without a stop-word list (SQLite's FTS5 keeps every word).
TEXT_SEARCH = [
    "CREATE TEXT SEARCH DICTIONARY cortex_stem (TEMPLATE = snowball, Language = english)",
    """
    CREATE FUNCTION cortex_lexemes(tokens TEXT[]) RETURNS TEXT[]
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT COALESCE(array_agg(COALESCE((ts_lexize('cortex_stem', t))[1], t) ORDER BY i),
                        '{}')
        FROM unnest(tokens) WITH ORDINALITY AS u(t, i)
    $$
    """,
    # the terms at their positions (1, 2, ...), built from lexemes: never parsed from text
    """
    CREATE FUNCTION cortex_tsvector(tokens TEXT[]) RETURNS TSVECTOR
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT COALESCE(string_agg(quoted || ':' || positions, ' '), '')::tsvector FROM (
            SELECT '''' || replace(replace(l, E'\\\\', E'\\\\\\\\'), '''', '''''') || ''''
                       AS quoted,
                   string_agg(LEAST(i, 16383)::text, ',' ORDER BY i) AS positions
            FROM unnest(cortex_lexemes(tokens)) WITH ORDINALITY AS u(l, i)
            WHERE octet_length(l) BETWEEN 1 AND 2000
            GROUP BY l
        ) AS lexemes
    $$
    """,
    # SQLite's FTS5 table, as the shared stores write it (`INSERT INTO memories_fts(rowid,
    # text)`, `DELETE ... WHERE rowid = ?`, 'optimize'): a view whose triggers keep
    # memories.tsv. Its text is split by PostgreSQL (letters and digits, case folded, accents
    # kept); the remember path splits in Python instead (`text.fts_tokens`, accents dropped).
    # Migration 5 (schema.py `_ONE_SPLIT`) drops this split and `cortex_match`: only
    # Python's remains.
    f"""
    CREATE FUNCTION cortex_tokens(body TEXT) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT array_remove(regexp_split_to_array(
            translate(lower(body), '{_ACCENTED}', '{_PLAIN}'), '[^[:alnum:]]+'), '')
    $$
    """,
    "CREATE VIEW memories_fts AS SELECT seq AS rowid, NULL::text AS text,"
    " NULL::text AS memories_fts FROM memories",
    """
    CREATE FUNCTION cortex_fts_write() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        terms TEXT[];
    BEGIN
        IF TG_OP = 'DELETE' THEN
            UPDATE memories SET tsv = ''::tsvector, doc_len = 0 WHERE seq = OLD.rowid;
            RETURN OLD;
        END IF;
        IF NEW.memories_fts IS NULL THEN  -- not a command such as 'optimize'
            terms := cortex_tokens(NEW.text);
            UPDATE memories SET tsv = cortex_tsvector(terms), doc_len = cardinality(terms)
            WHERE seq = NEW.rowid;
        END IF;
        RETURN NEW;
    END $$
    """,
    "CREATE TRIGGER memories_fts_write INSTEAD OF INSERT OR DELETE ON memories_fts"
    " FOR EACH ROW EXECUTE FUNCTION cortex_fts_write()",
    # an FTS5 expression of the search layer ("a b" AND "c", or OR) as a tsquery: each quoted
    # phrase split into terms, stemmed and quoted again; nothing in it is read as syntax
    r"""
    CREATE FUNCTION cortex_match(expression TEXT) RETURNS TSQUERY
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT COALESCE(string_agg(phrase, CASE WHEN expression LIKE '%" AND "%'
                                                THEN ' & ' ELSE ' | ' END ORDER BY n), '')::tsquery
        FROM (
            SELECT n, '(' || string_agg(
                       '''' || replace(replace(l, E'\\', E'\\\\'), '''', '''''') || '''',
                       ' <-> ' ORDER BY i) || ')' AS phrase
            FROM regexp_matches(expression, '"((?:[^"]|"")*)"', 'g') WITH ORDINALITY AS m(p, n),
                 unnest(cortex_lexemes(cortex_tokens(replace(m.p[1], '""', '"'))))
                     WITH ORDINALITY AS u(l, i)
            GROUP BY n
        ) AS phrases
    $$
    """,
    # BM25's corpus totals, spread over 64 rows so concurrent writers rarely meet on one
    "CREATE TABLE text_stats (slot INTEGER PRIMARY KEY, docs BIGINT NOT NULL,"
    " tokens BIGINT NOT NULL)",
    "INSERT INTO text_stats SELECT g, 0, 0 FROM generate_series(0, 63) AS g",
    """
    CREATE FUNCTION cortex_text_stats() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE text_stats SET docs = docs - 1, tokens = tokens - OLD.doc_len
            WHERE slot = OLD.seq % 64;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            UPDATE text_stats SET docs = docs + 1, tokens = tokens + NEW.doc_len
            WHERE slot = NEW.seq % 64;
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER memories_text_stats AFTER INSERT OR DELETE OR UPDATE OF doc_len"
    " ON memories FOR EACH ROW EXECUTE FUNCTION cortex_text_stats()",
]

# SQLite's functions with SQLite's meaning, for the SQL the two stores share.
SQLITE_FUNCTIONS = [
    # the shared stores look for sqlite-vec's table here; PostgreSQL has none
    "CREATE VIEW sqlite_master AS SELECT NULL::text AS type, NULL::text AS name WHERE false",
    """
    CREATE FUNCTION cortex_json_path(path TEXT) RETURNS TEXT[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN path = '$' THEN '{}'::text[]
                    ELSE string_to_array(substr(path, 3), '.') END
    $$
    """,
    """
    CREATE FUNCTION json_extract(doc TEXT, path TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT doc::jsonb #>> cortex_json_path(path)
    $$
    """,
    """
    CREATE FUNCTION json_set(doc TEXT, path TEXT, value TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT jsonb_set(doc::jsonb, cortex_json_path(path), to_jsonb(value))::text
    $$
    """,
    """
    CREATE FUNCTION json_remove(doc TEXT, path TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN doc::jsonb #> cortex_json_path(path) IS NULL THEN doc
                    ELSE (doc::jsonb #- cortex_json_path(path))::text END
    $$
    """,
    """
    CREATE FUNCTION json_each(doc TEXT, path TEXT DEFAULT '$')
    RETURNS TABLE (key TEXT, value TEXT)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        WITH target AS (SELECT doc::jsonb #> cortex_json_path(path) AS j)
        SELECT (a.i - 1)::text, a.v FROM target,
            jsonb_array_elements_text(CASE WHEN jsonb_typeof(j) = 'array' THEN j
                                           ELSE '[]'::jsonb END) WITH ORDINALITY AS a(v, i)
        UNION ALL
        SELECT o.key, o.value FROM target,
            jsonb_each_text(CASE WHEN jsonb_typeof(j) = 'object' THEN j
                                 ELSE '{}'::jsonb END) AS o
    $$
    """,
    """
    CREATE FUNCTION max(a DOUBLE PRECISION, b DOUBLE PRECISION) RETURNS DOUBLE PRECISION
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT GREATEST(a, b) $$
    """,
    """
    CREATE FUNCTION min(a DOUBLE PRECISION, b DOUBLE PRECISION) RETURNS DOUBLE PRECISION
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT LEAST(a, b) $$
    """,
]

# SQLite's migration 8: the embedding queue (live memories with no vector; priority = access
# count), kept by triggers whoever writes
