"""The engine facade: what the protocol layer and the CLI call. It composes the capability
services and owns nothing but the instance's current role and read view (both immutable,
replaced whole by the election). Synchronous and thread-safe; the rpc layer runs it on its
own executor.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lore_sidecar.engine.capture import messages as capture
from lore_sidecar.engine.capture.redact import redact
from lore_sidecar.engine.facts import rules as fact_model
from lore_sidecar.engine.facts.service import new_fact_id
from lore_sidecar.engine.indexing.reindex import rebuild
from lore_sidecar.engine.lifecycle import blocks as lifecycle
from lore_sidecar.engine.lifecycle.sessions import Sessions
from lore_sidecar.engine.memory.nodes import redacted_node_args, relative_sources
from lore_sidecar.engine.projects import Projects
from lore_sidecar.engine.recall.node_reader import read_node
from lore_sidecar.engine.recall.query import MAX_QUERY_CHARS
from lore_sidecar.engine.roles import Role, View, WriteMark
from lore_sidecar.engine.status import status_of
from lore_sidecar.engine.workspace.index import Progress
from lore_sidecar.engine.writes.apply import SpoolApplier
from lore_sidecar.engine.writes.path import Writes
from lore_sidecar.errors import LoreError, not_writer
from lore_sidecar.model import ALL_SOURCES, NewMessage, NodeContent, RecallResult
from lore_sidecar.settings import Settings

log = logging.getLogger(__name__)
READ_YOUR_WRITES_TIMEOUT_S = 2.0


class Engine:
    def __init__(self, *, settings: Settings, records: Any, embedder: Any, role: Role, view: View,
                 projects: Projects, spool: Any = None, facts: Any = None, memory: Any = None,
                 distiller: Any = None, on_close: Callable[[], None] = lambda: None,
                 reopen_readers: Callable[[], None] | None = None, election: Any = None):
        self.settings = settings
        self.records = records
        self.embedder = embedder
        self.role = role  # replaced whole by the election (engine/roles.py)
        self.view = view  # likewise: a read takes it once
        self.projects = projects
        self.spool = spool
        self.facts = facts  # facts.service.Facts
        self.memory = memory  # memory.service.Memory (nodes, distillations, entities)
        self.distiller = distiller  # built on every instance; runs on the writer
        self.memory_worker: Any = None  # the writer's memory thread
        self.on_close = on_close
        self.reopen_readers = reopen_readers  # a new writer published a new index directory
        self.election = election  # election.Election: info() for status, step_down()
        self.mark = WriteMark()
        self.writes = Writes(records=records, spool=spool, role=lambda: self.role, mark=self.mark,
                             wrote=self._wrote, apply_wait_s=settings.store.apply_wait_ms / 1000)
        self.applier = SpoolApplier(records=records, spool=spool, facts=facts, memory=memory)
        self.sessions = Sessions(self, settings.guidance or lifecycle.DEFAULT_GUIDANCE)
        self._seen_generation = -1
        self._refresh_lock = threading.Lock()

    # -- the view and the role (the election calls these; one thread) ------------------------------
    @property
    def indexer(self) -> Any:
        return self.view.indexer

    @property
    def workspace(self) -> Any:
        return self.view.workspace

    @property
    def jail(self):
        return self.projects.jail

    @property
    def folders(self) -> list[str]:
        return self.projects.folders

    def become_writer(self, view: View, role: Role) -> None:
        self.view = view
        # Whatever was applied before the indexes existed (the spool, at take-over) must be
        # searchable before the next read here answers.
        self.mark.raise_to(self.records.outbox_head())
        self.role = role

    def use_view(self, view: View) -> None:
        """Follower: read from the index directory the current writer published."""
        self.view = view

    def become_follower(self, view: View, role: Role) -> None:
        self.role = role
        self.view = view
        self._seen_generation = -1

    # -- projects -------------------------------------------------------------------------------
    def project_root(self, project: str | None) -> str:
        return self.projects.root(project)

    def open_folder(self, folder: str) -> None:
        self.projects.open_folder(folder)

    def close_folder(self, folder: str) -> None:
        self.projects.close_folder(folder)

    # -- capture --------------------------------------------------------------------------------
    def record_messages(self, *, project: str | None, session_id: str, harness: str | None,
                        messages: Sequence[dict]) -> dict[str, Any]:
        checked_ids: list[str] = []

        def check() -> tuple[str, list[NewMessage]]:
            if not session_id.strip():
                raise LoreError("invalidKey", "sessionId must not be empty", value=session_id)
            normalised = []
            for i, m in enumerate(messages):
                try:
                    normalised.append(capture.normalise(session_id=session_id, harness=harness, **m))
                except ValueError as exc:
                    raise LoreError("invalidMessage", f"messages[{i}]: {exc}", index=i) from None
            checked_ids[:] = [m.msg_id for m in normalised]
            return self.project_root(project), normalised

        def apply(checked: tuple[str, list[NewMessage]]) -> dict[str, Any]:
            root, normalised = checked
            outcome = self.records.insert_messages(self.records.ensure_project(root).id, normalised)
            new = sum(1 for _, was_new in outcome if was_new)
            return {"recorded": new, "duplicates": len(outcome) - new}

        def unapplied(checked: tuple[str, list[NewMessage]]) -> dict[str, Any]:
            # The writer has not applied it yet: counts as the record held when we spooled.
            known = self.records.existing_message_ids(session_id, checked_ids)
            return {"recorded": sum(1 for i in checked_ids if i not in known), "duplicates": len(known)}

        out = self.writes.submit(
            check=check, apply=apply, unapplied=unapplied,
            op=lambda c: {"kind": "recordMessages", "project": c[0], "messages": [asdict(m) for m in c[1]]})
        out["ids"] = checked_ids
        return {k: out[k] for k in ("recorded", "duplicates", "ids", "durable", "applied", "opId") if k in out}

    def drain_spool(self, limit: int = 128) -> int:
        """Writer: apply what followers spooled (engine/writes/apply.py)."""
        if not self.role.writer or self.spool is None:
            return 0
        settled = self.applier.drain(limit)
        if settled:
            self._wrote()
        return settled

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
        s, p, o = redact(subject), redact(predicate), redact(object)
        times = {"valid_from": valid_from, "valid_until": valid_until, "source": source, "confidence": confidence}

        def check() -> dict[str, Any]:
            _, _, recorded = facts.check_assert(s, p, o, valid_from, valid_until, source, confidence)
            return {"subject": s, "predicate": p, "object": o, **times, "fact_id": new_fact_id(), "recorded_at": recorded}

        return self.writes.submit(
            check=check,
            apply=lambda a: facts.assert_fact(root, s, p, o, **times),
            op=lambda a: {"kind": "assertFact", "project": root, "args": a},
            unapplied=lambda a: {"factId": a["fact_id"], "recordedAt": fact_model.show(a["recorded_at"]), "journal": None})

    def invalidate_fact(self, *, project: str | None, subject: str, predicate: str,
                        valid_until: str | None = None) -> dict[str, Any]:
        facts = self._facts()
        root = self.project_root(project)
        s, p = redact(subject), redact(predicate)

        def check() -> dict[str, Any]:
            _, until, recorded = facts.check_invalidate(root, s, p, valid_until)
            return {"subject": s, "predicate": p, "valid_until": until, "recorded_at": recorded}

        return self.writes.submit(
            check=check,
            apply=lambda a: facts.invalidate_fact(root, s, p, valid_until=valid_until),
            op=lambda a: {"kind": "invalidateFact", "project": root, "args": a},
            unapplied=lambda a: {"closed": [], "recordedAt": fact_model.show(a["recorded_at"]), "journal": None})

    def query_facts(self, *, project: str | None = None, scope: str = "project", **kw: Any) -> dict[str, Any]:
        self._fresh()
        return self._facts().query(self.projects.ids(project, scope), **kw)

    def timeline(self, *, subject: str, project: str | None = None, scope: str = "project", limit: int = 200,
                 offset: int = 0) -> dict[str, Any]:
        self._fresh()
        return self._facts().timeline(self.projects.ids(project, scope), subject, limit=limit, offset=offset)

    def aggregate_facts(self, *, project: str | None = None, scope: str = "project", **kw: Any) -> dict[str, Any]:
        self._fresh()
        return self._facts().aggregate(self.projects.ids(project, scope), **kw)

    # -- knowledge nodes and distillation ---------------------------------------------------------
    def _memory(self):
        if self.memory is None:
            raise LoreError("notReady", "memory is not available on this instance yet", retryable=True)
        return self.memory

    def node_op(self, method: str, *, project: str | None = None, runtime: str | None = None, **args: Any) -> dict[str, Any]:
        """createNode, updateNode, moveNode, deleteNode, retain, forget."""
        memory = self._memory()
        root = self.project_root(project)
        runtime = runtime or "client"
        return self.writes.submit(
            check=lambda: memory.check(method, root, relative_sources(root, redacted_node_args(args))),
            apply=lambda a: memory.apply(method, root, a, runtime),
            op=lambda a: {"kind": "nodeOp", "method": method, "project": root, "runtime": runtime, "args": a},
            unapplied=lambda a: {"uri": a.get("new_uri") or a.get("uri"), "version": None})

    def list_domains(self, *, project: str | None = None, scope: str = "project") -> dict[str, Any]:
        self._fresh()
        return self._memory().list_domains(self.projects.ids(project, scope))

    def list_nodes(self, *, project: str | None = None, scope: str = "project") -> dict[str, Any]:
        self._fresh()
        return {"nodes": self._memory().list_nodes(self.projects.ids(project, scope))}

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
        self._usage("countUse", {"query_id": query_id, "uri": uri, "session_id": session_id}, runtime)

    def log_recall(self, query_id: str, session_id: str, harness: str | None, leads: int) -> None:
        """Leads shown to a runtime (the other half of usage). Best effort, like count_use."""
        self._usage("logRecall", {"query_id": query_id, "session_id": session_id, "leads": leads}, harness)

    def _usage(self, method: str, args: dict[str, Any], runtime: str | None) -> None:
        if self.memory is None:
            return
        runtime = runtime or "client"
        self.writes.best_effort(lambda: self.memory.apply(method, "", args, runtime),
                                {"kind": "nodeOp", "method": method, "project": "", "runtime": runtime, "args": args})

    # -- session lifecycle (engine/lifecycle/sessions.py) ---------------------------------------------
    def prompt_submit(self, **kw: Any) -> dict[str, Any]:
        return self.sessions.prompt(**kw)

    def session_start(self, **kw: Any) -> dict[str, Any]:
        return self.sessions.start(**kw)

    def session_end(self, **kw: Any) -> dict[str, Any]:
        return self.sessions.end(**kw)

    # -- recall ---------------------------------------------------------------------------------
    def recall(self, query: str, *, project: str | None = None, scope: str = "project",
               sources: Sequence[str] | None = None, limit: int = 10, offset: int = 0, as_of: str | None = None,
               lexical_only: bool = False, session_id: str | None = None) -> RecallResult:
        """`session_id`: the session these leads are shown in (counted as recalled there)."""
        self._fresh()
        result = self.view.recaller.recall(
            query[:MAX_QUERY_CHARS],  # a pasted 10 MB prompt is still a query of a few thousand words
            project_ids=self.projects.ids(project, scope),
            sources=list(sources or ALL_SOURCES),
            limit=limit,
            offset=offset,
            as_of=capture.iso_utc(as_of) if as_of else None,
            lexical_only=lexical_only,
        )
        if session_id and result.hits:
            self.log_recall(result.query_id, session_id, None, len(result.hits))
        return result

    def get_node(self, uri: str, *, query_id: str | None = None, session_id: str | None = None,
                 runtime: str | None = None) -> NodeContent:
        self._fresh()
        node = read_node(self, uri)
        if query_id:
            self.count_use(query_id, uri, session_id, runtime)
        return node

    # -- index ------------------------------------------------------------------------------------
    def index_workspace(self, progress: Progress | None = None, *, force: bool = False) -> None:
        workspace = self.view.workspace
        if not self.role.writer or workspace is None:
            return
        for folder in self.projects.on_disk():
            try:
                stats = workspace.scan(folder, force=force, progress=progress)
                log.info("indexed %s: %s", folder, stats)
            except Exception:  # one bad folder never stops the others
                log.exception("indexing %s failed", folder)
        self.mark.raise_to(self.records.outbox_head())

    def reindex(self, scope: str = "all", progress: Progress | None = None) -> dict[str, Any]:
        self._require_writer()
        return rebuild(self, scope, progress)

    def wait_indexed(self, timeout: float = 30.0) -> bool:
        indexer = self.view.indexer
        return True if indexer is None else indexer.wait_for(self.records.outbox_head(), timeout)

    def status(self, project: str | None = None) -> dict[str, Any]:
        self._fresh()
        return status_of(self, self.project_root(project))

    # -- internals ------------------------------------------------------------------------------
    def _require_writer(self) -> None:
        if not self.role.writer:
            raise not_writer(self.role.writer_pid)

    def _wrote(self) -> None:
        self.mark.raise_to(self.records.outbox_head())
        indexer = self.view.indexer
        if indexer is not None:
            indexer.notify()

    def _fresh(self) -> None:
        """Read-your-writes on the writer; pick up the writer's commits on a follower."""
        seq = self.mark.seq
        indexer = self.view.indexer
        if indexer is not None:
            if seq:
                indexer.wait_for(seq, READ_YOUR_WRITES_TIMEOUT_S)
            return
        if seq:
            # A write we spooled was applied; wait (bounded) until the writer has indexed it.
            deadline = time.monotonic() + READ_YOUR_WRITES_TIMEOUT_S
            while int(self.records.meta("indexed_seq", "0") or 0) < seq:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.005)
            else:
                self.mark.settle(seq)
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
            view = self.view
            if self.records.index_epoch() != view.index_epoch and self.reopen_readers is not None:
                self.reopen_readers()  # a new writer publishes a new index directory
            else:
                view.text.reload()
                if view.vectors is not None:
                    view.vectors.refresh()
            self._seen_generation = gen
        return gen

    def apply_file_changes(self, folder: str, paths: Any) -> None:
        workspace = self.view.workspace
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
