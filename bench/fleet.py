"""Several real sidecar processes on one store, driven over stdio (tests and bench share it)."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from lore_sidecar.client import StdioClient, sidecar_command


class Fleet:
    def __init__(self, store: Path, workspace: Path, **options: Any):
        self.store = store
        self.workspace = workspace
        self.options = {"storeDir": str(store), **options}
        self.members: list[StdioClient] = []
        self._lock = threading.Lock()

    def spawn(self, *, initialize: bool = True, process: StdioClient | None = None) -> StdioClient:
        """A new member; `process` is one started earlier (uninitialized, it has not opened
        the store), so its interpreter's start-up overlapped other work."""
        c = process or StdioClient(sidecar_command())
        if initialize:
            c.initialize(self.workspace, options=self.options)
            c.request("lore/status")  # answered once the store is open
        with self._lock:
            self.members.append(c)
        return c

    def live(self) -> list[StdioClient]:
        with self._lock:
            return [c for c in self.members if c.proc.poll() is None]

    def by_pid(self, pid: int) -> StdioClient | None:
        return next((c for c in self.live() if c.proc.pid == pid), None)

    def writer_pid(self) -> int | None:
        try:
            return int((self.store / "writer.lock").read_text().strip())
        except (OSError, ValueError):
            return None

    def epochs(self) -> list[dict[str, Any]]:
        with sqlite3.connect(self.store / "lore.db") as c:
            c.row_factory = sqlite3.Row
            return [dict(r) for r in c.execute("SELECT * FROM epochs ORDER BY epoch")]

    def current_epoch(self) -> int:
        rows = self.epochs()
        return rows[-1]["epoch"] if rows else 0

    def wait_for_epoch(self, above: int, timeout: float = 10.0) -> dict[str, Any]:
        """The first epoch row newer than `above` (a new writer's first commit)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = [r for r in self.epochs() if r["epoch"] > above]
            if rows:
                return rows[0]
            time.sleep(0.005)
        raise TimeoutError(f"no writer claimed an epoch above {above} in {timeout}s")

    def kill(self, client: StdioClient, sig: int = signal.SIGKILL) -> int:
        """Send `sig`; returns the wall-clock time (ns) just before the signal."""
        t = time.time_ns()
        os.kill(client.proc.pid, sig)
        if sig == signal.SIGKILL:
            client.proc.wait()
        return t

    def close(self) -> None:
        for c in self.members:
            if c.proc.poll() is None:
                try:
                    os.kill(c.proc.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        for c in self.members:
            c.close(timeout=10)


def record(client: StdioClient, session: str, ids: list[str], words: str = "", timeout: float = 30.0) -> dict[str, Any]:
    return client.request(
        "lore/recordMessages",
        {"sessionId": session, "messages": [{"id": i, "role": "user", "content": f"{words} token{i.replace('-', 'x')}"} for i in ids]},
        timeout=timeout,
    )


def stored_ids(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store / "lore.db") as c:
        return [(r[0], r[1]) for r in c.execute("SELECT session_id, msg_id FROM messages")]


def index_snapshot(store: Path) -> tuple[list[tuple[str, int]], dict]:
    """The published indexes' contents, read from disk: text documents as (kind, key) and
    every vector by (kind, project) and key. Take it after the writer has shut down cleanly."""
    import json

    from lore_sidecar.store.index_dirs import index_dir
    from lore_sidecar.store.text_index import TextIndex
    from lore_sidecar.store.vector_index import VectorIndex

    with sqlite3.connect(store / "lore.db") as c:
        epoch = int(c.execute("SELECT value FROM meta WHERE key='index_epoch'").fetchone()[0])
    d = index_dir(store, epoch)
    meta = json.loads((d / "vectors" / "vectors.json").read_text())
    text = TextIndex(d / "text", writable=False)
    vectors = VectorIndex(d / "vectors", spaces={k: (v.rpartition("/")[0], int(v.rpartition("/")[2]))
                                                  for k, v in meta["spaces"].items()}, writable=False)
    return text.doc_keys(), vectors.contents()


def record_keys(store: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(store / "lore.db") as c:
        rows = [("messages", r[0]) for r in c.execute("SELECT id FROM messages")]
        rows += [("files", r[0]) for r in c.execute("SELECT id FROM chunks")]
    return sorted(rows)
