"""The SQLite record: one database in WAL mode, migrated on open, one writer connection.

Reads use a connection per thread (WAL gives each a consistent snapshot); writes go through
the single writer connection under a lock, so a write transaction never waits on another
connection of this process.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lore_sidecar.errors import LoreError
from lore_sidecar.store.filesystem import make_store_dir
from lore_sidecar.store.migrations import MIGRATIONS

SCHEMA_VERSION = len(MIGRATIONS)
BUSY_TIMEOUT_MS = 10_000


IN_BATCH = 900  # SQLite allows 999 parameters per statement by default


def select_in(conn: sqlite3.Connection, sql: str, keys: Sequence[Any], lead: Sequence[Any] = ()) -> list[sqlite3.Row]:
    """`sql` with one `{}` where the `IN (...)` list goes, run over `keys` in batches.
    `lead`: the values of the placeholders before the list."""
    out: list[sqlite3.Row] = []
    for i in range(0, len(keys), IN_BATCH):
        part = list(keys[i : i + IN_BATCH])
        out.extend(conn.execute(sql.format(",".join("?" * len(part))), [*lead, *part]).fetchall())
    return out


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _too_new(path: Path, version: int) -> LoreError:
    return LoreError(
        "storeTooNew",
        f"{path} was written by a newer lore-sidecar (schema {version}, "
        f"this version reads up to {SCHEMA_VERSION}); upgrade lore-sidecar "
        "or use another --store-dir",
        schemaVersion=version,
    )


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (semicolons inside comments or strings included)."""
    out, buf = [], ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip() and not all(x.strip().startswith("--") or not x.strip() for x in buf.splitlines()):
        out.append(buf.strip())
    return out


def _connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    # FULL: a commit is on disk before it is acknowledged (survives power loss, not only
    # process death), like the follower spool; WAL keeps the cost to one fsync per commit.
    conn.execute("PRAGMA synchronous=FULL")
    conn.row_factory = sqlite3.Row
    return conn


class StaleEpoch(LoreError):
    """This instance's epoch is no longer the store's: another instance is the writer."""

    def __init__(self, mine: int, current: int):
        super().__init__(
            "staleEpoch",
            f"writer epoch {mine} was superseded by epoch {current}",
            retryable=True,
            epoch=current,
        )


class Database:
    """`writable` instances migrate the schema; writes additionally need a claimed epoch
    (`claim_epoch`), which every write transaction re-checks before it commits."""

    def __init__(self, path: Path, *, writable: bool):
        self.path = path
        self.writable = writable
        self.epoch = 0  # 0: not the writer
        self.on_fenced: Callable[[int], None] = lambda current: None
        self._local = threading.local()
        self._write_lock = threading.Lock()
        make_store_dir(path.parent)
        conn = _connect(path)
        # WAL is a property of the file: set once, every connection then uses it.
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise LoreError("storeUnsupported", f"{path}: cannot enable WAL (got {mode})")
        self._writer = conn
        if writable:
            self._migrate()
        else:
            self._check_version()

    def _check_version(self) -> None:
        version = self._writer.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise _too_new(self.path, version)
        if version < SCHEMA_VERSION:
            raise LoreError(
                "storeNotReady",
                f"{self.path}: schema {version}, the writer has not migrated it to {SCHEMA_VERSION} yet",
                retryable=True,
            )

    # -- the writer epoch ----------------------------------------------------------------
    def claim_epoch(self, pid: int) -> int:
        """Become the writer: bump the store's epoch in one transaction. From now on any
        transaction of an older epoch (a paused ex-writer waking up) is refused."""
        if not self.writable:
            self.writable = True
            self._migrate()
        with self._write_lock:
            c = self._writer
            c.execute("BEGIN IMMEDIATE")
            try:
                row = c.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()
                epoch = int(row[0]) + 1 if row else 1
                c.execute(
                    "INSERT INTO meta(key, value) VALUES ('epoch', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    (str(epoch),),
                )
                c.execute(
                    "INSERT INTO epochs(epoch, pid, claimed_at, claimed_ns) VALUES (?, ?, ?, ?)",
                    (epoch, pid, utc_now(), time.time_ns()),
                )
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        self.epoch = epoch
        return epoch

    def resign(self) -> None:
        self.epoch = 0

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
                raise _too_new(self.path, version)
            done = {r[0] for r in c.execute("SELECT name FROM schema_migrations")}
            for name, sql in MIGRATIONS:
                if name in done:
                    continue
                for stmt in _statements(sql):
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
    def write(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction, fenced: it commits only if this instance's epoch is still
        the store's. Refused outright when this instance is not the writer. `durable=False`:
        rows derived from something else that stays (a workspace file's rows: the file is
        the record): the commit is atomic but not fsynced; a power loss may lose it whole,
        never half, and `sync()` (before any index takes it in) or the next durable commit
        makes it durable."""
        epoch = self.epoch
        if not epoch:
            raise LoreError("notWriter", "this instance does not hold the writer lock", retryable=True)
        with self._write_lock:
            c = self._writer
            if not durable:
                c.execute("PRAGMA synchronous=NORMAL")
            try:
                with self._transaction(c, epoch) as t:
                    yield t
            finally:
                if not durable:
                    c.execute("PRAGMA synchronous=FULL")

    def sync(self) -> None:
        """Every commit so far on disk, those made with `durable=False` too (the WAL
        fsynced). Trigger: an index about to take in rows (engine/indexing/indexer.py).
        Why: an index must never be ahead of the record, and a commit that is not yet on
        disk could be lost after the index saved it. Outcome: one fsync per index commit,
        not one per scan batch."""
        try:
            fd = os.open(f"{self.path}-wal", os.O_RDONLY)
        except FileNotFoundError:
            return  # no WAL: every commit is in the database file, synced by its checkpoint
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @contextmanager
    def _transaction(self, c: sqlite3.Connection, epoch: int) -> Iterator[sqlite3.Connection]:
        c.execute("BEGIN IMMEDIATE")
        try:
            current = int(c.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()[0])
            if current != epoch:
                raise StaleEpoch(epoch, current)
            yield c
            c.execute(
                "UPDATE epochs SET commits=commits+1, last_commit_ns=? WHERE epoch=?",
                (time.time_ns(), epoch),
            )
            c.execute("COMMIT")
        except StaleEpoch as exc:
            c.execute("ROLLBACK")
            self.epoch = 0
            self.on_fenced(exc.details["epoch"])
            raise
        except BaseException as exc:
            try:
                c.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # SQLite rolled back already (a full disk ends the transaction itself)
            mapped = store_error(exc)
            if mapped is not None:
                raise mapped from None
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


def store_ready(path: Path) -> bool:
    """A writer has created and migrated this store and published its first index."""
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
            if c.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                return False
            row = c.execute("SELECT value FROM meta WHERE key='index_epoch'").fetchone()
            return bool(row and int(row[0]) > 0)
    except sqlite3.Error:
        return False


def store_error(exc: BaseException) -> LoreError | None:
    """An expected storage failure as the domain error clients can act on (None: a bug)."""
    if isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError):
        text = str(exc).lower()
        if "disk is full" in text or "disk i/o error" in text:
            return LoreError("diskFull", "the store's disk is full; nothing was written", retryable=True)
        if "locked" in text or "busy" in text:
            return LoreError("storeBusy", "the store is busy; nothing was written", retryable=True)
        if "readonly" in text or "read-only" in text:
            return LoreError("storeReadOnly", "the store is read-only; nothing was written", retryable=False)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return LoreError("diskFull", "the store's disk is full; nothing was written", retryable=True)
    return None
