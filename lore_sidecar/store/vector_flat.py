"""A vector index's loaded delta without a graph: int8 rows searched exhaustively.

Trigger: a 100k import was searchable by meaning at ~1,200 msg/s (issue 39 item 3 asks
2,000). Why: every vector entered an HNSW graph twice, into the delta's graph on arrival and
again into the frozen part's at the fold, and an HNSW insertion is the dense leg's largest
cost after the embedding. A delta is small (at most `FOLD_AT` vectors), so an exact SIMD
scan of its rows (usearch's own cosine kernel over the same int8 values) costs about what
a search of its graph did, and an arrival is a row copy. Outcome: a vector enters a graph
once, at the fold; the delta answers its exact nearest neighbours.

Vectors are quantised here as usearch quantises a float vector for an int8 cosine index
(scaled to unit length, times 127, truncated), and the fold hands these rows to the
frozen graph as they are: a vector has the same int8 value in the delta, in the frozen
part, and after a rebuild from the record.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

SUFFIX = ".delta"  # a delta's file: one `np.save` of (key, int8 row) records


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Float rows as usearch stores them in an int8 cosine index (int8 rows pass as they are)."""
    v = np.asarray(vectors)
    if v.dtype == np.int8:
        return v.reshape(-1, v.shape[-1])
    v = v.astype(np.float32, copy=False).reshape(-1, v.shape[-1])
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.trunc(v / norms * 127.0).astype(np.int8)


class FlatDelta:
    """Keys and their int8 rows, in arrival order (a removal moves the last row into the
    gap); `row` finds a key's row."""

    def __init__(self, dim: int, keys: np.ndarray | None = None, rows: np.ndarray | None = None):
        self.dim = dim
        n = 0 if keys is None else len(keys)
        cap = max(1024, n)
        self._keys = np.zeros(cap, dtype=np.uint64)
        self._rows = np.zeros((cap, dim), dtype=np.int8)
        self._n = 0
        self.row: dict[int, int] = {}
        if n:
            self.upsert(np.asarray(keys, dtype=np.uint64), np.asarray(rows, dtype=np.int8))

    def __len__(self) -> int:
        return self._n

    def contains(self, karr: np.ndarray) -> np.ndarray:
        return np.fromiter((int(k) in self.row for k in karr), dtype=bool, count=len(karr))

    def upsert(self, karr: np.ndarray, vectors: np.ndarray) -> None:
        """Each key's row is replaced, or appended when the key is new."""
        q = quantize(vectors)
        need = self._n + len(karr)
        if need > len(self._keys):
            cap = max(need, 2 * len(self._keys))
            keys, rows = np.zeros(cap, dtype=np.uint64), np.zeros((cap, self.dim), dtype=np.int8)
            keys[: self._n], rows[: self._n] = self._keys[: self._n], self._rows[: self._n]
            self._keys, self._rows = keys, rows
        for k, r in zip(karr.tolist(), q, strict=True):
            at = self.row.get(k)
            if at is None:
                at = self.row[k] = self._n
                self._keys[at] = k
                self._n += 1
            self._rows[at] = r

    def remove(self, karr: np.ndarray) -> int:
        """How many of `karr` were here."""
        gone = 0
        for k in karr.tolist():
            at = self.row.pop(k, None)
            if at is None:
                continue
            gone += 1
            last = self._n - 1
            if at != last:  # the last row fills the gap
                moved = int(self._keys[last])
                self._keys[at], self._rows[at] = moved, self._rows[last]
                self.row[moved] = at
            self._n = last
        return gone

    def search(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """The exact `limit` nearest (key, cosine distance), nearest first."""
        if not self._n or limit <= 0:
            return []
        from usearch.index import MetricKind, search  # native module: see VectorIndex._new

        m = search(self._rows[: self._n], quantize(vector)[0], min(limit, self._n), MetricKind.Cos, exact=True, threads=1)
        return [(int(self._keys[r]), float(d)) for r, d in zip(m.keys.tolist(), m.distances.tolist(), strict=True)]

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """Every key and its int8 row (copies, in row order)."""
        return self._keys[: self._n].copy(), self._rows[: self._n].copy()

    def save(self, path: Path) -> None:
        rec = np.zeros(self._n, dtype=[("key", "<u8"), ("row", "i1", (self.dim,))])
        rec["key"], rec["row"] = self._keys[: self._n], self._rows[: self._n]
        with open(path, "wb") as fh:
            np.save(fh, rec, allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())

    @classmethod
    def load(cls, path: Path, dim: int) -> FlatDelta:
        rec = np.load(path, allow_pickle=False)
        if rec.dtype.names != ("key", "row") or rec["row"].shape[1:] != (dim,):
            raise ValueError(f"{path}: not a delta of {dim}-d int8 rows")
        return cls(dim, rec["key"], rec["row"])
