"""The SQLite record: one database in WAL mode, migrated on open, one writer connection.

Reads use a connection per thread (WAL gives each a consistent snapshot); writes go through
the single writer connection under a lock, so a write transaction never waits on another
connection of this process.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from lore_sidecar.errors import LoreError
from lore_sidecar.store.migrations import MIGRATIONS

SCHEMA_VERSION = len(MIGRATIONS)
BUSY_TIMEOUT_MS = 10_000


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.row_factory = sqlite3.Row
    return conn


class Database:
    def __init__(self, path: Path, *, writable: bool):
        self.path = path
        self.writable = writable
        self._local = threading.local()
        self._write_lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = _connect(path)
        # WAL is a property of the file: set once, every connection then uses it.
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise LoreError("storeUnsupported", f"{path}: cannot enable WAL (got {mode})")
        self._writer = conn
        self._migrate()

    # -- schema --------------------------------------------------------------------------
    def _migrate(self) -> None:
        c = self._writer
        c.execute("BEGIN IMMEDIATE")
        try:
            c.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations("
                "name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            version = c.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise LoreError(
                    "storeTooNew",
                    f"{self.path} was written by a newer lore-sidecar (schema {version}, "
                    f"this version reads up to {SCHEMA_VERSION}); upgrade lore-sidecar "
                    "or use another --store-dir",
                    schemaVersion=version,
                )
            done = {r[0] for r in c.execute("SELECT name FROM schema_migrations")}
            for name, sql in MIGRATIONS:
                if name in done:
                    continue
                for stmt in sql.split(";"):
                    if stmt.strip():
                        c.execute(stmt)
                c.execute(
                    "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                    (name, utc_now()),
                )
            c.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    # -- connections ---------------------------------------------------------------------
    def reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path)
            self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. Refused outright when this instance is not the writer."""
        if not self.writable:
            raise LoreError("notWriter", "this instance does not hold the writer lock", retryable=True)
        with self._write_lock:
            c = self._writer
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise

    def data_version(self) -> int:
        """Changes whenever another connection commits (cheap freshness probe for readers)."""
        return self.reader().execute("PRAGMA data_version").fetchone()[0]

    def integrity_ok(self) -> bool:
        return self.reader().execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def close(self) -> None:
        self._writer.close()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
