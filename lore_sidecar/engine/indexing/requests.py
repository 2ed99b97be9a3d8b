"""What a request may ask of the indexes: scan the workspace, take in changed files,
rebuild everything derived from the record, wait until the index is level. The writer's
work; on a follower the scans do nothing (the writer indexes for everyone)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lore_sidecar.engine.indexing.progress import progress_of, scan_finished, scan_started
from lore_sidecar.engine.indexing.reindex import rebuild
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.workspace.index import Progress
from lore_sidecar.errors import ScanStopped

log = logging.getLogger(__name__)


class IndexRequests:
    def __init__(self, instance: Any):
        self.i = instance  # the engine: role, view, projects, records, mark, memory

    def scan(self, progress: Progress | None = None, *, force: bool = False) -> None:
        """Bring the index of every opened folder up to date with the disk."""
        workspace = self.i.view.workspace
        if not self.i.role.writer or workspace is None:
            return
        records = self.i.records
        for folder in self.i.projects.on_disk():
            root = canonical_root(folder)
            try:
                scan_started(records, records.ensure_project(root).id)
                stats = workspace.scan(folder, force=force, progress=progress)
                log.info("indexed %s: %s", folder, stats)
                if (found := records.find_project(root)) is not None:
                    scan_finished(records, found.id)
            except ScanStopped:
                log.info("indexing %s stopped: the process is exiting", folder)
                return
            except Exception:  # one bad folder never stops the others
                log.exception("indexing %s failed", folder)
        self.i.mark.raise_to(records.outbox_head())

    def progress(self, project: str | None = None) -> dict[str, Any]:
        """What is indexed and what is still coming (engine/indexing/progress.py)."""
        return self.progress_at(self.i.projects.root(project))

    def progress_at(self, root: str) -> dict[str, Any]:
        """`progress` for a project whose root the caller has already found."""
        return progress_of(self.i, root)

    def wait_words(self, timeout: float) -> bool:
        """Until every recorded change is searchable by its words (True), or the timeout; the
        meaning index is never waited for (it fills behind, in whoever holds the writer role)."""
        indexer = self.i.view.indexer
        return True if indexer is None else indexer.wait_for(self.i.records.outbox_head(), timeout)

    def file_changes(self, folder: str, paths: Any) -> None:
        """The watcher saw these paths change (a `.lore.md` among them is imported)."""
        workspace = self.i.view.workspace
        if not self.i.role.writer or workspace is None:
            return
        paths = list(paths)
        workspace.apply_changes(folder, paths)
        if any(Path(p).name == ".lore.md" for p in paths):
            result = self.i.memory.store.import_if_changed(self.i.projects.root(folder))  # a git pull brought knowledge
            if result:
                log.info("imported .lore.md of %s: %s", folder, result)
                self.i.wrote()

    def rebuild(self, scope: str = "all", progress: Progress | None = None) -> dict[str, Any]:
        self.i.require_writer()
        return rebuild(self.i, scope, progress)

    def wait(self, timeout: float = 30.0) -> bool:
        """Until every recorded change is searchable here, by its words and its meaning
        (True), or the timeout."""
        indexer = self.i.view.indexer
        return True if indexer is None else indexer.wait_dense(self.i.records.outbox_head(), timeout)
