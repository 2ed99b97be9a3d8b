"""What the dense leg reads to choose which workspace chunks to embed first
(engine/indexing/priority.py): each chunk's file (path, project root, mtime) and the files
that recall has recently shown or a caller has read (`recall_shown`, `recall_usage`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

from lore_sidecar.store.db import Database, select_in

HOT_URIS = 2000  # the most recent file hits looked at: a few days of an agent's recalls


class DenseOrderRows:
    def __init__(self, db: Database):
        self.db = db

    def chunk_files(self, keys: Iterable[int]) -> dict[int, tuple[str, str, int]]:
        """chunk id -> (path in its project, absolute path, the file's mtime in ns)."""
        rows = select_in(self.db.reader(),
                         "SELECT c.id, f.path, f.mtime_ns, p.root FROM chunks c JOIN files f ON f.id=c.file_id"
                         " JOIN projects p ON p.id=f.project_id WHERE c.id IN ({})", list(keys))
        return {r[0]: (r[1], os.path.join(r[3], r[1]), r[2]) for r in rows}

    def hot_paths(self) -> frozenset[str]:
        """Absolute paths of the files among the latest recall hits shown and read."""
        rows = self.db.reader().execute(
            "SELECT uri FROM (SELECT uri, at FROM recall_usage WHERE uri LIKE 'file://%'"
            " UNION ALL SELECT uri, at FROM recall_shown WHERE uri LIKE 'file://%') ORDER BY at DESC LIMIT ?",
            (HOT_URIS,)).fetchall()
        return frozenset(unquote(urlsplit(r[0]).path) for r in rows)
