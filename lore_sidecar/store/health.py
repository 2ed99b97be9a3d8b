"""Looking at a store without joining it: what `lore-sidecar doctor` reads. Nothing here
writes the store, takes the writer role or migrates the schema."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from lore_sidecar.store.db import SCHEMA_VERSION
from lore_sidecar.store.lock import WriterLock


@dataclass(frozen=True)
class DbFacts:
    schema: int
    expected: int
    outbox_pending: int


def db_facts(path: Path) -> DbFacts:
    """Schema version and unindexed outbox rows, read-only (raises sqlite3.Error if unreadable)."""
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
    try:
        version = c.execute("PRAGMA user_version").fetchone()[0]
        try:
            pending = c.execute("SELECT COUNT(*) FROM index_outbox").fetchone()[0]
        except sqlite3.Error:
            pending = 0
        return DbFacts(schema=version, expected=SCHEMA_VERSION, outbox_pending=pending)
    finally:
        c.close()


@dataclass(frozen=True)
class LockFacts:
    held: bool
    pid: int | None
    heartbeat_age_s: float
    pid_alive: bool


def lock_facts(path: Path) -> LockFacts:
    """Whether someone holds the writer lock (probed with a non-blocking lock taken and
    released at once), who, and how long since its heartbeat."""
    lock = WriterLock(path)
    held = False
    if path.exists():
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            held = True
        finally:
            os.close(fd)
    pid = lock.holder_pid()
    alive = False
    if pid:
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        except PermissionError:
            alive = True
    return LockFacts(held=held, pid=pid, heartbeat_age_s=lock.heartbeat_age(), pid_alive=alive)


def network_fs(store: Path) -> str | None:
    """The network filesystem the store is on, if it is on one."""
    from lore_sidecar.errors import LoreError
    from lore_sidecar.store.filesystem import refuse_network_fs

    try:
        refuse_network_fs(store)
    except LoreError as exc:
        return str(exc.details.get("filesystem"))
    return None


def spool_facts(directory: Path) -> tuple[int, int]:
    """(operations waiting for the writer, operations quarantined in spool/bad)."""
    from lore_sidecar.store.spool import SUFFIX

    def count(d: Path) -> int:
        try:
            return sum(1 for e in os.scandir(d) if e.name.endswith(SUFFIX))
        except FileNotFoundError:
            return 0

    return count(directory), count(directory / "bad")
