"""The follower spool: write operations a follower has accepted but cannot apply itself.

One file per operation in `<store>/spool/`, written to a temporary name, fsynced, renamed
into place and the directory fsynced — so once `put` returns, the operation survives the
death of any process (and of the machine). Only the writer reads and removes them; it
applies each one exactly once, keyed by the operation id (see `applied_ops`).

Why files and not a SQLite table: a follower then never takes the SQLite write lock, so a
follower stopped halfway through accepting a write (SIGSTOP, a debugger) can never stall
the writer, and "followers never write the record" stays literally true.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from lore_sidecar.store.files import fsync_path

log = logging.getLogger(__name__)
SUFFIX = ".op.json"


class Spool:
    def __init__(self, directory: Path):
        self.directory = directory
        self.bad = directory / "bad"
        directory.mkdir(parents=True, exist_ok=True)

    def put(self, op: dict[str, Any], *, durable: bool = True) -> str:
        """Durably store `op` (which carries its `opId`); returns the op id.

        `durable=False` is for best-effort bookkeeping (usage counts): still written whole
        (the rename is atomic) but not fsynced, so a power cut may lose it - two fsyncs per
        recall on a follower would cost more than the count is worth."""
        op_id = op["opId"]
        data = json.dumps(op, ensure_ascii=False, separators=(",", ":")).encode()
        tmp = self.directory / f".{op_id}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.directory / f"{op_id}{SUFFIX}")
        if durable:
            fsync_path(self.directory)
        return op_id

    def pending(self, limit: int = 256) -> list[Path]:
        """Spooled operations in creation order (oldest first)."""
        try:
            names = [e.name for e in os.scandir(self.directory) if e.name.endswith(SUFFIX)]
        except FileNotFoundError:
            return []
        names.sort()
        return [self.directory / n for n in names[:limit]]

    def count(self) -> int:
        try:
            return sum(1 for e in os.scandir(self.directory) if e.name.endswith(SUFFIX))
        except FileNotFoundError:
            return 0

    def quarantined(self) -> int:
        """Operations set aside in spool/bad (kept for a person to look at, never deleted)."""
        try:
            return sum(1 for e in os.scandir(self.bad) if e.name.endswith(SUFFIX))
        except FileNotFoundError:
            return 0

    def read(self, path: Path) -> dict[str, Any] | None:
        """The operation, or None if the file is gone or unreadable (then quarantined)."""
        try:
            op = json.loads(path.read_bytes())
            if not isinstance(op, dict) or not isinstance(op.get("opId"), str):
                raise ValueError("not an operation")
            return op
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.quarantine(path, str(exc))
            return None

    def remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def quarantine(self, path: Path, why: str) -> None:
        log.error("spooled operation %s cannot be applied (%s); moved to %s", path.name, why, self.bad)
        self.bad.mkdir(exist_ok=True)
        try:
            os.replace(path, self.bad / path.name)
        except FileNotFoundError:
            pass

    def sweep_temporaries(self, older_than_s: float = 3600) -> None:
        """Temporary files of followers that died mid-`put` (never acknowledged)."""
        cutoff = time.time() - older_than_s
        for e in os.scandir(self.directory):
            if e.name.endswith(".tmp") and e.stat().st_mtime < cutoff:
                Path(e.path).unlink(missing_ok=True)


def store_spool(store_dir: Path) -> Spool:
    """The spool of the store at `store_dir`, the one folder all its instances share. Here
    and not only in app.py so that the hook's degraded path can capture with nothing but this
    module imported (app.py pulls in every index and model: too slow for a hook's deadline)."""
    return Spool(Path(store_dir) / "spool")

