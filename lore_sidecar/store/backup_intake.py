"""Taking a backup in: a backup folder is untrusted input (it may come from another machine,
a shared drive, a download), so nothing in it is followed, opened in place or run.

Before a restored database is opened as a store:
- the whole backup tree is walked without following anything: a symlink, FIFO, device,
  socket, or a regular file with more than one hard link (which may be an outside file) is
  refused (`backupUnsafeFile`), before a byte of any file is read;
- only the files the manifest lists are taken, each a plain relative path (no `..`, no
  absolute path), opened component by component with `O_NOFOLLOW` below the backup's own
  folder, and copied into the staging store, whose every target is checked by real path to
  stay inside it; a listed file that is not there is `backupIncomplete`;
- the copies (never the backup's own files) are hashed against the manifest, and each
  SQLite file's `sqlite_schema` is compared with what this version's migrations create for
  the schema version it claims (type, name, table, SQL): a trigger, view, extra table,
  virtual table or index they did not create is `backupSchemaMismatch`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from lore_sidecar.errors import LoreError
from lore_sidecar.store.db import SCHEMA_VERSION, _statements
from lore_sidecar.store.late_table import SCHEMA as LATE_SCHEMA
from lore_sidecar.store.migrations import MIGRATIONS

# SQLite's own statistics tables (ANALYZE): allowed, never required.
OPTIONAL = ("sqlite_stat1", "sqlite_stat4")


def unsafe(message: str, **data: Any) -> LoreError:
    return LoreError("backupUnsafeFile", message, **data)


def corrupt(message: str, **data: Any) -> LoreError:
    return LoreError("backupCorrupt", message, **data)


def scan(backup: Path) -> None:
    """Refuse a backup holding anything but folders and singly-linked regular files."""
    try:
        top = os.lstat(backup)
    except OSError as exc:
        raise LoreError("notFound", f"{backup}: no such backup ({exc.strerror})", path=str(backup)) from None
    if not stat.S_ISDIR(top.st_mode):
        raise unsafe(f"{backup} is not a folder", path=str(backup))
    pending = [backup]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                st = e.stat(follow_symlinks=False)
                rel = Path(e.path).relative_to(backup).as_posix()
                if stat.S_ISDIR(st.st_mode):
                    pending.append(Path(e.path))
                elif not stat.S_ISREG(st.st_mode):
                    what = "a symlink" if stat.S_ISLNK(st.st_mode) else "a special file (FIFO, device or socket)"
                    raise unsafe(f"{rel} in {backup} is {what}; a backup holds only plain files", path=rel)
                elif st.st_nlink > 1:
                    raise unsafe(f"{rel} in {backup} is hard-linked elsewhere ({st.st_nlink} links); copy the "
                                 "backup with `cp -r` and restore the copy", path=rel)


def _open_below(root_fd: int, rel: str) -> int:
    """An fd of `rel` below the folder `root_fd`, no component followed if it is a link."""
    parts = PurePosixPath(rel).parts
    fd = os.dup(root_fd)
    try:
        for name in parts[:-1]:
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        out = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    st = os.fstat(out)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(out)
        raise unsafe(f"{rel} is not a plain, singly-linked file", path=rel)
    return out


def _plain(rel: Any) -> str:
    p = PurePosixPath(rel) if isinstance(rel, str) else None
    if p is None or not rel or p.is_absolute() or any(x in ("..", ".", "") for x in rel.split("/")) or "\\" in rel \
            or "\x00" in rel:
        raise unsafe(f"the manifest lists {rel!r}: not a plain relative path", path=str(rel))
    return rel


def read_manifest(backup: Path) -> dict[str, Any]:
    root = os.open(backup, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            fd = _open_below(root, "manifest.json")
        except FileNotFoundError:
            raise corrupt(f"{backup} is not a lore backup (it holds no manifest.json)", path=str(backup)) from None
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(16 << 20)
    finally:
        os.close(root)
    try:
        manifest = json.loads(data)
        files = manifest["files"]
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise TypeError("files is not a map of hashes")
        version = manifest.get("schemaVersion", 0)
        if not isinstance(version, int) or isinstance(version, bool):
            raise TypeError("schemaVersion is not a whole number")  # compared below: a str would be a crash
    except (ValueError, KeyError, TypeError) as exc:
        raise corrupt(f"{backup} is not a lore backup (manifest.json: {exc})", path=str(backup)) from None
    for rel in files:
        _plain(rel)
    if manifest.get("schemaVersion", 0) > SCHEMA_VERSION:
        raise LoreError("storeTooNew", f"{backup} was written by a newer lore-sidecar (schema "
                        f"{manifest['schemaVersion']}; this version reads up to {SCHEMA_VERSION})")
    if "lore.db" not in files:
        raise corrupt(f"{backup} holds no database", path=str(backup))
    return manifest


def copy_listed(backup: Path, manifest: dict[str, Any], target: Path, only: tuple[str, ...] | None = None) -> None:
    """Copy the listed files (those under the prefixes `only`, if given) into `target`,
    hashing each copy against the manifest."""
    real_target = os.path.realpath(target)
    root = os.open(backup, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for rel, want in sorted(manifest["files"].items()):
            if only is not None and not any(rel == p or rel.startswith(p + "/") for p in only):
                continue
            try:
                fd = _open_below(root, rel)
            except FileNotFoundError:
                raise LoreError("backupIncomplete", f"{rel} is listed in {backup}'s manifest but missing",
                                path=rel) from None
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise unsafe(f"{rel} in {backup} passes through a symlink", path=rel) from None
                raise
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if os.path.commonpath([os.path.realpath(dest.parent), real_target]) != real_target:
                os.close(fd)
                raise unsafe(f"{rel} would be restored outside the staging store", path=rel)
            h = hashlib.sha256()
            with os.fdopen(fd, "rb") as src, open(dest, "xb") as out:
                for block in iter(lambda: src.read(1 << 20), b""):
                    h.update(block)
                    out.write(block)
            if h.hexdigest() != want:
                raise corrupt(f"{rel} in {backup} changed since the backup was written (sha256 differs)", path=rel)
    finally:
        os.close(root)


def _schema(conn: sqlite3.Connection) -> set[tuple]:
    return {tuple(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema")}


def expected_schema(version: int) -> set[tuple]:
    """What this version's migrations create up to `version` (as a store's own database)."""
    ref = sqlite3.connect(":memory:", isolation_level=None)
    try:
        ref.execute("CREATE TABLE IF NOT EXISTS schema_migrations(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for _, sql in MIGRATIONS[:version]:
            for stmt in _statements(sql):
                ref.execute(stmt)
        ref.execute("ANALYZE")
        return _schema(ref)
    finally:
        ref.close()


def _read_only(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.execute("PRAGMA trusted_schema=OFF")  # nothing in its schema may run as a side effect
    return conn


def _compare(path: Path, have: set[tuple], want: set[tuple]) -> None:
    extra = sorted(have - want, key=str)
    missing = sorted((x for x in want - have if x[1] not in OPTIONAL), key=str)
    if extra or missing:
        what = [f"{t} {n!r} the migrations did not create" for t, n, *_ in extra[:3]] + \
               [f"{t} {n!r} missing" for t, n, *_ in missing[:3]]
        raise LoreError("backupSchemaMismatch", f"{path.name}: " + "; ".join(what),
                        extra=[f"{t}:{n}" for t, n, *_ in extra], missing=[f"{t}:{n}" for t, n, *_ in missing])


def check_database(path: Path, counted: dict[str, int] | None, count: Any) -> None:
    """The staged `lore.db`: readable, intact, exactly the migrations' schema, the counts."""
    try:
        db = _read_only(path)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION or version < 1:
                raise LoreError("backupSchemaMismatch", f"{path.name}: schema version {version} is not one this "
                                f"version knows (1..{SCHEMA_VERSION})")
            _compare(path, _schema(db), expected_schema(version))
            names = [r[0] for r in db.execute("SELECT name FROM schema_migrations ORDER BY rowid")]
            if sorted(names) != sorted(n for n, _ in MIGRATIONS[:version]):
                raise LoreError("backupSchemaMismatch", f"{path.name}: its migrations do not match version {version}")
            check = db.execute("PRAGMA integrity_check").fetchone()[0]
            if check != "ok":
                raise corrupt(f"the database fails its integrity check: {check}")
            if counted is not None and count(db) != counted:
                raise corrupt("the database does not hold what its manifest counts")
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise corrupt(f"the database cannot be read: {exc}") from None


def check_late(path: Path) -> None:
    """A staged `late.db` (vector word pieces): its one table and nothing else."""
    ref = sqlite3.connect(":memory:")
    try:
        ref.execute(LATE_SCHEMA)
        want = _schema(ref)
    finally:
        ref.close()
    try:
        db = _read_only(path)
        try:
            _compare(path, _schema(db), want)
            if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
                raise corrupt(f"{path.name} fails its integrity check")
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise corrupt(f"{path.name} cannot be read: {exc}") from None
