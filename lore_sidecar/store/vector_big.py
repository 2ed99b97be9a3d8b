"""A large frozen part: an HNSW graph over binary codes, re-ranked from int8 rows read with pread.

Trigger: a viewed int8 frozen file (256 int8 values + HNSW links, ~404 B a vector) becomes
wholly resident once searched (an HNSW search touches pages all over it, and every fault
maps its neighbours too): one million messages' vectors alone were ~400 MB of RSS, past
the sidecar's 500 MB budget (issue 37 item 5). Why two files: the graph needs only a
short code per vector to find the neighbourhood (one bit a dimension: 32 B at width 256),
and only the few candidates it returns need their int8 row. Outcome: a part of `BIG_AT`
vectors or more is kept as
  - `<name>.b1.usearch`: a usearch graph (Hamming) over each row's sign bits after the
    part's centre is taken off (the centre is fixed when the part first grows big, and
    kept in the rows file, so later folds code new rows the same way), viewed from disk;
  - `<name>.rows`: the int8 rows, their keys, and the keys sorted (with their row) for
    lookups; read with `os.pread` (the page cache, not the process's RSS), except the
    sorted keys, which are memory-mapped (a lookup touches a few pages).
A search asks the graph for `RERANK` times the answers wanted (at least `MIN_CANDIDATES`)
and orders those candidates by exact int8 cosine (usearch's own kernel, as the delta does),
so a hit's similarity is the same value the int8 graph and the delta give.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lore_sidecar.store.vector_flat import quantize

SUFFIX = ".b1.usearch"
ROWS_SUFFIX = ".rows"
MAGIC = b"LOREROW1"
HEADER = 64  # magic, then version, dim, n (little-endian u32, u32, u64), padded
VERSION = 1
# Candidates asked of the binary graph: RERANK per answer wanted, and at least MIN_CANDIDATES.
# Measured at 1M (docs/benchmarks.md, "a large vector part"): asked for 10, 100 candidates
# gave recall@10 0.69 against the int8 graph's 0.733, 200 gave 0.78; asked for 50 (the
# recaller's pool), 500 gave 0.869.
RERANK = 10
MIN_CANDIDATES = 200
CHUNK = 65_536  # rows copied at a time by a fold
# A fold whose frozen part would hold this many vectors writes it large; a large part stays
# large. Below it nothing changes. Why 200k (docs/benchmarks.md, "a large vector part"): the
# int8 graph is ~77 MB resident at 200k (the 100k and 200k budgets are met with it) and
# answers in ~0.5 ms, while at 1M it is 386 MB (188 MB as a large part).
BIG_AT = 200_000
# `late` in vectors.json once any part is large: a release that knows only PARTS_LATE (2)
# finds a mismatch and rebuilds from the record, instead of viewing a binary graph as an
# int8 one. A store with no large part is written exactly as before, and both are read.
BIG_LATE = 3


def codes(rows: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Each int8 row's sign bits after the centre is taken off, packed (dim / 8 bytes)."""
    return np.packbits(rows.astype(np.int16) - centre.astype(np.int16) > 0, axis=1)


# The binary graph's connectivity. Its links, not the 32 B codes, are most of what stays
# resident (usearch's view walks every node at open): at 1M, 16 kept 188 MB resident and
# 12 kept 158 MB, for recall@10 against exact search 0.780 / 0.727 asked for 10 and
# 0.869 / 0.844 asked for 50 (the int8 graph: 0.733 either way). 8 lost 0.06-0.11 at 200k.
CONNECTIVITY = 12


def new_graph(dim: int):
    from usearch.index import Index  # native module: see VectorIndex._new

    return Index(ndim=dim, metric="hamming", dtype="b1", connectivity=CONNECTIVITY, expansion_add=64)


@dataclass
class Found:
    keys: np.ndarray
    distances: np.ndarray


class BigFrozen:
    """A read-only large frozen part, answering like a usearch Index does for `Part`."""

    def __init__(self, graph_path: Path, rows_path: Path, dim: int):
        self.dim = dim
        self.graph = new_graph(dim)
        if not graph_path.is_file():
            raise FileNotFoundError(graph_path)
        self.graph.view(str(graph_path))
        self._fd = os.open(rows_path, os.O_RDONLY)
        head = os.pread(self._fd, HEADER, 0)
        if head[:8] != MAGIC:
            os.close(self._fd)
            raise ValueError(f"{rows_path}: not a rows file")
        version, fdim, n = struct.unpack_from("<IIQ", head, 8)
        if version != VERSION or fdim != dim:
            os.close(self._fd)
            raise ValueError(f"{rows_path}: rows of version {version}, width {fdim}; wanted {VERSION}, {dim}")
        self.n = n
        self.centre = np.frombuffer(os.pread(self._fd, dim, HEADER), dtype=np.int8).copy()
        self._rows_at = HEADER + dim
        keys_at = self._rows_at + n * dim
        # Sorted keys, then each one's row: looked up by writes (`contains`) and by a search's
        # candidates; mapped, so only the pages a lookup touches are resident.
        self._sorted = np.memmap(rows_path, dtype="<u8", mode="r", offset=keys_at + n * 8, shape=(n,)) if n else np.zeros(0, "<u8")
        self._slot = np.memmap(rows_path, dtype="<u8", mode="r", offset=keys_at + 2 * n * 8, shape=(n,)) if n else np.zeros(0, "<u8")
        self._keys_at = keys_at
        self.path = rows_path

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __len__(self) -> int:
        return self.n

    def _find(self, karr: np.ndarray) -> np.ndarray:
        """Each key's row, or -1 where the part does not hold it."""
        karr = np.asarray(karr, dtype=np.uint64).reshape(-1)
        if not self.n or not len(karr):
            return np.full(len(karr), -1, dtype=np.int64)
        at = np.searchsorted(self._sorted, karr)
        at = np.minimum(at, self.n - 1)
        hit = np.asarray(self._sorted[at]) == karr
        return np.where(hit, np.asarray(self._slot[at]).astype(np.int64), -1)

    def contains(self, karr: np.ndarray) -> np.ndarray:
        return self._find(karr) >= 0

    def rows_of(self, slots: np.ndarray) -> np.ndarray:
        """The int8 rows at these row numbers, each read with one pread."""
        dim, at, fd = self.dim, self._rows_at, self._fd
        raw = b"".join([os.pread(fd, dim, at + s * dim) for s in slots.tolist()])  # 1.7x a row-by-row copy (measured)
        return np.frombuffer(raw, dtype=np.int8).reshape(-1, dim)

    def search(self, vector: np.ndarray, count: int) -> Found:
        """The `count` nearest by int8 cosine among the binary graph's `RERANK * count`."""
        from usearch.index import MetricKind, search

        q = quantize(vector)[0]
        want = min(self.n, max(RERANK * count, MIN_CANDIDATES))
        m = self.graph.search(codes(q[None, :], self.centre)[0], want)
        keys = np.asarray(m.keys, dtype=np.uint64)
        if not len(keys):
            return Found(keys, np.zeros(0, dtype=np.float32))
        slots = self._find(keys)
        keys, slots = keys[slots >= 0], slots[slots >= 0]
        order = np.argsort(slots, kind="stable")  # read the file forwards
        keys, slots = keys[order], slots[order]
        rows = self.rows_of(slots)
        e = search(rows, q, min(count, len(keys)), MetricKind.Cos, exact=True, threads=1)
        at = np.asarray(e.keys, dtype=np.int64)
        return Found(keys[at], np.asarray(e.distances, dtype=np.float32))

    @property
    def keys(self) -> np.ndarray:
        """Every key, in row order."""
        return np.frombuffer(os.pread(self._fd, self.n * 8, self._keys_at), dtype="<u8").astype(np.uint64) if self.n else np.zeros(0, np.uint64)

    def get(self, karr: np.ndarray, dtype: str = "i8") -> np.ndarray:
        slots = self._find(karr)
        return self.rows_of(slots)

    def chunks(self):
        """(keys, rows) of every row, in row order, CHUNK at a time."""
        keys = self.keys
        for start in range(0, self.n, CHUNK):
            stop = min(self.n, start + CHUNK)
            raw = os.pread(self._fd, (stop - start) * self.dim, self._rows_at + start * self.dim)
            yield keys[start:stop], np.frombuffer(raw, dtype=np.int8).reshape(-1, self.dim)


def write_rows(path: Path, dim: int, centre: np.ndarray, pieces) -> np.ndarray:
    """Write a rows file from (keys, rows) pieces in order; fsynced. Returns its keys."""
    keys: list[np.ndarray] = []
    with open(path, "wb") as fh:
        fh.write(b"\0" * HEADER)
        fh.write(np.asarray(centre, dtype=np.int8).tobytes())
        n = 0
        for k, r in pieces:
            if len(k):
                fh.write(np.ascontiguousarray(r, dtype=np.int8).tobytes())
                keys.append(np.asarray(k, dtype=np.uint64))
                n += len(k)
        allk = np.concatenate(keys) if keys else np.zeros(0, dtype=np.uint64)
        order = np.argsort(allk, kind="stable")
        fh.write(allk.astype("<u8").tobytes())
        fh.write(allk[order].astype("<u8").tobytes())
        fh.write(order.astype("<u8").tobytes())
        fh.seek(0)
        fh.write(MAGIC + struct.pack("<IIQ", VERSION, dim, n))
        fh.flush()
        os.fsync(fh.fileno())
    return allk


def fold(directory: Path, dim: int, part, base: str, write_graph, *, threads: int) -> tuple[BigFrozen, str, str]:
    """A large part's fold (`VectorIndex._fold` past `BIG_AT`): the binary graph grown from
    the last one (or built once, in key order, when an int8 part first grows large) and the
    rows file written anew, the old rows less the dead ones followed by the delta's in key
    order. `part` is a vector_part.Part; `write_graph(index, name)` saves a graph safely.
    Returns the new part and its two file names (under `base`)."""
    from lore_sidecar.store.vector_part import _keys

    dkeys, drows = part.delta_items()
    if len(dkeys):
        order = np.argsort(dkeys, kind="stable")
        dkeys, drows = dkeys[order], drows[order]
    else:
        drows = np.zeros((0, dim), dtype=np.int8)
    dead = np.asarray(sorted(part.dead), dtype=np.uint64)
    graph_name, rows_name = base + SUFFIX, base + ROWS_SUFFIX
    graph = new_graph(dim)
    old = part.frozen
    if isinstance(old, BigFrozen):
        centre = old.centre
        graph.load(str(directory / part.frozen_name))
        present = dead[np.asarray(graph.contains(dead), dtype=bool).reshape(-1)] if len(dead) else dead
        if len(present):
            graph.remove(present)

        def pieces():
            for k, r in old.chunks():
                keep = ~np.isin(k, dead)
                yield k[keep], r[keep]
            yield dkeys, drows
    else:
        okeys = np.sort(_keys(old)) if old is not None and len(old) else np.zeros(0, dtype=np.uint64)
        okeys = okeys[~np.isin(okeys, dead)]
        orows = np.stack(old.get(okeys, dtype="i8")).astype(np.int8) if len(okeys) else np.zeros((0, dim), dtype=np.int8)
        allk, allr = np.concatenate([okeys, dkeys]), np.concatenate([orows, drows])
        order = np.argsort(allk, kind="stable")
        allk, allr = allk[order], allr[order]
        # The centre is fixed here, once: later folds code their rows against the same one.
        centre = np.trunc(allr.mean(axis=0, dtype=np.float64)).astype(np.int8) if len(allr) else np.zeros(dim, np.int8)
        dkeys, drows = allk, allr  # the whole part enters the new graph

        def pieces():
            yield allk, allr
    if len(dkeys):
        graph.add(dkeys, codes(drows, centre), threads=threads)
    tmp = directory / f".{rows_name}.tmp"
    write_rows(tmp, dim, centre, pieces())
    os.replace(tmp, directory / rows_name)
    write_graph(graph, graph_name)
    del graph
    return BigFrozen(directory / graph_name, directory / rows_name, dim), graph_name, rows_name
