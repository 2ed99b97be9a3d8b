"""Which workspace chunks the meaning (vector) index takes, and in what order. Pure rules.

Embedding is the slow leg (MiniLM: tens of chunks a second on two cores), so a fresh
repository waits minutes for its meaning index. Two rules make that wait count:

- Vendored and generated trees (`_vendor/`, `node_modules/`, `vendor/`, lock files, minified
  files) stay out of the meaning index unless `embedVendored` is set. They are someone
  else's code, rarely what a question is about, and often most of a repository's chunks
  (pip: 45% of its files under `_vendor/`). They stay searchable by their words.
- The rest goes most useful first: files recall has shown or a caller has read (hot), then
  files changed in the last week, then documents before code, then everything else in the
  order it was written.
"""

from __future__ import annotations

from typing import NamedTuple

VENDORED_DIRS = frozenset({"_vendor", "vendor", "vendored", "node_modules", "bower_components", "third_party",
                           "site-packages", "jspm_packages"})
LOCK_FILES = frozenset({"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
                        "poetry.lock", "pdm.lock", "uv.lock", "pipfile.lock", "cargo.lock", "gemfile.lock",
                        "composer.lock", "go.sum", "mix.lock", "flake.lock", "packages.lock.json"})
MINIFIED_SUFFIXES = (".min.js", ".min.css", ".min.mjs", ".bundle.js", ".js.map", ".css.map")
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc", ".org")
# A chunk whose lines average this many characters is generated or minified (source lines
# average ~30-40; a minified bundle is one line of kilobytes).
MINIFIED_LINE_CHARS = 300
MINIFIED_SPACES = 0.08  # ... and fewer than this share of whitespace (minified code: a few %)
RECENT_S = 7 * 86_400  # a file changed this recently counts as being worked on


def vendored(path: str, body: str = "") -> bool:
    """A vendored, generated or lock file, by its path (any folder on the way), or a chunk
    whose text is minified."""
    parts = path.replace("\\", "/").lower().split("/")
    name = parts[-1]
    if any(p in VENDORED_DIRS for p in parts[:-1]):
        return True
    if name in LOCK_FILES or name.endswith(".lock") or name.endswith(MINIFIED_SUFFIXES):
        return True
    return bool(body) and not name.endswith(DOC_SUFFIXES) and minified(body)


def minified(body: str) -> bool:
    """Long lines with hardly a space: a bundle. Prose written a paragraph a line has long
    lines too, but a space every few words (~15% of its characters)."""
    if len(body) < 2 * MINIFIED_LINE_CHARS or len(body) / (body.count("\n") + 1) < MINIFIED_LINE_CHARS:
        return False
    return sum(ch.isspace() for ch in body) / len(body) < MINIFIED_SPACES


class ChunkFile(NamedTuple):
    """What ranks a chunk: its file's path (relative to the project), absolute path, mtime."""

    path: str
    absolute: str
    mtime_ns: int


def rank(seq: int, file: ChunkFile | None, hot: frozenset[str], now_s: float) -> tuple[int, int, int]:
    """Sort key of a chunk to embed (smaller first): hot files, recent files, documents, the
    rest; vendored last (when they are embedded at all); ties in outbox order. A chunk of
    another kind, or whose file is gone, keeps its outbox place among the rest."""
    if file is None:
        return (3, 0, seq)
    if vendored(file.path):
        tier = 5
    elif file.absolute in hot:
        tier = 0
    elif now_s - file.mtime_ns / 1e9 <= RECENT_S:
        tier = 1
    elif file.path.lower().endswith(DOC_SUFFIXES):
        tier = 2
    else:
        tier = 3
    docs_first = 0 if file.path.lower().endswith(DOC_SUFFIXES) else 1
    return (tier, docs_first, seq)
