"""The composition root: the only place that reads settings and builds adapters (the
record, the indexes, the lock, the LLM client, the embedder). The writer election runs in
`election.py` with the parts built here.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from lore_sidecar.election import (
    CommitHook,
    Election,
    Parts,
    RoleHook,
    heartbeat_while_opening,
    wait_for_role,
)
from lore_sidecar.engine.facts.service import Facts
from lore_sidecar.engine.indexing.indexer import Indexer
from lore_sidecar.engine.jail import Jail, default_transcript_roots
from lore_sidecar.engine.memory.curator import Curator
from lore_sidecar.engine.memory.distiller import Distiller, MemoryWorker
from lore_sidecar.engine.memory.knowledge import Knowledge
from lore_sidecar.engine.memory.service import Memory
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.projects import Projects
from lore_sidecar.engine.recall.recaller import Recaller
from lore_sidecar.engine.roles import Role, View
from lore_sidecar.engine.service import Engine
from lore_sidecar.engine.workspace.index import WorkspaceIndex
from lore_sidecar.errors import FENCED, LoreError
from lore_sidecar.llm.anthropic_client import AnthropicClient, LLMUnavailable
from lore_sidecar.llm.embedders import load_models
from lore_sidecar.llm.openai_chat import OpenAIChatClient
from lore_sidecar.model import INDEXED_SOURCES
from lore_sidecar.settings import Settings
from lore_sidecar.store import index_dirs, indexer_lock
from lore_sidecar.store.context_ledger import store_ledger
from lore_sidecar.store.context_states import ContextStates
from lore_sidecar.store.db import Database, store_ready
from lore_sidecar.store.dense_order import DenseOrderRows
from lore_sidecar.store.fact_rows import FactRows
from lore_sidecar.store.filesystem import make_store_dir, refuse_network_fs
from lore_sidecar.store.journal import Journal
from lore_sidecar.store.lock import WriterLock
from lore_sidecar.store.records import Records
from lore_sidecar.store.spool import Spool, store_spool
from lore_sidecar.store.text_index import TextIndex
from lore_sidecar.store.vector_index import VectorIndex

log = logging.getLogger(__name__)


@contextmanager
def degraded_reader(settings: Settings) -> Iterator[tuple[Records, Recaller, Spool]]:
    """The record, a recaller over the published text index and the spool, without joining
    the election: for short-lived processes (the hook's degraded path). Nothing here writes
    the record; the spool only takes durable operations for the writer."""
    store = Path(settings.store_dir)
    db = Database(store / "lore.db", writable=False)
    try:
        records = Records(db)
        text = TextIndex(index_dirs.index_dir(store, records.index_epoch()) / "text", writable=False)
        try:
            yield records, Recaller(records, text, None, None, settings.recall), Spool(store / "spool")
        finally:
            text.close()
    finally:
        db.close()


def open_spool(settings: Settings) -> Spool:
    """The store's spool alone: durable operations for whichever instance writes next."""
    return store_spool(Path(settings.store_dir))


def open_engine(settings: Settings, folders: list[str], *, on_commit: CommitHook = lambda generation, engine: None,
                on_role_change: RoleHook = lambda engine: None, start_indexer: bool = True,
                embed: bool = True) -> Engine:
    """`embed=False`: this instance's indexer (if it writes) keeps the words current but leaves
    the meaning index to whoever writes next (a CLI call; lore_sidecar/background.py)."""
    return Root(settings, folders).open(on_commit=on_commit, on_role_change=on_role_change, start_indexer=start_indexer,
                                        embed=embed)


class Root:
    """Builds one instance: adapters, services, the engine, and its election."""

    def __init__(self, settings: Settings, folders: list[str]):
        self.settings = settings
        self.folders = [str(Path(f).resolve()) for f in folders]
        self.store = Path(settings.store_dir)
        self.lock = WriterLock(self.store / "writer.lock")
        self.engine: Engine | None = None

    def open(self, *, on_commit: CommitHook, on_role_change: RoleHook, start_indexer: bool, embed: bool = True) -> Engine:
        if self.store.exists() and not self.store.is_dir():
            raise LoreError("storeUnsupported", f"the store {self.store} is a file; give a folder (--store-dir)")
        make_store_dir(self.store)
        if not self.settings.store.allow_network_fs:
            refuse_network_fs(self.store)
        stale_s = self.settings.store.writer_stale_ms / 1000
        try:
            writer = wait_for_role(self.lock, lambda: store_ready(self.store / "lore.db"), stale_s)
        except LoreError as exc:
            raise LoreError(exc.kind, f"{self.store}: {exc.message}", retryable=exc.retryable) from None
        with heartbeat_while_opening(self.lock) if writer else nullcontext():
            try:
                self._build(writer)
                if writer:
                    epoch = self.db.claim_epoch(os.getpid())
                    view = self.writer_view(epoch)
                    role = Role(writer=True, writer_pid=os.getpid(), epoch=epoch)
                else:
                    view = self.reader_view(self.records.index_epoch())
                    role = Role(writer=False, writer_pid=self.lock.holder_pid(), epoch=self.records.epoch())
            except BaseException:
                self.lock.release()
                raise
            parts = Parts(lock=self.lock, db=self.db, records=self.records, spool=self.spool,
                          store_ready=lambda: store_ready(self.store / "lore.db"), reader_view=self.reader_view,
                          writer_view=self.writer_view, writer_duties=self.writer_duties)
            election = Election(parts, stale_s=stale_s, writer_stale_ms=self.settings.store.writer_stale_ms,
                                on_commit=on_commit, on_role_change=on_role_change)
            self.db.on_fenced = lambda current: election.fenced.set()
            self.engine = engine = Engine(
                settings=self.settings, records=self.records, embedder=self.embedder, role=role, view=view,
                projects=Projects(self.folders, self.jail(), self.records), spool=self.spool, facts=self.facts,
                memory=self.memory, distiller=self.distiller, on_close=election.close,
                reopen_readers=self._reopen_readers, election=election,
                context_states=ContextStates(self.store / "context"), context_ledger=store_ledger(self.store),
                ask_ledgers=ContextStates(self.store / "ask"),
                dream_runs=ContextStates(self.store / "dream"), shared=self._shared(),
                background_indexer=lambda: indexer_lock.info(self.store), **self._ask_model(),
            )
            self.election = election
            if view.indexer is not None and start_indexer:
                view.indexer.start(embed=embed)
            if writer:
                self.writer_duties(engine)
            election.run(engine)
        return engine

    def _build(self, writer: bool) -> None:
        self.db = Database(self.store / "lore.db", writable=writer)
        self.records = Records(self.db)
        self.spool = Spool(self.store / "spool")
        idx = self.settings.index
        self.facts = Facts(FactRows(self.db, Journal(self.store / "journal")), self.records, link_roots=idx.link_roots)
        self.knowledge = Knowledge(self.records.nodes, self.records)
        self.memory = Memory(self.records, self.knowledge)
        self.distiller = self._distiller()
        # Never silently swap in something else: what cannot load is said in lore/status.
        self.embedder = load_models(self.settings.embedder, self.settings.files_embedder, dim=self.settings.embedder_dim)

    def jail(self) -> Jail:
        """The opened folders (and their projects' roots), the user's link roots, and the
        harnesses' own transcript folders (user-level: from the environment and settings)."""
        idx = self.settings.index
        return Jail.of([*(canonical_root(f) for f in self.folders), *self.folders], link_roots=idx.link_roots,
                       transcript_roots=[*default_transcript_roots(os.environ), *idx.transcript_roots])

    # -- read views ---------------------------------------------------------------------------
    def _vectors(self, d: Path, *, writable: bool) -> VectorIndex | None:
        spaces = {kind: (m.name, m.dim) for kind in INDEXED_SOURCES if (m := self.embedder.for_kind(kind)) is not None}
        if not spaces:
            return None
        return VectorIndex(d / "vectors", spaces=spaces, writable=writable)

    def _recaller(self, text: Any, vectors: Any) -> Recaller:
        return Recaller(self.records, text, vectors, self.embedder, self.settings.recall, self.memory)

    def reader_view(self, index_epoch: int) -> View:
        d = index_dirs.index_dir(self.store, index_epoch)
        text = TextIndex(d / "text", writable=False)
        vectors = self._vectors(d, writable=False)
        return View(text=text, vectors=vectors, recaller=self._recaller(text, vectors), index_epoch=index_epoch)

    def writer_view(self, epoch: int) -> View:
        """What a new writer of `epoch` reads and writes: fact rows replayed if due, indexes
        of its own (forked from the published ones, then published), an indexer, a workspace."""
        if self.facts.replay_due():  # after a version change or a hand edit of the journal
            log.info("fact rows replayed from the journal and notes: %s", self.facts.replay())
        previous = self.records.index_epoch()
        d = index_dirs.fork(self.store, previous, epoch)
        text = TextIndex(d / "text", writable=True)
        vectors = self._vectors(d, writable=True)
        idx = self.settings.index
        indexer = Indexer(self.records, text, vectors, self.embedder,
                          on_commit=lambda g: self._on_commit(g) if self.engine is not None else None,
                          dense_order=DenseOrderRows(self.records.db), embed_vendored=idx.embed_vendored)
        workspace = WorkspaceIndex(self.records, max_file_bytes=idx.max_file_bytes, on_change=indexer.notify,
                                   note_hook=self.facts.update_note, file_hook=self.knowledge.files_changed,
                                   link_roots=idx.link_roots, writing=indexer.writing)
        self.records.publish_index_epoch(epoch)
        index_dirs.sweep(self.store, {previous, epoch})  # readers may still be on `previous`
        return View(text=text, vectors=vectors, recaller=self._recaller(text, vectors), index_epoch=epoch,
                    indexer=indexer, workspace=workspace)

    def _on_commit(self, generation: int) -> None:
        engine = self.engine
        assert engine is not None
        self.election.on_commit(generation, engine)

    def _reopen_readers(self) -> None:
        engine = self.engine
        if engine is None or engine.role.writer:
            return
        engine.use_view(self.reader_view(self.records.index_epoch()))

    def _shared(self) -> Any:
        """A team's shared record when `sharedUrl` is set (user-level only: a repository can
        never point this machine's writes at a server)."""
        s = self.settings.store
        if not s.shared_url:
            return None
        from lore_sidecar.shared.record import SharedRecord
        from lore_sidecar.shared.replica import Replica

        record = SharedRecord(s.shared_url, s.shared_team, origin=f"{socket.gethostname()}:{self.store}")
        return Replica(record, store=self.store, outbox=Spool(self.store / "shared-outbox"),
                       op_result=self.records.op_result, settle=self.records.settle_op,
                       roots=lambda: [canonical_root(f) for f in self.folders if Path(f).is_dir()],
                       share_messages=s.share_messages)

    def _ask_model(self) -> dict[str, Any]:
        """The model codebase questions use (any instance may ask: not a writer duty), or
        None and why: then `lore/ask` answers from retrieval and says so."""
        a, m = self.settings.ask, self.settings.memory
        try:
            if a.provider == "openai":
                if not a.model:
                    raise LLMUnavailable("noModel", "askModel is needed for the OpenAI-compatible backend")
                model: Any = OpenAIChatClient(
                    api_key=os.environ.get("LORE_ASK_API_KEY") or os.environ.get("OPENAI_API_KEY", ""), model=a.model,
                    base_url=a.base_url or "", timeout_s=a.deadline_ms / 1000, max_tokens=a.max_tokens)
            else:
                model = AnthropicClient(
                    api_key=os.environ.get("ANTHROPIC_API_KEY", ""), model=a.model or m.llm_model,
                    base_url=a.base_url or m.llm_base_url, timeout_s=a.deadline_ms / 1000, max_retries=0,
                    max_tokens=a.max_tokens)
        except LLMUnavailable as exc:
            return {"ask_model": None, "ask_reason": f"{exc.kind}: {exc.message}"}
        return {"ask_model": model, "ask_reason": None}

    # -- the writer's own duties -------------------------------------------------------------
    def _distiller(self) -> Distiller:
        """The configured distiller: the LLM when a key is set (distiller auto or llm), else
        the extractive rules; status says which and why."""
        m = self.settings.memory
        rows = self.records.memory
        if self.settings.distiller == "off":
            return Distiller(rows, None, m, mode="off", reason="distiller is set to off")
        llm, reason = None, None
        if self.settings.distiller == "extractive":
            reason = "distiller is set to extractive"
        else:
            try:
                llm = AnthropicClient(
                    api_key=os.environ.get("ANTHROPIC_API_KEY", ""), model=m.llm_model, base_url=m.llm_base_url,
                    timeout_s=m.llm_timeout_ms / 1000, max_retries=m.llm_retries, max_tokens=m.llm_max_tokens,
                )
            except LLMUnavailable as exc:
                reason = f"{exc.kind}: {exc.message}"
        distiller = Distiller(rows, llm, m, mode="llm" if llm else "extractive", reason=reason)
        if llm is not None:
            distiller.curator = Curator(distiller, self.knowledge)
        return distiller

    def writer_duties(self, engine: Engine) -> None:
        """What only the writer runs besides indexing: team knowledge from `.lore.md`, and
        the memory thread (distiller, meta pass, curator)."""
        for folder in self.folders:
            try:
                result = self.memory.import_if_changed(engine.projects.root(folder))
                if result:
                    log.info("imported .lore.md of %s: %s", folder, result)
            except LoreError as exc:
                if exc.kind in FENCED:
                    return
                log.warning("importing .lore.md of %s failed: %s", folder, exc)
        if engine.shared is not None:
            engine.shared.start()  # pull the team's record into this store
            self.distiller.publish = engine.shared.publish  # and share what this machine distils
        if engine.nightly is None or not engine.nightly.alive():  # (it ends when this instance steps down)
            from lore_sidecar.backups import Nightly

            engine.nightly = Nightly(engine, self.settings)
        if engine.memory_worker is None and self.distiller.mode != "off":
            self.distiller.reset()
            engine.memory_worker = MemoryWorker(self.distiller, words_pending=lambda: _words_pending(engine))
            engine.memory_worker.start()


def _words_pending(engine) -> bool:
    """Whether the current view's text leg has writes it has not indexed yet."""
    indexer = engine.view.indexer
    return indexer is not None and indexer.words_busy()
