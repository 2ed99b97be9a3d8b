"""The dense leg's worker: embeds what the lexical index already holds, in outbox order, on
its own thread — so a write is searchable by its words at once and by its meaning a moment
later, and a slow embedder never holds back ingest.

It follows the text index: only outbox entries the text index has committed are taken, in
order, on one thread (the HNSW graph is then the same as a rebuild from the record). Its
position is its own (`seq`, saved with every vector snapshot); the outbox is trimmed only up
to what both legs have saved, so a crash mid catch-up resumes from the last snapshot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from lore_sidecar.engine import late
from lore_sidecar.engine.indexing import loads, priority
from lore_sidecar.engine.indexing.words_first import wait_for_words
from lore_sidecar.errors import FENCED, LoreError
from lore_sidecar.heap import release_memory
from lore_sidecar.model import Doc
from lore_sidecar.ports import DenseModels, VectorIndex

log = logging.getLogger(__name__)
BATCH = 4000
EMBED_CHUNK = 500
SAVE_INTERVAL_S = 2.0
# Outbox entries one dense step takes (the text leg takes BATCH). Trigger: a fresh workspace's
# 5,000 chunks were one step of minutes, so the position, the snapshot followers read and the
# progress line ("meaning index 0%") stood still until all were embedded. Outcome: steps of
# STEP, a snapshot at most every CATCH_UP_SAVE_S while catching up (each save writes it whole).
# STEP counts items of a slow model (one that embeds in calls of `batch`: MiniLM); a fast
# one's (WordLlama, ~30,000 texts/s) take the whole window: a 100k import read 4,096 outbox
# entries and ranked them for every 256 it embedded (~20% of the dense thread, measured).
STEP = 256
CATCH_UP_SAVE_S = 10.0
# Outbox entries looked over to choose a step's most useful chunks (engine/indexing/priority.py).
# The position still advances in outbox order, over what is done: chunks embedded ahead of it
# are remembered (`_ahead`) until it passes them; a crash re-embeds them (upserts are idempotent).
WINDOW = 4096
COUNTED_AS = {"files": "chunks"}  # a kind's name in `Records.counts` when it differs (files: their chunks)
RELEASE_AFTER_BATCHES = 3 * BATCH // STEP  # full steps (3 text batches' worth) after which freed memory is handed back


class Interrupted(Exception):
    """The worker was asked to stop in the middle of embedding a batch."""


def embed_text(doc: Doc) -> str:
    if doc.kind == "files":
        return f"{doc.title}\n{doc.path}\n{doc.body}"
    return doc.body


class DenseWorker:
    def __init__(self, records, vectors: VectorIndex, models: DenseModels, *, load: Callable[[str, Sequence[int]], list[Doc]],
                 text_seq: Callable[[], int], trim: Callable[[], None], words_busy: Callable[[], bool] = lambda: False,
                 order=None, embed_vendored: bool = False):
        self.records = records
        self.vectors = vectors
        self.models = models  # each kind's model (None: that kind has no vectors)
        self.load = load  # (kind, keys) -> docs, as the text leg loads them
        self.text_seq = text_seq  # how far the text index has committed
        self.trim = trim  # the outbox may shrink to what both legs saved
        self.words_busy = words_busy  # true while the text leg has writes to drain, or a scan writes
        self.order = order  # chunk files and hot paths, to embed the most useful first (None: outbox order)
        self.embed_vendored = embed_vendored  # else vendored/generated chunks are searched by their words only
        self.seq = vectors.saved_seq
        self._ahead: dict[tuple[str, int], int] = {}  # embedded past the position: (kind, key) -> entry seq covered
        self._vectorless: set[tuple[str, int]] = set()  # of those, done without a vector (deleted, vendored, no model)
        self.lock = threading.Lock()  # one batch, or one rebuild, at a time
        self.fenced = False
        self.error: str | None = None
        self.abandoned = False  # stopped while building a model: the thread may outlive stop()
        self._loading = ""  # the model being built on the worker's thread, if any
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lore-vectors")
        self._left: dict[str, int] = {}  # of a kind being embedded again from the record: records still to do
        self._last_save = time.monotonic()

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=loads.THREAD, daemon=True)
        self._thread.start()

    def interrupt(self) -> None:
        """Ask the worker to stop between two embedding calls, without waiting for it."""
        self._stop.set()
        self._wake.set()

    def stop(self) -> None:
        """Stop the worker and wait for it, except while it builds a model: that cannot be
        interrupted (MiniLM's first load is seconds of a core: an import, a graph rewrite, a
        session), and a worker building one has nothing of its own in the index yet. Trigger:
        a sidecar told to exit right after it started (an editor reloading, every short test)
        waited out the load: 2 s quiet, 7-10 s on a loaded machine. Outcome: the worker is
        left to finish its load and then stops before it touches the index (`_embed` checks
        after the load); `abandoned` says so, so the process may exit without it. Only in a
        process that ends through `exit_leaving_loads` (`loads.leave_loads_at_stop`): anywhere else
        (a CLI verb, a bench, a test) interpreter shutdown could meet the thread inside
        onnx's native code, so the stop waits for the load as before."""
        self.interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            deadline = time.monotonic() + 30
            while self._thread.is_alive() and time.monotonic() < deadline:
                if self._loading and loads.leave:
                    self.abandoned = True
                    log.info("stopping while the %s model loads: not waiting for the load", self._loading)
                    break
                self._thread.join(timeout=0.05)
        self._pool.shutdown(wait=True)

    def notify(self) -> None:
        self._wake.set()

    def wait_for(self, seq: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.seq < seq or self.vectors.stale:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(left)
        return True

    @property
    def backlog(self) -> int:
        """Records of the kinds being embedded again from the record (`VectorIndex.stale`)
        still without their vector: a kind not counted yet counts 1."""
        return sum(self._left.get(kind, 1) for kind in set(self.vectors.stale))

    def count_stale(self) -> None:
        """Count each kind to embed again from the record now (one COUNT per table), so the
        backlog is records from the start, before `_reembed` lists their keys."""
        counts = self.records.counts(None)
        for kind in self.vectors.stale:
            self._left[kind] = counts.get(COUNTED_AS.get(kind, kind), 1)

    @property
    def ahead(self) -> int:
        """Items embedded past the position (those done there without a vector left out)."""
        return len(self._ahead) - len(self._vectorless)

    @contextmanager
    def paused(self):
        """Hold the dense leg (a rebuild, or a test of the lexical-only moment)."""
        with self.lock:
            yield

    # -- work ----------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            try:
                if self.vectors.stale:
                    with self.lock:
                        self._reembed()
                batches = 0
                while not self._stop.is_set():
                    self._yield_to_words()
                    with self.lock:
                        more = self._once()
                    batches += more
                    if not more:
                        break
                    self.save(force=False, interval=CATCH_UP_SAVE_S)
                self.save(force=False)
                if batches >= RELEASE_AFTER_BATCHES:
                    # A long catch-up (an import) leaves freed heap in the embedders' and the
                    # graph's thread arenas: ~85 MB after 100k messages (measured).
                    release_memory()
                self.error = None
            except Interrupted:
                return  # the batch is not advanced past: the next start embeds it again
            except LoreError as exc:
                if exc.kind in FENCED:
                    log.warning("dense worker stopped: %s", exc)
                    self.fenced = True
                    return
                self.error = f"{exc.kind}: {exc}"
                log.exception("vector batch failed")
                self._stop.wait(0.5)
                self._wake.set()
            except Exception as exc:  # keep serving; the record is safe, retry on the next wake
                self.error = f"{type(exc).__name__}: {exc}"
                log.exception("vector batch failed")
                self._stop.wait(0.5)
                self._wake.set()

    def _reembed(self) -> None:
        """Embed every record of the stale kinds again (their stored vectors were another
        model's): the outbox may have been trimmed past them, so the record is read, not
        the outbox. The position stays: what was written meanwhile is replayed after
        (upserts are idempotent). A stop leaves the kind stale, and the next start does it
        again; the other kinds' vectors are not touched."""
        todo = {kind: [k for k, _ in self.records.all_keys(kind)] for kind in sorted(self.vectors.stale)}
        self._left.update({kind: len(keys) for kind, keys in todo.items()})  # every kind counted at once
        for kind, keys in todo.items():
            for i in range(0, len(keys), BATCH):
                self._yield_to_words()  # (a rebuild's words come back first: `add` yields only after its first part)
                self.add(self.load(kind, keys[i : i + BATCH]), yielding=True)
                self._left[kind] = max(0, len(keys) - i - BATCH)
            with self._cond:
                self.vectors.reembedded(kind)
                self._left.pop(kind, None)
                self._cond.notify_all()
            log.info("%s embedded again by the current model: %d records", kind, len(keys))
        self.save(force=True)
        release_memory()

    def _yield_to_words(self) -> None:
        """Trigger: the text leg has writes it has not drained. Why: a write must be
        searchable by its words first, its vectors are the catch-up. Outcome: the dense leg
        waits (bounded) for the text leg (engine/indexing/words_first.py)."""
        wait_for_words(self.words_busy, self._stop)

    def _once(self) -> bool:
        """One step: up to STEP of the window's pending upserts, most useful first (deletes at
        once), then the position moves over every entry done. False when nothing is pending."""
        upto = self.text_seq()
        entries = [e for e in self.records.outbox_after(self.seq, WINDOW) if e.seq <= upto]
        if not entries:
            return False
        latest: dict[tuple[str, int], tuple[str, int, int]] = {}
        for e in entries:
            latest[(e.kind, e.key)] = (e.op, e.project_id, e.seq)
        todo, deletes = [], []
        for (kind, key), (op, pid, seq) in latest.items():
            if self._ahead.get((kind, key), -1) >= seq:
                continue  # done ahead of the position already
            if op != "upsert":
                deletes.append((kind, key, pid, seq))
            elif self.models.for_kind(kind) is None:
                self._ahead[(kind, key)] = seq  # searched by its words only: nothing to read for it
                self._vectorless.add((kind, key))
            else:
                todo.append((kind, key, pid, seq))
        self._remove(deletes)
        step: dict[str, dict[int, int]] = {}
        for kind, key, _pid, seq in self._step(self._first(todo)):
            step.setdefault(kind, {})[key] = seq
        for kind, keys in step.items():
            self.add(self.load(kind, list(keys)), yielding=True)
            self._ahead.update({(kind, key): seq for key, seq in keys.items()})
            self._vectorless.difference_update((kind, key) for key in keys)
        done = entries[-1].seq
        for e in entries:
            if self._ahead.get((e.kind, e.key), -1) < e.seq:
                done = e.seq - 1
                break
        if done > self.seq:
            self._advance(done)
            self._ahead = {k: v for k, v in self._ahead.items() if v > done}
            self._vectorless &= self._ahead.keys()
        return True

    def _step(self, todo: list[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int]]:
        """The first of `todo` up to STEP items of a slow model (any number of a fast one's)."""
        slow = 0
        for i, (kind, *_rest) in enumerate(todo):
            if getattr(self.models.for_kind(kind), "batch", None):
                if slow == STEP:
                    return todo[:i]
                slow += 1
        return todo

    def _remove(self, items: list[tuple[str, int, int, int]]) -> None:
        """(kind, key, project, seq) items whose vectors go: done up to their entries."""
        groups: dict[tuple[str, int], list[int]] = {}
        for kind, key, pid, seq in items:
            groups.setdefault((kind, pid), []).append(key)
            self._ahead[(kind, key)] = seq
            self._vectorless.add((kind, key))
        for (kind, pid), keys in groups.items():
            self.vectors.remove(kind, pid, keys)

    def _first(self, todo: list[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int]]:
        """The pending upserts in the order to embed them; a vendored file's chunks, unless
        embedVendored, are done at once without a vector."""
        if self.order is None:
            return sorted(todo, key=lambda t: t[3])
        files = self.order.chunk_files([t[1] for t in todo if t[0] == "files"])
        hot = self.order.hot_paths() if files else frozenset()
        keep, skip, now = [], [], time.time()
        for t in todo:
            f = priority.ChunkFile(*files[t[1]]) if t[0] == "files" and t[1] in files else None
            if f is not None and not self.embed_vendored and priority.vendored(f.path):
                skip.append(t)
            else:
                keep.append((priority.rank(t[3], f, hot, now), t))
        self._remove(skip)  # also any vector embedded before the setting was turned off
        return [t for _, t in sorted(keep)]

    def add(self, docs: list[Doc], *, yielding: bool = False) -> None:
        """Embed chunk k+1 while chunk k goes into the HNSW graph (one insert thread, fed in
        order, keeps the graph deterministic)."""
        pending = []
        by_model: dict[int, list[Doc]] = {}
        models = {}
        for d in docs:
            model = self.models.for_kind(d.kind)
            if d.kind == "files" and not self.embed_vendored and priority.vendored(d.path, d.body):
                self.vectors.remove(d.kind, d.project_id, [d.key])  # embedded before the setting changed
            elif model is not None:
                by_model.setdefault(id(model), []).append(d)
                models[id(model)] = model
        for mid, group in by_model.items():
            for start in range(0, len(group), EMBED_CHUNK):
                part = group[start : start + EMBED_CHUNK]
                try:
                    vecs, pieces = self._embed(models[mid], [embed_text(d) for d in part])
                except Interrupted:
                    for fut in pending:  # the graph is left whole: the insert in flight finishes
                        fut.result()
                    raise
                if pending:  # one insert in flight at most, so a pause below pauses the graph too
                    pending.pop().result()
                if yielding:  # the dense thread's own catch-up (a rebuild runs on the text leg's thread)
                    self._yield_to_words()
                pending.append(self._pool.submit(self._insert, part, vecs, pieces))
        for fut in pending:
            fut.result()

    def _embed(self, model, texts: list[str]) -> tuple[np.ndarray, list[bytes] | None]:
        """model.embed(texts), and each text's word pieces packed for late interaction when the
        model gives them (None otherwise). Trigger: a slow model (`batch` set: MiniLM embeds
        ~30 chunks/s on two busy cores, so a part of 500 is ~15 s). Why: a sidecar told to exit
        waited out the part, then its join timed out and the process aborted with onnxruntime
        mid-run. Outcome: the texts go in calls of `batch`, shortest first (the batches the
        model makes of the whole part itself, so the vectors are the same), with a stop check
        before each; a stop raises Interrupted."""
        if not getattr(model, "loaded", True):
            self._loading = getattr(model, "name", "embedding")
            try:
                model.load()
            finally:
                self._loading = ""
        step = getattr(model, "batch", None) or len(texts)
        with_pieces = hasattr(model, "embed_with_tokens")
        order = list(range(len(texts)))
        if step < len(texts):
            order.sort(key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), model.dim), dtype=np.float32)
        packed: list[bytes] | None = [b""] * len(texts) if with_pieces else None
        for start in range(0, len(order), max(1, step)):
            if self._stop.is_set():
                raise Interrupted
            rows = order[start : start + step]
            part = [texts[i] for i in rows]
            if packed is None:
                out[rows] = model.embed(part)
                continue
            vecs, pieces = model.embed_with_tokens(part)
            out[rows] = vecs
            for i, (tokens, states) in zip(rows, pieces, strict=True):
                packed[i] = late.pack(tokens, states)
        return out, packed

    def _insert(self, docs: list[Doc], vecs: np.ndarray, pieces: list[bytes] | None = None) -> None:
        groups: dict[tuple[str, int], list[int]] = {}
        for i, d in enumerate(docs):
            if vecs[i].any():  # an empty text has no direction; keep it out of the graph
                groups.setdefault((d.kind, d.project_id), []).append(i)
        for (kind, pid), rows in groups.items():
            self.vectors.upsert(kind, pid, [docs[i].key for i in rows], vecs[np.asarray(rows)],
                                late=[pieces[i] for i in rows] if pieces is not None else None)

    def _advance(self, seq: int) -> None:
        with self._cond:
            self.seq = seq
            self._cond.notify_all()

    def reset(self, seq: int) -> None:
        """Follow the outbox from `seq` (every kind is embedded again from the record): what
        was embedded ahead of the old position is done again."""
        self._ahead.clear()
        self._vectorless.clear()
        self._advance(seq)

    def save(self, *, force: bool, interval: float = SAVE_INTERVAL_S) -> None:
        due = time.monotonic() - self._last_save >= interval
        if (self.vectors.dirty or self.vectors.saved_seq < self.seq) and (force or due):
            self.vectors.save(self.seq)  # into this writer's own epoch directory
            self._last_save = time.monotonic()
            self.trim()
