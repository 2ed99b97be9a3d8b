"""Named, ordered schema migrations. Append only: never edit one that has shipped."""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE projects(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            root TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        );
        -- Tier 1: every conversation message, verbatim (`content` is the JSON the client sent).
        CREATE TABLE messages(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id INTEGER NOT NULL REFERENCES projects(id),
            session_id TEXT NOT NULL,
            msg_id TEXT NOT NULL,
            role TEXT NOT NULL,
            harness TEXT,
            content TEXT NOT NULL,
            text TEXT NOT NULL,
            tool_name TEXT,
            tool_call_id TEXT,
            created_at TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            UNIQUE(session_id, msg_id)
        );
        CREATE INDEX messages_by_project ON messages(project_id, id);
        -- Workspace files as last indexed (the files themselves are the truth).
        CREATE TABLE files(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id INTEGER NOT NULL REFERENCES projects(id),
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            indexed_at TEXT NOT NULL,
            UNIQUE(project_id, path)
        );
        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX chunks_by_file ON chunks(file_id);
        -- Changes the derived indexes have not absorbed yet, written in the same transaction
        -- as the rows they describe, so an index can always catch up after a crash.
        CREATE TABLE index_outbox(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
            kind TEXT NOT NULL,
            key INTEGER NOT NULL,
            project_id INTEGER NOT NULL
        );
        """,
    ),
    (
        "0002_writer_epochs_and_applied_ops",
        """
        -- One row per writer election. `commits` and `last_commit_ns` are bumped by every
        -- write transaction of that epoch, so the record itself shows that no epoch ever
        -- committed after its successor was claimed.
        CREATE TABLE epochs(
            epoch INTEGER PRIMARY KEY,
            pid INTEGER NOT NULL,
            claimed_at TEXT NOT NULL,
            claimed_ns INTEGER NOT NULL,
            commits INTEGER NOT NULL DEFAULT 0,
            last_commit_ns INTEGER
        );
        -- Operations spooled by followers that the writer has applied, keyed by operation
        -- id, written in the same transaction as the rows they produced: exactly once.
        CREATE TABLE applied_ops(
            op_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            epoch INTEGER NOT NULL,
            applied_at TEXT NOT NULL,
            result TEXT NOT NULL
        );
        """,
    ),
    (
        "0003_bitemporal_facts",
        """
        -- Fact rows are a replay of the journal and of workspace notes (wiped and rebuilt by
        -- a replay). `eff_*` hold their resolution as currently known.
        CREATE TABLE facts(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            fact_id TEXT NOT NULL UNIQUE,
            project_id INTEGER NOT NULL REFERENCES projects(id),
            slot TEXT NOT NULL,
            subject TEXT NOT NULL,
            predicate TEXT NOT NULL,
            object TEXT NOT NULL,
            subject_key TEXT NOT NULL,
            predicate_key TEXT NOT NULL,
            object_key TEXT NOT NULL,
            valid_from TEXT,
            valid_until TEXT,
            recorded_at TEXT NOT NULL,
            source TEXT NOT NULL,
            confidence REAL,
            origin TEXT NOT NULL CHECK (origin IN ('journal', 'note')),
            origin_path TEXT NOT NULL,
            origin_line INTEGER NOT NULL,
            ord INTEGER NOT NULL,
            eff_until TEXT,
            closed_at TEXT,
            superseded_by TEXT,
            merged_into TEXT,
            shadowed INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX facts_by_slot ON facts(project_id, slot);
        CREATE INDEX facts_by_subject ON facts(project_id, subject_key, predicate_key, valid_from);
        CREATE INDEX facts_by_predicate ON facts(project_id, predicate_key, object_key);
        CREATE INDEX facts_by_note ON facts(project_id, origin, origin_path);
        -- Words of subject, predicate and object (rowid = facts.id) for `text` queries,
        -- kept in the same transactions as the rows.
        CREATE VIRTUAL TABLE facts_fts USING fts5(body, tokenize='unicode61 remove_diacritics 2');
        -- Size and mtime of each journal file as of the last write or replay: a file that
        -- differs at start-up was edited by hand (or appended to by a crashed writer).
        CREATE TABLE journal_files(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
        CREATE TABLE fact_closes(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id INTEGER NOT NULL REFERENCES projects(id),
            slot TEXT NOT NULL,
            subject TEXT NOT NULL,
            predicate TEXT NOT NULL,
            valid_until TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            origin_path TEXT NOT NULL,
            origin_line INTEGER NOT NULL,
            ord INTEGER NOT NULL
        );
        CREATE INDEX fact_closes_by_slot ON fact_closes(project_id, slot);
        -- Part of the record (never wiped): when the engine first saw a fact in a note, which
        -- is that fact's record time (a file's mtime never is).
        CREATE TABLE fact_sightings(
            project_id INTEGER NOT NULL,
            key TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            PRIMARY KEY (project_id, key)
        );
        """,
    ),
    (
        "0004_messages_by_session",
        """
        -- A message's neighbours in its session (its index context; recall's expansion).
        CREATE INDEX messages_by_session ON messages(session_id, id);
        """,
    ),
    (
        "0005_conversation_memory",
        """
        -- Tier 2: observation logs of conversation segments. Gen-0 rows are append-only;
        -- a meta pass consolidates older ones into a gen-1 row and points them at it
        -- (`consolidated_into`) without deleting them: they stay searchable.
        CREATE TABLE distillations(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            dist_id TEXT NOT NULL UNIQUE,
            project_id INTEGER NOT NULL REFERENCES projects(id),
            session_id TEXT NOT NULL,
            generation INTEGER NOT NULL,
            first_msg INTEGER,
            last_msg INTEGER,
            covers INTEGER NOT NULL,
            text TEXT NOT NULL,
            mode TEXT NOT NULL,
            model TEXT,
            prompt_version TEXT NOT NULL,
            consolidated_into INTEGER,
            created_at TEXT NOT NULL
        );
        CREATE INDEX distillations_by_session ON distillations(project_id, session_id, generation, id);
        -- Per session: the newest message the distiller has noticed, the last one already
        -- distilled, and the last distillation the curator has read.
        CREATE TABLE memory_marks(
            project_id INTEGER NOT NULL,
            session_id TEXT NOT NULL,
            last_msg INTEGER NOT NULL DEFAULT 0,
            distilled_upto INTEGER NOT NULL DEFAULT 0,
            curated_upto INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (project_id, session_id)
        );
        -- Tier 3: curated knowledge nodes. A deleted node keeps its row (deleted_at set) and
        -- its history; only one live node per URI.
        CREATE TABLE nodes(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uri TEXT NOT NULL,
            domain TEXT NOT NULL,
            project_id INTEGER,
            scope TEXT NOT NULL,
            content TEXT NOT NULL,
            category TEXT,
            priority INTEGER NOT NULL,
            disclosure TEXT,
            expires_at TEXT,
            suppressed INTEGER NOT NULL DEFAULT 0,
            sources TEXT NOT NULL DEFAULT '[]',
            stale TEXT,
            version INTEGER NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            deleted_at TEXT
        );
        CREATE UNIQUE INDEX nodes_live_uri ON nodes(uri) WHERE deleted_at IS NULL;
        CREATE INDEX nodes_by_scope ON nodes(scope, project_id, priority);
        CREATE TABLE node_history(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            node_id INTEGER NOT NULL REFERENCES nodes(id),
            uri TEXT NOT NULL,
            version INTEGER NOT NULL,
            action TEXT NOT NULL,
            snapshot TEXT NOT NULL,
            runtime TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX node_history_by_node ON node_history(node_id, id);
        -- Entities: canonical names with aliases, and relations between them.
        CREATE TABLE entities(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project_id INTEGER NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            mentions INTEGER NOT NULL DEFAULT 0,
            first_seen TEXT NOT NULL,
            UNIQUE(project_id, name)
        );
        CREATE TABLE entity_aliases(
            project_id INTEGER NOT NULL,
            alias TEXT NOT NULL,
            entity_id INTEGER NOT NULL REFERENCES entities(id),
            PRIMARY KEY (project_id, alias, entity_id)
        );
        CREATE TABLE entity_relations(
            project_id INTEGER NOT NULL,
            subject INTEGER NOT NULL,
            relation TEXT NOT NULL,
            object INTEGER NOT NULL,
            evidence TEXT NOT NULL,
            PRIMARY KEY (project_id, subject, relation, object)
        );
        -- Every LLM call memory made, with its token usage (what memory costs).
        CREATE TABLE llm_calls(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            purpose TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL,
            cache_write_tokens INTEGER NOT NULL,
            took_ms REAL NOT NULL
        );
        -- Usage: which recalled leads were opened (getNode with a queryId).
        CREATE TABLE recall_usage(
            query_id TEXT NOT NULL,
            uri TEXT NOT NULL,
            session_id TEXT,
            runtime TEXT,
            at TEXT NOT NULL,
            PRIMARY KEY (query_id, uri)
        );
        """,
    ),
    (
        "0006_recall_log",
        """
        -- Leads shown to each runtime (the other half of usage: recalled vs used).
        CREATE TABLE recall_log(
            query_id TEXT PRIMARY KEY,
            session_id TEXT,
            runtime TEXT,
            leads INTEGER NOT NULL,
            at TEXT NOT NULL
        );
        """,
    ),
    (
        "0007_recall_shown",
        """
        -- Which memories each logged recall showed (decay: recalled-then-used, per item).
        CREATE TABLE recall_shown(
            query_id TEXT NOT NULL,
            uri TEXT NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (query_id, uri)
        );
        CREATE INDEX recall_shown_by_uri ON recall_shown(uri);
        """,
    ),
    (
        "0008_chunk_parts",
        """
        -- A chunk's compound names cut into parts, computed where the file is prepared (a
        -- scan's worker process) so the text leg only reads them. NULL: computed when indexed.
        ALTER TABLE chunks ADD COLUMN parts TEXT;
        """,
    ),
    (
        "0009_messages_meta",
        """
        -- What recall ranks a message by, apart from its text: read from this index alone.
        -- In the table, created_at sits after the text, so reading it walked a long
        -- message's overflow pages (80 candidates of ~20 KB: 0.8 ms; from here 0.07 ms).
        CREATE INDEX messages_meta ON messages(id, session_id, msg_id, role, created_at);
        """,
    ),
]
