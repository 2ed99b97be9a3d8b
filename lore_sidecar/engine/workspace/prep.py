"""What a changed file becomes before it is written: read, hashed, redacted, chunked. Pure.

A first scan of a big folder spends most of its Python time here (redaction alone ~45% of
the scan thread's), and the index worker needs the same interpreter lock. So a scan with
many files to read runs this in worker processes (engine/workspace/workers.py); anything
smaller, and the watcher's single files, run it in process. Both call `prepare`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lore_sidecar.compound import CompoundParts
from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.facts.notes import NoteFact, extract_note_facts
from lore_sidecar.engine.workspace.chunking import chunk_file
from lore_sidecar.engine.workspace.walk import read_text
from lore_sidecar.model import Chunk

# Each thread's own cache of the names it has cut (a scan's worker process, the scan's or
# the watcher's thread; a cache is not shared between threads). The text leg indexes a
# chunk's parts as prepared here instead of cutting them on its own thread: in a first scan
# of 2,000 source files that was a third of its time, on the core the scan also needs.
_LOCAL = threading.local()


def _parts(title: str, text: str) -> str:
    cut = getattr(_LOCAL, "parts", None)
    if cut is None:
        cut = _LOCAL.parts = CompoundParts()
    return cut.of(title, text)


@dataclass(frozen=True, slots=True)
class Prepared:
    """One file read. `kind`: "text" (chunks, and a note's facts when asked for),
    "same" (its bytes hash to the known sha: nothing to re-chunk), "binary" (binary or not
    UTF-8), "unreadable" (`error` says why)."""

    kind: str
    sha256: str = ""
    chunks: tuple[Chunk, ...] = ()
    text: str | None = None  # redacted; only when asked for and its facts could not be read here
    error: str | None = None  # "unreadable": the OSError; "text": a chunker failure (one chunk-less file)
    # A note's facts, read from its redacted text here (in a scan's worker process, not on the
    # scan's thread, which also writes the record), so the text itself need not travel back.
    facts: tuple[NoteFact, ...] | None = None


def prepare(rel: str, path: str | Path, known_sha: str | None, note: bool) -> Prepared:
    """`path` (the file at `rel`) as it should be recorded. `known_sha`: the recorded hash,
    when its content may be unchanged. `note`: a markdown note, whose facts are read too."""
    try:
        got = read_text(Path(path))
    except OSError as exc:
        return Prepared("unreadable", error=f"{type(exc).__name__}: {exc}")
    if got is None:
        return Prepared("binary")
    text, sha = got
    if known_sha is not None and known_sha == sha:
        return Prepared("same", sha)
    text = redact(text)  # the hash stays the file's; what is stored and indexed is redacted
    error = None
    try:
        chunks = tuple(Chunk(c.start_line, c.end_line, c.kind, c.title, c.text, _parts(c.title, c.text))
                       for c in chunk_file(rel, text))
    except Exception as exc:  # a chunker bug must not stop indexing: the file keeps no chunks
        chunks, error = (), f"chunking failed: {type(exc).__name__}: {exc}"
    if not note:
        return Prepared("text", sha, chunks, None, error)
    try:
        facts = tuple(extract_note_facts(text, PurePosixPath(rel).stem))
    except Exception:  # read again where they are written, which reports the failure there
        return Prepared("text", sha, chunks, text, error)
    return Prepared("text", sha, chunks, None, error=error, facts=facts)


def prepare_all(items: list[tuple[str, str, str | None, bool]]) -> list[Prepared]:
    """`prepare` over (rel, path, known_sha, note) items, in order."""
    return [prepare(*item) for item in items]
