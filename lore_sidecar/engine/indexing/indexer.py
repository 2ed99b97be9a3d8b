"""The index worker: the only code that mutates the derived indexes.

It runs on one thread of the writer instance, drains `index_outbox` in order, applies each
batch to the text index, commits, and bumps the generation: from then on the batch is
searchable by its words. The dense leg (engine/indexing/dense.py) follows on its own
thread. Because outbox rows are written in the same transaction as the record rows, a crash
at any point leaves the indexes behind, never ahead, and the next start catches up by
replaying from each leg's last saved position (upserts are idempotent).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager

from lore_sidecar.engine.indexing.dense import BATCH, DenseWorker, Interrupted
from lore_sidecar.engine.indexing.rebuild import REBUILD_RETRY_S, Rebuilds
from lore_sidecar.engine.indexing.words_first import SCAN_WRITING, WRITES_PENDING
from lore_sidecar.errors import FENCED, LoreError
from lore_sidecar.model import Doc
from lore_sidecar.ports import DenseModels, TextIndex, VectorIndex

log = logging.getLogger(__name__)

# While a workspace scan is writing, the text leg commits at most this often (a commit
# flushes a segment, fsyncs, publishes a generation, and makes Tantivy merge segments).
# Trigger: a scan of 20,000 notes writes ~80 batches. Why: the text leg committed each
# (80 segments, their merges and fsyncs on the two cores the scan needs). Outcome: it adds
# them to the writer as they come and commits every COMMIT_EVERY_S, at once when someone
# waits for the words, and when the scan has written its last batch.
COMMIT_EVERY_S = 1.0


class Indexer(Rebuilds):
    def __init__(
        self,
        records,
        text: TextIndex,
        vectors: VectorIndex | None,
        models: DenseModels | None,
        *,
        on_commit: Callable[[int], None] = lambda generation: None,
        dense_order=None,
        embed_vendored: bool = False,
    ):
        self.records = records
        self.text = text
        self.vectors = vectors
        self.models = models
        self.on_commit = on_commit
        self.applied_seq = 0  # searchable by its words up to here
        self._added_seq = 0  # added to the text writer up to here (committed: applied_seq)
        self._committed_at = time.monotonic()
        self._waiters = 0  # threads in wait_for: a deferred commit is made at once for them
        self.generation = int(records.meta("generation", "0") or 0)
        self.words_pending = threading.Event()  # writes the text leg has not drained yet
        self._writing = 0  # scans writing batches now (engine/workspace/index.py)
        self._draining = False  # the text leg is indexing writes now (words_pending is cleared then)
        self.dense = (DenseWorker(records, vectors, models, load=self._load, text_seq=lambda: self.applied_seq,
                                  words_busy=self.words_busy, order=dense_order, embed_vendored=embed_vendored,
                                  trim=self._trim) if vectors is not None and models is not None else None)
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._rebuild_req: list[threading.Event] = []
        self._thread: threading.Thread | None = None
        self.error: str | None = None
        self.fenced = False  # set when the store refused our epoch: we are no longer the writer
        self._rebuilding = False  # a rebuild has cleared the indexes and not yet refilled them
        self._retry_s = REBUILD_RETRY_S  # the pause before a failed rebuild is tried again
        self._embed = True  # the dense leg runs here (start(embed=False): it is left to the next writer)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, *, embed: bool = True) -> None:
        """`embed=False`: the words only (a CLI call answers from them and hands the meaning
        index to a background indexer: lore_sidecar/background.py)."""
        self._embed = embed
        self._vectors_on_start()
        self._thread = threading.Thread(target=self._run, name="lore-indexer", daemon=True)
        self._thread.start()

    def stop(self, *, save: bool = True) -> None:
        """Stop both legs; with `save`, snapshot vectors first (a fenced ex-writer must not)."""
        self._stop.set()
        self._wake.set()
        if self.dense is not None:
            self.dense.interrupt()  # a rebuild on this leg's thread embeds through it too
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        if self.dense is not None:
            self.dense.stop()
            # A rebuild stopped half way holds part of the vectors: the snapshot on disk stays.
            if save and not self.fenced and not self.dense.fenced and not self._rebuilding:
                try:
                    self.dense.save(force=True)
                except LoreError as exc:
                    log.warning("final vector snapshot refused: %s", exc)

    @contextmanager
    def writing(self):
        """Around a scan that writes batch after batch. Trigger: between two batches the
        text leg is briefly level, and the dense leg started a batch of MiniLM (~2 s of a
        core) every time. Why: words first (engine/indexing/words_first.py): the scan's
        files must be searchable by their words before they are embedded. Outcome: the
        legs that follow wait (each wait bounded) until the scan has written its last."""
        with self._cond:
            self._writing += 1
        try:
            yield
        finally:
            with self._cond:
                self._writing -= 1
            self._wake.set()  # a commit deferred while the scan wrote is due now

    def words_busy(self) -> int:
        """Whether a scan is still writing (SCAN_WRITING), the text leg has writes to index
        (WRITES_PENDING), or neither (0): engine/indexing/words_first.py."""
        if self._writing > 0:
            return SCAN_WRITING
        return WRITES_PENDING if self.words_pending.is_set() or self._draining else 0

    def notify(self) -> None:
        self.words_pending.set()
        self._wake.set()

    def wait_for(self, seq: int, timeout: float) -> bool:
        """Block until everything up to outbox `seq` is searchable by its words (or timeout)."""
        deadline = time_left(timeout)
        with self._cond:
            if self.applied_seq >= seq:
                return True
            self._waiters += 1
            self._wake.set()  # added but not committed yet: commit now (COMMIT_EVERY_S)
            try:
                while self.applied_seq < seq:
                    left = deadline()
                    if left <= 0 or self._stop.is_set():
                        return False
                    self._cond.wait(left)
            finally:
                self._waiters -= 1
        return True

    def wait_dense(self, seq: int, timeout: float) -> bool:
        """Block until everything up to `seq` is also in the vector index (or timeout)."""
        deadline = time_left(timeout)
        if not self.wait_for(seq, timeout):
            return False
        return self.dense is None or self.dense.wait_for(seq, max(0.0, deadline()))

    @property
    def dense_seq(self) -> int:
        return self.dense.seq if self.dense is not None else self.applied_seq

    @property
    def dense_backlog(self) -> int:
        """Records still to be embedded again from the record (a model renamed, vectors lost)."""
        return self.dense.backlog if self.dense is not None else 0

    @property
    def dense_ahead(self) -> int:
        """Items the dense leg has done past its position (the most useful first)."""
        return self.dense.ahead if self.dense is not None else 0

    def request_rebuild(self, timeout: float = 3600) -> bool:
        done = threading.Event()
        with self._cond:
            self._rebuild_req.append(done)
        self._wake.set()
        return done.wait(timeout)

    # -- worker ------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._work()
        except Interrupted:
            # Stopped mid-rebuild: the text index was cleared (its SEQ with it) and the vector
            # snapshot on disk is not overwritten, so the next start finds the text index
            # behind the trimmed outbox and rebuilds from the record again.
            log.info("index rebuild interrupted by stop")
        except LoreError as exc:
            if exc.kind not in FENCED:
                raise
            # Another instance took over: everything we hold is stale. Stop, write nothing.
            log.warning("indexer stopped: %s", exc)
            self.fenced = True
            self._stop.set()
            with self._cond:
                self._cond.notify_all()

    def _work(self) -> None:
        try:
            self._catch_up_on_start()
        except (LoreError, Interrupted):
            raise
        except Exception:
            log.exception("index start-up failed; rebuilding from the record")
            self._try_rebuild([])
        if self.dense is not None and self._embed:
            self.dense.start()
            self.dense.notify()
        while not self._stop.is_set():
            self._wake.wait(timeout=COMMIT_EVERY_S if self._added_seq > self.applied_seq else 1.0)
            self._wake.clear()
            try:
                with self._cond:
                    pending = self._rebuild_req
                    self._rebuild_req = []
                if pending:
                    if self._try_rebuild(pending):
                        for ev in pending:
                            ev.set()
                    continue
                # Trigger: the flag is cleared before the drain (set again by any write from
                # here on). Why: with the flag alone, the legs that follow saw no pending
                # words while the text leg indexed a scan's last batches, and the dense leg
                # loaded MiniLM (~0.5 s of a core) and embedded beside it. Outcome: they wait
                # for the drain too.
                self._draining = True
                self.words_pending.clear()
                try:
                    self._drain()
                finally:
                    self._draining = False
                if self.dense is None:
                    self._trim()
                self.error = None
            except (LoreError, Interrupted):
                raise
            except Exception as exc:  # keep serving; the record is safe, retry on next wake
                self.error = f"{type(exc).__name__}: {exc}"
                log.exception("index batch failed")
                self._stop.wait(0.5)
                self._wake.set()

    def _vectors_on_start(self) -> None:
        """Before either leg starts (a status asked at once counts them): vectors lost (no
        `vectors.json`, or one the outbox was trimmed past; the words lost too, or not) are
        embedded again from the record by the dense leg, which then follows from `trimmed`."""
        if self.dense is None:
            return
        trimmed = int(self.records.meta("outbox_trimmed", "0") or 0)
        if self.vectors.saved_seq < trimmed:
            log.info("vectors behind the trimmed outbox (%s < %s): embedding every kind again",
                     self.vectors.saved_seq, trimmed)
            self.vectors.reembed_all(trimmed)  # (the dense leg has not started: nothing to pause)
            self.dense.reset(trimmed)
            self.dense.count_stale()

    def _catch_up_on_start(self) -> None:
        text_seq = self.text.saved_seq
        trimmed = int(self.records.meta("outbox_trimmed", "0") or 0)
        if text_seq < trimmed:
            # The text index lost changes the outbox no longer holds (wiped, a new schema):
            # only a rebuild from the record is correct. Vectors level with the outbox are kept
            # (trigger: a text schema change re-embedded 100k messages too; `_vectors_on_start`).
            log.info("text index behind the trimmed outbox (%s < %s): rebuilding it", text_seq, trimmed)
            self._rebuild(vectors=self.dense is None)
            return
        with self._cond:
            self.applied_seq = self._added_seq = text_seq
            self._cond.notify_all()
        self._drain()  # a scan started with the sidecar is not committed batch by batch either

    def _drain(self) -> None:
        """Add every pending write to the text index; commit when level (or every
        COMMIT_EVERY_S) unless a scan is still writing and nobody waits for the words."""
        while not self._stop.is_set():
            scanning = self._writing > 0  # before the read: a scan ending during it is read again
            more = self._drain_once(commit=False)
            if self._added_seq > self.applied_seq and (
                    self._waiters or time.monotonic() - self._committed_at >= COMMIT_EVERY_S
                    or (not more and not scanning)):
                self._commit(self._added_seq)
                if self.dense is not None:
                    self.dense.notify()
            if not more and not (scanning and self._writing == 0):
                return

    def _drain_once(self, *, commit: bool = True) -> bool:
        """One batch of the outbox added to the text index (and committed, with `commit`);
        True when there may be more."""
        entries = self.records.outbox_after(self._added_seq, BATCH)
        if not entries:
            if commit and self._added_seq > self.applied_seq:
                self._commit(self._added_seq)
            return False
        latest: dict[tuple[str, int], str] = {}
        for e in entries:
            latest[(e.kind, e.key)] = e.op
        upserts: dict[str, list[int]] = {}
        deletes: dict[str, list[int]] = {}
        for (kind, key), op in latest.items():
            (upserts if op == "upsert" else deletes).setdefault(kind, []).append(key)
        for kind, keys in deletes.items():
            self.text.delete(kind, keys)
        for kind, keys in upserts.items():
            docs = self._load(kind, keys)
            if docs:
                self.text.upsert(docs)
        self._added_seq = entries[-1].seq
        if commit:
            self._commit(self._added_seq)
            if self.dense is not None:
                self.dense.notify()
        return len(entries) == BATCH

    def _load(self, kind: str, keys: Sequence[int]) -> list[Doc]:
        if kind == "messages":
            return self.records.message_docs(keys)
        if kind == "files":
            return self.records.files.chunk_docs(keys)
        if kind == "facts":
            return self.records.fact_docs(keys)
        if kind == "distillations":
            return self.records.memory.distillation_docs(keys)
        if kind == "entities":
            return self.records.memory.entity_docs(keys)
        if kind == "knowledge":
            return self.records.nodes.docs(keys)
        return []

    def _commit(self, seq: int) -> None:
        # The index lives in this writer's own epoch directory, so committing it cannot harm
        # anyone; what makes it visible is the generation, published by a fenced
        # transaction. An ex-writer woken from a pause commits into a directory nobody
        # reads and is refused here. The record is made durable first: a workspace scan's
        # rows are committed without an fsync (store/file_rows.py), and the index must never
        # hold what a power cut could take from the record.
        self.records.files.sync()
        self.text.commit(seq)
        generation = self.generation + 1

        def publish(conn) -> None:
            self.records.set_meta(conn, "generation", str(generation))
            self.records.set_meta(conn, "indexed_seq", str(seq))

        self.records.fenced(publish)
        self._committed_at = time.monotonic()
        with self._cond:
            self.applied_seq = self._added_seq = seq
            self.generation = generation
            self._rebuilding = False  # (a rebuild's words are all back with its commit)
            self._cond.notify_all()
        self.on_commit(generation)

    def _trim(self) -> None:
        """The outbox shrinks to what every leg has saved (the text commit is its save)."""
        upto = self.applied_seq if self.dense is None else min(self.applied_seq, self.vectors.saved_seq)
        if upto > 0:
            self.records.outbox_trim(upto)


def time_left(timeout: float) -> Callable[[], float]:
    end = time.monotonic() + timeout
    return lambda: end - time.monotonic()
