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

from lore_sidecar.errors import outside_workspace

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
# Files that hold credentials by convention: never read, whatever they contain.
SECRET_NAMES = {".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".htpasswd", ".pgpass", ".dockercfg",
                "credentials", "credentials.json", "credentials.yml", "credentials.yaml", "secrets.json",
                "secrets.yml", "secrets.yaml", "service-account.json", ".s3cfg", ".boto", "terraform.tfvars",
                "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "known_hosts", "authorized_keys"}
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".asc", ".gpg", ".ppk",
                   ".tfstate", ".tfvars")
SECRET_PREFIXES = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")


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
                try:
                    lines += p.read_text(errors="replace").splitlines()
                except OSError:
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
    low = name.lower()
    return low in SECRET_NAMES or low.endswith(SECRET_SUFFIXES) or low.startswith(SECRET_PREFIXES)


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
        for e in sorted(entries, key=lambda x: x.name):
            p = Path(e.path)
            try:
                rel = p.relative_to(root).as_posix()
                if e.is_dir(follow_symlinks=False):
                    if e.name in SKIP_DIRS or rules.ignored(rel, True):
                        continue
                    stack.append(p)
                    continue
                if not e.is_file(follow_symlinks=True) or skip_name(e.name):
                    continue
                if rules.ignored(rel, False):
                    continue
                if e.is_symlink():
                    inside(root, p, link_roots)  # a link out of the workspace is never read
                st = e.stat(follow_symlinks=True)
                if st.st_size > max_bytes or st.st_size == 0:
                    continue
                yield FileEntry(rel, p, st.st_size, st.st_mtime_ns)
            except Exception as exc:  # one bad entry never stops the walk
                log.info("skipping %s: %s", p, exc)


def read_text(path: Path) -> tuple[str, str] | None:
    """(text, sha256) of a text file, or None if it looks binary or is not UTF-8."""
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text, hashlib.sha256(data).hexdigest()
