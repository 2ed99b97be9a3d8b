"""Keeping the record of workspace files current: full scans and incremental changes.

Incremental by content: a file whose size and mtime are unchanged is not read; one whose
bytes hash the same is not re-chunked. Every change lands as record rows plus outbox rows;
the index worker does the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from lore_sidecar.engine.never_read import never_read
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.workspace.prep import Prepared, prepare
from lore_sidecar.engine.workspace.walk import FileEntry, IgnoreRules, inside, skip_name, walk
from lore_sidecar.engine.workspace.workers import WorkerFailed, Workers, worker_count
from lore_sidecar.errors import LoreError
from lore_sidecar.model import FileWrite

log = logging.getLogger(__name__)

# More changed paths than this in one watcher batch (a branch switch, a big checkout) and a
# full rescan is cheaper and surer than chasing each path.
RESCAN_THRESHOLD = 200
SCAN_BATCH_FILES = 256  # files written per transaction by a scan
SCAN_BATCH_CHARS = 8_000_000  # or fewer, when their chunks hold this much text
# Files to read from which a scan prepares them in worker processes (each costs ~60 ms to
# start, what preparing ~250 files here costs).
PARALLEL_MIN_FILES = 500
# The walk reports (and so may be stopped: an exit) every this many files found: a 50,000-file
# tree takes ~0.5 s to list here, seconds under load, which an exit otherwise waited out.
WALK_REPORT_FILES = 1000

Progress = Callable[[str, int | None], None]  # (message, percentage)
NOTE_SUFFIXES = (".md", ".markdown")


def is_note(rel: str) -> bool:
    return rel.lower().endswith(NOTE_SUFFIXES)


def _start_workers() -> Workers | None:
    """File preparation workers for a big scan, or None if they cannot start (the scan then
    prepares its files itself)."""
    try:
        return Workers(worker_count())
    except OSError as exc:
        log.warning("cannot start file preparation workers (%s); preparing here", exc)
        return None


@dataclass(slots=True)
class ScanStats:
    seen: int = 0
    indexed: int = 0
    deleted: int = 0
    skipped: int = 0


class WorkspaceIndex:
    def __init__(self, records, *, max_file_bytes: int, on_change: Callable[[], None], note_hook=None,
                 file_hook=None, link_roots: tuple[str, ...] = (), parallel: bool = True,
                 writing: Callable[[], AbstractContextManager] = nullcontext):
        self.records = records
        self.writing = writing  # held around a scan's writes: the legs after the text leg wait
        self.parallel = parallel  # big scans may prepare files in worker processes
        self.link_roots = link_roots  # folders outside the workspace that symlinks may lead into
        self.max_file_bytes = max_file_bytes
        self.on_change = on_change
        # note_hook(conn, project_id, rel, text or None, facts=None): facts a markdown note
        # states (read by prep when it could: then `facts`), kept in step with the note inside
        # the same transaction.
        self.note_hook = note_hook
        # file_hook(conn, project_id, [(rel, sha256 or None)]): told of the files a transaction
        # changed, in it (knowledge citing one of them is flagged stale).
        self.file_hook = file_hook
        self._rules: dict[str, IgnoreRules] = {}

    def rules(self, root: str) -> IgnoreRules:
        if root not in self._rules:
            self._rules[root] = IgnoreRules(Path(root))
        return self._rules[root]

    def scan(self, folder: str | Path, *, force: bool = False, progress: Progress | None = None) -> ScanStats:
        """Bring the record of every file under `folder` up to date."""
        root = canonical_root(folder)
        base = Path(folder).resolve()
        project = self.records.ensure_project(root)
        states = self.records.files.file_states(project.id)
        workers: Workers | None = None
        try:
            # Trigger: the walk has found PARALLEL_MIN_FILES files to read. Why: a worker
            # takes ~60 ms to start (its imports), which the scan otherwise waited out after
            # the walk. Outcome: the workers start then and import while the walk goes on.
            entries: list[FileEntry] = []
            changed: list[bool] = []  # each entry's: must it be read? (worked out once, here)
            to_read = 0
            for entry in walk(Path(root), base, self.rules(root), self.max_file_bytes, self.link_roots):
                entries.append(entry)
                if progress and len(entries) % WALK_REPORT_FILES == 0:
                    progress(f"listing files: {len(entries)} found", None)
                changed.append(self._changed(states.get(entry.rel), entry.size, entry.mtime_ns, force))
                to_read += changed[-1]
                if changed[-1] and to_read == PARALLEL_MIN_FILES and self.parallel:
                    workers = _start_workers()
            with self.writing():
                return self._scan(project.id, root, base, states, entries, changed, force, progress, workers)
        finally:
            if workers is not None:
                workers.close()

    def _scan(self, project_id: int, root: str, base: Path, states: dict, entries: list[FileEntry],
              changed: list[bool], force: bool, progress: Progress | None, workers: Workers | None = None) -> ScanStats:
        stats = ScanStats()
        seen: set[str] = set()
        batch: list[FileWrite] = []
        held = 0  # characters of text the batch holds
        for i, (entry, prepared) in enumerate(self._prepared(entries, changed, states, force, workers)):
            seen.add(entry.rel)
            stats.seen += 1
            write = None if prepared is None else self._write_for(project_id, entry.rel, entry.size, entry.mtime_ns,
                                                                   states.get(entry.rel), prepared)
            if write is not None:
                stats.indexed += 1
                batch.append(write)
                held += sum(len(c.text) for c in write.chunks)
                # Files are written in batches, one transaction (one fsync) each, so a first
                # scan is not one commit per file; bounded in count and size.
                if len(batch) >= SCAN_BATCH_FILES or held >= SCAN_BATCH_CHARS:
                    self._replace(project_id, batch)
                    self.on_change()  # the text leg indexes this batch while the scan reads on
                    batch, held = [], 0
            if progress and (i % 200 == 0):
                progress(f"{i}/{len(entries)} files", int(100 * i / max(1, len(entries))))
        self._replace(project_id, batch)
        prefix = base.relative_to(root).as_posix()
        gone = [
            p for p in states
            if p not in seen and (prefix in ("", ".") or p == prefix or p.startswith(prefix + "/"))
        ]
        if gone:
            self._delete(project_id, gone)
            stats.deleted = len(gone)
        self.on_change()
        return stats

    def apply_changes(self, folder: str | Path, paths: Iterable[str]) -> None:
        """Watcher entry point: re-examine each changed path (file or folder, present or gone)."""
        paths = list(paths)
        root = canonical_root(folder)
        if len(paths) > RESCAN_THRESHOLD or any(Path(p).name in (".gitignore", ".loreignore") for p in paths):
            self._rules.pop(root, None)
            self.scan(folder)
            return
        project = self.records.ensure_project(root)
        rules = self.rules(root)
        states = self.records.files.file_states(project.id)
        gone: list[str] = []
        for raw in paths:
            p = Path(raw)
            try:
                rel = p.absolute().relative_to(root).as_posix()
            except ValueError:
                continue
            if p.is_dir():
                self.scan(p)
                continue
            if not p.is_file():
                gone += [s for s in states if s == rel or s.startswith(rel + "/")]
                continue
            if skip_name(p.name) or never_read(rel) or rules.ignored(rel, False) or any(
                part in ("node_modules", ".git") for part in rel.split("/")
            ):
                if rel in states:
                    gone.append(rel)
                continue
            try:
                real = inside(Path(root), p, self.link_roots)
                st = real.stat()
                if st.st_size > self.max_file_bytes or st.st_size == 0:
                    if rel in states:
                        gone.append(rel)
                    continue
                self._update(project.id, rel, real, st.st_size, st.st_mtime_ns, states.get(rel), False)
            except LoreError:
                if rel in states:
                    gone.append(rel)
            except OSError as exc:
                log.info("skipping %s: %s", p, exc)
        if gone:
            self._delete(project.id, gone)
        self.on_change()

    def _update(self, project_id: int, rel: str, path: Path, size: int, mtime_ns: int, state, force: bool) -> bool:
        if not self._changed(state, size, mtime_ns, force):
            return False
        write = self._write_for(project_id, rel, size, mtime_ns, state, self._prepare(rel, path, state, force))
        if write is not None:
            self._replace(project_id, [write])
        return write is not None

    @staticmethod
    def _changed(state, size: int, mtime_ns: int, force: bool) -> bool:
        """Whether a file must be read: new, forced, or its size or mtime moved."""
        return force or state is None or state.size != size or state.mtime_ns != mtime_ns

    @classmethod
    def _prepare(cls, rel: str, path: Path, state, force: bool) -> Prepared:
        return prepare(rel, path, cls._known_sha(state, force), is_note(rel))

    def _prepared(self, entries: list[FileEntry], changed: list[bool], states: dict, force: bool,
                  workers: Workers | None) -> Iterator[tuple[FileEntry, Prepared | None]]:
        """Each entry with what it became (None: unchanged on disk, not read: `changed` says
        which were), in order.
        `workers`: started by the walk when it found at least PARALLEL_MIN_FILES to read.
        Why: preparing a file holds the interpreter lock the index worker needs to make the
        same files searchable (a first scan of 2,000 source files ran at ~1,100 files/s on
        two cores, the two threads taking turns). Outcome: worker processes prepare them, in
        order; if the workers could not start or one dies, the rest are prepared here."""
        results: Iterator[Prepared] | None = None
        if workers is not None:
            results = workers.map([(e.rel, str(e.abs), self._known_sha(states.get(e.rel), force), is_note(e.rel))
                                   for e, c in zip(entries, changed, strict=True) if c])
        for entry, read in zip(entries, changed, strict=True):
            if not read:
                yield entry, None
                continue
            state = states.get(entry.rel)
            got = None
            if results is not None:
                try:
                    got = next(results)
                except WorkerFailed as exc:
                    log.warning("%s; preparing the rest here", exc)
                    results = None
            yield entry, got if got is not None else self._prepare(entry.rel, entry.abs, state, force)

    @staticmethod
    def _known_sha(state, force: bool) -> str | None:
        """The recorded hash a read may match (then nothing is re-chunked); none when forced."""
        return None if force or state is None else state.sha256

    def _write_for(self, project_id: int, rel: str, size: int, mtime_ns: int, state, got: Prepared) -> FileWrite | None:
        """What to write for a changed file, or None when there is nothing to write (same
        content under a new stat; binary or unreadable: dropped here)."""
        if got.kind == "unreadable":
            log.info("cannot read %s: %s", rel, got.error)
            return None
        if got.kind == "binary":
            if state:
                self._delete(project_id, [rel])
            return None
        if got.kind == "same":
            self.records.files.touch_file(state.file_id, size, mtime_ns)
            return None
        if got.error:
            log.error("%s: %s", rel, got.error)
        sha, text, facts = got.sha256, got.text, got.facts
        note_hook = self.note_hook if is_note(rel) else None

        def after(c) -> None:
            note_hook(c, project_id, rel, text, facts=facts)

        return FileWrite(rel, sha, size, mtime_ns, got.chunks, after if note_hook is not None else None)

    def _replace(self, project_id: int, writes: list[FileWrite]) -> None:
        """Record `writes` in one transaction, the file hook told of them all at its end."""
        self.records.files.replace_files(project_id, writes, then=self._hook_step(project_id, [(w.path, w.sha256) for w in writes]))

    def _hook_step(self, project_id: int, changes: list[tuple[str, str | None]]):
        """The transaction's last step: the file hook told of every file it changed."""
        file_hook = self.file_hook
        if file_hook is None or not changes:
            return None
        return lambda c: file_hook(c, project_id, changes)

    def _delete(self, project_id: int, rels: list[str]) -> None:
        note_hook = self.note_hook

        def after(c, rel: str) -> None:
            if note_hook is not None and is_note(rel):
                note_hook(c, project_id, rel, None)

        self.records.files.delete_files(project_id, rels, after=after, then=self._hook_step(project_id, [(r, None) for r in rels]))
