"""The engine facade: what the protocol layer and the CLI call. It composes one request
service per capability — `capture`, `facts`, `memory`, `sessions`, `index`, `context`, `ask` — and owns only
this instance's current role and read view (both immutable, replaced whole by the
election) and the read-your-writes mark. Synchronous and thread-safe; the rpc layer runs it
on its own executor.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from lore_sidecar.engine.ask.requests import AskRequests
from lore_sidecar.engine.capture.messages import iso_utc
from lore_sidecar.engine.capture.requests import CaptureRequests
from lore_sidecar.engine.context.requests import ContextRequests
from lore_sidecar.engine.facts.requests import FactRequests
from lore_sidecar.engine.indexing.requests import IndexRequests
from lore_sidecar.engine.lifecycle.blocks import DEFAULT_GUIDANCE
from lore_sidecar.engine.lifecycle.sessions import Sessions
from lore_sidecar.engine.maintenance.requests import MaintenanceRequests
from lore_sidecar.engine.memory.requests import MemoryRequests
from lore_sidecar.engine.projects import Projects
from lore_sidecar.engine.recall.node_reader import read_node
from lore_sidecar.engine.recall.query import MAX_QUERY_CHARS
from lore_sidecar.engine.roles import Role, View, WriteMark
from lore_sidecar.engine.status import dense_behind, status_of
from lore_sidecar.engine.uris import is_memory_uri
from lore_sidecar.engine.writes.apply import SpoolApplier
from lore_sidecar.engine.writes.path import Writes
from lore_sidecar.errors import not_writer
from lore_sidecar.model import ALL_SOURCES, NodeContent, RecallResult
from lore_sidecar.settings import Settings


class Engine:
    def __init__(self, *, settings: Settings, records: Any, embedder: Any, role: Role, view: View,
                 projects: Projects, spool: Any, facts: Any, memory: Any, distiller: Any = None,
                 on_close: Callable[[], None] = lambda: None, reopen_readers: Callable[[], None] | None = None,
                 election: Any = None, context_states: Any = None, context_ledger: Any = None,
                 ask_model: Any = None, ask_ledgers: Any = None,
                 ask_reason: str | None = None, dream_runs: Any = None, shared: Any = None,
                 background_indexer: Callable[[], dict | None] = lambda: None):
        self.settings = settings
        self.records = records
        self.embedder = embedder
        self.role = role  # replaced whole by the election (engine/roles.py)
        self.view = view  # likewise: a read takes it once
        self.projects = projects
        self.spool = spool
        self.distiller = distiller
        self.memory_worker: Any = None  # the writer's memory thread
        self.nightly: Any = None  # the writer's scheduled backups and dreams (backups.Nightly)
        self.on_close = on_close
        self.reopen_readers = reopen_readers  # a new writer published a new index directory
        self.election = election  # election.Election: info() for status, step_down()
        self.mark = WriteMark()
        self.read_wait_s = settings.store.read_wait_ms / 1000
        self.shared = shared  # a team's shared record (shared/replica.py), or None
        self.writes = Writes(records=records, spool=spool, role=lambda: self.role, mark=self.mark,
                             wrote=self.wrote, apply_wait_s=settings.store.apply_wait_ms / 1000, shared=shared)
        self.applier = SpoolApplier(records=records, spool=spool, facts=facts, memory=memory, shared=shared,
                                    applying=self.mark.raise_to)
        if shared is not None:
            shared.apply, shared.wrote, shared.active = self.applier.apply_local, self.wrote, lambda: self.role.writer
        self.capture = CaptureRequests(self)
        self.facts = FactRequests(self, facts)
        self.memory = MemoryRequests(self, memory, distiller)
        self.sessions = Sessions(self, settings.guidance or DEFAULT_GUIDANCE)
        self.index = IndexRequests(self)
        self.context = ContextRequests(self, context_states, context_ledger)
        self.ask = AskRequests(self, ask_model, ask_ledgers)
        self.maintenance = MaintenanceRequests(self, dream_runs)
        self.ask_reason = ask_reason  # why codebase questions are in retrieval mode (lore/status)
        self.background_indexer = background_indexer  # the CLI's detached embedder, if one runs (lore/status)
        self._seen_generation = -1
        self._refresh_lock = threading.Lock()

    # -- the role and the view (the election calls these, from its one thread) -----------------------
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

    def drain_spool(self, limit: int = 128) -> int:
        """Writer: apply what followers spooled (engine/writes/apply.py)."""
        if not self.role.writer or self.spool is None:
            return 0
        settled = self.applier.drain(limit)
        if settled:
            self.wrote()
        return settled

    # -- reads ------------------------------------------------------------------------------------
    def recall(self, query: str, *, project: str | None = None, scope: str = "project",
               sources: Sequence[str] | None = None, limit: int = 10, offset: int = 0, as_of: str | None = None,
               now: str | None = None, lexical_only: bool = False, session_id: str | None = None, runtime: str | None = None) -> RecallResult:
        """`session_id` / `runtime`: the session and the runtime these leads are shown to
        (counted as recalled there; either one is enough)."""
        caught_up = self.fresh()
        view = self.view
        root = self.projects.root(project)  # once: the ids and the indexing line both need it (a realpath walk)
        result = view.recaller.recall(
            query[:MAX_QUERY_CHARS],  # a pasted 10 MB prompt is still a query of a few thousand words
            project_ids=self.projects.ids_at(root, scope),
            sources=list(sources or ALL_SOURCES),
            limit=limit,
            offset=offset,
            as_of=iso_utc(as_of) if as_of else None,
            now=iso_utc(now) if now else None,
            lexical_only=lexical_only,
            fade=self.maintenance.retrievability,  # faded knowledge ranks lower, across every page
        )
        if not lexical_only and dense_behind(view):
            result = replace(result, dense_partial=True)
        result = replace(result, indexing=self.index.progress_at(root))
        if not caught_up:
            result = replace(result, writes_pending=True)
        if (session_id or runtime) and result.hits:
            shown = [h.uri for h in result.hits if is_memory_uri(h.uri)][:50]
            self.memory.log_recall(result.query_id, session_id, runtime, len(result.hits), shown)
            self.maintenance.touched(shown)
        return result

    def get_node(self, uri: str, *, query_id: str | None = None, session_id: str | None = None,
                 runtime: str | None = None) -> NodeContent:
        self.fresh()
        node = read_node(self, uri)
        if query_id:
            self.memory.count_use(query_id, uri, session_id, runtime)
            self.maintenance.touched([uri])
        return node

    def status(self, project: str | None = None) -> dict[str, Any]:
        self.fresh()
        out = status_of(self, self.projects.root(project))
        out["indexing"] = self.index.progress(project)
        out["backgroundIndexer"] = self.background_indexer()
        return out

    # -- what the capability services share ------------------------------------------------------------
    def require_writer(self) -> None:
        if not self.role.writer:
            raise not_writer(self.role.writer_pid)

    def wrote(self) -> None:
        """After a write here: reads wait for the index to include it; the indexer wakes."""
        self.mark.raise_to(self.records.outbox_head())
        indexer = self.view.indexer
        if indexer is not None:
            indexer.notify()

    def fresh(self) -> bool:
        """Before a read: read-your-writes on the writer; the writer's commits on a follower.
        False when the wait (`readWaitMs`) ended before the word index held this instance's
        last write. Trigger: a loaded machine (a first scan, a slow fsync) took longer.
        Why: a read that silently missed the caller's own write is a wrong answer; a recall
        says so (`writesPending`). Outcome: the read answers from what is searchable now."""
        seq = self.mark.seq
        indexer = self.view.indexer
        if indexer is not None:
            return not seq or indexer.wait_for(seq, self.read_wait_s)
        caught_up = True
        if seq:
            # A write we spooled was applied; wait (bounded) until the writer has indexed it.
            deadline = time.monotonic() + self.read_wait_s
            while int(self.records.meta("indexed_seq", "0") or 0) < seq:
                if time.monotonic() > deadline:
                    caught_up = False
                    break
                time.sleep(0.005)
            else:
                self.mark.settle(seq)
        self.follow()
        return caught_up

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

    def follow_vectors(self) -> bool:
        """Follower: pick up the writer's newer vector snapshot (and the word pieces read with
        it), if any. The writer saves it every few seconds apart from its commits, so a
        follower that waited for a commit kept the vectors it opened with until the next write."""
        if self.role.writer or self.view.vectors is None:
            return False
        with self._refresh_lock:
            return self.view.vectors.refresh()

    def close(self) -> None:
        self.ask.close()
        if self.shared is not None:
            self.shared.stop()
        if self.nightly is not None:
            self.nightly.stop()
        self.on_close()
