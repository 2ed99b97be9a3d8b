"""The workspace's files and their chunks: what the indexer last saw of each file, the
chunks it cut, and the outbox rows that carry chunk changes to the indexes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lore_sidecar.model import Doc, FileWrite
from lore_sidecar.store.db import Database, select_in, utc_now


@dataclass(frozen=True, slots=True)
class FileState:
    file_id: int
    sha256: str
    size: int
    mtime_ns: int



class FileRows:
    def __init__(self, db: Database):
        self.db = db

    def file_states(self, project_id: int) -> dict[str, FileState]:
        rows = self.db.reader().execute(
            "SELECT id, path, sha256, size, mtime_ns FROM files WHERE project_id=?", (project_id,)
        )
        return {r["path"]: FileState(r["id"], r["sha256"], r["size"], r["mtime_ns"]) for r in rows}

    def count(self, project_id: int) -> int:
        """The project's files as last indexed (from the (project_id, path) index alone)."""
        return self.db.reader().execute("SELECT COUNT(*) FROM files WHERE project_id=?", (project_id,)).fetchone()[0]

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Same content, new stat: remember the stat so the next scan skips hashing."""
        with self.db.write() as c:
            c.execute("UPDATE files SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, file_id))

    def sync(self) -> None:
        """The rows written without an fsync (below) on disk, with every other commit so far
        (store/db.py: Database.sync)."""
        self.db.sync()

    def replace_files(self, project_id: int, files: Sequence[FileWrite],
                      then: Callable[[sqlite3.Connection], None] | None = None) -> None:
        """Several files in one transaction: a commit is an fsync, and a first scan of a
        big folder paid one per file (measured: most of its time). `then(conn)` runs once in
        the same transaction, after every file is written."""
        if not files:
            return
        indexed_at = utc_now()  # one transaction, one moment (strftime per file was ~10 us)
        # Not fsynced (db.write): the files on disk are the record of these rows; a batch lost
        # whole to a power cut is written again by the next scan, and the text leg makes the
        # store durable before it indexes anything (Indexer._commit: files.sync()).
        with self.db.write(durable=False) as c:
            if len({f.path for f in files}) == len(files):
                self._replace_batch(c, project_id, files, indexed_at)
            else:  # a path twice: each write replaces the one before, in order
                for f in files:
                    self._replace(c, project_id, f, indexed_at)
            if then is not None:
                then(c)

    def _replace_batch(self, c: sqlite3.Connection, project_id: int, files: Sequence[FileWrite], indexed_at: str) -> None:
        """`files` (distinct paths) written as `_replace` writes each, in a few statements for
        the whole batch. Trigger: a scan's batch of 256 files. Why: five statements a file
        (its old row looked up, the row, its chunks, their outbox rows) were most of what
        writing 20,000 notes cost the scan's thread. Outcome: the old rows are dropped
        together, and the new ids are given here from the tables' AUTOINCREMENT counters
        (never an id used before), so rows, chunks and outbox rows go in one executemany
        each, in the same order as before."""
        for f in files:
            if f.after is not None:
                f.after(c)
        self._drop_files(c, project_id, [f.path for f in files])
        file_id, chunk_id = self._next_id(c, "files"), self._next_id(c, "chunks")
        file_rows, chunk_rows, outbox = [], [], []
        for f in files:
            file_rows.append((file_id, project_id, f.path, f.sha256, f.size, f.mtime_ns, indexed_at))
            for ch in f.chunks:
                chunk_rows.append((chunk_id, file_id, ch.start_line, ch.end_line, ch.kind, ch.title, ch.text, ch.parts))
                outbox.append((chunk_id, project_id))
                chunk_id += 1
            file_id += 1
        c.executemany("INSERT INTO files(id, project_id, path, sha256, size, mtime_ns, indexed_at) VALUES (?,?,?,?,?,?,?)",
                      file_rows)
        c.executemany("INSERT INTO chunks(id, file_id, start_line, end_line, kind, title, text, parts)"
                      " VALUES (?,?,?,?,?,?,?,?)", chunk_rows)
        c.executemany("INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('upsert', 'files', ?, ?)", outbox)

    @staticmethod
    def _next_id(c: sqlite3.Connection, table: str) -> int:
        """The id AUTOINCREMENT would give `table`'s next row (above every id it ever gave)."""
        row = c.execute("SELECT seq FROM sqlite_sequence WHERE name=?", (table,)).fetchone()
        top = c.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0]  # noqa: S608 (a fixed name)
        return max(row[0] if row else 0, top) + 1

    def _drop_files(self, c: sqlite3.Connection, project_id: int, paths: list[str]) -> None:
        """`_drop_file` for each of `paths` (those recorded), in a few statements."""
        ids = [r[0] for r in select_in(c, "SELECT id FROM files WHERE project_id=? AND path IN ({})", paths, (project_id,))]
        select_in(c, "INSERT INTO index_outbox(op, kind, key, project_id) SELECT 'delete', 'files', id, ? FROM chunks"
                     " WHERE file_id IN ({}) ORDER BY file_id, id", ids, (project_id,))
        select_in(c, "DELETE FROM files WHERE id IN ({})", ids)

    def _replace(self, c: sqlite3.Connection, project_id: int, f: FileWrite, indexed_at: str) -> None:
        if f.after is not None:
            f.after(c)
        self._drop_file(c, project_id, f.path)
        cur = c.execute(
            "INSERT INTO files(project_id, path, sha256, size, mtime_ns, indexed_at)"
            " VALUES (?,?,?,?,?,?)",
            (project_id, f.path, f.sha256, f.size, f.mtime_ns, indexed_at),
        )
        file_id = cur.lastrowid
        # The chunks in one statement, then their outbox rows in another, in chunk order (a
        # statement per row was half the cost of writing a scanned file).
        c.executemany(
            "INSERT INTO chunks(file_id, start_line, end_line, kind, title, text, parts) VALUES (?,?,?,?,?,?,?)",
            [(file_id, ch.start_line, ch.end_line, ch.kind, ch.title, ch.text, ch.parts) for ch in f.chunks],
        )
        c.execute(
            "INSERT INTO index_outbox(op, kind, key, project_id)"
            " SELECT 'upsert', 'files', id, ? FROM chunks WHERE file_id=? ORDER BY id",
            (project_id, file_id),
        )

    def delete_files(
        self, project_id: int, paths: Iterable[str], after: Callable[[sqlite3.Connection, str], None] | None = None,
        then: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """`after(conn, path)` runs for each path, `then(conn)` once at the end; all in one
        transaction (not fsynced, as replace_files)."""
        with self.db.write(durable=False) as c:
            for path in paths:
                self._drop_file(c, project_id, path)
                if after is not None:
                    after(c, path)
            if then is not None:
                then(c)

    def _drop_file(self, c: sqlite3.Connection, project_id: int, path: str) -> None:
        row = c.execute(
            "SELECT id FROM files WHERE project_id=? AND path=?", (project_id, path)
        ).fetchone()
        if row is None:
            return
        for (chunk_id,) in c.execute("SELECT id FROM chunks WHERE file_id=?", (row[0],)).fetchall():
            c.execute(
                "INSERT INTO index_outbox(op, kind, key, project_id) VALUES ('delete', 'files', ?, ?)",
                (chunk_id, project_id),
            )
        c.execute("DELETE FROM files WHERE id=?", (row[0],))

    def chunk_docs(self, keys: Iterable[int]) -> list[Doc]:
        keys = list(keys)
        if not keys:
            return []
        rows = self._in(
            "SELECT c.id, c.title, c.text, f.project_id, f.path, c.parts FROM chunks c"
            " JOIN files f ON f.id=c.file_id WHERE c.id IN ({})",
            keys,
        )
        return [
            Doc(
                kind="files",
                key=r["id"],
                project_id=r["project_id"],
                title=r["title"],
                body=r["text"],
                path=r["path"],
                parts=r["parts"],
            )
            for r in rows
        ]

    def chunk_rows(self, keys: Iterable[int]) -> dict[int, sqlite3.Row]:
        rows = self._in(
            "SELECT c.*, f.path, f.project_id, p.root AS project_root FROM chunks c"
            " JOIN files f ON f.id=c.file_id JOIN projects p ON p.id=f.project_id"
            " WHERE c.id IN ({})",
            list(keys),
        )
        return {r["id"]: r for r in rows}

    def chunk_at(self, project_root: str, path: str, start: int, end: int) -> sqlite3.Row | None:
        return (
            self.db.reader()
            .execute(
                "SELECT c.*, f.path, f.sha256, p.root AS project_root FROM chunks c"
                " JOIN files f ON f.id=c.file_id JOIN projects p ON p.id=f.project_id"
                " WHERE p.root=? AND f.path=? AND c.start_line=? AND c.end_line=?",
                (project_root, path, start, end),
            )
            .fetchone()
        )

    def _in(self, sql: str, keys: list[int]) -> list[sqlite3.Row]:
        return select_in(self.db.reader(), sql, keys)
