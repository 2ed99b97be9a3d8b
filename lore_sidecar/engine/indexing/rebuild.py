"""Rebuilding the word index from the record, a part of the index worker
(engine/indexing/indexer.py `Indexer`, which this class is mixed into): `lore/reindex`, a
lost or outdated text index, and what follows when a rebuild fails half way."""

from __future__ import annotations

import logging
import threading

from lore_sidecar.engine.indexing.dense import BATCH, Interrupted
from lore_sidecar.errors import LoreError
from lore_sidecar.model import INDEXED_SOURCES

log = logging.getLogger(__name__)

# A rebuild that failed (not a stop) is tried again after this long, doubling up to the cap.
REBUILD_RETRY_S = 0.5
REBUILD_RETRY_MAX_S = 30.0


class Rebuilds:
    """The rebuild's methods of `Indexer` (its state: `_rebuilding`, `_retry_s`, `_rebuild_req`,
    the text and vector indexes, the dense leg)."""

    @property
    def rebuilding(self) -> bool:
        """The words are being rebuilt from the record (not all back yet)."""
        return self._rebuilding

    def _rebuild(self, *, vectors: bool = True) -> None:
        """Wipe the text index and re-add every record row (`lore/reindex`, a lost or
        outdated text index); `vectors`: the vectors too, embedded again from the record by
        the dense leg on its own thread once the words are back (`_forget_vectors`)."""
        head = self.records.outbox_head()
        self._rebuilding = True
        if vectors:
            self._forget_vectors(head)
        with self.writing():  # the dense leg waits for the words (words first)
            self.text.clear()
            for kind in INDEXED_SOURCES:
                keys = [k for k, _ in self.records.all_keys(kind)]
                for i in range(0, len(keys), BATCH):
                    if self._stop.is_set():
                        raise Interrupted  # the next start finds the words behind and rebuilds them
                    docs = self._load(kind, keys[i : i + BATCH])
                    if docs:
                        self.text.upsert(docs)
            self.applied_seq = 0
            # Entries after `head` may or may not be in the scan above; replaying them is harmless.
            self._commit(head)
            self._trim()  # (up to what the dense leg has saved)

    def _try_rebuild(self, pending: list[threading.Event]) -> bool:
        """`_rebuild`, True when done. Trigger: it raised half way (not a stop, not a fence).
        Why: the text writer held a cleared index and part of the rows, which the next
        ordinary commit published as whole (words missing until the next rebuild, and nothing
        said so). Outcome: the writes are rolled back (readers keep the words as last
        committed), `error` says so and `rebuilding` stays true, and the rebuild is asked
        again (`pending` with it), first in line, after a growing pause."""
        try:
            self._rebuild()
        except (LoreError, Interrupted):
            raise
        except Exception as exc:
            try:
                self.text.rollback()
            except Exception:  # the retry clears the writer again all the same
                log.exception("rolling back the failed rebuild's writes failed")
            with self._cond:
                self._added_seq = self.applied_seq  # (deferred adds went with the rollback)
                self._rebuild_req[:0] = pending or [threading.Event()]
            self._rebuilding = True
            self.error = f"index rebuild failed: {type(exc).__name__}: {exc}"
            log.exception("index rebuild failed; retrying in %.1f s", self._retry_s)
            self._stop.wait(self._retry_s)
            self._retry_s = min(self._retry_s * 2, REBUILD_RETRY_MAX_S)
            self._wake.set()
            return False
        self._retry_s = REBUILD_RETRY_S
        return True

    def _forget_vectors(self, seq: int) -> None:
        """Every kind's vectors dropped, embedded again from the record by the dense leg
        (following the outbox from `seq`). Trigger: a full rebuild embedded on this thread:
        `vectorLag` read 0 until it was over, and a stop waited here for a model load. Outcome:
        the dense leg counts the records left, and a stop leaves its load (`DenseWorker.stop`)."""
        if self.dense is None:
            if self.vectors is not None:
                self.vectors.clear()
            return
        with self.dense.paused():  # not in the middle of a step
            self.vectors.reembed_all(seq)
            self.dense.reset(seq)
            self.dense.count_stale()
        self.dense.notify()
