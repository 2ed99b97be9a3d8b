"""What each assembled model call cost, one JSON line per event, one file per UTC day under
`<store>/context/calls/YYYY-MM-DD.jsonl`.

Operational state like the session files beside it (context_states.py), not the record:
nothing replays or indexes it, and it is not spooled. Any instance may serve a session (a
gateway is often a follower), so every instance appends here itself: each line is one
`write` on a file opened with O_APPEND under an exclusive `flock`, so lines from several
processes never interleave. A reader takes no lock: it keeps only complete lines (a line
still being written is read next time).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def store_ledger(store_dir: Path) -> ContextLedger:
    """The ledger of the store at `store_dir`: here, beside the class, so `lore-sidecar
    savings` reads it without opening the engine (app.py uses the same)."""
    return ContextLedger(Path(store_dir) / "context" / "calls")


class ContextLedger:
    def __init__(self, directory: Path):
        self.directory = directory
        # path -> (inode, bytes consumed, rows): a day's file only grows, so a read parses
        # only what was appended since the last one (past days are parsed once).
        self._seen: dict[Path, tuple[int, int, list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def append(self, day: str, row: dict[str, Any]) -> None:
        if not DAY.match(day):
            raise ValueError(f"not a day: {day!r}")
        line = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory / f"{day}.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(line)
            while view:  # a short write on a full disk: the rest, still under the lock
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)  # releases the lock

    def days(self) -> list[str]:
        """The days that have a file, oldest first."""
        try:
            names = [p.stem for p in self.directory.glob("*.jsonl")]
        except OSError:
            return []
        return sorted(n for n in names if DAY.match(n))

    def rows(self, days: list[str]) -> list[dict[str, Any]]:
        """Every row of these days, in the order appended (days in the order given)."""
        out: list[dict[str, Any]] = []
        with self._lock:
            for day in days:
                out += self._read(self.directory / f"{day}.jsonl")
        return out

    def _read(self, path: Path) -> list[dict[str, Any]]:
        try:
            with open(path, "rb") as fh:
                inode = os.fstat(fh.fileno()).st_ino
                known = self._seen.get(path)
                ino, done, rows = known if known and known[0] == inode else (inode, 0, [])
                fh.seek(done)
                data = fh.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        rows = [*rows]
        for line in data[:end].splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                log.warning("skipping an unreadable line in %s", path.name)
                continue
            if isinstance(row, dict):
                rows.append(row)
        self._seen[path] = (ino, done + end, rows)
        return rows
