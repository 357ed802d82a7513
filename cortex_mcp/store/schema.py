"""Numbered migrations; the version lives in the database (``PRAGMA user_version``).

Each migration is a list of statements run in one ``BEGIN IMMEDIATE`` transaction, so two
processes starting on a fresh file do not both apply it.
"""

from __future__ import annotations

# seq is memories.seq; priority is the memory's access count (kept current by a trigger)
EMBEDDING_QUEUE: list[str] = [
    "CREATE TABLE IF NOT EXISTS embedding_queue ("
    "seq INTEGER PRIMARY KEY, priority INTEGER NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS idx_embedding_queue_order ON embedding_queue(priority, seq)",
    "INSERT OR IGNORE INTO embedding_queue (seq, priority)"
    " SELECT m.seq, m.access_count FROM memories m WHERE m.forgotten_at IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id)",
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_new_memory AFTER INSERT ON memories
    WHEN NEW.forgotten_at IS NULL BEGIN
        INSERT OR IGNORE INTO embedding_queue (seq, priority) VALUES (NEW.seq, NEW.access_count);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_deleted_memory AFTER DELETE ON memories BEGIN
        DELETE FROM embedding_queue WHERE seq = OLD.seq;
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_forgotten AFTER UPDATE OF forgotten_at ON memories
    WHEN NEW.forgotten_at IS NOT NULL BEGIN
        DELETE FROM embedding_queue WHERE seq = NEW.seq;
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_restored AFTER UPDATE OF forgotten_at ON memories
    WHEN NEW.forgotten_at IS NULL AND OLD.forgotten_at IS NOT NULL BEGIN
        INSERT OR IGNORE INTO embedding_queue (seq, priority)
        SELECT NEW.seq, NEW.access_count
        WHERE NOT EXISTS (SELECT 1 FROM memory_vectors WHERE memory_id = NEW.id);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_recalled AFTER UPDATE OF access_count ON memories
    BEGIN
        UPDATE embedding_queue SET priority = NEW.access_count WHERE seq = NEW.seq;
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_embedded AFTER INSERT ON memory_vectors BEGIN
        DELETE FROM embedding_queue
        WHERE seq = (SELECT seq FROM memories WHERE id = NEW.memory_id);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS trg_queue_vector_dropped AFTER DELETE ON memory_vectors BEGIN
        INSERT OR IGNORE INTO embedding_queue (seq, priority)
        SELECT seq, access_count FROM memories
        WHERE id = OLD.memory_id AND forgotten_at IS NULL;
    END
    """,
]

VECTOR_ROWID_TOP = "vector_rowid_top"  # meta: the highest vector rowid deleted from the top
_ROWID_TOP = (
    f"(SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = '{VECTOR_ROWID_TOP}')"
)

VECTOR_ROWIDS_NEVER_REUSED: list[str] = [
    "CREATE TRIGGER IF NOT EXISTS memory_vectors_top_deleted AFTER DELETE ON memory_vectors"
    " WHEN OLD.rowid > COALESCE((SELECT MAX(rowid) FROM memory_vectors), 0)"
    f" BEGIN INSERT INTO meta (key, value) VALUES ('{VECTOR_ROWID_TOP}', OLD.rowid)"
    " ON CONFLICT (key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), excluded.value); END",
    "CREATE TRIGGER IF NOT EXISTS memory_vectors_fresh_rowid AFTER INSERT ON memory_vectors"
    f" WHEN NEW.rowid <= {_ROWID_TOP} BEGIN UPDATE memory_vectors SET rowid = {_ROWID_TOP} + 1"
    " WHERE rowid = NEW.rowid; END",
]

# kind: 'agent' (cortex-mcp token create) or 'session' (the dashboard's); a live agent
# token's name is unique; sessions are found by the token they were opened with (parent)
AGENT_TOKENS: list[str] = [
    """
    CREATE TABLE IF NOT EXISTS agent_tokens (
        id           TEXT PRIMARY KEY,
        kind         TEXT NOT NULL,
        name         TEXT,
        agent_id     TEXT,
        salt         TEXT NOT NULL,
        hash         TEXT NOT NULL,
        parent       TEXT,
        created_at   TEXT NOT NULL,
        last_used_at TEXT,
        expires_at   TEXT,
        revoked_at   TEXT
    )
    """,
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_agent_tokens_live_name ON agent_tokens(name)"
    " WHERE kind = 'agent' AND revoked_at IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_agent_tokens_parent ON agent_tokens(parent)",
]

OCCURRED_AT: list[str] = [
    "ALTER TABLE memories ADD COLUMN occurred_at TEXT",
    "UPDATE memories SET occurred_at = created_at",
    "CREATE INDEX IF NOT EXISTS idx_memories_agent_occurred ON memories(agent_id, occurred_at)",
    # a writer that does not name it (an older build's, a hand-made import) gets the stored time
    """
    CREATE TRIGGER IF NOT EXISTS trg_memories_occurred AFTER INSERT ON memories
    WHEN NEW.occurred_at IS NULL BEGIN
        UPDATE memories SET occurred_at = NEW.created_at WHERE seq = NEW.seq;
    END
    """,
]

# Entities (store/entities.py): who or what memories are about, per agent. A name is unique
# per agent by its key (`tokenize.normalize_name`); an alias key may name several entities
# (then it links none: the resolution reports the candidates). A link holds one role per
# memory and entity; links and unresolved references go with their memory (a purge, a
# deletion) by cascade. The entity log keeps what each verb changed, enough to undo it.
ENTITIES: list[str] = [
    """
    CREATE TABLE IF NOT EXISTS entities (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        name          TEXT NOT NULL,
        name_key      TEXT NOT NULL,
        kind          TEXT NOT NULL,
        summary       TEXT NOT NULL DEFAULT '',
        first_seen    TEXT,
        last_seen     TEXT,
        mention_count INTEGER NOT NULL DEFAULT 0,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_entities_agent_key ON entities(agent_id, name_key)",
    """
    CREATE TABLE IF NOT EXISTS entity_aliases (
        entity_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        agent_id   TEXT NOT NULL,
        alias_key  TEXT NOT NULL,
        alias      TEXT NOT NULL,
        origin     TEXT NOT NULL CHECK (origin IN ('name', 'rule', 'user', 'llm')),
        speaker_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (entity_id, alias_key)
    )
    """,
    "CREATE INDEX IF NOT EXISTS idx_entity_aliases_key ON entity_aliases(agent_id, alias_key)",
    """
    CREATE TABLE IF NOT EXISTS memory_entities (
        memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        agent_id  TEXT NOT NULL,
        role      TEXT NOT NULL CHECK (role IN ('speaker', 'subject', 'mentioned')),
        PRIMARY KEY (memory_id, entity_id)
    )
    """,
    "CREATE INDEX IF NOT EXISTS idx_memory_entities_entity ON memory_entities(entity_id, memory_id)",
    """
    CREATE TABLE IF NOT EXISTS entity_unresolved (
        memory_id  TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        agent_id   TEXT NOT NULL,
        alias_key  TEXT NOT NULL,
        phrase     TEXT NOT NULL,
        role       TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (memory_id, alias_key)
    )
    """,
    "CREATE INDEX IF NOT EXISTS idx_entity_unresolved_agent ON entity_unresolved(agent_id, alias_key)",
    """
    CREATE TABLE IF NOT EXISTS entity_log (
        id          INTEGER PRIMARY KEY,
        agent_id    TEXT NOT NULL,
        action      TEXT NOT NULL,
        entity_ids  TEXT NOT NULL,
        details     TEXT NOT NULL DEFAULT '{}',
        executed_at TEXT NOT NULL,
        undone_at   TEXT
    )
    """,
    "CREATE INDEX IF NOT EXISTS idx_entity_log_agent ON entity_log(agent_id, id)",
]


# When a fact holds (engine/beliefs/validity.py): `valid_from` (NULL: its `occurred_at`),
# `valid_to` (NULL while current), its status, and the slot it states; the single-valued facts
# each memory states, by slot, and how far each agent's memories have been read for them.
VALIDITY: list[str] = [
    "ALTER TABLE memories ADD COLUMN valid_from TEXT",
    "ALTER TABLE memories ADD COLUMN valid_to TEXT",
    "ALTER TABLE memories ADD COLUMN status TEXT NOT NULL DEFAULT 'current'",
    "ALTER TABLE memories ADD COLUMN slot TEXT",
    "CREATE INDEX IF NOT EXISTS idx_memories_agent_seq ON memories(agent_id, seq)",
    """
    CREATE TABLE memory_slots (
        agent_id  TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        holder    TEXT NOT NULL,
        slot      TEXT NOT NULL,
        value     TEXT NOT NULL,
        speaker   TEXT,
        PRIMARY KEY (memory_id, holder, slot)
    )
    """,
    "CREATE INDEX idx_memory_slots_key ON memory_slots(agent_id, holder, slot)",
    "CREATE TABLE validity_progress (agent_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
    """
    CREATE TRIGGER IF NOT EXISTS trg_slots_deleted_memory AFTER DELETE ON memories BEGIN
        DELETE FROM memory_slots WHERE memory_id = OLD.id;
    END
    """,
]

BELIEFS: list[str] = [
    """
    CREATE TABLE beliefs (
        id               TEXT PRIMARY KEY,
        agent_id         TEXT NOT NULL,
        holder           TEXT NOT NULL,
        holder_name      TEXT NOT NULL,
        memory_id        TEXT NOT NULL,
        statement        TEXT NOT NULL,
        stated           REAL,
        confidence       REAL NOT NULL,
        for_count        INTEGER NOT NULL DEFAULT 0,
        against_count    INTEGER NOT NULL DEFAULT 0,
        last_evidence_at TEXT,
        trend            TEXT NOT NULL DEFAULT 'new',
        revisions        INTEGER NOT NULL DEFAULT 0,
        history          TEXT NOT NULL DEFAULT '[]',
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_beliefs_holder ON beliefs(agent_id, holder)",
    "CREATE INDEX idx_beliefs_memory ON beliefs(memory_id)",
    """
    CREATE TABLE belief_evidence (
        belief_id TEXT NOT NULL REFERENCES beliefs(id) ON DELETE CASCADE,
        memory_id TEXT NOT NULL,
        agent_id  TEXT NOT NULL,
        supports  INTEGER NOT NULL,
        weight    REAL NOT NULL,
        at        TEXT NOT NULL,
        PRIMARY KEY (belief_id, memory_id)
    )
    """,
    "CREATE INDEX idx_belief_evidence_memory ON belief_evidence(memory_id)",
    "CREATE TABLE belief_progress (agent_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
]

# what `to_iso` writes at the range's edges; a shorter text is a year before 1000 (strftime's
# %Y wrote 999, not 0999)
_FIRST_MOMENT = "'1000-01-01T00:00:00.000000Z'"
_LAST_MOMENT = "'8999-12-31T23:59:59.999999Z'"
TIMES_INTO_RANGE = [
    statement
    for table, column in (
        ("memories", "occurred_at"),
        ("memories", "valid_from"),  # issue 34's validity, which starts at occurred_at
        ("memories", "valid_to"),
        ("turns", "said_at"),
    )
    for statement in (
        f"UPDATE {table} SET {column} = {_FIRST_MOMENT}"
        f" WHERE length({column}) < 27 OR {column} < {_FIRST_MOMENT}",
        f"UPDATE {table} SET {column} = {_LAST_MOMENT}"
        f" WHERE length({column}) >= 27 AND {column} > {_LAST_MOMENT}",
    )
]

REFLECT: list[str] = [
    """
    CREATE TABLE reflect_runs (
        id          TEXT PRIMARY KEY,
        agent_id    TEXT NOT NULL,
        through_seq INTEGER NOT NULL,
        plan        TEXT NOT NULL DEFAULT '{}',
        started_at  TEXT NOT NULL,
        finished_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_reflect_runs_agent ON reflect_runs(agent_id, through_seq)",
    """
    CREATE TABLE core_proposals (
        id         TEXT PRIMARY KEY,
        agent_id   TEXT NOT NULL,
        memory_id  TEXT NOT NULL,
        action     TEXT NOT NULL CHECK (action IN ('promote', 'archive')),
        reason     TEXT NOT NULL,
        status     TEXT NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'accepted', 'rejected')),
        created_at TEXT NOT NULL,
        decided_at TEXT
    )
    """,
    "CREATE INDEX idx_core_proposals_agent ON core_proposals(agent_id, status)",
]

MIGRATIONS: list[list[str]] = [
    # 1: the first full schema (docs/architecture.md, "Store")
    [
        """
        CREATE TABLE memories (
            seq           INTEGER PRIMARY KEY,
            id            TEXT NOT NULL UNIQUE,
            agent_id      TEXT NOT NULL,
            layer         TEXT NOT NULL CHECK (layer IN ('working', 'core', 'archive')),
            category      TEXT NOT NULL,
            content       TEXT NOT NULL,
            content_hash  TEXT NOT NULL,
            source        TEXT,
            importance    REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
            confidence    REAL NOT NULL DEFAULT 0.8 CHECK (confidence BETWEEN 0 AND 1),
            decay_score   REAL NOT NULL DEFAULT 1.0,
            access_count  INTEGER NOT NULL DEFAULT 0,
            last_accessed TEXT,
            created_at    TEXT NOT NULL,
            updated_at    TEXT NOT NULL,
            expires_at    TEXT,
            superseded_by TEXT,
            forgotten_at  TEXT,
            metadata      TEXT NOT NULL DEFAULT '{}'
        )
        """,
        "CREATE UNIQUE INDEX idx_memories_agent_hash ON memories(agent_id, content_hash)",
        "CREATE INDEX idx_memories_agent_layer ON memories(agent_id, layer, category)",
        "CREATE INDEX idx_memories_decay ON memories(layer, decay_score)",
        "CREATE INDEX idx_memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL",
        "CREATE INDEX idx_memories_superseded ON memories(superseded_by)"
        " WHERE superseded_by IS NOT NULL",
        # rowid = memories.seq; text is the content with CJK split into one-character tokens
        "CREATE VIRTUAL TABLE memories_fts USING fts5("
        "text, tokenize='porter unicode61 remove_diacritics 2')",
        """
        CREATE TABLE memory_vectors (
            memory_id  TEXT PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            model      TEXT NOT NULL,
            dim        INTEGER NOT NULL,
            vector     BLOB NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX idx_memory_vectors_model ON memory_vectors(model, dim)",
        """
        CREATE TABLE embedding_cache (
            content_hash TEXT NOT NULL,
            model        TEXT NOT NULL,
            dim          INTEGER NOT NULL,
            vector       BLOB NOT NULL,
            created_at   TEXT NOT NULL,
            PRIMARY KEY (content_hash, model)
        )
        """,
        """
        CREATE TABLE access_log (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id   TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            query       TEXT,
            rank        INTEGER,
            was_useful  INTEGER,
            accessed_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX idx_access_log_memory ON access_log(memory_id, accessed_at)",
        """
        CREATE TABLE lifecycle_log (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            action      TEXT NOT NULL,
            memory_ids  TEXT NOT NULL,
            details     TEXT NOT NULL DEFAULT '{}',
            executed_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX idx_lifecycle_log_time ON lifecycle_log(executed_at)",
        """
        CREATE TABLE relations (
            id               TEXT PRIMARY KEY,
            agent_id         TEXT NOT NULL,
            subject          TEXT NOT NULL,
            predicate        TEXT NOT NULL,
            object           TEXT NOT NULL,
            confidence       REAL NOT NULL DEFAULT 0.8,
            source_memory_id TEXT REFERENCES memories(id) ON DELETE SET NULL,
            created_at       TEXT NOT NULL,
            updated_at       TEXT NOT NULL
        )
        """,
        "CREATE INDEX idx_relations_subject ON relations(agent_id, subject)",
        "CREATE INDEX idx_relations_object ON relations(agent_id, object)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    # 2: content is stored verbatim from now on (normalisation only in content_hash and the
    # FTS text). Rows written before were stored normalised and the originals are gone: they
    # stay as they are, and the migration says so (MIGRATION_NOTES).
    [],
    # 3: the access log keeps a hash of each query instead of its text (cortex_query_key is
    # tokenize.query_key, registered on every connection); the text already logged is blanked.
    [
        "ALTER TABLE access_log ADD COLUMN query_hash TEXT",
        "UPDATE access_log SET query_hash = cortex_query_key(query), query = NULL"
        " WHERE query IS NOT NULL",
        "CREATE INDEX idx_access_log_query ON access_log(memory_id, query_hash)",
    ],
    # 4: lifecycle runs (resumable plans), the cross-process lease; archive no longer expires
    [
        """
        CREATE TABLE lifecycle_runs (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            scope       TEXT NOT NULL,
            run_at      TEXT NOT NULL,
            started_at  TEXT NOT NULL,
            finished_at TEXT,
            status      TEXT NOT NULL CHECK (status IN ('running', 'done')),
            next_phase  INTEGER NOT NULL DEFAULT 0,
            plan        TEXT NOT NULL,
            report      TEXT NOT NULL DEFAULT '{}'
        )
        """,
        "CREATE INDEX idx_lifecycle_runs_status ON lifecycle_runs(status, scope)",
        """
        CREATE TABLE leases (
            name        TEXT PRIMARY KEY,
            holder      TEXT NOT NULL,
            acquired_at TEXT NOT NULL,
            expires_at  TEXT NOT NULL
        )
        """,
        # the archive is kept until the lifecycle compresses it, never hidden by a TTL
        "UPDATE memories SET expires_at = NULL WHERE layer = 'archive'",
    ],
    # 5: memories an agent marks shared; other agents see them only when they opt in
    [
        "ALTER TABLE memories ADD COLUMN shared INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))",
        "CREATE INDEX idx_memories_shared ON memories(shared) WHERE shared = 1",
    ],
    # 6: ingest. A raw turn is kept (redacted) until its extraction is done, so nothing
    # accepted is lost to a crash; its hash makes a retried ingest add nothing. Profiles are
    # cached per agent with the user's manual edits kept apart. One row per relation triple.
    [
        """
        CREATE TABLE IF NOT EXISTS turns (
            seq               INTEGER PRIMARY KEY,
            id                TEXT NOT NULL UNIQUE,
            agent_id          TEXT NOT NULL,
            session_id        TEXT,
            turn_hash         TEXT NOT NULL,
            user_message      TEXT NOT NULL,
            assistant_message TEXT NOT NULL,
            status            TEXT NOT NULL CHECK (status IN ('pending', 'done')),
            outcome           TEXT,
            result            TEXT NOT NULL DEFAULT '{}',
            claimed_by        TEXT,
            claimed_at        TEXT,
            attempts          INTEGER NOT NULL DEFAULT 0,
            created_at        TEXT NOT NULL,
            updated_at        TEXT NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_turns_agent_hash ON turns(agent_id, turn_hash)",
        "CREATE INDEX IF NOT EXISTS idx_turns_pending ON turns(seq) WHERE status = 'pending'",
        """
        CREATE TABLE IF NOT EXISTS profiles (
            agent_id    TEXT PRIMARY KEY,
            generated   TEXT NOT NULL DEFAULT '{}',
            manual      TEXT NOT NULL DEFAULT '{}',
            fingerprint TEXT,
            built_by    TEXT,
            built_at    TEXT,
            updated_at  TEXT NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_relations_triple ON relations(agent_id, subject, predicate, object)",
    ],
    # 7: the dashboard's memory table pages by keyset on (sort column, seq) within one agent;
    # these keep the first view, its count and each page turn index walks at 100K memories
    [
        "CREATE INDEX IF NOT EXISTS idx_memories_agent_created ON memories(agent_id, created_at)",
        "CREATE INDEX IF NOT EXISTS idx_memories_agent_updated ON memories(agent_id, updated_at)",
        "CREATE INDEX IF NOT EXISTS idx_memories_agent_importance"
        " ON memories(agent_id, importance)",
        "CREATE INDEX IF NOT EXISTS idx_memories_agent_access ON memories(agent_id, access_count)",
        # the live rows only: the table's counts by agent, layer and category from the index
        "CREATE INDEX IF NOT EXISTS idx_memories_live ON memories(agent_id, layer, category)"
        " WHERE forgotten_at IS NULL AND superseded_by IS NULL",
    ],
    # 8: the embedding queue: live memories with no vector, most-recalled then newest first.
    # Triggers keep it true whoever writes (remember, import, forget, purge, re-summarise), so
    # the indexer reads its next batch from the top of one index instead of scanning memories.
    EMBEDDING_QUEUE,
    # 9: in-process vector indexes notice deletions (a purge, a cascade, another process)
    # from one counter instead of counting a million rows (search/vector.py)
    # (no row until the first deletion: a copy of the file carries the source's own)
    [
        "CREATE TRIGGER IF NOT EXISTS memory_vectors_deleted AFTER DELETE ON memory_vectors"
        " BEGIN INSERT INTO meta (key, value) VALUES ('vector_deletions', '1')"
        " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; END",
    ],
    # 10: a vector row's rowid is never used twice, as PostgreSQL's sequence never is. SQLite
    # gives a new row the highest rowid + 1, so a vector deleted from the top and written again
    # (a summary's new text) took its old rowid back, and an in-process index that had seen that
    # rowid kept the old vector (search/vector.py reads the rows above the highest it saw).
    # The highest rowid deleted from the top is kept; a row given one at or below it moves above.
    VECTOR_ROWIDS_NEVER_REUSED,
    # 11: agent tokens and dashboard sessions (store/tokens.py): a salt and a keyed hash each
    AGENT_TOKENS,
    # 12: a memory's own time (what it is about or when it was said), apart from when it was
    # stored; the rows written before get their stored time. Searches bound by a period
    # (`SearchFilters.since/until`) and a time window's candidates read it per agent.
    OCCURRED_AT,
    # 13: the moment a turn was said (a message's timestamp, a session's date), which the
    # memories written from it take as their own time; NULL: when it was received
    ["ALTER TABLE turns ADD COLUMN said_at TEXT"],
    # 14: the dashboard timeline counts live memories per day of occurred_at and layer from
    # this index alone (store/browse.py per_day): a GROUP BY on the expression walks it in
    # order, where the table scan sorted every row (100K memories: 360 ms -> 28 ms)
    [
        "CREATE INDEX IF NOT EXISTS idx_memories_live_day"
        " ON memories(agent_id, substr(occurred_at, 1, 10), layer)"
        " WHERE forgotten_at IS NULL AND superseded_by IS NULL",
    ],
    # 15: entities, their aliases, the links from memories to them, the references an
    # ambiguous alias left unresolved, and the log of the verbs that mend them
    ENTITIES,
    # 16: facts with a time of validity and single-valued slots (issue 34)
    VALIDITY,
    # 17: beliefs of a holder and the memories that are evidence for or against them (issue 34)
    BELIEFS,
    # 18: a time written before the range of valid moments was enforced (issue 32) and
    # outside it is moved to the range's nearest edge (models.EARLIEST_MOMENT,
    # END_OF_MOMENTS): reading it failed (a year of three digits) or what is reckoned from it
    # did (year 9999)
    TIMES_INTO_RANGE,
    # 19: reflect's runs (how far each agent's memories were reflected on, and the plan) and
    # the edits to core it proposes, accepted or rejected by a person
    REFLECT,
    # 20: what an agent token may do (issue 35): NULL, read and write; "memories:read", read
    # only (`token create --read-only`)
    ["ALTER TABLE agent_tokens ADD COLUMN scopes TEXT"],
]

# What a migration tells the user when it runs on a database that already holds memories.
MIGRATION_NOTES: dict[int, str] = {
    2: "content is now stored exactly as given; the %d memories written before keep the"
    " normalised text they were stored with (NFKC, whitespace collapsed): the originals are gone",
}

SCHEMA_VERSION = len(MIGRATIONS)
