"""Vector indexes on usearch (cosine, int8 HNSW; binary past BIG_AT: vector_big.py), one per (kind, project).

Each is a frozen part viewed (memory-mapped) from disk plus a small loaded delta
(store/vector_part.py): a store's vectors then cost the pages a search touches, not their
whole size. `save` writes the delta, or folds it into a new frozen file once it holds
FOLD_AT vectors (or FOLD_DEAD keys of the frozen part are dead).

Every file is written to a temporary name, fsynced and renamed: usearch's own `save()`
truncates the target in place, and a reader memory-mapping a half-written file dies with
SIGBUS. A frozen file is never rewritten: a fold writes a new name and removes the old one
once `vectors.json` names the new (a reader that still views the old keeps its mapping).
`vectors.json` records which outbox sequence the files include and which files and dead keys
make each index; it is written last, so replaying the outbox from it is always enough
(upserts are idempotent), and a crash mid-fold leaves the previous set in force.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lore_sidecar.heap import release_memory
from lore_sidecar.store.files import fsync_path
from lore_sidecar.store.late_table import LateTable
from lore_sidecar.store.vector_big import BIG_AT, BIG_LATE, BigFrozen
from lore_sidecar.store.vector_big import ROWS_SUFFIX as BIG_ROWS_SUFFIX
from lore_sidecar.store.vector_big import fold as fold_big
from lore_sidecar.store.vector_flat import SUFFIX as DELTA_SUFFIX
from lore_sidecar.store.vector_flat import FlatDelta
from lore_sidecar.store.vector_part import Part

META = "vectors.json"
LATE_DB = "late.db"
# What the late-interaction rows hold (engine/late.py). Vectors written without them, or in
# another form, are rebuilt from the record, as when the embedder changes.
LATE_FORMAT = 1
# Written as `late` by the frozen/delta layout. An older release checks only `spaces` and
# `late`: it then finds a mismatch and rebuilds, instead of finding no `files` (no vectors)
# at an unchanged position and never rebuilding them.
PARTS_LATE = 2
# One insertion thread: with several, the HNSW graph depends on thread timing, and an index
# rebuilt from the record would no longer answer exactly like the live one (DESIGN §2.1).
ADD_THREADS = 1
# A delta of this many vectors is folded into the frozen part: it is what stays loaded, what
# a save rewrites every few seconds and what every dense search scans whole (no graph:
# store/vector_flat.py); a fold reads and rewrites the whole frozen file, and each fold
# grows the frozen graph in a new session, which costs it recall: 50k messages folded every
# 8,192 or 16,384 gave recall@10 0.81 against exact search, every 32,768 0.89 (measured,
# docs/benchmarks.md "a delta without a graph"). An exact scan of 32,768 rows costs more
# than a graph search (9.5 vs 0.64 ms on the busy machine): the price of those answers.
FOLD_AT = 32_768
# Dead keys of the frozen part (replaced or removed vectors) that force a fold: every search
# of the frozen part may have to ask for this many more answers.
FOLD_DEAD = 1_024
# The prefix of a kind's model name in `vectors.json` while its vectors are embedded again.
PENDING = "pending:"
RETRIES = 3  # a reader that finds a file gone (a fold meanwhile) reads vectors.json again


class VectorIndex:
    def __init__(self, directory: Path, *, spaces: dict[str, tuple[str, int]], writable: bool,
                 fold_at: int = FOLD_AT, fold_dead: int = FOLD_DEAD, big_at: int = BIG_AT):
        """`spaces`: each kind's (model, dim) — workspace files may be embedded by another
        model than conversation. A kind missing from it has no vectors."""
        self.directory = directory
        self.spaces = dict(spaces)
        self.writable = writable
        self.fold_at, self.fold_dead, self.big_at = fold_at, fold_dead, big_at
        self._lock = threading.RLock()  # the parts as searched: held briefly to read or swap
        self._write_lock = threading.RLock()  # writes and saves, one at a time (a fold holds it long)
        self._parts: dict[tuple[str, int], Part] = {}
        self._dirty: set[tuple[str, int]] = set()
        self.saved_seq = 0
        # Kinds whose vectors are being embedded again from the record (another model wrote
        # the stored ones): saved under a PENDING name until `reembedded` says all are in.
        self.stale: set[str] = set()
        self._meta_dirty = False
        self._loaded_spaces: Any = None
        self.late = LateTable(directory / LATE_DB, writable=writable)
        self._load()

    def _new(self, kind: str):
        # Imported here, not at module import: onnxruntime (the MiniLM embedder) crashes at
        # import if usearch's native module was loaded before it, so the embedder loads first.
        from usearch.index import Index

        # expansion_add 64 (default 128): 1.7x faster inserts for recall@10 0.919 vs 0.931
        # against exact search (60k corpus messages, measured; see docs/architecture.md).
        return Index(ndim=self.spaces[kind][1], metric="cos", dtype="i8", connectivity=16, expansion_add=64)

    def _read_meta(self) -> dict[str, Any]:
        try:
            return json.loads((self.directory / META).read_text())
        except (OSError, ValueError):
            return {}

    def _load(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(RETRIES):
            meta = self._read_meta()
            try:
                parts, seq, stale = self._open(meta, self._parts)  # files read without holding searches up
            except (OSError, RuntimeError):
                continue  # a file named there was folded away or saved anew meanwhile: read the newer list
            # Every file a list names is never rewritten (a new name each save), so the files
            # one list names are one save whole; no second look at the list (rev12: it made a
            # follower whose load outlasts the writer's save interval fail to open at all).
            with self._lock:
                self._parts, self.saved_seq, self.stale = parts, seq, stale
                self._loaded_spaces = meta.get("spaces")
            break
        else:
            raise RuntimeError(f"vector index files keep changing under {self.directory}")
        if self.writable:
            self._sweep()

    def _open(self, meta: dict[str, Any], have: dict[tuple[str, int], Part]) -> tuple[dict[tuple[str, int], Part], int, set[str]]:
        """The parts `meta` names, reusing the frozen views of `have` whose file is the same,
        and the kinds whose stored vectors are of no use here (`stale`)."""
        late = (PARTS_LATE, BIG_LATE) if "parts" in meta else (LATE_FORMAT,)
        if meta.get("late") not in late:
            # An older release wrote these vectors without their word pieces: rebuild from seq 0.
            if self.writable and meta:
                self.late.wipe()
            return {}, 0, set()
        # A kind whose vectors another model wrote (or whose embedding again was not finished:
        # PENDING) is embedded again from the record; the other kinds keep theirs. Trigger:
        # a rename of the files model threw away every kind's vectors, and on a store whose
        # outbox was trimmed only a rebuild of both indexes (100k messages) brought them back.
        stored, current = meta.get("spaces") or {}, self._spaces_meta(pending=False)
        stale = {kind for kind in self.spaces if stored.get(kind) != current[kind]}
        if self.writable and stale:
            self.late.wipe(sorted(stale))
        if "parts" in meta:
            listed = meta["parts"]
        else:  # written before the frozen/delta split: each whole index becomes a frozen part
            listed = {name.removesuffix(".usearch"): {"frozen": name} for name in meta.get("files", [])}
        parts: dict[tuple[str, int], Part] = {}
        for name, entry in listed.items():
            kind, _, pid = name.rpartition("-")
            if kind not in self.spaces or kind in stale:
                continue
            old = have.get((kind, int(pid)))
            part = Part(dead={int(k) for k in entry.get("dead", [])}, gen=int(entry.get("gen", 0)), rows_name=entry.get("rows"))
            if entry.get("frozen"):
                part.frozen_name = entry["frozen"]
                if old is not None and old.frozen_name == part.frozen_name:
                    part.frozen = old.frozen
                elif part.rows_name:
                    part.frozen = BigFrozen(self.directory / part.frozen_name, self.directory / part.rows_name, self.spaces[kind][1])
                else:
                    part.frozen = self._view(kind, entry["frozen"])
            if entry.get("delta"):
                part.delta = self._load_delta(kind, entry["delta"])
                part.delta_name = entry["delta"]
            parts[(kind, int(pid))] = part
        return parts, int(meta.get("seq", 0)), stale

    def _load_delta(self, kind: str, name: str) -> FlatDelta:
        path = self.directory / name
        if name.endswith(DELTA_SUFFIX):
            return FlatDelta.load(path, self.spaces[kind][1])
        # Saved by a release whose delta was an HNSW graph: its rows, as a graph-less delta.
        old = self._new(kind)
        old.load(str(path))
        keys = np.asarray(old.keys, dtype=np.uint64)
        rows = np.stack(old.get(keys, dtype="i8")) if len(keys) else None
        return FlatDelta(self.spaces[kind][1], keys, rows)

    def _view(self, kind: str, name: str):
        path = self.directory / name
        if not path.is_file():
            raise FileNotFoundError(path)
        idx = self._new(kind)
        idx.view(str(path))
        return idx

    def _sweep(self) -> None:
        """Writer: remove index files no part names (a crash between a fold's rename and
        `vectors.json`, or before a superseded file's removal) and half-written ones."""
        named = {n for p in self._parts.values() for n in (p.frozen_name, p.rows_name) if n}
        named |= {p.delta_name for p in self._parts.values() if p.delta_name}
        for entry in os.scandir(self.directory):
            name = entry.name
            ours = name.endswith((".usearch", DELTA_SUFFIX, BIG_ROWS_SUFFIX))
            if (ours and name not in named) or (name.startswith(".") and name.endswith(".tmp")):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass

    def refresh(self) -> bool:
        """Reader side: pick up the writer's newer files, if any. True if reloaded. Frozen
        files unchanged since the last look stay viewed as they are; deltas are read anew."""
        meta = self._read_meta()
        if not meta or (int(meta.get("seq", 0)) == self.saved_seq and meta.get("spaces") == self._loaded_spaces):
            return False  # (a kind's embedding again finished is a new `spaces` at the same seq)
        with self._write_lock:  # one refresh at a time; searches go on over the parts in hand
            self.late.close()  # the writer may have made the file anew (a rebuild)
            try:
                self._load()
            except RuntimeError:
                return False  # folded again and again while we looked: keep what we have, look later
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
        with self._write_lock, self._lock:
            part = self._parts.setdefault((kind, project_id), Part())
            part.upsert(np.asarray(keys, dtype=np.uint64), vectors, lambda: FlatDelta(self.spaces[kind][1]))
            self._dirty.add((kind, project_id))

    def remove(self, kind: str, project_id: int, keys: Sequence[int]) -> None:
        self.late.remove(kind, keys)
        with self._write_lock, self._lock:
            part = self._parts.get((kind, project_id))
            if part is not None and part.remove(np.asarray(keys, dtype=np.uint64)):
                self._dirty.add((kind, project_id))

    def reembedded(self, kind: str) -> None:
        """Every record of `kind` has its vector from the current model again: the next save
        names that model for it."""
        with self._write_lock:
            self.stale.discard(kind)
            self._meta_dirty = True

    def reembed_all(self, seq: int) -> None:
        """Writer: vectors lost (no `vectors.json`, or one the outbox has been trimmed past):
        every kind is embedded again from the record, the outbox followed from `seq` on."""
        with self._write_lock, self._lock:
            self._parts.clear()
            self._dirty.clear()
            self.late.wipe()
            self.stale = set(self.spaces)
            self.saved_seq = seq
            self._meta_dirty = True

    def clear(self) -> None:
        with self._write_lock, self._lock:
            self._parts.clear()
            self._dirty.clear()
            self.stale = set()
            self.late.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory.mkdir(parents=True, exist_ok=True)
            self.saved_seq = 0

    def save(self, seq: int) -> None:
        """Write every changed index (its delta, or a fold), then record `seq` as included."""
        with self._write_lock:
            gone: list[str] = []
            folded = False
            for kind, pid in sorted(self._dirty):
                part = self._parts[(kind, pid)]
                if len(part.delta or ()) >= self.fold_at or len(part.dead) >= self.fold_dead:
                    gone += self._fold(kind, pid, part)
                    folded = True
                elif part.delta is not None:
                    # A new name each save, the old one removed once the list names the new:
                    # a follower then reads one save's delta beside that save's dead keys,
                    # never the next save's (a replaced key would answer twice).
                    name = self._delta_name(kind, pid, part.gen)
                    tmp = self.directory / f".{name}.tmp"
                    part.delta.save(tmp)
                    os.replace(tmp, self.directory / name)
                    gone += [part.delta_name] if part.delta_name else []
                    part.delta_name = name
            self._dirty.clear()
            self._meta_dirty = False
            big = any(part.rows_name for part in self._parts.values())  # else written as before large parts
            meta = {"seq": seq, "spaces": self._spaces_meta(), "late": BIG_LATE if big else PARTS_LATE, "parts": {
                f"{k}-{p}": {"frozen": part.frozen_name, "delta": part.delta_name if part.delta is not None else None,
                             "dead": sorted(part.dead), "gen": part.gen, **({"rows": part.rows_name} if part.rows_name else {})}
                for (k, p), part in sorted(self._parts.items())}}
            tmp = self.directory / f".{META}.tmp"
            with open(tmp, "w") as fh:
                json.dump(meta, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.directory / META)
            fsync_path(self.directory)
            self.saved_seq = seq
            for name in gone:  # named by no list any more; a reader viewing one keeps its mapping
                try:
                    os.unlink(self.directory / name)
                except OSError:
                    pass
            if folded:
                release_memory()  # the fold's loaded copy of the frozen part

    def _write(self, idx: Any, name: str) -> None:
        tmp = self.directory / f".{name}.tmp"
        idx.save(str(tmp))
        fsync_path(tmp)
        os.replace(tmp, self.directory / name)

    def _fold(self, kind: str, pid: int, part: Part) -> list[str]:
        """Build the next frozen file from the current one (loaded, its dead keys dropped)
        and the delta, then view it in their place. Searches go on meanwhile over the old
        parts: only writes wait (this holds the write lock, not the read lock). Returns the
        files this makes superfluous once `vectors.json` names the new one."""
        if part.rows_name or len(part.frozen or ()) - len(part.dead) + len(part.delta or ()) >= self.big_at:  # large
            base = f"{kind}-{pid}.f{part.gen + 1}-{secrets.token_hex(4)}"
            return self._folded(part, *fold_big(self.directory, self.spaces[kind][1], part, base, self._write, threads=ADD_THREADS))
        merged = self._new(kind)
        if part.frozen_name is not None:
            merged.load(str(self.directory / part.frozen_name))
            dead = np.asarray(sorted(part.dead), dtype=np.uint64)
            present = dead[np.asarray(merged.contains(dead), dtype=bool).reshape(-1)] if len(dead) else dead
            if len(present):
                merged.remove(present)
        keys, vecs = part.delta_items()
        if len(keys):
            order = np.argsort(keys, kind="stable")  # a fixed order: the graph does not depend on slot layout
            merged.add(keys[order], vecs[order], threads=ADD_THREADS)
        # Never a name used before, even across a rebuild that starts the count again: a
        # reader keeps a frozen view whose name it already knows.
        name = f"{kind}-{pid}.f{part.gen + 1}-{secrets.token_hex(4)}.usearch"
        self._write(merged, name)
        del merged
        return self._folded(part, self._view(kind, name), name, None)

    def _folded(self, part: Part, frozen: Any, name: str, rows: str | None) -> list[str]:
        gone = [n for n in (part.frozen_name, part.rows_name, part.delta_name) if n]
        with self._lock:
            part.frozen, part.frozen_name, part.rows_name, part.gen = frozen, name, rows, part.gen + 1
            part.delta, part.delta_name, part.dead = None, None, set()
        return gone

    @staticmethod
    def _delta_name(kind: str, pid: int, gen: int) -> str:
        return f"{kind}-{pid}.f{gen}.d-{secrets.token_hex(4)}{DELTA_SUFFIX}"

    def _spaces_meta(self, *, pending: bool = True) -> dict[str, str]:
        """Each kind's model as saved; a kind still being embedded again is saved under a
        PENDING name, so any release (this one, or an older one that compares the names
        only) takes its vectors for unfinished and embeds it again."""
        return {kind: f"{PENDING if pending and kind in self.stale else ''}{model}/{dim}"
                for kind, (model, dim) in sorted(self.spaces.items())}

    @property
    def dirty(self) -> bool:
        return bool(self._dirty) or self._meta_dirty

    # -- reads -----------------------------------------------------------------------------
    def contents(self) -> dict[tuple[str, int], dict[int, bytes]]:
        """Every live vector by (kind, project) and key (for checks and diagnostics)."""
        with self._lock:
            return {name: part.contents() for name, part in self._parts.items()}

    def late_of(self, kind: str, keys: Sequence[int]) -> dict[int, bytes]:
        """The late-interaction rows of these keys that exist (a chunk embedded by a model
        without word pieces, or not embedded yet, has none)."""
        return self.late.get(kind, keys)

    def size(self) -> int:
        with self._lock:
            return sum(len(p) for p in self._parts.values())

    def holds(self, kinds: Sequence[str], project_ids: Sequence[int] | None) -> set[str]:
        """Which of `kinds` have a vector in these projects (a query need not be embedded by
        a model whose kinds hold nothing here)."""
        with self._lock:
            return {k for k, _ in self._targets(kinds, project_ids)}

    def _targets(self, kinds: Sequence[str], project_ids: Sequence[int] | None) -> list[tuple[str, Part]]:
        """The non-empty indexes of these kinds and projects (a store may hold many projects:
        a scoped read looks its few up instead of walking them all)."""
        if project_ids is None:
            found = [(k, part) for (k, _), part in self._parts.items() if k in kinds]
        else:
            found = [(k, self._parts.get((k, p))) for k in dict.fromkeys(kinds) for p in dict.fromkeys(project_ids)]
        return [(k, part) for k, part in found if part is not None and len(part)]

    def search(
        self, kinds: Sequence[str], project_ids: Sequence[int] | None, vector: np.ndarray, limit: int
    ) -> list[tuple[str, int, float]]:
        """Top `limit` (kind, key, cosine similarity) across the matching indexes (each its
        frozen part and its delta)."""
        out: list[tuple[str, int, float]] = []
        with self._lock:
            for kind, part in self._targets(kinds, project_ids):
                out.extend((kind, key, 1.0 - dist) for key, dist in part.search(vector, limit))
        out.sort(key=lambda t: (-t[2], t[0], t[1]))  # ties by the record's identity, never by insertion
        return out[:limit]
