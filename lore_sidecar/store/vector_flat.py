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

import base64
import os
import sys
import threading
from pathlib import Path

import numpy as np

SUFFIX = ".delta"  # a delta's file: one `np.save` of (key, int8 row) records

# Trigger: at 100k messages, recall over stdio missed its p95 of 15 ms (16-17 ms) after the
# delta lost its graph; py-spy put ~22% of a recall in the delta's scan, and usearch's exact
# search took ~2.9 ms for 30k rows of 256 int8 (~95 ns a row, most of it outside the dot
# products). Why: the scan is one int8 matrix-vector product; onnxruntime's MatMulInteger
# does it with the CPU's int8 dot instructions in ~0.7 ms on the same rows, exactly (int32
# sums; numpy's einsum over the same layout takes ~1.5 ms). Outcome: the rows are kept
# transposed (one column a vector) and their dot products with the query come from that
# kernel, or numpy's when onnxruntime is not loaded; those pick the nearest few, which
# usearch's own cosine then scores (`search`).
# The model: one MatMulInteger node, q (uint8 [1, d], zero point 128) x rows (int8 [d, n]) ->
# dots (int32 [1, n]), opset 10; `tests/unit/test_delta_kernel.py` builds it with
# onnx.helper and checks these bytes (onnx itself costs ~0.7 s to import: not at run time).
_DOTS_MODEL = base64.b64decode(
    "CAUSDGxvcmUtc2lkZWNhcjqNAQomCgFxCgRyb3dzCgZxX3plcm8SBGRvdHMiDU1hdE11bEludGVnZXISCmRlbHRh"
    "X2RvdHMqDhACKgKAAUIGcV96ZXJvWhQKAXESDwoNCAISCQoCCAEKAxIBZFoYCgRyb3dzEhAKDggDEgoKAxIBZAoD"
    "EgFuYhcKBGRvdHMSDwoNCAYSCQoCCAEKAxIBbkIECgAQCg==")
# Columns beyond a power of two: with 32,768 columns (one row of the block 32 KB long) the
# kernel took 1.6 ms where 32,784 took 0.46 (rows that far apart share cache sets; measured).
PAD = 16
# Rows past the asked number re-scored by usearch, so that one the kernel's float64 put just
# below the cut and usearch's float32 just above it is not lost.
SPARE = 16
_session: object | None = None
_session_lock = threading.Lock()


def dots_session():
    """The MatMulInteger session, or None when onnxruntime is not loaded in this process.
    It is never imported here: imported after usearch's native module it crashes the
    process (llm/minilm.py imports it first, as every default sidecar does); without it
    numpy computes the same int32 sums."""
    global _session
    if _session is None:
        ort = sys.modules.get("onnxruntime")
        if ort is None or not hasattr(ort, "InferenceSession"):
            return None
        with _session_lock:
            if _session is None:
                so = ort.SessionOptions()
                so.intra_op_num_threads = 1  # a search is one request's; the cores are the requests'
                so.inter_op_num_threads = 1
                _session = ort.InferenceSession(_DOTS_MODEL, so, providers=["CPUExecutionProvider"])
    return _session


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Float rows as usearch stores them in an int8 cosine index (int8 rows pass as they are)."""
    v = np.asarray(vectors)
    if v.dtype == np.int8:
        return v.reshape(-1, v.shape[-1])
    v = v.astype(np.float32, copy=False).reshape(-1, v.shape[-1])
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.trunc(v / norms * 127.0).astype(np.int8)


def _inverse_norms(rows: np.ndarray) -> np.ndarray:
    """1/|row| for int8 rows (0 for a zero row: its cosine with anything is 0)."""
    n = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.int64).astype(np.float64))
    out = np.zeros(len(rows), dtype=np.float64)
    np.divide(1.0, n, out=out, where=n > 0)
    return out


class FlatDelta:
    """Keys and their int8 rows, in arrival order (a removal moves the last row into the
    gap); `row` finds a key's row. The rows are held transposed, one column a vector (what
    the dot-product kernel reads), with each row's inverse norm beside it."""

    def __init__(self, dim: int, keys: np.ndarray | None = None, rows: np.ndarray | None = None):
        self.dim = dim
        n = 0 if keys is None else len(keys)
        cap = max(1024, n) + PAD
        self._keys = np.zeros(cap, dtype=np.uint64)
        self._cols = np.zeros((dim, cap), dtype=np.int8)
        self._inv = np.zeros(cap, dtype=np.float64)
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
        inv = _inverse_norms(q)
        need = self._n + len(karr)
        if need > len(self._keys):
            cap = max(need, 2 * (len(self._keys) - PAD)) + PAD
            keys, cols, invs = np.zeros(cap, dtype=np.uint64), np.zeros((self.dim, cap), dtype=np.int8), np.zeros(cap)
            keys[: self._n], cols[:, : self._n], invs[: self._n] = self._keys[: self._n], self._cols[:, : self._n], self._inv[: self._n]
            self._keys, self._cols, self._inv = keys, cols, invs
        at_of = np.empty(len(karr), dtype=np.intp)
        for i, k in enumerate(karr.tolist()):
            at = self.row.get(k)
            if at is None:
                at = self.row[k] = self._n
                self._keys[at] = k
                self._n += 1
            at_of[i] = at
        # A key given twice in one call keeps its last vector, as one upsert after another would.
        _, from_end = np.unique(at_of[::-1], return_index=True)
        last = len(at_of) - 1 - from_end
        self._cols[:, at_of[last]] = q[last].T
        self._inv[at_of[last]] = inv[last]

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
                self._keys[at], self._inv[at] = moved, self._inv[last]
                self._cols[:, at] = self._cols[:, last]
                self.row[moved] = at
            self._n = last
        return gone

    def search(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """The exact `limit` nearest (key, cosine distance), nearest first (ties by key)."""
        n = self._n
        if not n or limit <= 0:
            return []
        qv = quantize(vector)[0]
        session = dots_session()
        if session is not None:
            # The whole capacity is passed (one contiguous block, no copy); the columns past
            # `n` are not read back.
            q8 = (qv.astype(np.int16) + 128).astype(np.uint8).reshape(1, -1)
            dots = session.run(None, {"q": q8, "rows": self._cols})[0][0, :n]
        else:  # the same int32 sums (~2x the kernel's time, still ~half of usearch's exact search)
            dots = np.einsum("i,ij->j", qv.astype(np.int32), self._cols[:, :n])
        qinv = _inverse_norms(qv.reshape(1, -1))[0]
        dist = 1.0 - dots * self._inv[:n] * qinv
        # The kernel picks the nearest (every row as near as the pick's last, a few spare);
        # usearch's own cosine gives their distances. Why: the frozen parts' distances are
        # usearch's, and a vector in the delta must score exactly as the same vector there
        # (ties across parts are then broken by key, as in an index rebuilt from the record).
        pick = min(n, min(limit, n) + SPARE)
        top = np.flatnonzero(dist <= np.partition(dist, pick - 1)[pick - 1]) if pick < n else np.arange(n)
        from usearch.index import MetricKind, search  # native module: see VectorIndex._new

        m = search(np.ascontiguousarray(self._cols[:, top].T), qv, len(top), MetricKind.Cos, exact=True, threads=1)
        keys = self._keys[top[np.asarray(m.keys, dtype=np.intp)]]
        dists = np.asarray(m.distances, dtype=np.float64)
        order = np.lexsort((keys, dists))[: min(limit, n)]
        return [(int(keys[i]), float(dists[i])) for i in order.tolist()]

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """Every key and its int8 row (copies, in row order)."""
        return self._keys[: self._n].copy(), np.ascontiguousarray(self._cols[:, : self._n].T)

    def save(self, path: Path) -> None:
        rec = np.zeros(self._n, dtype=[("key", "<u8"), ("row", "i1", (self.dim,))])
        rec["key"], rec["row"] = self._keys[: self._n], self._cols[:, : self._n].T
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
