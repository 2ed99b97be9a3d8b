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
    """Vectors around 60 centres (each a cluster of ~50), plus a shared offset (2.0: too
    small for the centre the part takes off to matter, measured; see
    test_the_centre_taken_off_keeps_vectors_sharing_a_large_offset_apart)."""
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


def test_keys_a_large_part_does_not_hold_are_not_found_in_it(tmp_path):
    """Its key lookup (sorted keys, store/vector_big.py `_find`) answers only for keys it
    holds: new keys below and above every key it holds count once each and kill none of its
    own, and removing a key it never held removes nothing."""
    w = fill(tmp_path)
    assert meta(tmp_path)["parts"]["messages-1"]["rows"]
    new = list(range(10, 60)) + list(range(20_000, 20_050))
    w.upsert("messages", 1, new, crafted(100, seed=15))
    w.remove("messages", 1, [5, 999, 4000, 30_000])
    assert w.size() == N + 100
    w.save(50)  # no fold (no dead key, a small delta): the dead list as saved
    assert meta(tmp_path)["parts"]["messages-1"]["dead"] == []
    for v in (w, index(tmp_path, writable=False)):
        assert v.size() == N + 100
        assert [hits(v, q, 1) for q in VECS[:20]] == [[k] for k in KEYS[:20]]


def test_keys_dead_in_an_int8_part_stay_gone_when_it_first_grows_large(tmp_path):
    """The fold that first makes a part large drops the int8 part's dead keys: a removed
    vector does not come back, and a replaced one is held once, with its new value."""
    w = fill(tmp_path, vecs=VECS[:1000], keys=KEYS[:1000])  # one fold: an int8 part (below big_at)
    assert "rows" not in meta(tmp_path)["parts"]["messages-1"]
    live = dict(zip(KEYS, quantize(VECS), strict=True))
    gone, moved = KEYS[:1000:10], KEYS[5:1000:20]
    newv = VECS[[KEYS.index(k) + 31 for k in moved]] * 1.5
    w.remove("messages", 1, gone)
    w.upsert("messages", 1, moved, newv)
    w.save(10)
    assert len(meta(tmp_path)["parts"]["messages-1"]["dead"]) == 150  # below fold_dead: no fold
    for k in gone:
        live.pop(k)
    for k, v in zip(moved, newv, strict=True):
        live[k] = quantize(v)[0]
    w.upsert("messages", 1, KEYS[1000:], VECS[1000:])  # one save: 850 + 2,050 past big_at
    w.save(11)
    after = meta(tmp_path)["parts"]["messages-1"]
    assert after["rows"] and after["dead"] == []
    for v in (w, index(tmp_path, writable=False)):
        assert v.size() == len(live)
        got = v.contents()[("messages", 1)]
        assert set(got) == set(live)
        assert all(np.array_equal(np.frombuffer(got[k], np.int8), live[k]) for k in moved)
        for k in gone[:20]:
            assert k not in hits(v, VECS[KEYS.index(k)], 10)


def test_a_writer_opening_sweeps_orphan_rows_files_and_keeps_the_named_one(tmp_path):
    """A rows file no part names (a crash between a fold's rename and vectors.json) is
    removed when a writer opens; the one vectors.json names is kept, so the next open
    still answers."""
    fill(tmp_path)
    named = meta(tmp_path)["parts"]["messages-1"]["rows"]
    orphan = tmp_path / "messages-1.f9-0badc0de.rows"
    shutil.copy(tmp_path / named, orphan)
    index(tmp_path)  # a writer opens
    assert not orphan.exists() and (tmp_path / named).exists()
    v = index(tmp_path, writable=False)
    assert v.size() == N and [hits(v, q, 1) for q in VECS[:20]] == [[k] for k in KEYS[:20]]


def test_a_part_of_exactly_big_at_vectors_is_large(tmp_path):
    """'A part of BIG_AT vectors or more': the fold that brings it to exactly the threshold
    (1,000 frozen + 1,000 in the delta, big_at 2,000) writes it large."""
    fill(tmp_path, vecs=VECS[:2000], keys=KEYS[:2000])
    m = meta(tmp_path)
    assert m["late"] == BIG_LATE and m["parts"]["messages-1"]["rows"] and m["parts"]["messages-1"]["gen"] == 2


def test_a_large_part_that_shrinks_below_the_threshold_stays_large(tmp_path):
    """A large part stays large: removals that leave it below big_at fold it as a large
    part (its binary graph is never read as an int8 one)."""
    w = fill(tmp_path, big_at=2900)  # large at the last save's fold (2,000 + 1,000)
    first = meta(tmp_path)["parts"]["messages-1"]
    assert first["rows"]
    gone = KEYS[::13][:210]  # 2,790 left, below big_at; spread over the clusters
    w.remove("messages", 1, gone)
    w.save(50)  # dead past fold_dead: a fold
    after = meta(tmp_path)["parts"]["messages-1"]
    assert after["gen"] == first["gen"] + 1 and after["dead"] == [] and after["rows"] and meta(tmp_path)["late"] == BIG_LATE
    live = {k: v for k, v in zip(KEYS, quantize(VECS), strict=True) if k not in set(gone)}
    for v in (w, index(tmp_path, writable=False, big_at=2900)):
        assert v.size() == len(live)
        assert agreement(v, live, QUERIES) >= 0.98


def test_a_search_asks_the_binary_graph_for_rerank_times_the_count_and_at_least_min_candidates(tmp_path):
    """The candidates re-ranked: max(RERANK x count, MIN_CANDIDATES), at most the part's
    size (store/vector_big.py; docs/benchmarks.md measured recall by this count)."""
    from lore_sidecar.store.vector_big import MIN_CANDIDATES, RERANK

    w = fill(tmp_path)
    frozen = w._parts[("messages", 1)].frozen
    asked: list[int] = []

    class Counting:
        def __init__(self, graph):
            self.graph = graph

        def search(self, q, count, *args, **kw):
            asked.append(count)
            return self.graph.search(q, count, *args, **kw)

    frozen.graph = Counting(frozen.graph)
    for count in (1, 10, MIN_CANDIDATES // RERANK, MIN_CANDIDATES // RERANK + 1, 50, N):
        asked.clear()
        found = frozen.search(VECS[0], count)
        assert asked == [min(N, max(RERANK * count, MIN_CANDIDATES))]
        assert len(found.keys) == count and int(found.keys[0]) == KEYS[0]


def test_codes_are_the_sign_bits_of_each_row_less_the_centre_at_full_width():
    """A row's code bit is 1 where the row exceeds the part's centre, the difference taken
    wider than int8 (-120 - 100 is below the centre, not a wrapped +36)."""
    from lore_sidecar.store.vector_big import codes

    rows = np.asarray([[10, -10, -120, 120, 5, 5, 0, 0]], np.int8)
    centre = np.asarray([20, -20, 100, -100, 5, 4, 0, -1], np.int8)
    assert codes(rows, centre).tolist() == [[0b01010101]]


def test_the_centre_taken_off_keeps_vectors_sharing_a_large_offset_apart(tmp_path):
    """Embeddings share a large common component. With the part's centre taken off, the
    sign bits still tell the clusters apart; without it they would be nearly all ones and
    the binary graph's candidates near random (an offset of 10 here: the 2.0 of `crafted`
    alone is too small to tell, measured)."""
    vecs = crafted() + 8.0
    queries = vecs[::97] + np.random.default_rng(3).standard_normal((len(vecs[::97]), DIM)).astype(np.float32) * 0.3
    w = fill(tmp_path, vecs=vecs)
    assert meta(tmp_path)["parts"]["messages-1"]["rows"]
    live = dict(zip(KEYS, quantize(vecs), strict=True))
    for v in (w, index(tmp_path, writable=False)):
        assert agreement(v, live, queries) >= 0.98
        assert [hits(v, q, 1) for q in vecs[:100]] == [[k] for k in KEYS[:100]]
