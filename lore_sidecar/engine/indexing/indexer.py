"""The index worker: the only code that mutates the derived indexes.

It runs on one thread of the writer instance, drains `index_outbox` in order, applies each
batch to the text and vector indexes, commits, and bumps the generation. Because outbox
rows are written in the same transaction as the record rows, a crash at any point leaves
the indexes behind, never ahead, and the next start catches up by replaying from the last
watermark (upserts are idempotent).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from lore_sidecar.errors import FENCED, LoreError
from lore_sidecar.model import INDEXED_SOURCES, Doc
from lore_sidecar.ports import Embedder, TextIndex, VectorIndex

log = logging.getLogger(__name__)

BATCH = 4000
EMBED_CHUNK = 500
VECTOR_SAVE_INTERVAL_S = 2.0


def embed_text(doc: Doc) -> str:
    if doc.kind == "files":
        return f"{doc.title}\n{doc.path}\n{doc.body}"
    return doc.body


class Indexer:
    def __init__(
        self,
        records,
        text: TextIndex,
        vectors: VectorIndex | None,
        embedder: Embedder | None,
        *,
        on_commit: Callable[[int], None] = lambda generation: None,
    ):
        self.records = records
        self.text = text
        self.vectors = vectors
        self.embedder = embedder
        self.on_commit = on_commit
        self.applied_seq = 0
        self.generation = int(records.meta("generation", "0") or 0)
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._rebuild_req: list[threading.Event] = []
        self._thread: threading.Thread | None = None
        self._last_vec_save = time.monotonic()
        self.error: str | None = None
        self.fenced = False  # set when the store refused our epoch: we are no longer the writer
        self._vector_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lore-vectors")

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="lore-indexer", daemon=True)
        self._thread.start()

    def stop(self, *, save: bool = True) -> None:
        """Stop the worker; with `save`, snapshot vectors first (a fenced ex-writer must not)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        if save and not self.fenced:
            try:
                self._save_vectors(force=True)
            except LoreError as exc:
                log.warning("final vector snapshot refused: %s", exc)
        self._vector_pool.shutdown(wait=True)

    def notify(self) -> None:
        self._wake.set()

    def wait_for(self, seq: int, timeout: float) -> bool:
        """Block until everything up to outbox `seq` is searchable (or timeout)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.applied_seq < seq:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return True

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
        except LoreError:
            raise
        except Exception:
            log.exception("index start-up failed; rebuilding from the record")
            self._rebuild()
        while not self._stop.is_set():
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            try:
                with self._cond:
                    pending = self._rebuild_req
                    self._rebuild_req = []
                if pending:
                    self._rebuild()
                    for ev in pending:
                        ev.set()
                    continue
                while self._drain_once():
                    if self._stop.is_set():
                        break
                self._save_vectors(force=False)
                self.error = None
            except LoreError:
                raise
            except Exception as exc:  # keep serving; the record is safe, retry on next wake
                self.error = f"{type(exc).__name__}: {exc}"
                log.exception("index batch failed")
                time.sleep(0.5)
                self._wake.set()

    def _catch_up_on_start(self) -> None:
        text_seq = self.text.saved_seq
        vec_seq = self.vectors.saved_seq if self.vectors is not None else text_seq
        trimmed = int(self.records.meta("outbox_trimmed", "0") or 0)
        if text_seq < trimmed or vec_seq < trimmed:
            # An index lost changes the outbox no longer holds (wiped, or another embedder):
            # only a full rebuild from the record is correct.
            log.info("index behind the trimmed outbox (%s/%s < %s): rebuilding", text_seq, vec_seq, trimmed)
            self._rebuild()
            return
        with self._cond:
            self.applied_seq = min(text_seq, vec_seq)
            self._cond.notify_all()
        while self._drain_once():
            pass
        self._save_vectors(force=True)

    def _drain_once(self) -> bool:
        entries = self.records.outbox_after(self.applied_seq, BATCH)
        if not entries:
            return False
        latest: dict[tuple[str, int], tuple[str, int]] = {}
        for e in entries:
            latest[(e.kind, e.key)] = (e.op, e.project_id)
        upserts: dict[str, list[int]] = {}
        deletes: dict[str, list[tuple[int, int]]] = {}
        for (kind, key), (op, pid) in latest.items():
            if op == "upsert":
                upserts.setdefault(kind, []).append(key)
            else:
                deletes.setdefault(kind, []).append((key, pid))
        for kind, items in deletes.items():
            self.text.delete(kind, [k for k, _ in items])
            if self.vectors is not None:
                by_project: dict[int, list[int]] = {}
                for k, pid in items:
                    by_project.setdefault(pid, []).append(k)
                for pid, keys in by_project.items():
                    self.vectors.remove(kind, pid, keys)
        for kind, keys in upserts.items():
            self._index_docs(self._load(kind, keys))
        self._commit(entries[-1].seq)
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

    def _index_docs(self, docs: list[Doc]) -> None:
        if not docs:
            return
        self.text.upsert(docs)
        if self.vectors is None or self.embedder is None:
            return
        # Embed chunk k+1 while chunk k is inserted into the HNSW graph on the vector
        # thread. One vector thread, fed in order, keeps the graph deterministic.
        pending = []
        for start in range(0, len(docs), EMBED_CHUNK):
            part = docs[start : start + EMBED_CHUNK]
            vecs = self.embedder.embed([embed_text(d) for d in part])
            pending.append(self._vector_pool.submit(self._add_vectors, part, vecs))
        for fut in pending:
            fut.result()

    def _add_vectors(self, docs: list[Doc], vecs: np.ndarray) -> None:
        groups: dict[tuple[str, int], list[int]] = {}
        for i, d in enumerate(docs):
            if vecs[i].any():  # an empty text has no direction; keep it out of the graph
                groups.setdefault((d.kind, d.project_id), []).append(i)
        for (kind, pid), rows in groups.items():
            self.vectors.upsert(kind, pid, [docs[i].key for i in rows], vecs[np.asarray(rows)])

    def _commit(self, seq: int) -> None:
        # The index lives in this writer's own epoch directory, so committing it cannot harm
        # anyone; what makes it visible is the generation, published by a fenced
        # transaction. An ex-writer woken from a pause commits into a directory nobody
        # reads and is refused here.
        self.text.commit(seq)
        generation = self.generation + 1

        def publish(conn) -> None:
            self.records.set_meta(conn, "generation", str(generation))
            self.records.set_meta(conn, "indexed_seq", str(seq))

        self.records.fenced(publish)
        with self._cond:
            self.applied_seq = seq
            self.generation = generation
            self._cond.notify_all()
        self.on_commit(generation)

    def _save_vectors(self, *, force: bool) -> None:
        if self.vectors is None:
            self._trim(self.applied_seq)
            return
        due = time.monotonic() - self._last_vec_save >= VECTOR_SAVE_INTERVAL_S
        behind = self.vectors.dirty or self.vectors.saved_seq < self.applied_seq
        if behind and (force or due):
            seq = self.applied_seq
            self.vectors.save(seq)  # into our own epoch directory (see `_commit`)
            self._last_vec_save = time.monotonic()
            self._trim(seq)

    def _trim(self, upto: int) -> None:
        if upto > 0:
            self.records.outbox_trim(upto)

    def _rebuild(self) -> None:
        """Wipe both indexes and re-add every record row (`lore/reindex`, lost indexes)."""
        head = self.records.outbox_head()
        self.text.clear()
        if self.vectors is not None:
            self.vectors.clear()
        for kind in INDEXED_SOURCES:
            keys = [k for k, _ in self.records.all_keys(kind)]
            for i in range(0, len(keys), BATCH):
                self._index_docs(self._load(kind, keys[i : i + BATCH]))
        self.applied_seq = 0
        # Entries after `head` may or may not be in the scan above; replaying them is harmless.
        self._commit(head)
        self._save_vectors(force=True)
