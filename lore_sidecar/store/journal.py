"""The fact journal: append-only markdown files, the durable record of facts.

`<store>/journal/<project slug>/YYYY-MM-DD.md`, one file per project and record day (UTC).
Lines are appended and fsynced before any fact row is written; nothing here rewrites or
deletes a line. People may edit a line by hand to fix a fact; the next replay reads it.
Which project a directory belongs to is kept in its `.project` file.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from lore_sidecar.store.files import fsync_path

HEADER = "<!-- lore journal: one line per fact or close; edit a line to correct it -->\n"



def slug(root: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(root).name).strip("-") or "root"
    return f"{name[:40]}-{hashlib.sha1(root.encode()).hexdigest()[:8]}"


class Journal:
    def __init__(self, directory: Path):
        self.directory = directory
        self._line_counts: dict[Path, tuple[int, int]] = {}  # path -> (lines, size) after our last append

    def project_dir(self, root: str) -> Path:
        d = self.directory / slug(root)
        if not d.is_dir():
            d.mkdir(parents=True, exist_ok=True)
            (d / ".project").write_text(root)
            fsync_path(d)
            fsync_path(self.directory)
        return d

    def append(self, root: str, day: str, lines: list[str]) -> tuple[str, int]:
        """Append `lines` to the project's file for `day` (YYYY-MM-DD), fsynced. Returns the
        file's path relative to the journal directory and the 1-based number of the first."""
        path = self.project_dir(root) / f"{day}.md"
        size = path.stat().st_size if path.exists() else -1
        cached = self._line_counts.get(path)
        if size <= 0:
            count = None
        elif cached is not None and cached[1] == size:
            count = cached[0]
        else:  # first append here, or someone edited the file by hand since
            data = path.read_bytes()
            count = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        with open(path, "ab") as fh:
            if count is None:
                fh.write(HEADER.encode())
                count = HEADER.count("\n")
            else:
                with open(path, "rb") as tail:
                    tail.seek(-1, os.SEEK_END)
                    if tail.read(1) != b"\n":
                        fh.write(b"\n")  # a hand edit left no final newline: never glue lines
            fh.write("".join(line.rstrip("\n") + "\n" for line in lines).encode())
            fh.flush()
            os.fsync(fh.fileno())
            end = fh.tell()
        if size <= 0:
            fsync_path(path.parent)
        self._line_counts[path] = (count + len(lines), end)
        return str(path.relative_to(self.directory)), count + 1

    def files(self) -> Iterator[tuple[str, Path]]:
        """(project root, file) for every journal file, in name (= date) order."""
        if not self.directory.is_dir():
            return
        for d in sorted(p for p in self.directory.iterdir() if p.is_dir()):
            try:
                root = (d / ".project").read_text().strip()
            except OSError:
                continue
            for f in sorted(d.glob("*.md")):
                yield root, f

    def state(self) -> dict[str, list[int]]:
        """Size and mtime of every file: a replay is due when this differs from the last one."""
        out = {}
        for _, f in self.files():
            st = f.stat()
            out[str(f.relative_to(self.directory))] = [st.st_size, st.st_mtime_ns]
        return out
