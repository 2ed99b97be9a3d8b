"""A large frozen part: a binary-code HNSW graph re-ranked from int8 rows read with pread
(store/vector_big.py, issue 37 item 5).

Real usearch files under tmp_path; `big_at` is set small through the constructor so a few
thousand vectors make a large part (the default is 200k). The vectors are crafted in
clusters so the exact top hits are well separated from the rest: the large part must give
the same top hits as an exact int8 search over the same rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnxruntime  # noqa: F401  before usearch: imported after it, onnxruntime crashes (llm/embedders.py)

from lore_sidecar.store.vector_flat import FlatDelta, quantize
from lore_sidecar.store.vector_index import BIG_LATE, META, PARTS_LATE, VectorIndex

DIM = 64
SPACES = {"messages": ("m", DIM)}
N = 3000


def crafted(n: int = N, seed: int = 11) -> np.ndarray:
    """Vectors around 60 centres (each a cluster of ~50), plus a shared offset so the
    centre the part takes off matters."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, DIM)).astype(np.float32) * 3
    v = centres[np.arange(n) % 60] + rng.standard_normal((n, DIM)).astype(np.float32)
    return v + 2.0


VECS = crafted()
KEYS = list(range(1000, 1000 + N))  # keys that are not row numbers


def index(d: Path, *, writable: bool = True, big_at: int = 2000, fold_at: int = 1000, fold_dead: int = 200) -> VectorIndex:
    return VectorIndex(d, spaces=SPACES, writable=writable, fold_at=fold_at, fold_dead=fold_dead, big_at=big_at)


def exact(live: dict[int, np.ndarray], q: np.ndarray, n: int) -> list[int]:
    """The `n` nearest keys by exact int8 cosine (the delta's own exact search)."""
    keys = np.asarray(sorted(live), dtype=np.uint64)
    flat = FlatDelta(DIM, keys, np.stack([live[int(k)] for k in keys]))
    return [k for k, _ in flat.search(q, n)]


def hits(v: VectorIndex, q: np.ndarray, n: int = 10) -> list[int]:
    return [key for _, key, _ in v.search(["messages"], [1], q, n)]


def meta(d: Path) -> dict:
    return json.loads((d / META).read_text())


def fill(d: Path, vecs: np.ndarray = VECS, keys: list[int] = KEYS, **kw) -> VectorIndex:
    w = index(d, **kw)
    for s in range(0, len(keys), 500):
        w.upsert("messages", 1, keys[s:s + 500], vecs[s:s + 500])
        w.save(s // 500 + 1)
    return w


def agreement(v: VectorIndex, live: dict[int, np.ndarray], queries: np.ndarray) -> float:
    """Mean share of the exact top 10 that the index's top 10 holds."""
    return float(np.mean([len(set(hits(v, q)) & set(exact(live, q, 10))) / 10 for q in queries]))


QUERIES = VECS[::97] + np.random.default_rng(3).standard_normal((len(VECS[::97]), DIM)).astype(np.float32) * 0.3


def test_a_large_part_answers_the_exact_top_hits(tmp_path):
    w = fill(tmp_path)
    m = meta(tmp_path)
    entry = m["parts"]["messages-1"]
    assert m["late"] == BIG_LATE and entry["rows"].endswith(".rows") and entry["frozen"].endswith(".b1.usearch")
    live = dict(zip(KEYS, quantize(VECS), strict=True))
    for v in (w, index(tmp_path, writable=False)):
        assert v.size() == N
        assert agreement(v, live, QUERIES) >= 0.98
        # A stored vector finds itself first, at the similarity exact int8 cosine gives it.
        for i in (0, 1234, N - 1):
            (kind, key, sim), = v.search(["messages"], [1], VECS[i], 1)
            assert key == KEYS[i]
            assert abs(sim - (1.0 - FlatDelta(DIM, np.asarray([1], np.uint64), quantize(VECS[i])).search(VECS[i], 1)[0][1])) < 1e-6


def test_below_the_threshold_the_part_is_written_as_before(tmp_path):
    """Control: the same vectors with the threshold above their count give an int8 part and
    the old `late`, and no rows file."""
    fill(tmp_path, big_at=10_000)
    m = meta(tmp_path)
    assert m["late"] == PARTS_LATE and "rows" not in m["parts"]["messages-1"]
    assert not list(tmp_path.glob("*.rows")) and not list(tmp_path.glob("*.b1.usearch"))


def test_a_large_part_survives_reopen_fold_and_dead_keys(tmp_path):
    w = fill(tmp_path, fold_dead=400)
    first = meta(tmp_path)["parts"]["messages-1"]
    live = dict(zip(KEYS, quantize(VECS), strict=True))
    # Remove 150 keys (dead in the large part) and replace 100 with other vectors; spread
    # over the clusters (a cluster removed whole leaves its queries only mediocre matches,
    # which the binary codes rank less well: the benchmark measures that on real vectors).
    gone = KEYS[::23][:150]
    w.remove("messages", 1, gone)
    moved = KEYS[7::30]
    newv = VECS[[(KEYS.index(k) + 31) % N for k in moved]] * 1.5  # into another cluster
    w.upsert("messages", 1, moved, newv)
    w.save(100)
    for k in gone:
        live.pop(k, None)
    for k, v in zip(moved, newv, strict=True):
        live[k] = quantize(v)[0]
    assert meta(tmp_path)["parts"]["messages-1"]["frozen"] == first["frozen"]  # not folded yet: dead keys
    for v in (w, index(tmp_path, writable=False)):
        assert v.size() == len(live)
        for k in gone[:20]:
            assert k not in hits(v, VECS[KEYS.index(k)], 10)
        for k, nv in list(zip(moved, newv, strict=True))[:20]:
            assert hits(v, nv, 1) == [k]
        assert agreement(v, live, QUERIES) >= 0.98
    # A fold (more than fold_dead dead keys, then a full delta) drops the dead for good.
    w.remove("messages", 1, KEYS[1::13][:210])
    for k in KEYS[1::13][:210]:
        live.pop(k, None)
    w.save(101)
    after = meta(tmp_path)["parts"]["messages-1"]
    assert after["frozen"] != first["frozen"] and after["rows"] != first["rows"] and after["dead"] == []
    assert not (tmp_path / first["rows"]).exists()  # superseded and swept
    for v in (w, index(tmp_path, writable=False)):
        assert v.size() == len(live)
        assert agreement(v, live, QUERIES) >= 0.98
        got = v.contents()[("messages", 1)]
        assert set(got) == set(live)
        assert all(np.array_equal(np.frombuffer(got[k], np.int8), live[k]) for k in list(live)[::50])


def test_a_rebuild_from_the_same_record_answers_identically(tmp_path):
    """DESIGN §2.1: the same upserts, folds and removals in the same order give the same
    answers, similarities included."""
    def run(d: Path) -> VectorIndex:
        w = fill(d)
        w.remove("messages", 1, KEYS[::20])
        w.upsert("messages", 1, KEYS[5::25], VECS[5::25] * -1)
        w.save(200)
        w.upsert("messages", 1, list(range(9000, 10200)), crafted(1200, seed=12))
        w.save(201)  # a fold of the large part
        return w

    a, b = run(tmp_path / "a"), run(tmp_path / "b")
    assert meta(tmp_path / "a")["parts"]["messages-1"]["gen"] >= 3
    for q in list(QUERIES) + list(crafted(20, seed=13)):
        assert a.search(["messages"], [1], q, 10) == b.search(["messages"], [1], q, 10)


def test_a_store_of_the_old_format_still_opens_and_answers(tmp_path):
    """A store written before large parts (PARTS_LATE, an int8 frozen part) opens as it is
    with this release, even past the threshold, and grows large at its next fold."""
    old = index(tmp_path, big_at=10**9)
    old.upsert("messages", 1, KEYS, VECS)
    old.save(1)
    assert meta(tmp_path)["late"] == PARTS_LATE
    before = [hits(old, q) for q in QUERIES]
    copy = tmp_path.parent / "copy"
    shutil.copytree(tmp_path, copy)
    v = index(copy)  # threshold 2,000 < 3,000 held
    assert v.size() == N and [hits(v, q) for q in QUERIES] == before
    v.upsert("messages", 1, list(range(9000, 10000)), crafted(1000, seed=14))
    v.save(2)  # the fold makes it large
    assert meta(copy)["late"] == BIG_LATE and meta(copy)["parts"]["messages-1"]["rows"]
    assert v.size() == N + 1000
    assert [hits(v, q, 1) for q in VECS[:50]] == [[k] for k in KEYS[:50]]
