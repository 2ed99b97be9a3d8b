"""The engine facade: what the protocol layer and the CLI call. Synchronous and thread-safe;
the rpc layer runs it on its own executor."""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lore_sidecar import PROTOCOL_VERSION, __version__
from lore_sidecar.engine.capture import messages as capture
from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.facts import rules as fact_model
from lore_sidecar.engine.facts.service import new_fact_id
from lore_sidecar.engine.indexing.indexer import Indexer
from lore_sidecar.engine.jail import Jail, real
from lore_sidecar.engine.lifecycle import blocks as lifecycle
from lore_sidecar.engine.lifecycle.sessions import Sessions
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.recall.node_reader import read_node
from lore_sidecar.engine.recall.recaller import Recaller
from lore_sidecar.engine.workspace.index import Progress, WorkspaceIndex
from lore_sidecar.engine.writes.apply import SpoolApplier
from lore_sidecar.errors import LoreError, not_writer
from lore_sidecar.model import ALL_SOURCES, NewMessage, NodeContent, RecallResult
from lore_sidecar.settings import Settings

log = logging.getLogger(__name__)
READ_YOUR_WRITES_TIMEOUT_S = 2.0
MAX_QUERY_CHARS = 8192


def _relative(root: str, path: Any) -> Any:
    """A source path as the node records it: relative to the project root when inside it."""
    if isinstance(path, str) and Path(path).is_absolute():
        try:
            return Path(path).relative_to(root).as_posix()
        except ValueError:
            return path
    return path


_NODE_TEXT_FIELDS = ("content", "disclosure", "title", "reason")


def _redacted_node_args(args: dict[str, Any]) -> dict[str, Any]:
    """A node operation's free text with secrets redacted, before it is checked or spooled."""
    out = {k: redact(v) if k in _NODE_TEXT_FIELDS and isinstance(v, str) else v for k, v in args.items()}
    if isinstance(out.get("changes"), dict):
        out["changes"] = _redacted_node_args(out["changes"])
    return out


def new_op_id() -> str:
    """Unique across processes and sortable by creation time (the spool applies in order)."""
    return f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
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
    spool: Any = None
    facts: Any = None  # engine.fact_service.Facts
    memory: Any = None  # engine.memory.Memory (nodes, distillations, entities; every role)
    distiller: Any = None  # engine.distiller.Distiller (built on every instance; runs on the writer)
    memory_worker: Any = None  # engine.distiller.MemoryWorker (the writer's thread)
    folders: list[str] = field(default_factory=list)
    on_close: Callable[[], None] = lambda: None
    index_epoch: int = 0
    # Set by the composition root: reopen the index readers on the published directory, and
    # extra facts about the election for `lore/status`.
    reopen_readers: Callable[[], None] | None = None
    election_info: Callable[[], dict[str, Any]] = dict
    # Every path or project a request names is checked against this (engine/jail.py).
    jail: Jail = field(default_factory=Jail)
    _last_write_seq: int = 0
    _seen_generation: int = -1
    _refresh_lock: threading.Lock = field(default_factory=threading.Lock)
    _role_lock: threading.RLock = field(default_factory=threading.RLock)
    _op_failures: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.recaller = self._recaller(self.text, self.vectors)
        self.sessions = Sessions(self, self.settings.guidance or lifecycle.DEFAULT_GUIDANCE)

    def _recaller(self, text: Any, vectors: Any) -> Recaller:
        return Recaller(self.records, text, vectors, self.embedder, self.settings.recall, self.memory)

    # -- roles ----------------------------------------------------------------------------------
    def become_writer(self, *, text: Any, vectors: Any, indexer: Indexer, workspace: WorkspaceIndex, epoch: int, pid: int) -> None:
        with self._role_lock:
            self.text, self.vectors, self.indexer, self.workspace = text, vectors, indexer, workspace
            self.index_epoch = epoch
            self.recaller = self._recaller(text, vectors)
            # Whatever was applied before the indexes existed (the spool, at take-over) must
            # be searchable before the next read here answers.
            self._last_write_seq = max(self._last_write_seq, self.records.outbox_head())
            self.role = Role(writer=True, writer_pid=pid, epoch=epoch)

    def use_readers(self, *, text: Any, vectors: Any, index_epoch: int) -> None:
        """Follower: read from the index directory the current writer published."""
        with self._role_lock:
            self.text, self.vectors, self.index_epoch = text, vectors, index_epoch
            self.recaller = self._recaller(text, vectors)

    def become_follower(self, *, text: Any, vectors: Any, index_epoch: int, writer_pid: int | None, epoch: int) -> Indexer | None:
        """Drop the writer's duties; returns the indexer the caller must stop."""
        with self._role_lock:
            old = self.indexer
            self.indexer, self.workspace = None, None
            self.text, self.vectors, self.index_epoch = text, vectors, index_epoch
            self.recaller = self._recaller(text, vectors)
            self._seen_generation = -1
            self.role = Role(writer=False, writer_pid=writer_pid, epoch=epoch)
        return old

    # -- projects -------------------------------------------------------------------------------
    def project_root(self, project: str | None) -> str:
        """The project a request names (it must lie inside an opened folder), else the
        first workspace folder's project."""
        if project:
            return canonical_root(self.jail.project(project))
        if self.folders:
            return canonical_root(self.folders[0])
        return canonical_root(Path.cwd())

    def open_folder(self, folder: str) -> None:
        """A folder the host opened (didChangeWorkspaceFolders, a hook's working folder)
        joins the jail; the swap is one assignment, so readers never see half of it."""
        self.jail = self.jail.adding(canonical_root(folder)).adding(folder)

    def close_folder(self, folder: str) -> None:
        gone = {real(folder), real(canonical_root(folder))}
        still = {real(canonical_root(f)) for f in self.folders if real(f) not in gone}
        self.jail = self.jail.with_roots([r for r in self.jail.roots if r not in gone or r in still])

    # -- capture --------------------------------------------------------------------------------
    def record_messages(
        self, *, project: str | None, session_id: str, harness: str | None, messages: Sequence[dict]
    ) -> dict[str, Any]:
        if not session_id.strip():
            raise LoreError("invalidKey", "sessionId must not be empty", value=session_id)
        normalised = []
        for i, m in enumerate(messages):
            try:
                normalised.append(capture.normalise(session_id=session_id, harness=harness, **m))
            except ValueError as exc:
                raise LoreError("invalidMessage", f"messages[{i}]: {exc}", index=i) from None
        root = self.project_root(project)
        if self.role.writer:
            try:
                return self._record_direct(root, normalised)
            except LoreError as exc:
                if exc.kind != "notWriter":
                    raise
                log.info("fenced while recording (%s); spooling for the new writer", exc)
        return self._record_spooled(root, session_id, normalised)

    def _record_direct(self, root: str, normalised: list[NewMessage]) -> dict[str, Any]:
        project_row = self.records.ensure_project(root)
        outcome = self.records.insert_messages(project_row.id, normalised)
        self._wrote()
        new = sum(1 for _, was_new in outcome if was_new)
        return {
            "recorded": new,
            "duplicates": len(outcome) - new,
            "ids": [mid for mid, _ in outcome],
            "durable": True,
            "applied": True,
        }

    def _spool(self, op: dict[str, Any]) -> tuple[str, dict | None]:
        """Make a follower's write durable, then wait (bounded) for the writer to apply it so
        read-your-writes holds in the common case. Returns (op id, result or None)."""
        if self.spool is None:
            raise not_writer(self.role.writer_pid)
        op_id = self.spool.put({"opId": new_op_id(), **op})
        result = self.wait_applied(op_id, self.settings.store.apply_wait_ms / 1000)
        if result is not None and "error" in result:
            err = result["error"]
            raise LoreError(err.get("kind", "refused"), err.get("message", "refused by the writer"),
                            retryable=bool(err.get("retryable")))
        if result is not None:
            self._last_write_seq = max(self._last_write_seq, int(result.get("seq", 0)))
        return op_id, result

    def _record_spooled(self, root: str, session_id: str, normalised: list[NewMessage]) -> dict[str, Any]:
        ids = [m.msg_id for m in normalised]
        op_id, result = self._spool(
            {"kind": "recordMessages", "project": root, "messages": [asdict(m) for m in normalised]}
        )
        if result is None:
            # Not applied yet (no writer right now, or a slow one): the counts are what the
            # record held when we spooled; the operation itself is safe either way.
            known = self.records.existing_message_ids(session_id, ids)
            result = {"recorded": sum(1 for i in ids if i not in known), "duplicates": len(known), "applied": False}
        return {
            "recorded": result["recorded"],
            "duplicates": result["duplicates"],
            "ids": ids,
            "durable": True,
            "applied": result.get("applied", True),
            "opId": op_id,
        }

    def wait_applied(self, op_id: str, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            result = self.records.op_result(op_id)
            if result is not None or time.monotonic() >= deadline:
                return result
            time.sleep(delay)
            delay = min(delay * 1.5, 0.02)

    def drain_spool(self, limit: int = 128) -> int:
        """Writer: apply what followers spooled (engine/writes/apply.py)."""
        return SpoolApplier(self).drain(limit)

    # -- facts ----------------------------------------------------------------------------------
    def _facts(self):
        if self.facts is None:
            raise LoreError("notReady", "facts are not available on this instance yet", retryable=True)
        return self.facts

    def assert_fact(self, *, project: str | None, subject: str, predicate: str, object: str,
                    valid_from: str | None = None, valid_until: str | None = None, source: str | None = None,
                    confidence: float | None = None) -> dict[str, Any]:
        facts = self._facts()
        root = self.project_root(project)
        subject, predicate, object = redact(subject), redact(predicate), redact(object)
        args = {"valid_from": valid_from, "valid_until": valid_until, "source": source, "confidence": confidence}
        if self.role.writer:
            try:
                out = facts.assert_fact(root, subject, predicate, object, **args)
                self._wrote()
                return {**out, "durable": True, "applied": True}
            except LoreError as exc:
                if exc.kind != "notWriter":
                    raise
        # A follower: every refusal happens here, before anything is spooled.
        _, _, recorded = facts.check_assert(subject, predicate, object, valid_from, valid_until, source, confidence)
        fid = new_fact_id()
        op_id, result = self._spool({
            "kind": "assertFact", "project": root,
            "args": {"subject": subject, "predicate": predicate, "object": object, **args, "fact_id": fid, "recorded_at": recorded},
        })
        if result is None:
            return {"factId": fid, "recordedAt": fact_model.show(recorded), "journal": None, "durable": True,
                    "applied": False, "opId": op_id}
        return {**result, "durable": True, "applied": True, "opId": op_id}

    def invalidate_fact(self, *, project: str | None, subject: str, predicate: str,
                        valid_until: str | None = None) -> dict[str, Any]:
        facts = self._facts()
        root = self.project_root(project)
        subject, predicate = redact(subject), redact(predicate)
        if self.role.writer:
            try:
                out = facts.invalidate_fact(root, subject, predicate, valid_until=valid_until)
                self._wrote()
                return {**out, "durable": True, "applied": True}
            except LoreError as exc:
                if exc.kind != "notWriter":
                    raise
        _, until, recorded = facts.check_invalidate(root, subject, predicate, valid_until)
        op_id, result = self._spool({
            "kind": "invalidateFact", "project": root,
            "args": {"subject": subject, "predicate": predicate, "valid_until": until, "recorded_at": recorded},
        })
        if result is None:
            return {"closed": [], "recordedAt": fact_model.show(recorded), "journal": None, "durable": True,
                    "applied": False, "opId": op_id}
        return {**result, "durable": True, "applied": True, "opId": op_id}

    def query_facts(self, **kw: Any) -> dict[str, Any]:
        self._fresh()
        project = kw.pop("project", None)
        scope = kw.pop("scope", "project")
        return self._facts().query(self._project_ids(project, scope), **kw)

    def timeline(self, *, subject: str, project: str | None = None, scope: str = "project", limit: int = 200, offset: int = 0) -> dict[str, Any]:
        self._fresh()
        return self._facts().timeline(self._project_ids(project, scope), subject, limit=limit, offset=offset)

    def aggregate_facts(self, **kw: Any) -> dict[str, Any]:
        self._fresh()
        project = kw.pop("project", None)
        scope = kw.pop("scope", "project")
        return self._facts().aggregate(self._project_ids(project, scope), **kw)

    def _project_ids(self, project: str | None, scope: str) -> list[int] | None:
        if scope == "all":
            return None
        found = self.records.find_project(self.project_root(project))
        return [found.id] if found else []

    def _wrote(self) -> None:
        self._last_write_seq = self.records.outbox_head()
        if self.indexer:
            self.indexer.notify()

    # -- knowledge nodes and distillation ---------------------------------------------------------
    def _memory(self):
        if self.memory is None:
            raise LoreError("notReady", "memory is not available on this instance yet", retryable=True)
        return self.memory

    def node_op(self, method: str, *, project: str | None = None, runtime: str | None = None, **args: Any) -> dict[str, Any]:
        """createNode, updateNode, moveNode, deleteNode, retain, forget: applied here on the
        writer, or made durable in the spool on a follower (refusals happen first)."""
        memory = self._memory()
        root = self.project_root(project)
        runtime = runtime or "client"
        args = _redacted_node_args(args)
        for holder in (args, args.get("changes") or {}):  # createNode/retain, updateNode
            if holder.get("sources") is not None:
                holder["sources"] = [{**src, "path": _relative(root, src.get("path"))} for src in holder["sources"]]
        args = memory.check(method, root, args)
        if self.role.writer:
            try:
                out = memory.apply(method, root, args, runtime)
                self._wrote()
                return {**out, "durable": True, "applied": True}
            except LoreError as exc:
                if exc.kind != "notWriter":
                    raise
        op_id, result = self._spool({"kind": "nodeOp", "method": method, "project": root, "runtime": runtime, "args": args})
        if result is None:
            return {"uri": args.get("new_uri") or args.get("uri"), "version": None, "durable": True, "applied": False,
                    "opId": op_id}
        return {**result, "durable": True, "applied": True, "opId": op_id}

    def list_domains(self, *, project: str | None = None, scope: str = "project") -> dict[str, Any]:
        self._fresh()
        return self._memory().list_domains(self._project_ids(project, scope))

    def node_history(self, uri: str) -> dict[str, Any]:
        self._fresh()
        return self._memory().knowledge.history(uri)

    def distill(self, *, session_id: str | None = None) -> dict[str, Any]:
        """Run the distillation pipeline now (the writer's; a follower is told who can)."""
        self._require_writer()
        if self.distiller is None:
            raise LoreError("distillerOff", "distillation is off on this instance (distiller = off)")
        created = self.distiller.tick(force=True, session_id=session_id)
        self._wrote()
        return {"created": created, "mode": self.distiller.mode}

    def export_knowledge(self, *, project: str | None = None, path: str | None = None) -> dict[str, Any]:
        self._fresh()
        root = self.project_root(project)
        found = self.records.find_project(root)
        return self._memory().export(root, found.id if found else None, Path(path) if path else None, jail=self.jail)

    def import_knowledge(self, *, project: str | None = None) -> dict[str, Any]:
        self._require_writer()
        root = self.project_root(project)
        result = self._memory().import_if_changed(root, jail=self.jail)
        self._wrote()
        return result or {"created": 0, "updated": 0, "unchanged": 0, "problems": [], "skipped": "unchanged since the last import"}

    def count_use(self, query_id: str, uri: str, session_id: str | None, runtime: str | None) -> None:
        """A recalled lead was opened. Best effort: never fails the read that reports it."""
        self._best_effort("countUse", {"query_id": query_id, "uri": uri, "session_id": session_id}, runtime)

    def _best_effort(self, method: str, args: dict[str, Any], runtime: str | None) -> None:
        """Usage bookkeeping: applied here on the writer, dropped into the spool (no wait) on
        a follower; a failure is logged, never raised into the read that caused it."""
        if self.memory is None:
            return
        try:
            if self.role.writer:
                self.memory.apply(method, "", args, runtime or "client")
            elif self.spool is not None:
                self.spool.put({"opId": new_op_id(), "kind": "nodeOp", "method": method, "project": "",
                                "runtime": runtime or "client", "args": args})
        except LoreError as exc:
            log.info("%s not recorded: %s", method, exc)

    # -- session lifecycle (engine/lifecycle/sessions.py) -------------------------------------------------------
    def prompt_submit(self, *, session_id: str, prompt: str, harness: str | None = None,
                      project: str | None = None, budget_tokens: int = 400) -> dict[str, Any]:
        return self.sessions.prompt(session_id=session_id, prompt=prompt, harness=harness, project=project,
                                    budget_tokens=budget_tokens)

    def session_start(self, *, session_id: str, harness: str | None = None, cwd: str | None = None,
                      repo: str | None = None, budget_tokens: int = 400) -> dict[str, Any]:
        return self.sessions.start(session_id=session_id, harness=harness, cwd=cwd, repo=repo, budget_tokens=budget_tokens)

    def session_end(self, *, session_id: str, harness: str | None = None, project: str | None = None,
                    transcript: list[dict] | None = None, transcript_path: str | None = None) -> dict[str, Any]:
        return self.sessions.end(session_id=session_id, harness=harness, project=project, transcript=transcript,
                                 transcript_path=transcript_path)

    def log_recall(self, query_id: str, session_id: str, harness: str | None, leads: int) -> None:
        """Leads shown to a runtime (the other half of usage). Best effort, like count_use."""
        args = {"query_id": query_id, "session_id": session_id, "leads": leads}
        self._best_effort("logRecall", args, harness)

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
        return self.recaller.recall(
            query[:MAX_QUERY_CHARS],  # a pasted 10 MB prompt is still a query of a few thousand words
            project_ids=self._project_ids(project, scope),
            sources=list(sources or ALL_SOURCES),
            limit=limit,
            offset=offset,
            as_of=capture.iso_utc(as_of) if as_of else None,
            lexical_only=lexical_only,
        )

    def get_node(self, uri: str, *, query_id: str | None = None, session_id: str | None = None,
                 runtime: str | None = None) -> NodeContent:
        self._fresh()
        node = read_node(self, uri)
        if query_id:
            self.count_use(query_id, uri, session_id, runtime)
        return node

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
        if self.indexer is None:
            raise LoreError("indexNotReady", "this instance became the writer moments ago; retry", retryable=True)
        replay = None
        if scope in ("all", "facts") and self.facts is not None:
            if progress:
                progress("replaying facts from the journal and notes", 0)
            replay = self.facts.replay()
        if scope == "all":
            if progress:
                progress("rebuilding indexes from the record", 0)
            self.indexer.request_rebuild()
        if scope in ("all", "workspace"):
            self.index_workspace(progress, force=scope == "workspace")
        self.indexer.wait_for(self.records.outbox_head(), timeout=3600)
        counts = self.records.counts(None)
        out = {
            "generation": self.indexer.generation,
            "files": counts["files"],
            "chunks": counts["chunks"],
            "facts": counts["facts"],
            "tookMs": round((time.perf_counter() - t0) * 1000, 1),
        }
        if replay is not None:
            out["replay"] = replay
        return out

    def wait_indexed(self, timeout: float = 30.0) -> bool:
        if self.indexer is None:
            return True
        return self.indexer.wait_for(self.records.outbox_head(), timeout)

    # -- status -----------------------------------------------------------------------------------
    def status(self, project: str | None = None) -> dict[str, Any]:
        self._fresh()
        root = self.project_root(project)
        found = self.records.find_project(root)
        counts = self.records.counts(found.id) if found else dict.fromkeys(
            ("messages", "files", "chunks", "facts", "distillations", "knowledge", "entities"), 0)
        indexer = self.indexer
        generation = indexer.generation if indexer else int(self.records.meta("generation", "0") or 0)
        applied = indexer.applied_seq if indexer else self.text.saved_seq
        lag_ms = 0 if applied >= self.records.outbox_head() else -1  # -1: behind (age not tracked)
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
                "distillations": counts["distillations"],
                "knowledge": counts["knowledge"],
                "entities": counts["entities"],
                "facts": counts["facts"],
                "files": counts["files"],
                "chunks": counts["chunks"],
            },
            "embedder": {
                "name": self.embedder.name if self.embedder else "none",
                "dim": self.embedder.dim if self.embedder else 0,
            },
            "distiller": self.distiller.status() if self.distiller is not None else {"mode": "off", "model": None},
            "usage": self.records.nodes.usage(),
            "indexLagMs": lag_ms,
            "indexError": indexer.error if indexer else None,
            "indexEpoch": self.index_epoch,
            "election": self.election_info(),
            "ignoredSettings": [{"setting": k, "source": src, "reason": why} for k, src, why in self.settings.ignored],
        }

    # -- internals ------------------------------------------------------------------------------
    def _require_writer(self) -> None:
        if not self.role.writer:
            raise not_writer(self.role.writer_pid)

    def _fresh(self) -> None:
        """Read-your-writes on the writer; pick up the writer's commits on a follower."""
        indexer = self.indexer
        if indexer is not None:
            if self._last_write_seq:
                indexer.wait_for(self._last_write_seq, READ_YOUR_WRITES_TIMEOUT_S)
            return
        if self._last_write_seq:
            # A write we spooled was applied; wait (bounded) until the writer has indexed it.
            deadline = time.monotonic() + READ_YOUR_WRITES_TIMEOUT_S
            while int(self.records.meta("indexed_seq", "0") or 0) < self._last_write_seq:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.005)
            else:
                self._last_write_seq = 0
        self.follow()

    def follow(self) -> int | None:
        """Follower: reload the readers if the writer committed since we last looked.
        Returns the new generation, or None if nothing changed."""
        if self.role.writer:
            return None
        gen = int(self.records.meta("generation", "0") or 0)
        if gen == self._seen_generation:
            return None
        with self._refresh_lock:
            if gen == self._seen_generation:
                return None
            if self.records.index_epoch() != self.index_epoch and self.reopen_readers is not None:
                self.reopen_readers()  # a new writer publishes a new index directory
            else:
                self.text.reload()
                if self.vectors is not None:
                    self.vectors.refresh()
            self._seen_generation = gen
        return gen

    def apply_file_changes(self, folder: str, paths: Any) -> None:
        workspace = self.workspace
        if self.role.writer and workspace is not None:
            paths = list(paths)
            workspace.apply_changes(folder, paths)
            if self.memory is not None and any(Path(p).name == ".lore.md" for p in paths):
                result = self.memory.import_if_changed(self.project_root(folder))  # a git pull brought knowledge
                if result:
                    log.info("imported .lore.md of %s: %s", folder, result)
                    self._wrote()

    def close(self) -> None:
        self.on_close()
