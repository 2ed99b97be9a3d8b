"""One (kind, project)'s vectors: a frozen part viewed from disk plus a small loaded delta.

Trigger: a loaded usearch index holds every vector in memory (53 MB a 100k int8 vectors),
so one million messages' vectors alone passed the sidecar's 500 MB budget. Why two parts:
a memory-mapped ("viewed") index costs only the pages a search touches, but it cannot be
written, and the writer keeps inserting. Outcome: new vectors go into a loaded delta (rows
without a graph, searched exactly: store/vector_flat.py); the frozen part is an immutable
HNSW file, viewed; a search asks both and merges by similarity.
`VectorIndex.save` folds the delta into a new frozen file once it is big enough.

A vector replaced or removed while it sits in the frozen part cannot leave the file: its key
is marked dead (`dead`) and filtered out of the frozen part's answers; a replacement lives
in the delta. The next fold drops the dead keys for good.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lore_sidecar.store.vector_flat import FlatDelta


def _present(idx: Any, karr: np.ndarray) -> np.ndarray:
    """The keys of `karr` that `idx` holds."""
    if idx is None or not len(idx) or not len(karr):
        return karr[:0]
    return karr[np.asarray(idx.contains(karr), dtype=bool).reshape(-1)]


def _keys(idx: Any) -> np.ndarray:
    """Every key of `idx`, in its slot order, in one call. Trigger: a fold reads the delta's
    keys. Why: iterating usearch's `keys` asks for one key at a time, and each is found by a
    walk from the first slot (0.5 ms a key at 32k: ~16 s of every fold at FOLD_AT; measured).
    Outcome: the same keys in the same order, as one array."""
    return np.asarray(idx.keys, dtype=np.uint64)


@dataclass
class Part:
    frozen: Any = None  # a viewed usearch Index (or a large part: vector_big.BigFrozen), read-only, or None
    frozen_name: str | None = None  # its file, never rewritten (a fold makes a new name)
    rows_name: str | None = None  # a large part's rows file (store/vector_big.py), else None
    delta: FlatDelta | None = None
    delta_name: str | None = None  # its file as last saved: a new name every save
    dead: set[int] = field(default_factory=set)  # keys in `frozen` that no longer count
    gen: int = 0  # folds so far: the next frozen file is named after gen + 1

    def __len__(self) -> int:
        frozen = len(self.frozen) - len(self.dead) if self.frozen is not None else 0
        return frozen + (len(self.delta) if self.delta is not None else 0)

    # -- writes (the caller holds the index's locks) ---------------------------------------
    def upsert(self, karr: np.ndarray, vectors: np.ndarray, new: Callable[[], FlatDelta]) -> None:
        self.dead.update(int(k) for k in _present(self.frozen, karr))
        if self.delta is None:
            self.delta = new()
        self.delta.upsert(karr, vectors)

    def remove(self, karr: np.ndarray) -> bool:
        """True if a live vector went."""
        gone = {int(k) for k in _present(self.frozen, karr)} - self.dead
        self.dead |= gone
        # Asked whatever the frozen part held (one call may remove keys of both parts).
        dropped = self.delta.remove(karr) if self.delta is not None else 0
        return bool(gone) or bool(dropped)

    # -- reads -----------------------------------------------------------------------------
    def search(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """Up to `limit` (key, cosine distance) from both parts, the dead left out."""
        out: list[tuple[int, float]] = []
        if self.delta is not None:
            out += self.delta.search(vector, limit)
        if self.frozen is not None and len(self.frozen) > len(self.dead):
            total = len(self.frozen)
            # First ask for a few spare answers; only if the dead took too many of them ask
            # again with room for every dead key (a fold bounds how many there are).
            for want in (limit + min(len(self.dead), limit), limit + len(self.dead)):
                m = self.frozen.search(vector, min(want, total))
                live = [(int(k), float(d)) for k, d in zip(m.keys, m.distances, strict=True) if int(k) not in self.dead]
                if len(live) >= limit or want >= total or len(m.keys) < min(want, total) or not self.dead:
                    break
            out += live[:limit]
        return out

    def contents(self) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        if self.frozen is not None and len(self.frozen):
            keys = [k for k in _keys(self.frozen).tolist() if k not in self.dead]
            vecs = self.frozen.get(np.asarray(keys, dtype=np.uint64), dtype="i8") if keys else []
            out.update({k: np.asarray(v).tobytes() for k, v in zip(keys, vecs, strict=True)})
        keys, rows = self.delta_items()
        out.update({k: r.tobytes() for k, r in zip(keys.tolist(), rows if rows is not None else [], strict=True)})
        return out

    def delta_items(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The delta's keys (in its row order) and their int8 vectors."""
        if self.delta is None or not len(self.delta):
            return np.zeros(0, dtype=np.uint64), None
        return self.delta.items()
