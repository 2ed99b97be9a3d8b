"""Which projects this instance serves: the folders the host opened, and the jail every
path or project named by a request is checked against (engine/jail.py)."""

from __future__ import annotations

import logging
from pathlib import Path

from lore_sidecar.engine.jail import Jail, real
from lore_sidecar.engine.project import canonical_root

log = logging.getLogger(__name__)


class Projects:
    def __init__(self, folders: list[str], jail: Jail, records):
        self.folders = folders
        self.jail = jail  # immutable: replaced whole, so a reader never sees half of a change
        self.records = records
        self._missing: set[str] = set()

    def on_disk(self) -> list[str]:
        """The opened folders that exist (a client may name one that does not: it is
        reported once and neither indexed nor watched)."""
        out = []
        for folder in self.folders:
            if Path(folder).is_dir():
                out.append(folder)
            elif folder not in self._missing:
                self._missing.add(folder)
                log.warning("workspace folder %s does not exist; it is not indexed or watched", folder)
        return out

    def root(self, project: str | None) -> str:
        """The project a request names (it must lie inside an opened folder), else the
        first workspace folder's project."""
        if project:
            return canonical_root(self.jail.project(project))
        if self.folders:
            return canonical_root(self.folders[0])
        return canonical_root(Path.cwd())

    def ids(self, project: str | None, scope: str) -> list[int] | None:
        """The project ids a read covers: None means every project (scope "all")."""
        return self.ids_at(None if scope == "all" else self.root(project), scope)

    def ids_at(self, root: str | None, scope: str) -> list[int] | None:
        """`ids` for a project whose root the caller has already found."""
        if scope == "all":
            return None
        found = self.records.find_project(root)
        return [found.id] if found else []

    def open_folder(self, folder: str) -> None:
        """A folder the host opened (didChangeWorkspaceFolders, a hook's working folder)."""
        self.jail = self.jail.adding(canonical_root(folder)).adding(folder)

    def close_folder(self, folder: str) -> None:
        gone = {real(folder), real(canonical_root(folder))}
        still = {real(canonical_root(f)) for f in self.folders if real(f) not in gone}
        self.jail = self.jail.with_roots([r for r in self.jail.roots if r not in gone or r in still])
