"""The delta's scan (store/vector_flat.py): int32 dot products of int8 rows held one column a
vector, from onnxruntime's MatMulInteger when onnxruntime is loaded and from numpy when not.
Both must rank as a cosine computed in float64 over the same int8 rows (the distances of the
rows picked are usearch's own, as the frozen parts' are)."""

from __future__ import annotations

import sys

import numpy as np
import onnxruntime  # noqa: F401  before usearch (llm/minilm.py)
import pytest

from lore_sidecar.store import vector_flat
from lore_sidecar.store.vector_flat import FlatDelta, quantize

DIM = 48


@pytest.fixture(params=["onnxruntime", "numpy"])
def kernel(request, monkeypatch):
    """Each test runs once with the MatMulInteger session and once with onnxruntime unloaded."""
    monkeypatch.setattr(vector_flat, "_session", None)
    if request.param == "numpy":
        monkeypatch.delitem(sys.modules, "onnxruntime")
    yield request.param
    assert (vector_flat._session is None) == (request.param == "numpy")


def reference(live: dict[int, np.ndarray], q: np.ndarray, n: int) -> list[tuple[int, float]]:
    """(key, cosine distance) of the `n` nearest, by (distance, key), in float64."""
    keys = sorted(live)
    rows = np.stack([live[k] for k in keys]).astype(np.float64)
    qq = quantize(q)[0].astype(np.float64)
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(qq)
    cos = np.divide(rows @ qq, norms, out=np.zeros(len(keys)), where=norms > 0)
    ranked = sorted(((1.0 - c, k) for k, c in zip(keys, cos, strict=True)))
    return [(k, d) for d, k in ranked[:n]]


def check(delta: FlatDelta, live: dict[int, np.ndarray], queries: np.ndarray, n: int) -> None:
    for q in queries:
        got = delta.search(q, n)
        want = reference(live, q, n)
        assert [k for k, _ in got] == [k for k, _ in want]
        assert np.allclose([d for _, d in got], [d for _, d in want], atol=1e-6)


def test_the_scan_ranks_as_float64_cosine_through_growth_replacement_and_removal(kernel):
    rng = np.random.default_rng(5)
    delta = FlatDelta(DIM)
    live: dict[int, np.ndarray] = {}
    queries = rng.standard_normal((12, DIM)).astype(np.float32)
    # Past the first capacity (1,024 columns), so the columns are copied into a larger block.
    vecs = rng.standard_normal((1500, DIM)).astype(np.float32)
    delta.upsert(np.arange(1500, dtype=np.uint64), vecs)
    live.update({k: quantize(vecs[k])[0] for k in range(1500)})
    check(delta, live, queries, 25)
    # Replaced vectors answer with their new rows; a removal moves the last column into the gap.
    new = rng.standard_normal((40, DIM)).astype(np.float32)
    delta.upsert(np.arange(100, 140, dtype=np.uint64), new)
    live.update({100 + i: quantize(new[i])[0] for i in range(40)})
    gone = np.asarray([0, 7, 1499, 500], dtype=np.uint64)
    assert delta.remove(gone) == 4
    for k in gone.tolist():
        del live[k]
    check(delta, live, queries, 25)
    keys, rows = delta.items()
    assert sorted(keys.tolist()) == sorted(live) and len(delta) == len(live)
    assert all(np.array_equal(rows[i], live[int(k)]) for i, k in enumerate(keys.tolist()))
    # More asked than held: every row, nearest first.
    small = FlatDelta(DIM, keys[:5], rows[:5])
    check(small, {int(k): rows[i] for i, k in enumerate(keys[:5].tolist())}, queries[:3], 50)


def test_a_key_given_twice_in_one_call_keeps_its_last_vector(kernel):
    delta = FlatDelta(DIM)
    a, b = np.zeros((2, DIM), dtype=np.float32)
    a[0], b[1] = 1.0, 1.0
    delta.upsert(np.asarray([9, 9], dtype=np.uint64), np.stack([a, b]))
    assert len(delta) == 1
    [(key, dist)] = delta.search(b, 5)
    assert key == 9 and dist == pytest.approx(0.0, abs=1e-6)
    # Control: the other order keeps the other vector.
    delta.upsert(np.asarray([9, 9], dtype=np.uint64), np.stack([b, a]))
    assert delta.search(a, 5)[0][1] == pytest.approx(0.0, abs=1e-6)


def test_rows_tied_at_the_cut_are_kept_by_key_not_by_where_they_sit(kernel):
    """Five copies of one vector, inserted in a shuffled key order: the two asked for are the
    two smallest keys, and a zero row (no direction) ranks last."""
    v = np.ones(DIM, dtype=np.float32)
    keys = np.asarray([40, 12, 33, 7, 21], dtype=np.uint64)
    delta = FlatDelta(DIM)
    delta.upsert(np.asarray([3], dtype=np.uint64), np.zeros((1, DIM), dtype=np.float32))
    delta.upsert(keys, np.tile(v, (5, 1)))
    assert [k for k, _ in delta.search(v, 2)] == [7, 12]
    assert [k for k, _ in delta.search(v, 6)] == [7, 12, 21, 33, 40, 3]
    # More copies than the rows the kernel picks past the cut (SPARE): still the smallest keys.
    many = np.asarray(np.random.default_rng(3).permutation(np.arange(100, 160)), dtype=np.uint64)
    delta.upsert(many, np.tile(v, (60, 1)))
    assert [k for k, _ in delta.search(v, 3)] == [7, 12, 21]
    delta.remove(np.asarray([7, 12, 21, 33, 40], dtype=np.uint64))
    assert [k for k, _ in delta.search(v, 3)] == [100, 101, 102]


def test_the_kernel_model_is_the_one_matmulinteger_node_the_comment_describes():
    """The shipped bytes are what onnx.helper builds from the description in vector_flat.py
    (onnx costs ~0.7 s to import, so the bytes ship instead of being built at run time)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["q", "rows", "q_zero"], ["dots"])], "delta_dots",
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, "d"]),
         helper.make_tensor_value_info("rows", TensorProto.INT8, ["d", "n"])],
        [helper.make_tensor_value_info("dots", TensorProto.INT32, [1, "n"])],
        initializer=[helper.make_tensor("q_zero", TensorProto.UINT8, [], [128])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)], producer_name="lore-sidecar")
    model.ir_version = 5
    assert model.SerializeToString() == vector_flat._DOTS_MODEL


def test_spare_rows_keep_usearchs_nearest_that_float64_put_just_past_the_cut(kernel):
    """Two rows whose cosines to the query differ below float32's resolution (found by a
    search over random int8 rows): float64 puts `a` first, usearch's float32 cosine `b`.
    Asked for one, the delta answers `b` at usearch's distance, as a frozen part holding
    both would: the kernel's pick carries SPARE rows past the cut for usearch to score."""
    from usearch.index import MetricKind, search

    q = np.asarray([-113, 17, -126, -19, 126, -60, -9, 23, 99, 95, 38, 2, -63, 31, -106, 26], dtype=np.int8)
    a = np.asarray([-97, 56, -59, 50, 99, -43, -20, -81, -101, -13, -43, 51, -15, -102, -38, -14], dtype=np.int8)
    b = np.asarray([74, 24, -83, -26, 27, -121, -91, 122, -1, -36, 92, 12, -54, 41, -40, -118], dtype=np.int8)
    assert [k for k, _ in reference({1: a, 2: b}, q, 2)] == [1, 2]  # float64: a nearer
    m = search(np.stack([a, b]), q, 2, MetricKind.Cos, exact=True, threads=1)
    assert [int(k) for k in m.keys] == [1, 0] and m.distances[0] < m.distances[1]  # usearch: b nearer
    delta = FlatDelta(len(q), np.asarray([1, 2], dtype=np.uint64), np.stack([a, b]))
    assert delta.search(q, 1) == [(2, float(m.distances[0]))]
    assert delta.search(q, 2) == [(2, float(m.distances[0])), (1, float(m.distances[1]))]
