"""Each embedded chunk's word pieces for late interaction (engine/late.py), in a SQLite file
beside the vector snapshots: derived like them, rebuilt with them, read a few rows a recall.

Rows are committed as the dense leg embeds; the vector snapshot catches up every few
seconds, so a row may be ahead of the graph a reader has loaded (it is read only for
candidates the legs found) and, after a crash, the outbox replay writes it again (an upsert).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from lore_sidecar.store.db import select_in

SCHEMA = "CREATE TABLE IF NOT EXISTS late (kind TEXT NOT NULL, key INTEGER NOT NULL, bits BLOB NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID"


class LateTable:
    def __init__(self, path: Path, *, writable: bool):
        self.path = path
        self.writable = writable
        # Apart, so a recall's read never waits for the dense leg's batch to commit (WAL).
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._write: sqlite3.Connection | None = None
        self._read: sqlite3.Connection | None = None

    def _writer(self) -> sqlite3.Connection:
        if self._write is None:
            self._write = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._write.execute("PRAGMA journal_mode=WAL")
            self._write.execute("PRAGMA synchronous=NORMAL")
            self._write.execute(SCHEMA)
        return self._write

    def _reader(self) -> sqlite3.Connection | None:
        if self._read is None:
            if not self.path.exists():
                return None  # nothing embedded with late interaction yet
            self._read = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        return self._read

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The writing connection inside one transaction, committed as the block ends."""
        with self._write_lock:
            c = self._writer()
            with c:
                c.execute("BEGIN")
                yield c

    def upsert(self, kind: str, keys: Sequence[int], blobs: Sequence[bytes]) -> None:
        with self._transaction() as c:
            c.executemany("INSERT OR REPLACE INTO late (kind, key, bits) VALUES (?, ?, ?)",
                          [(kind, int(k), b) for k, b in zip(keys, blobs, strict=True)])

    def remove(self, kind: str, keys: Sequence[int]) -> None:
        if not self.path.exists():
            return
        with self._transaction() as c:
            c.executemany("DELETE FROM late WHERE kind = ? AND key = ?", [(kind, int(k)) for k in keys])

    def get(self, kind: str, keys: Sequence[int]) -> dict[int, bytes]:
        with self._read_lock:
            c = self._reader()
            if c is None:
                return {}
            try:
                rows = select_in(c, "SELECT key, bits FROM late WHERE kind = ? AND key IN ({})",
                                 list(dict.fromkeys(int(k) for k in keys)), (kind,))
            except sqlite3.OperationalError:  # a reader opened before the writer made the table
                return {}
        return {k: bytes(b) for k, b in rows}

    def wipe(self, kinds: Sequence[str] | None = None) -> None:
        """Every row gone, or those of `kinds` (the vectors they go with are being rebuilt)."""
        with self._transaction() as c:
            if kinds is None:
                c.execute("DELETE FROM late")
            else:
                c.execute(f"DELETE FROM late WHERE kind IN ({','.join('?' * len(kinds))})", tuple(kinds))

    def close(self) -> None:
        """Close both connections (the next use opens them again: a reader then sees a file
        the writer made anew)."""
        with self._write_lock, self._read_lock:
            for conn in (self._write, self._read):
                if conn is not None:
                    conn.close()
            self._write = self._read = None
