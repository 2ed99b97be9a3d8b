"""Vector indexes on usearch (cosine, int8-quantised HNSW), one per (kind, project).

Snapshots are written to a temporary file, fsynced and renamed: usearch's own `save()`
truncates the target in place, and a reader memory-mapping a half-written file dies with
SIGBUS. `vectors.json` records which outbox sequence the snapshots include; it is written
last, so replaying the outbox from it is always enough (upserts are idempotent).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lore_sidecar.store.files import fsync_dir
from lore_sidecar.store.late_table import LateTable

META = "vectors.json"
LATE_DB = "late.db"
# What the late-interaction rows hold (engine/late.py). Vectors written without them, or in
# another form, are rebuilt from the record, as when the embedder changes.
LATE_FORMAT = 1
# One insertion thread: with several, the HNSW graph depends on thread timing, and an index
# rebuilt from the record would no longer answer exactly like the live one (DESIGN §2.1).
ADD_THREADS = 1



class VectorIndex:
    def __init__(self, directory: Path, *, spaces: dict[str, tuple[str, int]], writable: bool):
        """`spaces`: each kind's (model, dim) — workspace files may be embedded by another
        model than conversation. A kind missing from it has no vectors."""
        self.directory = directory
        self.spaces = dict(spaces)
        self.writable = writable
        self._lock = threading.RLock()
        self._indexes: dict[tuple[str, int], Any] = {}  # usearch Index objects
        self._dirty: set[tuple[str, int]] = set()
        self.saved_seq = 0
        self.late = LateTable(directory / LATE_DB, writable=writable)
        self._load()

    def _new(self, kind: str):
        # Imported here, not at module import: onnxruntime (the MiniLM embedder) crashes at
        # import if usearch's native module was loaded before it, so the embedder loads first.
        from usearch.index import Index

        # expansion_add 64 (default 128): 1.7x faster inserts for recall@10 0.919 vs 0.931
        # against exact search (60k corpus messages, measured; see docs/architecture.md).
        return Index(ndim=self.spaces[kind][1], metric="cos", dtype="i8", connectivity=16, expansion_add=64)

    def _load(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        meta_path = self.directory / META
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            meta = {}
        if meta.get("spaces") != self._spaces_meta() or meta.get("late") != LATE_FORMAT:
            # Another embedder wrote these vectors (or an older release, without their word
            # pieces): they are useless here; rebuild from seq 0.
            self._indexes.clear()
            self.saved_seq = 0
            if self.writable and meta:
                self.late.wipe()
            return
        self.saved_seq = int(meta.get("seq", 0))
        for name in meta.get("files", []):
            kind, _, pid = name.removesuffix(".usearch").rpartition("-")
            if kind not in self.spaces:
                continue
            idx = self._new(kind)
            idx.load(str(self.directory / name))
            self._indexes[(kind, int(pid))] = idx

    def refresh(self) -> bool:
        """Reader side: pick up the writer's newer snapshot, if any. True if reloaded."""
        try:
            seq = int(json.loads((self.directory / META).read_text()).get("seq", 0))
        except (OSError, ValueError):
            return False
        if seq == self.saved_seq:
            return False
        with self._lock:
            self._indexes.clear()
            self.late.close()  # the writer may have made the file anew (a rebuild)
            self._load()
        return True

    # -- writes ----------------------------------------------------------------------------
    def upsert(self, kind: str, project_id: int, keys: Sequence[int], vectors: np.ndarray,
               late: Sequence[bytes] | None = None) -> None:
        """`late`: each key's word pieces for late interaction (engine/late.py), if its model
        gives them."""
        if not len(keys):
            return
        if late is not None:
            self.late.upsert(kind, keys, late)
        with self._lock:
            idx = self._indexes.get((kind, project_id))
            if idx is None:
                idx = self._indexes[(kind, project_id)] = self._new(kind)
            karr = np.asarray(keys, dtype=np.uint64)
            if len(idx):
                present = karr[np.asarray(idx.contains(karr), dtype=bool).reshape(-1)]
                if len(present):
                    idx.remove(present)
            idx.add(karr, vectors, threads=ADD_THREADS)
            self._dirty.add((kind, project_id))

    def remove(self, kind: str, project_id: int, keys: Sequence[int]) -> None:
        self.late.remove(kind, keys)
        with self._lock:
            idx = self._indexes.get((kind, project_id))
            if idx is None:
                return
            karr = np.asarray(keys, dtype=np.uint64)
            present = karr[np.asarray(idx.contains(karr), dtype=bool).reshape(-1)] if len(karr) else karr
            if len(present):
                idx.remove(present)
                self._dirty.add((kind, project_id))

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()
            self._dirty.clear()
            self.late.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory.mkdir(parents=True, exist_ok=True)
            self.saved_seq = 0

    def save(self, seq: int) -> None:
        """Snapshot every changed index, then record `seq` as included."""
        with self._lock:
            for kind, pid in sorted(self._dirty):
                name = f"{kind}-{pid}.usearch"
                tmp = self.directory / f".{name}.tmp"
                self._indexes[(kind, pid)].save(str(tmp))
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(tmp, self.directory / name)
            self._dirty.clear()
            files = sorted(f"{k}-{p}.usearch" for k, p in self._indexes)
            meta = {"seq": seq, "spaces": self._spaces_meta(), "late": LATE_FORMAT, "files": files}
            tmp = self.directory / f".{META}.tmp"
            with open(tmp, "w") as fh:
                json.dump(meta, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.directory / META)
            fsync_dir(self.directory)
            self.saved_seq = seq

    def _spaces_meta(self) -> dict[str, str]:
        return {kind: f"{model}/{dim}" for kind, (model, dim) in sorted(self.spaces.items())}

    @property
    def dirty(self) -> bool:
        return bool(self._dirty)

    # -- reads -----------------------------------------------------------------------------
    def contents(self) -> dict[tuple[str, int], dict[int, bytes]]:
        """Every stored vector by (kind, project) and key (for checks and diagnostics)."""
        out: dict[tuple[str, int], dict[int, bytes]] = {}
        with self._lock:
            for name, idx in self._indexes.items():
                keys = [int(k) for k in idx.keys]
                vecs = idx.get(np.asarray(keys, dtype=np.uint64), dtype="i8") if keys else []
                out[name] = {k: np.asarray(v).tobytes() for k, v in zip(keys, vecs, strict=True)}
        return out

    def late_of(self, kind: str, keys: Sequence[int]) -> dict[int, bytes]:
        """The late-interaction rows of these keys that exist (a chunk embedded by a model
        without word pieces, or not embedded yet, has none)."""
        return self.late.get(kind, keys)

    def size(self) -> int:
        with self._lock:
            return sum(len(i) for i in self._indexes.values())

    def holds(self, kinds: Sequence[str], project_ids: Sequence[int] | None) -> set[str]:
        """Which of `kinds` have a vector in these projects (a query need not be embedded by
        a model whose kinds hold nothing here)."""
        with self._lock:
            return {k for k, _ in self._targets(kinds, project_ids)}

    def _targets(self, kinds: Sequence[str], project_ids: Sequence[int] | None) -> list[tuple[str, Any]]:
        """The non-empty indexes of these kinds and projects (a store may hold many projects:
        a scoped read looks its few up instead of walking them all)."""
        if project_ids is None:
            found = [(k, idx) for (k, _), idx in self._indexes.items() if k in kinds]
        else:
            found = [(k, self._indexes.get((k, p))) for k in dict.fromkeys(kinds) for p in dict.fromkeys(project_ids)]
        return [(k, idx) for k, idx in found if idx is not None and len(idx)]

    def search(
        self, kinds: Sequence[str], project_ids: Sequence[int] | None, vector: np.ndarray, limit: int
    ) -> list[tuple[str, int, float]]:
        """Top `limit` (kind, key, cosine similarity) across the matching indexes."""
        out: list[tuple[str, int, float]] = []
        with self._lock:
            for kind, idx in self._targets(kinds, project_ids):
                m = idx.search(vector, min(limit, len(idx)))
                out.extend(
                    (kind, int(key), 1.0 - float(dist))
                    for key, dist in zip(m.keys, m.distances, strict=True)
                )
        out.sort(key=lambda t: (-t[2], t[0], t[1]))  # ties by the record's identity, never by insertion
        return out[:limit]
