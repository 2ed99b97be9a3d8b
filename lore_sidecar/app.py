"""The composition root: the only place that reads settings and builds adapters.

It also runs this instance's part in the writer election (`Election`): the lock holder
writes, everyone else follows, keeps trying to take the lock, and takes over — claiming a
new epoch, replaying the spool and catching the indexes up — when the writer dies or hangs.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lore_sidecar.engine.facts.service import Facts
from lore_sidecar.engine.indexing.indexer import Indexer
from lore_sidecar.engine.jail import Jail, default_transcript_roots
from lore_sidecar.engine.memory.curator import Curator
from lore_sidecar.engine.memory.distiller import Distiller, MemoryWorker
from lore_sidecar.engine.memory.knowledge import Knowledge
from lore_sidecar.engine.memory.service import Memory
from lore_sidecar.engine.project import canonical_root
from lore_sidecar.engine.service import Engine, Role
from lore_sidecar.engine.workspace.index import WorkspaceIndex
from lore_sidecar.errors import LoreError
from lore_sidecar.llm.anthropic_client import AnthropicClient, LLMUnavailable
from lore_sidecar.llm.embedders import EmbedderUnavailable, load_embedder
from lore_sidecar.settings import Settings
from lore_sidecar.store import index_dirs
from lore_sidecar.store.db import SCHEMA_VERSION, Database
from lore_sidecar.store.fact_rows import FactRows
from lore_sidecar.store.filesystem import refuse_network_fs
from lore_sidecar.store.journal import Journal
from lore_sidecar.store.lock import WriterLock
from lore_sidecar.store.records import Records
from lore_sidecar.store.spool import Spool
from lore_sidecar.store.text_index import TextIndex
from lore_sidecar.store.vector_index import VectorIndex

log = logging.getLogger(__name__)
FOLLOWER_WAIT_S = 10.0
POLL_S = 0.02  # how often a follower tries the lock and looks for the writer's commits
HEARTBEAT_S = 0.25
APPLIED_OPS_KEEP_S = 86_400

CommitHook = Callable[[int, Engine], None]
RoleHook = Callable[[Engine], None]


@contextmanager
def read_only_store(store: Path) -> Iterator[tuple[Records, TextIndex]]:
    """The record and the published text index, read-only, without joining the election:
    for short-lived readers (the hook's degraded path). Nothing here can write."""
    db = Database(store / "lore.db", writable=False)
    try:
        records = Records(db)
        text = TextIndex(index_dirs.index_dir(store, records.index_epoch()) / "text", writable=False)
        try:
            yield records, text
        finally:
            text.close()
    finally:
        db.close()


def open_engine(
    settings: Settings,
    folders: list[str],
    *,
    on_commit: CommitHook = lambda generation, engine: None,
    on_role_change: RoleHook = lambda engine: None,
    start_indexer: bool = True,
) -> Engine:
    return Election(settings, folders, on_commit=on_commit, on_role_change=on_role_change).start(
        start_indexer=start_indexer
    )


class Election:
    """One sidecar's place among the instances sharing a store."""

    def __init__(self, settings: Settings, folders: list[str], *, on_commit: CommitHook, on_role_change: RoleHook):
        self.settings = settings
        self.folders = [str(Path(f).resolve()) for f in folders]
        self.store = Path(settings.store_dir)
        self.on_commit = on_commit
        self.on_role_change = on_role_change
        self.stale_s = settings.store.writer_stale_ms / 1000
        self.lock = WriterLock(self.store / "writer.lock")
        self.engine: Engine | None = None
        self._stop = threading.Event()
        self._fenced = threading.Event()
        self._threads: list[threading.Thread] = []
        self._promotions = 0

    # -- start-up -------------------------------------------------------------------------
    def start(self, *, start_indexer: bool = True) -> Engine:
        self.store.mkdir(parents=True, exist_ok=True)
        if not self.settings.store.allow_network_fs:
            refuse_network_fs(self.store)
        writer = self._wait_for_role()
        try:
            self.db = Database(self.store / "lore.db", writable=writer)
            self.db.on_fenced = lambda current: self._fenced.set()
            self.records = Records(self.db)
            self.spool = Spool(self.store / "spool")
            self.facts = Facts(
                FactRows(self.db, Journal(self.store / "journal")), self.records, link_roots=self.settings.index.link_roots
            )
            self.knowledge = Knowledge(self.records.nodes, self.records)
            self.memory = Memory(self.records, self.knowledge)
            self.distiller = self._distiller()
            self.embedder = None
            try:
                self.embedder = load_embedder(self.settings.embedder)
            except EmbedderUnavailable as exc:
                # Never silently swap in something else: run lexical-only and say so in status.
                log.error("embedder %r unavailable (%s); recall runs lexical-only", self.settings.embedder, exc)
            if writer:
                epoch = self.db.claim_epoch(os.getpid())
                text, vectors, indexer, workspace = self._writer_parts(epoch)
                role = Role(writer=True, writer_pid=os.getpid(), epoch=epoch)
                index_epoch = epoch
            else:
                index_epoch = self.records.index_epoch()
                text, vectors = self._readers(index_epoch)
                indexer = workspace = None
                role = Role(writer=False, writer_pid=self.lock.holder_pid(), epoch=self.records.epoch())
        except BaseException:
            self.lock.release()
            raise
        self.engine = Engine(
            settings=self.settings,
            records=self.records,
            text=text,
            vectors=vectors,
            embedder=self.embedder,
            indexer=indexer,
            workspace=workspace,
            role=role,
            spool=self.spool,
            facts=self.facts,
            memory=self.memory,
            distiller=self.distiller,
            folders=self.folders,
            on_close=self.close,
            index_epoch=index_epoch,
            reopen_readers=self._reopen_readers,
            election_info=self.info,
            jail=self.jail(),
        )
        if indexer is not None and start_indexer:
            indexer.start()
        if writer:
            self._writer_duties(self.engine)
        self._spawn(self._run, "lore-election")
        self._spawn(self._heartbeat, "lore-heartbeat")
        return self.engine

    def jail(self) -> Jail:
        """The opened folders (and their projects' roots), the user's link roots, and the
        harnesses' own transcript folders (user-level: from the environment and settings)."""
        idx = self.settings.index
        return Jail.of([*(canonical_root(f) for f in self.folders), *self.folders], link_roots=idx.link_roots,
                       transcript_roots=[*default_transcript_roots(os.environ), *idx.transcript_roots])

    def _wait_for_role(self) -> bool:
        """Writer if we get the lock; follower once the writer has set the store up."""
        deadline = time.monotonic() + FOLLOWER_WAIT_S
        while True:
            if self.lock.try_acquire():
                return True
            if self._store_ready():
                return False
            if self.lock.acquire(self.stale_s):
                return True
            if time.monotonic() > deadline:
                raise LoreError(
                    "storeNotReady", f"{self.store}: the writer has not initialised the store", retryable=True
                )
            time.sleep(POLL_S)

    def _store_ready(self) -> bool:
        import sqlite3  # noqa: TID251 (a read-only probe; the composition root may)

        db = self.store / "lore.db"
        if not db.exists():
            return False
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                if c.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                    return False
                row = c.execute("SELECT value FROM meta WHERE key='index_epoch'").fetchone()
                return bool(row and int(row[0]) > 0)
        except sqlite3.Error:
            return False

    # -- index adapters ---------------------------------------------------------------------
    def _readers(self, index_epoch: int) -> tuple[TextIndex, VectorIndex | None]:
        d = index_dirs.index_dir(self.store, index_epoch)
        text = TextIndex(d / "text", writable=False)
        vectors = self._vectors(d, writable=False)
        return text, vectors

    def _vectors(self, d: Path, *, writable: bool) -> VectorIndex | None:
        if self.embedder is None:
            return None
        return VectorIndex(d / "vectors", dim=self.embedder.dim, model=self.embedder.name, writable=writable)

    def _writer_parts(self, epoch: int):
        """What a new writer of `epoch` needs: fact rows replayed if due, indexes of its own
        (forked from the published ones, then published), an indexer and a workspace."""
        self._replay_facts_if_due()
        previous = self.records.index_epoch()
        d = index_dirs.fork(self.store, previous, epoch)
        text = TextIndex(d / "text", writable=True)
        vectors = self._vectors(d, writable=True)
        indexer = Indexer(
            self.records,
            text,
            vectors,
            self.embedder,
            on_commit=lambda g: self.on_commit(g, self.engine) if self.engine is not None else None,
        )
        workspace = WorkspaceIndex(
            self.records,
            max_file_bytes=self.settings.index.max_file_bytes,
            on_change=indexer.notify,
            note_hook=self.facts.update_note,
            file_hook=self.knowledge.file_changed,
            link_roots=self.settings.index.link_roots,
        )
        self.records.publish_index_epoch(epoch)
        index_dirs.sweep(self.store, {previous, epoch})  # readers may still be on `previous`
        return text, vectors, indexer, workspace

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

    def _writer_duties(self, engine: Engine) -> None:
        """What only the writer runs besides indexing: team knowledge from `.lore.md`, and
        the memory thread (distiller, meta pass, curator)."""
        for folder in self.folders:
            try:
                result = self.memory.import_if_changed(engine.project_root(folder))
                if result:
                    log.info("imported .lore.md of %s: %s", folder, result)
            except LoreError as exc:
                if exc.kind == "notWriter":
                    return
                log.warning("importing .lore.md of %s failed: %s", folder, exc)
        if engine.memory_worker is None and self.distiller.mode != "off":
            self.distiller.reset()
            engine.memory_worker = MemoryWorker(self.distiller)
            engine.memory_worker.start()

    def _replay_facts_if_due(self) -> None:
        """After a version change or a hand edit of the journal, the fact rows are rebuilt."""
        if self.facts.replay_due():
            stats = self.facts.replay()
            log.info("fact rows replayed from the journal and notes: %s", stats)

    def _reopen_readers(self) -> None:
        engine = self.engine
        if engine is None or engine.role.writer:
            return
        index_epoch = self.records.index_epoch()
        text, vectors = self._readers(index_epoch)
        engine.use_readers(text=text, vectors=vectors, index_epoch=index_epoch)

    # -- the election loop --------------------------------------------------------------------
    def _spawn(self, target: Callable[[], None], name: str) -> None:
        t = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self.lock.heartbeat()
            except OSError:
                log.exception("writer heartbeat failed")

    def _run(self) -> None:
        last_dv = None
        last_prune = 0.0
        while not self._stop.is_set():
            engine = self.engine
            assert engine is not None
            try:
                if engine.role.writer:
                    if self._fenced.is_set() or self.lock.lost():
                        self._demote()
                        continue
                    if engine.indexer is None:
                        self._finish_promotion()
                    if engine.drain_spool():
                        continue  # more may be waiting: no sleep
                    if time.monotonic() - last_prune > 3600:
                        last_prune = time.monotonic()
                        self._prune()
                elif self.lock.acquire(self.stale_s):
                    self._promote()
                    continue
                else:
                    dv = self.db.data_version()
                    if dv != last_dv:
                        last_dv = dv
                        generation = engine.follow()
                        if generation is not None:
                            self.on_commit(generation, engine)
                        self._note_writer(engine)
            except LoreError as exc:
                if exc.kind != "notWriter":
                    log.exception("election loop")
            except Exception:
                log.exception("election loop")
                self._stop.wait(0.2)
            self._stop.wait(POLL_S)

    def _note_writer(self, engine: Engine) -> None:
        epoch = self.records.epoch()
        if epoch != engine.role.epoch:
            engine.role = Role(writer=False, writer_pid=self.lock.holder_pid(), epoch=epoch)

    def _promote(self) -> None:
        """We hold the lock: claim the next epoch, then apply what followers spooled (the
        record is writable at once), then build our indexes and catch them up."""
        engine = self.engine
        assert engine is not None
        epoch = self.db.claim_epoch(os.getpid())
        self._fenced.clear()
        self._promotions += 1
        log.warning("became the writer (epoch %s)", epoch)
        engine.role = Role(writer=True, writer_pid=os.getpid(), epoch=epoch)
        engine.drain_spool()
        self._finish_promotion()
        self.on_role_change(engine)

    def _finish_promotion(self) -> None:
        engine = self.engine
        assert engine is not None
        epoch = engine.role.epoch
        old_text = engine.text
        text, vectors, indexer, workspace = self._writer_parts(epoch)
        engine.become_writer(text=text, vectors=vectors, indexer=indexer, workspace=workspace, epoch=epoch, pid=os.getpid())
        indexer.start()
        old_text.close()
        self._writer_duties(engine)

    def _demote(self) -> None:
        engine = self.engine
        assert engine is not None
        self.db.resign()
        log.warning("no longer the writer (epoch %s was superseded)", engine.role.epoch)
        index_epoch = self.records.index_epoch()
        text, vectors = self._readers(index_epoch)
        old_text = engine.text
        old = engine.become_follower(
            text=text, vectors=vectors, index_epoch=index_epoch,
            writer_pid=self.lock.holder_pid(), epoch=self.records.epoch(),
        )
        if old is not None:
            old.stop(save=False)
        self._stop_memory(engine)
        old_text.close()
        self.lock.release()
        self._fenced.clear()
        self.on_role_change(engine)

    @staticmethod
    def _stop_memory(engine: Engine) -> None:
        worker, engine.memory_worker = engine.memory_worker, None
        if worker is not None:
            worker.stop()

    def _prune(self) -> None:
        cutoff = time.time() - APPLIED_OPS_KEEP_S
        self.records.prune_applied_ops(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(cutoff)))
        self.spool.sweep_temporaries()

    # -- status and shutdown --------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        age = self.lock.heartbeat_age()
        return {
            "writerHeartbeatAgeMs": None if age == float("inf") else round(age * 1000),
            "writerStaleMs": self.settings.store.writer_stale_ms,
            "spoolPending": self.spool.count(),
            "promotions": self._promotions,
        }

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=5)
        engine = self.engine
        if engine is not None:
            self._stop_memory(engine)
            if engine.indexer is not None:
                engine.indexer.stop(save=engine.role.writer and not self._fenced.is_set())
            engine.text.close()
        self.db.close()
        self.lock.release()

