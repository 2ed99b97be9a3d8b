"""Walking a workspace: which files to index, read safely.

Honours `.gitignore` (nested) and `.loreignore`, skips VCS and dependency folders, binaries,
generated and oversized files, and anything whose real path is outside the root. One bad
file is reported and skipped; it never stops the walk.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from lore_sidecar.engine import never_read as never_read_rules
from lore_sidecar.engine.jail import read_regular
from lore_sidecar.engine.never_read import never_read
from lore_sidecar.errors import LoreError, outside_workspace

log = logging.getLogger(__name__)

SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".idea", ".vscode", ".lore", "dist", "build", "target",
    ".next", ".cache", "coverage", ".eggs",
}
SKIP_SUFFIXES = (
    ".min.js", ".min.css", ".map", ".lock", ".pyc", ".pyo", ".so", ".dll", ".dylib", ".o",
    ".a", ".class", ".jar", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".png", ".jpg",
    ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".woff", ".woff2", ".ttf", ".otf", ".mp3",
    ".mp4", ".mov", ".wav", ".db", ".sqlite", ".sqlite3", ".usearch", ".safetensors", ".bin",
    ".onnx", ".npy", ".npz", ".pkl", ".parquet", ".exe", ".wasm",
)
SKIP_NAMES = {"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Cargo.lock",
              "uv.lock", "go.sum", ".DS_Store"}
# Files that hold credentials by convention are never read, whatever they contain: the one
# list is engine/never_read.py (re-exported here for the walk's callers).
SECRET_NAMES, SECRET_SUFFIXES, SECRET_PREFIXES = never_read_rules.SECRET_NAMES, never_read_rules.SECRET_SUFFIXES, \
    never_read_rules.SECRET_PREFIXES
READ_LIMIT = 64 << 20  # the walk skips files over the index's own limit before reading; this bounds a race
IGNORE_FILE_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class FileEntry:
    rel: str  # posix path relative to the project root
    abs: Path
    size: int
    mtime_ns: int


def inside(root: Path, candidate: Path, also: tuple[str, ...] = ()) -> Path:
    """The real path of `candidate` if it lies inside `root` (or one of the `also` roots a
    user explicitly allowed links into); raises outsideWorkspace."""
    real = candidate.resolve()
    for base in (root, *also):
        try:
            real.relative_to(Path(base).resolve())
            return real
        except ValueError:
            continue
    raise outside_workspace(str(candidate))


class IgnoreRules:
    """Nested .gitignore/.loreignore specs, each applied relative to its own folder."""

    def __init__(self, root: Path):
        self.root = root
        self._specs: dict[str, pathspec.PathSpec | None] = {}

    def _spec_for(self, rel_dir: str) -> pathspec.PathSpec | None:
        if rel_dir not in self._specs:
            lines: list[str] = []
            for name in (".gitignore", ".loreignore"):
                p = self.root / rel_dir / name
                # Most folders have neither: one lstat says so, where resolving the path
                # and opening it cost an lstat per path component (a fifth of the walk of
                # a deep tree). One that appears after this is picked up by the rescan
                # its creation triggers (engine/workspace/index.py: apply_changes).
                if not os.path.lexists(p):
                    continue
                try:  # through the one reader: a FIFO named .gitignore must not hang the walk
                    data = read_regular(Path(os.path.realpath(p)), max_bytes=IGNORE_FILE_BYTES,
                                        allowed=[Path(os.path.realpath(self.root))])
                    lines += data.decode("utf-8", errors="replace").splitlines()
                except (OSError, LoreError):
                    pass
            self._specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[rel_dir]

    def ignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            spec = self._spec_for(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if spec.match_file(sub):
                return True
        return False

    def forget(self, rel_dir: str) -> None:
        self._specs.pop(rel_dir, None)


def secret_file(name: str) -> bool:
    """`.env*`, keys, certificates' private halves, package-registry and cloud credentials."""
    return never_read_rules.secret_name(name)


def skip_name(name: str) -> bool:
    return name in SKIP_NAMES or name.lower().endswith(SKIP_SUFFIXES) or secret_file(name)


def walk(root: Path, folder: Path, rules: IgnoreRules, max_bytes: int, link_roots: tuple[str, ...] = ()) -> Iterator[FileEntry]:
    """Every indexable file under `folder` (which lies inside `root`)."""
    stack = [folder]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError as exc:
            log.warning("cannot list %s: %s", d, exc)
            continue
        try:
            # Each entry's relative path is the folder's plus its name (a Path and a
            # relative_to per entry were most of the walk's time: ~10 us of ~29 a file).
            base = d.relative_to(root).as_posix()
        except ValueError as exc:
            log.info("skipping %s: %s", d, exc)
            continue
        prefix = "" if base == "." else base + "/"
        for e in sorted(entries, key=lambda x: x.name):
            rel = prefix + e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name in SKIP_DIRS or rules.ignored(rel, True):
                        continue
                    stack.append(Path(e.path))
                    continue
                if not e.is_file(follow_symlinks=True) or skip_name(e.name):
                    continue
                if rules.ignored(rel, False) or never_read(rel):
                    continue
                if e.is_symlink():
                    # a link out of the workspace is never read, nor one to a credential file
                    if never_read_rules.secret_name(inside(root, Path(e.path), link_roots).name):
                        continue
                st = e.stat(follow_symlinks=True)
                if st.st_size > max_bytes or st.st_size == 0:
                    continue
                yield FileEntry(rel, Path(e.path), st.st_size, st.st_mtime_ns)
            except Exception as exc:  # one bad entry never stops the walk
                log.info("skipping %s: %s", e.path, exc)


def read_text(path: Path) -> tuple[str, str] | None:
    """(text, sha256) of a text file, or None if it looks binary or is not UTF-8. Read through
    the jail's one reader: the real file, regular, bounded, never a credential file (OSError
    otherwise, which the indexer records as unreadable)."""
    path = Path(path)
    if never_read_rules.secret_name(path.name):
        raise OSError(f"secretFile: {path} is on the never-read list")
    # Trigger: every file a scan reads. Why: realpath lstat()s each folder on the way (and
    # builds Paths), ~a third of reading a small note; the open below refuses a final link
    # (O_NOFOLLOW) and the walk descends into no linked folder, so only a file that is itself
    # a link needs resolving. Outcome: the path as walked, unless it is a link; a file
    # swapped for a link after this test is refused by the open, never followed.
    real = Path(os.path.realpath(path)) if os.path.islink(path) else path
    try:
        data = read_regular(real, max_bytes=READ_LIMIT, shown=str(path))
    except LoreError as exc:
        raise OSError(f"{exc.kind}: {exc.message}") from None
    if b"\x00" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text, hashlib.sha256(data).hexdigest()
