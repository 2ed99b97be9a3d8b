"""The background indexer's lock and its name card (lore_sidecar/background.py): a flock on
`<store>/indexer.lock` makes it one per store; `<store>/indexer.json` says who holds it, for
`status` and `doctor`, which only probe (never take) the lock."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

from lore_sidecar.store.filesystem import make_store_dir

LOCK, INFO, LOG = "indexer.lock", "indexer.json", "indexer.log"


def info(store: Path) -> dict[str, Any] | None:
    """The running background indexer of this store ({pid, workspace, startedAt}), or None."""
    path = Path(store) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:  # a shared probe: it fails only while an indexer holds the lock exclusively
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                return json.loads((Path(store) / INFO).read_text())
            except (OSError, ValueError):
                return {"pid": None, "workspace": None, "startedAt": None}  # starting: not written yet
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def hold(store: Path, tries: int = 20) -> int | None:
    """The lock's descriptor, or None when another indexer holds it (a few tries: a status
    probe holds it shared for an instant)."""
    make_store_dir(store)
    fd = os.open(store / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    for _ in range(tries):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            time.sleep(0.05)
    os.close(fd)
    return None


def write_info(store: Path, pid: int, workspace: str) -> None:
    tmp = store / f".{INFO}.{os.getpid()}"
    tmp.write_text(json.dumps({"pid": pid, "workspace": workspace,
                               "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
    os.replace(tmp, store / INFO)
