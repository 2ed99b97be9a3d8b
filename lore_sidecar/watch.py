"""Keeping the workspace index current from file events (watchfiles, debounced)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

import watchfiles

log = logging.getLogger(__name__)


class Watcher:
    def __init__(self, folders: Sequence[str], on_changes: Callable[[str, list[str]], None], *, debounce_ms: int):
        self.folders = list(folders)
        self.on_changes = on_changes
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if not self.folders:
            return
        self._thread = threading.Thread(target=self._run, name="lore-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        try:
            for changes in watchfiles.watch(
                *self.folders,
                stop_event=self._stop,
                debounce=self.debounce_ms,
                step=50,
                watch_filter=watchfiles.DefaultFilter(),
                raise_interrupt=False,
            ):
                by_folder: dict[str, list[str]] = {}
                for _, path in changes:
                    folder = next((f for f in self.folders if path == f or path.startswith(f.rstrip("/") + "/")), None)
                    if folder:
                        by_folder.setdefault(folder, []).append(path)
                for folder, paths in by_folder.items():
                    try:
                        self.on_changes(folder, sorted(set(paths)))
                    except Exception:  # a failed update must not stop watching
                        log.exception("applying file changes under %s failed", folder)
        except Exception:
            log.exception("file watcher stopped")
