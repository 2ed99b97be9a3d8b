"""Where the derived indexes live: one directory per writer epoch.

A new writer never opens the previous writer's index directory for writing. It hard-links
the previous directory's files into its own (`index/e<epoch>/`) and writes there. Tantivy
segment files are never modified after they are written and every other file is replaced
by rename, so the links share data without sharing fate: a paused ex-writer that wakes up
(still holding Tantivy's per-directory writer lock, maybe mid-merge) can only touch its own,
no longer published, directory. Readers follow `meta.index_epoch`.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

log = logging.getLogger(__name__)
SKIP = (".tantivy-writer.lock", ".tantivy-meta.lock")


def index_dir(store: Path, epoch: int) -> Path:
    return store / "index" if epoch == 0 else store / "index" / f"e{epoch}"


def fork(store: Path, previous: int, epoch: int) -> Path:
    """Create the index directory of `epoch` from the one of `previous`; returns it."""
    src, dst = index_dir(store, previous), index_dir(store, epoch)
    shutil.rmtree(dst, ignore_errors=True)  # a half-made fork of a writer that died at birth
    tmp = dst.with_name(dst.name + ".forking")
    shutil.rmtree(tmp, ignore_errors=True)
    for sub in ("text", "vectors"):
        (tmp / sub).mkdir(parents=True)
        if not (src / sub).is_dir():
            continue
        for entry in os.scandir(src / sub):
            if not entry.is_file(follow_symlinks=False) or entry.name in SKIP or entry.name.endswith(".tmp"):
                continue
            try:
                os.link(entry.path, tmp / sub / entry.name)
            except FileNotFoundError:
                continue  # replaced by the old writer while we looked: its successor is linked below or lost to replay
            except OSError:
                shutil.copy2(entry.path, tmp / sub / entry.name)  # a filesystem without hard links
    os.replace(tmp, dst)
    return dst


def sweep(store: Path, keep: set[int]) -> None:
    """Remove index directories of epochs not in `keep` (readers reopen from meta)."""
    root = store / "index"
    if not root.is_dir():
        return
    for entry in os.scandir(root):
        name = entry.name
        if name in ("text", "vectors"):
            epoch = 0
        elif name.startswith("e") and name[1:].isdigit():
            epoch = int(name[1:])
        else:
            if name.endswith(".forking"):
                shutil.rmtree(entry.path, ignore_errors=True)
            continue
        if epoch not in keep:
            shutil.rmtree(entry.path, ignore_errors=True)
