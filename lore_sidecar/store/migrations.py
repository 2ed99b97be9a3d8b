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
]
