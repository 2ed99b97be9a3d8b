"""The engine facade: what the protocol layer and the CLI call. Synchronous and thread-safe;
the rpc layer runs it on its own executor."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lore_sidecar import PROTOCOL_VERSION, __version__
from lore_sidecar.engine import capture, uris
from lore_sidecar.engine.indexer import Indexer
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.recall import Recaller
from lore_sidecar.engine.workspace import inside
from lore_sidecar.engine.workspace_index import Progress, WorkspaceIndex
from lore_sidecar.errors import LoreError, not_found, not_writer
from lore_sidecar.model import ALL_SOURCES, NodeContent, RecallResult
from lore_sidecar.settings import Settings

log = logging.getLogger(__name__)
READ_YOUR_WRITES_TIMEOUT_S = 2.0


@dataclass
class Role:
    writer: bool
    writer_pid: int | None
    epoch: int = 0


@dataclass
class Engine:
    settings: Settings
    records: Any
    text: Any
    vectors: Any
    embedder: Any
    indexer: Indexer | None
    workspace: WorkspaceIndex | None
    role: Role
    distiller_mode: str = "off"
    folders: list[str] = field(default_factory=list)
    on_close: Callable[[], None] = lambda: None
    _last_write_seq: int = 0
    _seen_generation: int = -1
    _refresh_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.recaller = Recaller(self.records, self.text, self.vectors, self.embedder, self.settings.recall)

    # -- projects -------------------------------------------------------------------------------
    def project_root(self, project: str | None) -> str:
        if project:
            return canonical_root(project)
        if self.folders:
            return canonical_root(self.folders[0])
        return canonical_root(Path.cwd())

    # -- capture --------------------------------------------------------------------------------
    def record_messages(
        self, *, project: str | None, session_id: str, harness: str | None, messages: Sequence[dict]
    ) -> dict[str, Any]:
        self._require_writer()
        if not session_id.strip():
            raise LoreError("invalidKey", "sessionId must not be empty", value=session_id)
        normalised = []
        for i, m in enumerate(messages):
            try:
                normalised.append(capture.normalise(session_id=session_id, harness=harness, **m))
            except ValueError as exc:
                raise LoreError("invalidMessage", f"messages[{i}]: {exc}", index=i) from None
        project_row = self.records.ensure_project(self.project_root(project))
        outcome = self.records.insert_messages(project_row.id, normalised)
        self._last_write_seq = self.records.outbox_head()
        if self.indexer:
            self.indexer.notify()
        new = sum(1 for _, was_new in outcome if was_new)
        return {
            "recorded": new,
            "duplicates": len(outcome) - new,
            "ids": [mid for mid, _ in outcome],
            "durable": True,
            "applied": True,
        }

    # -- recall ---------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        project: str | None = None,
        scope: str = "project",
        sources: Sequence[str] | None = None,
        limit: int = 10,
        offset: int = 0,
        as_of: str | None = None,
        lexical_only: bool = False,
    ) -> RecallResult:
        self._fresh()
        if scope == "all":
            project_ids = None
        else:
            found = self.records.find_project(self.project_root(project))
            project_ids = [found.id] if found else []
        return self.recaller.recall(
            query,
            project_ids=project_ids,
            sources=list(sources or ALL_SOURCES),
            limit=limit,
            offset=offset,
            as_of=capture.iso_utc(as_of) if as_of else None,
            lexical_only=lexical_only,
        )

    def get_node(self, uri: str) -> NodeContent:
        kind, parts = uris.parse(uri)
        if kind == "messages":
            row = self.records.message_by_uri_parts(*parts)
            if row is None:
                raise not_found(uri)
            return NodeContent(
                uri=uri,
                source="messages",
                content=row["text"],
                metadata={
                    "sessionId": row["session_id"],
                    "messageId": row["msg_id"],
                    "role": row["role"],
                    "harness": row["harness"],
                    "toolName": row["tool_name"],
                    "toolCallId": row["tool_call_id"],
                    "createdAt": row["created_at"],
                    "recordedAt": row["recorded_at"],
                    "project": row["project_root"],
                },
            )
        path, start, end = parts
        for project in self.records.projects():
            root = Path(project.root)
            try:
                rel = Path(path).relative_to(root).as_posix()
            except ValueError:
                continue
            row = self.records.chunk_at(project.root, rel, start, end)
            if row is not None:
                return NodeContent(
                    uri=uri,
                    source="files",
                    content=row["text"],
                    metadata={
                        "path": path,
                        "startLine": start,
                        "endLine": end,
                        "title": row["title"],
                        "sha256": row["sha256"],
                        "project": project.root,
                    },
                )
            # Not a chunk boundary we stored: serve the lines from the file itself, but only
            # from inside a known workspace.
            real = inside(root, Path(path))
            lines = real.read_text(errors="replace").splitlines()[start - 1 : end]
            return NodeContent(
                uri=uri,
                source="files",
                content="\n".join(lines),
                metadata={"path": path, "startLine": start, "endLine": end, "project": project.root},
            )
        raise not_found(uri)

    # -- index ------------------------------------------------------------------------------------
    def index_workspace(self, progress: Progress | None = None, *, force: bool = False) -> None:
        if not self.role.writer or self.workspace is None:
            return
        for folder in self.folders:
            try:
                stats = self.workspace.scan(folder, force=force, progress=progress)
                log.info("indexed %s: %s", folder, stats)
            except Exception:  # one bad folder never stops the others
                log.exception("indexing %s failed", folder)
        self._last_write_seq = self.records.outbox_head()

    def reindex(self, scope: str = "all", progress: Progress | None = None) -> dict[str, Any]:
        self._require_writer()
        t0 = time.perf_counter()
        assert self.indexer is not None
        if scope == "all":
            if progress:
                progress("rebuilding indexes from the record", 0)
            self.indexer.request_rebuild()
        self.index_workspace(progress, force=scope == "workspace")
        self.indexer.wait_for(self.records.outbox_head(), timeout=3600)
        counts = self.records.counts(None)
        return {
            "generation": self.indexer.generation,
            "files": counts["files"],
            "chunks": counts["chunks"],
            "tookMs": round((time.perf_counter() - t0) * 1000, 1),
        }

    def wait_indexed(self, timeout: float = 30.0) -> bool:
        if self.indexer is None:
            return True
        return self.indexer.wait_for(self.records.outbox_head(), timeout)

    # -- status -----------------------------------------------------------------------------------
    def status(self, project: str | None = None) -> dict[str, Any]:
        self._fresh()
        root = self.project_root(project)
        found = self.records.find_project(root)
        counts = self.records.counts(found.id) if found else {"messages": 0, "files": 0, "chunks": 0}
        generation = self.indexer.generation if self.indexer else int(self.records.meta("generation", "0") or 0)
        lag_ms = 0
        if self.indexer is not None and self.indexer.applied_seq < self.records.outbox_head():
            lag_ms = -1  # behind; the exact age is not tracked per entry
        return {
            "version": __version__,
            "protocolVersion": PROTOCOL_VERSION,
            "role": "writer" if self.role.writer else "follower",
            "writerPid": self.role.writer_pid,
            "epoch": self.role.epoch,
            "storeDir": str(self.settings.store_dir),
            "project": {"id": found.id if found else None, "root": root},
            "generation": generation,
            "counts": {
                "messages": counts["messages"],
                "distillations": 0,
                "knowledge": 0,
                "facts": 0,
                "files": counts["files"],
                "chunks": counts["chunks"],
            },
            "embedder": {
                "name": self.embedder.name if self.embedder else "none",
                "dim": self.embedder.dim if self.embedder else 0,
            },
            "distiller": {"mode": self.distiller_mode, "model": None},
            "indexLagMs": lag_ms,
            "indexError": self.indexer.error if self.indexer else None,
        }

    # -- internals ------------------------------------------------------------------------------
    def _require_writer(self) -> None:
        if not self.role.writer:
            raise not_writer(self.role.writer_pid)

    def _fresh(self) -> None:
        """Read-your-writes on the writer; pick up the writer's commits on a follower."""
        if self.indexer is not None:
            if self._last_write_seq:
                self.indexer.wait_for(self._last_write_seq, READ_YOUR_WRITES_TIMEOUT_S)
            return
        gen = int(self.records.meta("generation", "0") or 0)
        if gen != self._seen_generation:
            with self._refresh_lock:
                self.text.reload()
                if self.vectors is not None:
                    self.vectors.refresh()
                self._seen_generation = gen

    def close(self) -> None:
        if self.indexer is not None:
            self.indexer.stop()
        self.on_close()
