"""This instance's part in the writer election.

The lock holder writes; everyone else follows, keeps trying to take the lock, and takes
over — claiming a new epoch, draining the spool and building its own indexes — when the
writer dies or hangs. The adapters it needs come from the composition root (`app.py`) as
`Parts`; this module builds none of them.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lore_sidecar.engine.roles import Role, View
from lore_sidecar.engine.service import Engine
from lore_sidecar.errors import FENCED, LoreError

log = logging.getLogger(__name__)
FOLLOWER_WAIT_S = 10.0
POLL_S = 0.02  # how often a follower tries the lock and looks for the writer's commits
HEARTBEAT_S = 0.25
APPLIED_OPS_KEEP_S = 86_400
PRUNE_EVERY_S = 3600
# How often a follower looks for the writer's newer vector snapshot: it is saved every few
# seconds, apart from the commits that change the record, so watching those is not enough.
VECTORS_EVERY_S = 1.0

CommitHook = Callable[[int, Engine], None]
RoleHook = Callable[[Engine], None]


@dataclass(frozen=True)
class Parts:
    """What the composition root lends the election: the lock, the record, and builders of
    the two kinds of read view."""

    lock: Any  # store.lock.WriterLock
    db: Any  # store.db.Database
    records: Any
    spool: Any
    store_ready: Callable[[], bool]
    reader_view: Callable[[int], View]  # a follower's view of a published index epoch
    writer_view: Callable[[int], View]  # a new writer's own indexes, published
    writer_duties: Callable[[Engine], None]  # .lore.md import, the memory thread


def wait_for_role(lock: Any, store_ready: Callable[[], bool], stale_s: float) -> bool:
    """Writer if we get the lock; follower once the writer has set the store up."""
    deadline = time.monotonic() + FOLLOWER_WAIT_S
    while True:
        if lock.try_acquire():
            return True
        if store_ready():
            return False
        if lock.acquire(stale_s):
            return True
        if time.monotonic() > deadline:
            raise LoreError("storeNotReady", "the writer has not initialised the store", retryable=True)
        time.sleep(POLL_S)


def beat(lock: Any, stop: threading.Event) -> None:
    """Touch the writer lock every HEARTBEAT_S until `stop` is set."""
    while not stop.wait(HEARTBEAT_S):
        try:
            lock.heartbeat()
        except OSError:
            log.exception("writer heartbeat failed")


@contextmanager
def heartbeat_while_opening(lock: Any):
    """The writer lock's heartbeat, kept from the moment the lock is won until the election's
    own heartbeat starts (`Election.run`). Trigger: a writer's open (the database, its indexes,
    the models) took longer than `writerStaleMs` on a loaded machine. Why: its lock file then
    looked silent, and a second sidecar started meanwhile broke the lock of a live writer and
    took the role (fencing kept the store safe; the first one's open was wasted). Outcome: a
    writer that is opening is alive to the others."""
    stop = threading.Event()
    t = threading.Thread(target=beat, args=(lock, stop), name="lore-heartbeat-open", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(timeout=5)


class Election:
    def __init__(self, parts: Parts, *, stale_s: float, writer_stale_ms: int,
                 on_commit: CommitHook, on_role_change: RoleHook):
        self.parts = parts
        self.stale_s = stale_s
        self.writer_stale_ms = writer_stale_ms
        self.on_commit = on_commit
        self.on_role_change = on_role_change
        self.engine: Engine | None = None
        self.fenced = threading.Event()
        self._stop = threading.Event()
        self._step_down = threading.Event()
        self._threads: list[threading.Thread] = []
        self.promotions = 0
        self.demotions = 0

    def run(self, engine: Engine) -> None:
        self.engine = engine
        self._spawn(self._loop, "lore-election")
        self._spawn(self._heartbeat, "lore-heartbeat")

    def step_down(self) -> None:
        """Give up the writer role once (the lock is released; any instance, this one
        included, may take it again)."""
        self._step_down.set()

    # -- the loop ---------------------------------------------------------------------------
    def _spawn(self, target: Callable[[], None], name: str) -> None:
        t = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def _heartbeat(self) -> None:
        beat(self.parts.lock, self._stop)

    def _loop(self) -> None:
        last_dv = None
        last_prune = 0.0
        last_vectors = time.monotonic()
        p = self.parts
        while not self._stop.is_set():
            engine = self.engine
            assert engine is not None
            try:
                if engine.role.writer:
                    if self.fenced.is_set() or p.lock.lost() or self._step_down.is_set():
                        self._step_down.clear()
                        self._demote()
                        continue
                    if engine.view.indexer is None:
                        self._finish_promotion()
                    if engine.drain_spool():
                        continue  # more may be waiting: no sleep
                    if time.monotonic() - last_prune > PRUNE_EVERY_S:
                        last_prune = time.monotonic()
                        self._prune()
                elif p.lock.acquire(self.stale_s):
                    self._promote()
                    continue
                else:
                    dv = p.db.data_version()
                    if dv != last_dv:
                        last_dv = dv
                        generation = engine.follow()
                        if generation is not None:
                            self.on_commit(generation, engine)
                        self._note_writer(engine)
                    elif time.monotonic() - last_vectors > VECTORS_EVERY_S:
                        last_vectors = time.monotonic()
                        engine.follow_vectors()
            except LoreError as exc:
                if exc.kind not in FENCED:
                    log.exception("election loop")
            except Exception:
                log.exception("election loop")
                self._stop.wait(0.2)
            self._stop.wait(POLL_S)

    def _note_writer(self, engine: Engine) -> None:
        epoch = self.parts.records.epoch()
        if epoch != engine.role.epoch:
            engine.role = Role(writer=False, writer_pid=self.parts.lock.holder_pid(), epoch=epoch)

    def _promote(self) -> None:
        """We hold the lock: claim the next epoch, apply what followers spooled (the record
        is writable at once), then build our indexes and catch them up."""
        engine = self.engine
        assert engine is not None
        epoch = self.parts.db.claim_epoch(os.getpid())
        self.fenced.clear()
        self.promotions += 1
        log.warning("became the writer (epoch %s)", epoch)
        engine.role = Role(writer=True, writer_pid=os.getpid(), epoch=epoch)
        engine.drain_spool()
        self._finish_promotion()
        self.on_role_change(engine)

    def _finish_promotion(self) -> None:
        engine = self.engine
        assert engine is not None
        old = engine.view
        view = self.parts.writer_view(engine.role.epoch)
        engine.become_writer(view, engine.role)
        view.indexer.start()
        retire(old)
        self.parts.writer_duties(engine)

    def _demote(self) -> None:
        engine = self.engine
        assert engine is not None
        p = self.parts
        p.db.resign()
        self.demotions += 1
        log.warning("no longer the writer (epoch %s)", engine.role.epoch)
        old = engine.view
        view = p.reader_view(p.records.index_epoch())
        engine.become_follower(view, Role(writer=False, writer_pid=p.lock.holder_pid(), epoch=p.records.epoch()))
        stop_memory(engine)
        retire(old, save=False)
        p.lock.release()
        self.fenced.clear()
        self.on_role_change(engine)

    def _prune(self) -> None:
        cutoff = time.time() - APPLIED_OPS_KEEP_S
        self.parts.records.prune_applied_ops(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(cutoff)))
        self.parts.spool.sweep_temporaries()

    # -- status and shutdown --------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        age = self.parts.lock.heartbeat_age()
        return {
            "writerHeartbeatAgeMs": None if age == float("inf") else round(age * 1000),
            "writerStaleMs": self.writer_stale_ms,
            "spoolPending": self.parts.spool.count(),
            "spoolQuarantined": self.parts.spool.quarantined(),
            "promotions": self.promotions,
        }

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=5)
        engine = self.engine
        if engine is not None:
            stop_memory(engine)
            retire(engine.view, save=engine.role.writer and not self.fenced.is_set())
        self.parts.db.close()
        self.parts.lock.release()


def retire(view: View, *, save: bool = True) -> None:
    """A view that is no longer current: its writer parts stop; its text index is only
    closed for writing, so a read that took this view a moment ago still finishes on it."""
    if view.indexer is not None:
        view.indexer.stop(save=save)
    view.text.close()


def stop_memory(engine: Engine) -> None:
    worker, engine.memory_worker = engine.memory_worker, None
    if worker is not None:
        worker.stop()
