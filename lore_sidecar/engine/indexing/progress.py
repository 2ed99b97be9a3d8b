"""What is still coming: whether a project's first scan has finished, and how far the meaning
(vector) index trails the words. Every answer carries it, so a caller that asks while the
index fills gets what is there now plus a plain line of what is not (issue 37: answers never
wait for meaning).

The first-scan mark lives in the record (meta `scan:<project id>`: "first" while the first
full scan runs, "done" once one finished), so a follower, or the next CLI call, knows it too.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from typing import Any

from lore_sidecar.engine.indexing import priority
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.model import INDEXED_SOURCES

FIRST, DONE = "first", "done"


def _key(project_id: int) -> str:
    return f"scan:{project_id}"


def scan_started(records: Any, project_id: int) -> None:
    """Before a full scan: a project never scanned to the end is marked as in its first scan."""
    if records.meta(_key(project_id)) != DONE:
        records.fenced(lambda c: records.set_meta(c, _key(project_id), FIRST))


def scan_finished(records: Any, project_id: int) -> None:
    """After a full scan that reached its end (an interrupted one leaves the mark as it was)."""
    if records.meta(_key(project_id)) != DONE:
        records.fenced(lambda c: records.set_meta(c, _key(project_id), DONE))


def first_scan_pending(engine: Any, root: str) -> tuple[bool, bool, int]:
    """(still to finish its first scan, that scan has begun, files indexed so far) for the
    project at `root`.

    Trigger: no mark at all. Why: a store written before the mark existed, or a project whose
    writer has not begun its scan yet (a sidecar asked right after `initialized`). Outcome: a
    project with files indexed counts as scanned (its next full scan writes the mark); one with
    none is still to be indexed, unless workspace indexing is off."""
    records = engine.records
    found = records.find_project(root)
    mark = records.meta(_key(found.id)) if found else None
    if mark == DONE:
        return False, False, 0
    # Files alone: every answer carries this line, and counting every tier (`records.counts`)
    # walked 100k messages' index on each recall (over half of one at 100k; measured).
    files = records.files.count(found.id) if found else 0
    if mark == FIRST:
        return True, True, files
    return files == 0 and engine.settings.index.index_workspace and root in _opened(engine), False, files


def _opened(engine: Any) -> set[str]:
    return {canonical_root(f) for f in engine.projects.on_disk()}


def meaning(engine: Any) -> dict[str, int]:
    """How far the vector index trails the record, store-wide: items embedded, items to go
    (upserts of a kind that has a model, after the dense leg's position) and the percentage."""
    view, records = engine.view, engine.records
    if view.vectors is None or engine.embedder is None:
        return {"percent": 100, "chunksToGo": 0, "embedded": 0}
    at = view.indexer.dense_seq if view.indexer is not None else view.vectors.saved_seq
    head = records.outbox_head()
    to_go = _owed(engine, at, head) if at < head else 0
    if to_go and view.indexer is not None:  # the writer embeds the most useful first, past its position
        to_go = max(1, to_go - getattr(view.indexer, "dense_ahead", 0))
    embedded = view.vectors.size()
    percent = 100 if not to_go else min(99, int(100 * embedded / max(1, embedded + to_go)))
    return {"percent": percent, "chunksToGo": to_go, "embedded": embedded}


def _owed(engine: Any, at: int, head: int) -> int:
    """Upserts after `at` the dense leg will embed: of every kind with a model, a workspace
    chunk counted only when its file is not vendored by its path (or `embedVendored` is set),
    since the leg passes those by without a vector (engine/indexing/priority.py). A chunk the
    leg finds minified by its text counts until it gets there: reading every pending chunk's
    text is too dear for a line every answer carries."""
    kinds = [k for k in INDEXED_SOURCES if engine.embedder.for_kind(k) is not None]
    owed = engine.records.outbox_upserts_after(at, kinds)
    if "files" in kinds and not engine.settings.index.embed_vendored:
        with _LOCK:
            skipped = _SKIPPED.get(engine.records)
            if skipped is None:
                skipped = _SKIPPED[engine.records] = VendoredUpserts()
            owed -= skipped.after(engine.records, at, head)
    return owed


class VendoredUpserts:
    """The outbox positions of vendored files' chunk upserts, read once each: each call
    reads only the entries written since the last (joining every pending entry to its file
    took ~0.5 s at 200k pending, on every answer) and forgets those the leg has passed."""

    def __init__(self) -> None:
        self.read_to = self.at = 0
        self.seqs: list[int] = []  # ascending
        self._vendored: dict[str, bool] = {}

    def after(self, records: Any, at: int, head: int) -> int:
        if at < self.at:  # the leg went back (a rebuild): what it had passed is owed again
            self.read_to, self.seqs = 0, []
        self.at = at
        if head > self.read_to:
            start = max(self.read_to, at)
            for seq, path in records.outbox_file_upserts(start, head):
                v = self._vendored.get(path)
                if v is None:
                    v = self._vendored[path] = priority.vendored(path)
                if v:
                    self.seqs.append(seq)
            self.seqs.sort()
            self.read_to = head
        del self.seqs[: bisect.bisect_right(self.seqs, at)]
        if not self.seqs:
            self._vendored.clear()  # a path's verdict is cheap to find again; do not hoard paths
        return len(self.seqs)


_LOCK = threading.Lock()
_SKIPPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def progress_of(engine: Any, root: str) -> dict[str, Any]:
    """The `indexing` object of `lore/status`, `lore/recall`, `lore/ask` and the CLI."""
    pending, begun, files = first_scan_pending(engine, root)
    m = meaning(engine)
    return {"stillIndexing": pending, "filesSoFar": files, "meaning": m, "message": message(pending, begun, files, m)}


def message(pending: bool, begun: bool, files: int, m: dict[str, int]) -> str | None:
    parts = []
    if pending:  # begun: its writer scans it now; else none has (a sidecar about to, or no writer here yet)
        parts.append(f"the workspace is still being indexed ({files:,} files so far)" if begun else
                     "the workspace is not indexed yet")
    if m["chunksToGo"]:
        parts.append(f"meaning index {m['percent']}%: {m['chunksToGo']:,} chunks to go")
    return "; ".join(parts) or None
