"""The shared record's schema: versioned migrations, applied in order; a newer schema than
this version knows is refused (an older lore-sidecar must not write a record it misreads)."""

from __future__ import annotations

from typing import Any

from lore_sidecar.errors import LoreError

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_ops", """
        CREATE TABLE IF NOT EXISTS lore_ops(
            seq BIGSERIAL PRIMARY KEY,
            op_id TEXT NOT NULL UNIQUE,
            team TEXT NOT NULL,
            project TEXT NOT NULL,
            kind TEXT NOT NULL,
            op JSONB NOT NULL,
            origin TEXT NOT NULL,
            at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE INDEX IF NOT EXISTS lore_ops_by_team ON lore_ops(team, project, seq);
        CREATE TABLE IF NOT EXISTS lore_nodes(
            team TEXT NOT NULL,
            uri TEXT NOT NULL,
            project TEXT NOT NULL,
            scope TEXT NOT NULL,
            priority INTEGER NOT NULL,
            version INTEGER NOT NULL,
            PRIMARY KEY (team, uri)
        );
        CREATE INDEX IF NOT EXISTS lore_nodes_budget ON lore_nodes(team, scope, project, priority);
    """),
]
VERSION = len(MIGRATIONS)


def migrate(conn: Any) -> int:
    """Bring the record's schema to this version; returns it. Refuses a newer one."""
    with conn.transaction():
        # The lock first: two machines running CREATE TABLE IF NOT EXISTS at once on a new
        # database race in PostgreSQL's catalog (UniqueViolation), and the loser's first
        # write answered an internal error. The advisory lock needs no table.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('lore_schema'))")
        conn.execute("CREATE TABLE IF NOT EXISTS lore_schema(version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                     " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
        have = conn.execute("SELECT COALESCE(MAX(version), 0) FROM lore_schema").fetchone()[0]
        if have > VERSION:
            raise LoreError("storeTooNew", f"the shared record is at schema {have}; this lore-sidecar reads up to "
                            f"{VERSION}: upgrade it")
        for number, (name, sql) in enumerate(MIGRATIONS, 1):
            if number > have:
                conn.execute(sql)
                conn.execute("INSERT INTO lore_schema(version, name) VALUES (%s, %s)", (number, name))
    return VERSION


def version(conn: Any) -> int:
    row = conn.execute("SELECT to_regclass('lore_schema')").fetchone()
    if row[0] is None:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM lore_schema").fetchone()[0]
