"""Backups of a store: consistent while writers run, verified before a restore replaces anything.

A backup is a folder `lore-backup-<UTC time>-<tag>/` holding:
- `lore.db`: SQLite's online backup API, in one step — a single read transaction, so it is
  one consistent snapshot however many instances write meanwhile (WAL: they do not wait);
  recall events (`recall_log`, `recall_usage`, `recall_shown`) are dropped unless asked for,
  and the index outbox up to what the copied indexes include;
- `index/e<epoch>/`: the published Tantivy index and vector snapshots (with `late.db`),
  copied before the database so they are provably behind it (store/backup_index.py); a
  restore takes them and replays the outbox after them instead of re-embedding;
- `spool/`: follower writes acknowledged but not yet applied, copied *before* the database:
  an operation is then either copied here or applied before the snapshot was taken (the
  writer removes it only after applying it), and replaying one that is both is a no-op
  (operation ids);
- `journal/`: the fact journal's markdown files, each cut at its last complete line (an
  append in flight is not half-copied), and each project folder's `.project` (whose it is);
- `exports/<project>.lore.md`: each project's knowledge as reviewable markdown;
- `manifest.json`: schema version, counts, and the sha256 of every file above.
It is written as `.partial` and renamed when complete, so a crash never leaves something that
looks like a backup. Only the newest `keep` are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lore_sidecar.errors import LoreError
from lore_sidecar.store import backup_index
from lore_sidecar.store import backup_intake as intake
from lore_sidecar.store.db import SCHEMA_VERSION
from lore_sidecar.store.lock import WriterLock

PREFIX = "lore-backup-"
RECALL_EVENTS = ("recall_log", "recall_usage", "recall_shown")
COUNTED = ("messages", "nodes", "facts", "distillations", "entities", "node_history", "projects")


def corrupt(message: str, **data: Any) -> LoreError:
    return LoreError("backupCorrupt", message, **data)


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def counts(db: sqlite3.Connection) -> dict[str, int]:
    return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in COUNTED}


def counted(path: Path) -> dict[str, int]:
    """What the database at `path` holds, read-only."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return counts(db)
    finally:
        db.close()


def create(store: Path, out_root: Path, *, keep: int = 7, recall_events: bool = False,
           exports: Callable[[dict[str, list[dict[str, Any]]]], dict[str, str]] = lambda nodes: {}) -> dict[str, Any]:
    """Write one backup of `store` under `out_root`; returns its manifest (plus `path`).
    `exports`: each project's live nodes (by project root) -> {file stem: `.lore.md` text}."""
    source = store / "lore.db"
    if not source.is_file():
        raise LoreError("notFound", f"no store at {store} (no lore.db)")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")  # names sort by time, to the microsecond
    name = f"{PREFIX}{stamp}-{secrets.token_hex(3)}"
    out_root.mkdir(parents=True, exist_ok=True)
    part = out_root / f".{name}.partial"
    part.mkdir()
    try:
        for op in sorted((store / "spool").glob("*.op.json")):
            (part / "spool").mkdir(exist_ok=True)
            try:
                shutil.copy2(op, part / "spool" / op.name)
            except FileNotFoundError:
                pass  # applied (and removed) meanwhile: the snapshot below has it
        taken = backup_index.copy(store, part)  # before the snapshot: see store/backup_index.py
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
        dst = sqlite3.connect(part / "lore.db")
        try:
            src.backup(dst)  # pages=-1: the whole database in one step, one snapshot
        finally:
            src.close()
        with dst:
            for table in () if recall_events else RECALL_EVENTS:
                dst.execute(f"DELETE FROM {table}")
            taken = backup_index.settle(dst, part, taken)
        dst.execute("VACUUM")
        found = counts(dst)
        texts = exports(project_nodes(dst))
        dst.close()
        journal = store / "journal"
        for f in sorted(journal.rglob("*")) if journal.is_dir() else []:
            # `.project` says which project a journal folder belongs to: without it the
            # restored journal is nobody's and a replay reads none of its facts.
            if f.suffix != ".md" and f.name != ".project" or not f.is_file():
                continue
            data = f.read_bytes()
            cut = data[: data.rfind(b"\n") + 1] if f.suffix == ".md" else data
            target = part / "journal" / f.relative_to(journal)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(cut)
        for project, text in texts.items():
            target = part / "exports" / f"{project}.lore.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        files = {p.relative_to(part).as_posix(): sha256_file(p) for p in sorted(part.rglob("*")) if p.is_file()}
        manifest = {"format": 1, "schemaVersion": SCHEMA_VERSION, "createdAt": stamp, "store": str(store),
                    "recallEvents": recall_events, "counts": found, "files": files,
                    "index": taken}
        (part / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
        _fsync_tree(part)
        final = out_root / name
        os.replace(part, final)
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
    removed = rotate(out_root, keep)
    return {**manifest, "path": str(final), "removed": removed}


def project_nodes(db: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    """Live project-scope nodes by project root, in the fields `.lore.md` records."""
    out: dict[str, list[dict[str, Any]]] = {}
    rows = db.execute("SELECT n.uri, n.content, n.category, n.priority, n.scope, n.disclosure, n.expires_at,"
                      " n.sources, n.suppressed, p.root FROM nodes n JOIN projects p ON p.id=n.project_id"
                      " WHERE n.deleted_at IS NULL AND n.scope='project' ORDER BY n.uri")
    for uri, content, category, priority, scope, disclosure, expires, sources, suppressed, root in rows:
        out.setdefault(root, []).append({
            "uri": uri, "content": content, "category": category, "priority": priority, "scope": scope,
            "disclosure": disclosure, "expiresAt": expires, "sources": json.loads(sources or "[]"),
            "suppressed": bool(suppressed)})
    return out


def sample_messages(store: Path, n: int = 3) -> list[tuple[str, str]]:
    """(session id, text) of up to `n` messages with some words, spread over the store."""
    db = sqlite3.connect(f"file:{store / 'lore.db'}?mode=ro", uri=True)
    try:
        # Counted as they are looked up below: over every message, the picks past the long
        # ones' end found nothing (a store of mostly short replies tried one message).
        total = db.execute("SELECT COUNT(*) FROM messages WHERE length(text) > 20").fetchone()[0]
        picks = sorted({int(i * total / n) for i in range(n)}) if total else []
        out = []
        for k in picks:
            row = db.execute("SELECT session_id, text FROM messages WHERE length(text) > 20 ORDER BY id LIMIT 1 OFFSET ?",
                             (k,)).fetchone()
            if row:
                out.append((row[0], row[1]))
        return out
    finally:
        db.close()


def rotate(out_root: Path, keep: int) -> list[str]:
    """Delete all but the newest `keep` backups (names sort by time)."""
    found = sorted(p for p in out_root.glob(f"{PREFIX}*") if p.is_dir())
    gone = found[: max(0, len(found) - keep)]
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return [p.name for p in gone]


def verify(backup: Path) -> dict[str, Any]:
    """The manifest, once the backup holds only plain files and every listed file is there
    with its hash (store/backup_intake.py); the database is checked on the staged copy."""
    intake.scan(backup)
    manifest = intake.read_manifest(backup)
    root = os.open(backup, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for rel, want in sorted(manifest["files"].items()):
            try:
                fd = intake._open_below(root, rel)
            except FileNotFoundError:
                raise LoreError("backupIncomplete", f"{rel} is listed in {backup}'s manifest but missing",
                                path=rel) from None
            h = hashlib.sha256()
            with os.fdopen(fd, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() != want:
                raise corrupt(f"{rel} in {backup} changed since the backup was written (sha256 differs)", path=rel)
    finally:
        os.close(root)
    return manifest


def in_use(store: Path) -> int | None:
    """The pid of the instance writing `store`, or None when nobody holds its writer lock."""
    if not (store / "writer.lock").exists():
        return None
    lock = WriterLock(store / "writer.lock")
    if lock.try_acquire():
        lock.release()
        return None
    return lock.holder_pid() or -1


def stage(backup: Path, manifest: dict[str, Any], target: Path, *, indexes: bool = True) -> None:
    """Copy a verified backup's database, journal and spool into `target` (a fresh store),
    without following anything, hashes checked again on the copies; then the copied
    database must be exactly what the migrations create and hold what the manifest counts."""
    target.mkdir(parents=True, mode=0o700)  # it becomes the store: its owner's alone
    index = indexes_in(manifest) if indexes else None
    intake.copy_listed(backup, manifest, target, only=("lore.db", "journal", "spool", *([index] if index else [])))
    intake.check_database(target / "lore.db", manifest.get("counts"), counts)
    if index and (target / index / "vectors" / "late.db").exists():
        intake.check_late(target / index / "vectors" / "late.db")
    _fsync_tree(target)


def indexes_in(manifest: dict[str, Any]) -> str | None:
    """The folder of the indexes a backup proves current (`index` or `index/e<N>`), if any."""
    taken = manifest.get("index")
    d = taken.get("dir") if isinstance(taken, dict) else None
    if not isinstance(d, str) or not re.fullmatch(r"index(/e[1-9][0-9]{0,8})?", d):
        return None
    return d if any(rel.startswith(d + "/text/") for rel in manifest["files"]) else None


def _fsync_tree(root: Path) -> None:
    for p in [*sorted(root.rglob("*")), root]:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
