"""The read-only tools a codebase question may use: Read, Grep, Glob, find_paths,
get_changed_files, git_search. No shell, no writes.

Every path goes through the project's jail (real paths, symlinks resolved, `..` and
absolute paths outside refused); files are read as regular files only (no FIFOs or devices),
text only and bounded; searches run as child processes with a time limit and a cap on what
they may print, so a regex bomb or a huge tree costs at most the bound. git runs through
engine/gitsafe.py (the repository gets no say in what git runs: no config of its own that
executes, no tracked `.gitconfig`, no inherited `GIT_*`); a refused repository is a tool
error. User text never becomes a git option (it is passed as `--grep=<text>` or after `--`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore_sidecar.engine import gitsafe
from lore_sidecar.engine.jail import Jail, check_path_text
from lore_sidecar.engine.never_read import drop_secret_diffs, grep_excludes, never_read
from lore_sidecar.errors import LoreError

READ_BYTES = 256 * 1024
READ_LINES = 2000
OUTPUT_BYTES = 64 * 1024
TIME_S = 1.0
LIST_CAP = 500
SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".cache", ".mypy_cache", ".ruff_cache"}


@dataclass(frozen=True)
class Tools:
    root: Path
    jail: Jail

    def _path(self, value: str) -> Path:
        check_path_text(value)
        given = Path(value)
        return self.jail.resolve(given if given.is_absolute() else self.root / given)

    def _shown(self, p: Path) -> str:
        try:
            return p.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(p)

    # -- the tools ------------------------------------------------------------------------------
    def read(self, path: str, offset: int = 0, limit: int = READ_LINES) -> dict[str, Any]:
        p = self._path(path)
        data = self.jail.read_bytes(p, max_bytes=READ_BYTES)
        if b"\0" in data[:8192]:
            raise LoreError("notText", f"{path!r} is not a text file", path=path)
        lines = data.decode("utf-8", errors="replace").splitlines()
        offset, limit = max(0, int(offset)), max(1, min(READ_LINES, int(limit)))
        chosen = lines[offset: offset + limit]
        return {"path": self._shown(p), "startLine": offset + 1, "lines": chosen, "total": len(lines),
                "truncated": offset + len(chosen) < len(lines), "sha256": hashlib.sha256(data).hexdigest()}

    def relative(self, path: str) -> str:
        """The path as the project names it (inside the jail, or refused)."""
        return self._shown(self._path(path))

    def sha256(self, path: str) -> str | None:
        """The file's hash as a source of what was learnt (None: gone, unreadable, not text)."""
        try:
            return hashlib.sha256(self.jail.read_bytes(self._path(path), max_bytes=READ_BYTES)).hexdigest()
        except LoreError:
            return None

    def grep(self, pattern: str, glob: str | None = None, context: int = 0) -> dict[str, Any]:
        if not pattern or len(pattern) > 500:
            raise LoreError("invalidPattern", "a pattern of 1..500 characters is needed")
        # -Z ends each file name with a NUL, so the never-read filter below knows exactly which
        # file a line came from; the excludes keep grep from opening credential files at all.
        args = ["grep", "-rEnIZ", "--color=never", f"-C{max(0, min(5, int(context)))}", "-m", "50"]
        args += [f"--exclude-dir={d}" for d in sorted(SKIP_DIRS)] + grep_excludes()
        if glob:
            check_path_text(glob, "glob")
            args.append(f"--include={glob}")
        out, cut = run(args + ["-e", pattern, "--", "."], self.root, {"PATH": gitsafe.clean_path(self.root), "LC_ALL": "C"})
        matches = []
        for line in out.splitlines():
            name, sep, rest = line.partition("\0")
            if not sep:
                continue  # a group separator ("--") or a line cut short by the output bound
            name = name[2:] if name.startswith("./") else name
            if not never_read(name):
                matches.append(name + (":" if rest.split(":", 1)[0].isdigit() else "-") + rest)
        matches = matches[:LIST_CAP]
        return {"pattern": pattern, "matches": matches, "truncated": cut or len(matches) >= LIST_CAP}

    def glob(self, pattern: str) -> dict[str, Any]:
        check_path_text(pattern, "pattern")
        if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
            raise LoreError("outsideWorkspace", f"a glob stays inside the project: {pattern!r}", path=pattern)
        found: list[str] = []
        for rel in self._walk(depth=12):
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(rel).name, pattern):
                found.append(rel)
                if len(found) >= LIST_CAP:
                    break
        return {"pattern": pattern, "paths": found, "truncated": len(found) >= LIST_CAP}

    def find_paths(self, path: str = ".", depth: int = 2) -> dict[str, Any]:
        base = self._path(path)
        if not base.is_dir():
            raise LoreError("notAFile", f"{path!r} is not a folder", path=path)
        rels = list(self._walk(base, depth=max(1, min(4, int(depth))), dirs=True))
        return {"path": self._shown(base), "entries": rels[:LIST_CAP], "truncated": len(rels) > LIST_CAP}

    def get_changed_files(self) -> dict[str, Any]:
        argv, env = gitsafe.command(self.root, self.jail, "status", "--porcelain", "--untracked-files=normal",
                                    "--ignore-submodules=all")
        out, cut = run(argv, self.root, env)
        return {"changed": [line for line in out.splitlines() if line.strip()][:LIST_CAP], "truncated": cut}

    def git_search(self, query: str, path: str | None = None, patch: bool = False, limit: int = 20) -> dict[str, Any]:
        if len(query) > 300:
            raise LoreError("invalidPattern", "a query of at most 300 characters")
        args = [f"--max-count={max(1, min(50, int(limit)))}", "--no-ext-diff", "--no-textconv", "--no-show-signature",
                "--no-color", "--format=%h %ad %s", "--date=short", f"--grep={query}", "-i"]
        if patch:
            args += ["-p", "--stat"]
        args.append("--")
        if path:
            args.append(self._shown(self.jail.readable(self._path(path))))
        argv, env = gitsafe.command(self.root, self.jail, "log", *args)
        out, cut = run(argv, self.root, env)
        if patch:
            out = drop_secret_diffs(out)  # a credential file's old contents stay out of the patches too
        return {"query": query, "log": out, "truncated": cut}

    # -- helpers --------------------------------------------------------------------------------------
    def _walk(self, base: Path | None = None, *, depth: int, dirs: bool = False):
        start = base or self.root
        todo = [(start, 0)]
        seen = 0
        while todo:
            here, level = todo.pop()
            try:
                entries = sorted(os.scandir(here), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > 50_000:  # a bound on the tree, whatever its size
                    return
                if e.is_symlink():
                    continue  # a link may leave the project; the tools never follow one while walking
                rel = Path(e.path).relative_to(self.root).as_posix()
                if never_read(rel + ("/x" if e.is_dir() else "")):
                    continue  # credential files (and folders such as .ssh) are not shown either
                if e.is_dir():
                    if e.name in SKIP_DIRS:
                        continue
                    if dirs:
                        yield rel + "/"
                    if level + 1 < depth:
                        todo.append((Path(e.path), level + 1))
                elif e.is_file():
                    yield rel


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, bool]:
    """A child process's output, cut at OUTPUT_BYTES and TIME_S (killed then): (text, cut).
    `env` is the child's whole environment (nothing is inherited)."""
    try:
        proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    except FileNotFoundError:
        raise LoreError("toolUnavailable", f"{args[0]} is not installed") from None
    chunks: list[bytes] = []
    size, cut = 0, False
    deadline = time.monotonic() + TIME_S
    assert proc.stdout is not None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                cut = True
                break
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                continue
            data = os.read(proc.stdout.fileno(), 65536)
            if not data:
                break
            chunks.append(data)
            size += len(data)
            if size >= OUTPUT_BYTES:
                cut = True
                break
    finally:
        # The child leads a session of its own: end the whole group, so what git itself
        # started (a transport helper, a pager) cannot outlive the bound. Before the wait,
        # while the leader is unreaped and its group id cannot name anything else.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        proc.stdout.close()
    return b"".join(chunks)[:OUTPUT_BYTES].decode("utf-8", errors="replace"), cut
