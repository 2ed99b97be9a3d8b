"""The derived indexes in a backup, so a restore need not rebuild and re-embed them.

Trigger: a restore rebuilt every index from the record and re-embedded every chunk (437 s
for a small store). Why it is safe to copy them instead: the published index directory is
copied *before* the database snapshot, and what each leg includes is recorded (Tantivy's
`SEQ`, `vectors.json`'s `seq`): every row those indexes hold is then in the snapshot, and
every change after them is still in the snapshot's outbox — unless the writer trimmed the
outbox past them meanwhile, in which case the copy cannot be proven current and is dropped
(the restore rebuilds). A copy torn by a commit during it (a changed `SEQ`, `vectors.json`
or Tantivy `meta.json`, a merged-away segment) is retried, then dropped.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from lore_sidecar.store.index_dirs import SKIP, index_dir
from lore_sidecar.store.vector_index import LATE_DB, META

ATTEMPTS = 3


def _marks(d: Path) -> tuple[bytes | None, ...]:
    def read(p: Path) -> bytes | None:
        try:
            return p.read_bytes()
        except OSError:
            return None
    return read(d / "text" / "SEQ"), read(d / "text" / "meta.json"), read(d / "vectors" / META)


def copy(store: Path, part: Path) -> dict[str, Any] | None:
    """Copy the published indexes of `store` into `part/index/e<epoch>/`; returns what they
    include ({epoch, textSeq, vectorSeq}) or None when no steady copy could be made."""
    try:
        with sqlite3.connect(f"file:{store / 'lore.db'}?mode=ro", uri=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key='index_epoch'").fetchone()
    except sqlite3.Error:
        return None
    epoch = int(row[0]) if row else 0
    src = index_dir(store, epoch)
    rel = index_dir(Path(), epoch)
    dst = part / rel
    for _ in range(ATTEMPTS):
        shutil.rmtree(dst, ignore_errors=True)
        before = _marks(src)
        if before[0] is None:
            return None  # nothing committed yet
        try:
            for sub in ("text", "vectors"):
                (dst / sub).mkdir(parents=True, exist_ok=True)
                for f in sorted((src / sub).iterdir()) if (src / sub).is_dir() else []:
                    name = f.name
                    # as index_dirs.fork links them (Tantivy's .managed.json included), less
                    # locks, renames in flight and late.db's WAL (its copy is whole)
                    if not f.is_file() or f.is_symlink() or name in SKIP or name.endswith((".tmp", "-wal", "-shm")):
                        continue
                    if name == LATE_DB:
                        _sqlite_copy(f, dst / sub / name)
                    else:
                        shutil.copyfile(f, dst / sub / name)
        except (OSError, sqlite3.Error):
            continue  # a segment merged away under us: try again
        if _marks(src) == before:
            vectors = json.loads(before[2]) if before[2] else {}
            return {"epoch": epoch, "dir": rel.as_posix(), "textSeq": int(before[0] or 0),
                    "vectorSeq": int(vectors.get("seq", 0)) if before[2] else None}
    shutil.rmtree(dst, ignore_errors=True)
    return None


def _sqlite_copy(src: Path, dst: Path) -> None:
    a = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    b = sqlite3.connect(dst)
    try:
        a.backup(b)
    finally:
        a.close()
        b.close()


def settle(db: sqlite3.Connection, part: Path, taken: dict[str, Any] | None) -> dict[str, Any] | None:
    """In the backup's database: keep the outbox after what the copied indexes include, so
    the restored writer catches up from there — or, when the copy is not provably current,
    drop it and the whole outbox (the restore rebuilds from the record)."""
    def meta(key: str) -> int:
        row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return int(row[0]) if row else 0

    if taken is not None:
        # No vectors.json: this store has no dense leg; a restoring one with an embedder
        # finds no vectors and rebuilds them (engine/indexing/indexer.py).
        upto = taken["textSeq"] if taken["vectorSeq"] is None else min(taken["textSeq"], taken["vectorSeq"])
        if meta("index_epoch") != taken["epoch"] or meta("outbox_trimmed") > upto:
            taken = None
    if taken is None:
        shutil.rmtree(part / "index", ignore_errors=True)
        db.execute("DELETE FROM index_outbox")
        return None
    db.execute("DELETE FROM index_outbox WHERE seq<=?", (upto,))
    db.execute("INSERT INTO meta(key, value) VALUES ('outbox_trimmed', ?) ON CONFLICT(key) DO UPDATE SET "
               "value=MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))", (str(upto),))
    return taken
